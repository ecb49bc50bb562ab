/**
 * The scheduler's alerts for a job that cannot run at all, which no run summary reports: a job
 * file that does not load (not valid, not readable, a dangling link), a job file whose job name
 * another file of the folder already has, a run that crashed before it had a summary. Each is
 * an `adsync.job` alert (alerts.ts).
 *
 * - A job file's problem is sent once, and again only when the problem changes, or when it comes
 *   back after the file was fine or gone: a broken file read again by every SIGHUP does not alert
 *   again. One whose alert could not be delivered is tried again at the next reload.
 * - A crashed run alerts every time, as a failed run does.
 * - Delivery never holds up the scheduler: the alert is sent while it goes on (other jobs' ticks
 *   included); settled() waits for the deliveries in progress, for a stop.
 */
import type { Logger } from 'pino';
import { reportedMessage, toAdsyncError } from '../errors.js';
import { sendAlert, type JobAlert } from './alerts.js';
import type { Job } from './job.js';

/** Why a job file's job is not scheduled, and where to say so (undefined: nowhere). */
export interface JobFileProblem {
  job: string;
  /** The whole reason: what the alert says, and what tells one problem from another. */
  reason: string;
  webhookUrl: string | undefined;
}

export class ScheduleAlerts {
  /** The reason last sent for each job file with a problem. */
  private readonly sent = new Map<string, string>();
  private readonly deliveries = new Set<Promise<void>>();

  constructor(private readonly logger: Logger) {}

  /**
   * The problems of the job files, as one reading of the folder found them (by file): a new or
   * changed one is sent; a file that is fine or gone now is forgotten, so that a problem coming
   * back is sent again.
   */
  jobFileProblems(problems: ReadonlyMap<string, JobFileProblem>): void {
    for (const file of [...this.sent.keys()]) if (!problems.has(file)) this.sent.delete(file);
    for (const [file, problem] of problems) {
      if (this.sent.get(file) === problem.reason) continue;
      this.sent.set(file, problem.reason);
      this.deliver(problem.webhookUrl, { event: 'adsync.job', reason: problem.reason, job: problem.job, job_file: file }, () => {
        // Not delivered: the next reading of the folder tries again, unless the problem changed meanwhile.
        if (this.sent.get(file) === problem.reason) this.sent.delete(file);
      });
    }
  }

  /** A run of the job threw instead of ending with a summary. */
  runCrashed(job: Job, error: unknown): void {
    const reason = `run crashed: ${reportedMessage(toAdsyncError(error))}`;
    this.deliver(job.alerts.webhookUrl, { event: 'adsync.job', reason, job: job.name, job_file: job.file }, () => undefined);
  }

  /** Waits for the alerts being delivered (each gives up within ~25 s: sendAlert's 15 s of retries and its last attempt). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.deliveries]);
  }

  private deliver(webhookUrl: string | undefined, alert: JobAlert, onFailure: () => void): void {
    if (webhookUrl === undefined) return;
    const delivery = sendAlert(webhookUrl, alert, this.logger.child({ job: alert.job }))
      .then((delivered) => {
        if (!delivered) onFailure();
      })
      .catch((error: unknown) => this.logger.warn({ job: alert.job, error: String(error) }, 'alert could not be delivered'))
      .finally(() => this.deliveries.delete(delivery));
    this.deliveries.add(delivery);
  }
}
