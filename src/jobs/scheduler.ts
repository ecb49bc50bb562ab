/**
 * `adsync schedule`: runs every job file of a folder on its `schedule:` cron expression.
 *
 * - One run of a job at a time: a tick that comes while the job's previous run is still
 *   going is skipped (logged); across processes and machines the job lock in the state
 *   database does the same (the other run is logged as running elsewhere).
 * - A job file that fails validation is reported and skipped; the others still run. So is one
 *   whose job name an earlier file (by name) of the folder has. Both alert (schedule-alerts.ts),
 *   once per problem; so does a run that crashed instead of ending with a summary.
 * - reload() (SIGHUP) re-reads the folder: new, changed and removed job files take effect;
 *   runs in progress finish undisturbed. Between reloads a job runs as loaded; a tick says
 *   when its file changed or went since (job-file-drift.ts). The settings file is not re-read
 *   for the jobs: a reload says when it changed.
 * - stop() (SIGTERM/SIGINT) starts no new run; runs in progress finish the batch in flight,
 *   commit it, and end as interrupted.
 */
import { readdirSync, statSync, type Dirent } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ScheduledTask } from 'node-cron';
import type { Logger } from 'pino';
import type { Settings } from '../config/settings.js';
import { ConfigError, isAdsyncError, reportedMessage } from '../errors.js';
import type { Job } from './job.js';
import { jobFileBytes, JobFileWatch } from './job-file-drift.js';
import { alertsWebhook, peekJobFile } from './load-job.js';
import type { RunEnvironment } from './run-context.js';
import { runJob } from './runner.js';
import { ScheduleAlerts, type JobFileProblem } from './schedule-alerts.js';
import type { RunSummary } from './summary.js';
import { cron } from './node-cron.js';

/**
 * How late a tick may still start its run. node-cron's default, 1 s, drops the run of a tick
 * whose timer fired a little late: the main thread held past it by SQLite waiting for another
 * process's write lock (up to 10 s), a long synchronous commit, a paused VM. For a daily job
 * that is a day without a sync. A tick still starts one run at most, and none once the next
 * tick of the expression is due.
 */
export const TICK_TOLERANCE_MS = 60_000;

export interface SchedulerOptions {
  jobsDir: string;
  environment: RunEnvironment;
  logger: Logger;
  loadJob: (path: string) => Job;
  /** Called with every finished run's summary. */
  onRun?: (summary: RunSummary) => void;
  /**
   * Reads the settings file afresh. A reload does not apply it (the state database, the logger
   * and the jobs' defaults were set up with the settings of the start); it says when it changed.
   */
  readSettings?: () => Settings;
}

interface Scheduled {
  job: Job;
  task: ScheduledTask;
  /** Its job file, against the version loaded: a change without a reload is told at a tick. */
  watch: JobFileWatch;
}

/**
 * The job files of a folder: its `*.yaml`/`*.yml` files, and symbolic links to files (a folder
 * of links, as /etc/adsync/jobs often is). A link that cannot be followed (dangling, a loop) is
 * listed too: loading it reports it like any unreadable job file. Hidden files are not, as the
 * shell's `*.yaml` leaves them out: an editor's lock (Emacs' `.#x.yaml`, a link to nothing), a
 * Mac's `._x.yaml` copied along with a folder, a job renamed `.x.yaml` to take it off.
 */
export function jobFilesIn(dir: string): string[] {
  return readJobsFolder(dir)
    .filter((e) => !e.name.startsWith('.') && /\.ya?ml$/i.test(e.name))
    .filter((e) => e.isFile() || (e.isSymbolicLink() && !linksToNonFile(join(dir, e.name))))
    .map((e) => join(dir, e.name))
    .sort();
}

/** The entries of the jobs folder; one that cannot be read is a configuration problem, said in words. */
function readJobsFolder(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'EACCES' || code === 'EPERM') {
      throw new ConfigError(`cannot read the jobs folder ${dir}: permission denied`, {
        cause: error,
        hint: 'the user adsync runs as needs read and execute permission on the folder (ls -ld shows its owner and mode)',
      });
    }
    // `adsync schedule` checks the folder before it starts: this is a SIGHUP finding it gone.
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new ConfigError(`the jobs folder ${dir} does not exist (any more)`, { cause: error });
    throw error;
  }
}

/** True when the link leads to something that is not a file (a folder); false when it cannot be followed. */
function linksToNonFile(link: string): boolean {
  try {
    return !statSync(link).isFile();
  } catch {
    return false;
  }
}

export class Scheduler {
  private readonly scheduled = new Map<string, Scheduled>();
  /**
   * The runs in progress, by job name. Kept apart from the schedule: a run goes on while a
   * reload changes its job, or removes it and a later reload brings it back (a job file saved
   * broken, then fixed), and it must keep blocking that job's ticks all the while.
   */
  private readonly running = new Map<string, { run: Promise<void>; since: Date }>();
  private stopped = false;
  private readonly alerts: ScheduleAlerts;
  /** The ticks missed at the latest wake-up, by job, until they are logged (tickMissed). */
  private readonly missed = new Map<string, { count: number; first: Date; last: Date }>();

  constructor(private readonly options: SchedulerOptions) {
    this.alerts = new ScheduleAlerts(options.logger);
    cron().setLogger({
      info: (m) => options.logger.debug({ source: 'node-cron' }, m),
      warn: (m) => options.logger.warn({ source: 'node-cron' }, m),
      error: (m) => options.logger.error({ source: 'node-cron' }, String(m)),
      debug: (m) => options.logger.trace({ source: 'node-cron' }, String(m)),
    });
  }

  /** Number of jobs scheduled. */
  get size(): number {
    return this.scheduled.size;
  }

  /** Loads the folder and schedules every valid job that has a schedule. */
  async start(): Promise<void> {
    await this.load();
  }

  async reload(): Promise<void> {
    if (this.stopped) return;
    const { logger, jobsDir } = this.options;
    logger.info({ jobsDir }, 'reloading the job files (SIGHUP)');
    this.checkSettings();
    try {
      await this.load();
    } catch (error) {
      // The folder cannot be read: nothing was changed, and the jobs already scheduled go on.
      if (!isAdsyncError(error)) throw error;
      const n = this.scheduled.size;
      const kept = n === 0 ? 'no job was scheduled before' : n === 1 ? 'the 1 job scheduled before keeps running as it was loaded' : `the ${n} jobs scheduled before keep running as they were loaded`;
      logger.error({ jobsDir: resolve(jobsDir), error: reportedMessage(error) }, `reload failed: ${kept}; fix the jobs folder, then send SIGHUP again`);
    }
  }

  /** Says when the settings file changed or broke since the start: a reload leaves it as it was read then. */
  private checkSettings(): void {
    const { readSettings, environment, logger } = this.options;
    if (!readSettings) return;
    const settingsFile = environment.settings.file;
    let now: Settings;
    try {
      now = readSettings();
    } catch (error) {
      if (!isAdsyncError(error)) throw error;
      logger.error(
        { settingsFile, error: reportedMessage(error) },
        'the settings file does not load any more: the scheduler goes on with the settings it started with, but would not start again; fix the file before it is restarted',
      );
      return;
    }
    if (JSON.stringify(now) === JSON.stringify(environment.settings)) return;
    logger.warn(
      { settingsFile: now.file ?? settingsFile },
      'the settings file changed since the scheduler started: a reload reads the job files only, and the jobs keep the settings the scheduler started with; restart the scheduler (systemctl restart adsync) to use the new ones',
    );
  }

  private async load(): Promise<void> {
    const { logger } = this.options;
    const dir = resolve(this.options.jobsDir);
    const wanted = new Map<string, Job>();
    const versions = new Map<string, Buffer | undefined>();
    const problems = new Map<string, JobFileProblem>();
    for (const file of jobFilesIn(dir)) {
      let job: Job;
      const version = jobFileBytes(file);
      try {
        job = this.options.loadJob(file);
      } catch (error) {
        if (!isAdsyncError(error)) throw error;
        logger.error({ file, error: error.message }, 'job file is not valid: skipped (the other jobs still run)');
        const peeked = peekJobFile(file);
        problems.set(file, {
          job: peeked.name,
          reason: `job not scheduled: ${reportedMessage(error)}`,
          webhookUrl: alertsWebhook(peeked.webhookUrl, this.options.environment.settings),
        });
        continue;
      }
      if (job.schedule === undefined) {
        logger.info({ job: job.name, file }, 'job has no schedule: not scheduled (run it with `adsync run`)');
        continue;
      }
      const other = wanted.get(job.name);
      if (other) {
        logger.error({ job: job.name, file, other: other.file }, 'two job files have the same job name: this one is skipped');
        problems.set(file, {
          job: job.name,
          reason: `job not scheduled: ${file} has the job name "${job.name}" of ${other.file}, which is scheduled; give one of them another name (name: in the job file)`,
          webhookUrl: job.alerts.webhookUrl,
        });
        continue;
      }
      wanted.set(job.name, job);
      versions.set(job.name, version);
    }
    // Before the schedule changes (which awaits): a second reload right behind this one finds them sent.
    this.alerts.jobFileProblems(problems);
    for (const [name, entry] of this.scheduled) {
      const next = wanted.get(name);
      if (!next || JSON.stringify(next) !== JSON.stringify(entry.job)) {
        await entry.task.destroy();
        this.scheduled.delete(name);
        if (!next) logger.info({ job: name }, 'job removed from the schedule');
      } else entry.watch = new JobFileWatch(next.file, versions.get(name)); // the same job, from the file as it is now
    }
    for (const [name, job] of wanted) {
      if (this.scheduled.has(name)) continue;
      const task = cron().createTask(job.schedule ?? '', () => this.tick(name), { timezone: job.timezone, name, missedExecutionTolerance: TICK_TOLERANCE_MS });
      task.on('execution:missed', (context) => this.tickMissed(name, context.date));
      const entry: Scheduled = { job, task, watch: new JobFileWatch(job.file, versions.get(name)) };
      await task.start();
      this.scheduled.set(name, entry);
      logger.info({ job: name, schedule: job.schedule, timezone: job.timezone, nextRun: entry.task.getNextRun()?.toISOString() }, 'job scheduled');
    }
    if (this.scheduled.size === 0) logger.warn({ jobsDir: dir }, 'no job with a schedule: nothing to run');
  }

  /**
   * node-cron reports each tick missed while the process was held up, all at once when it wakes:
   * a machine suspended for a night would write a line per tick (86,400 for an every-second job),
   * flooding the log (journald drops lines past its rate limit, other jobs' included). One line
   * per job says how many, from which tick to which.
   */
  private tickMissed(name: string, tick: Date): void {
    const seen = this.missed.get(name);
    if (seen) {
      seen.count += 1;
      seen.last = tick;
      return;
    }
    const missed = { count: 1, first: tick, last: tick };
    this.missed.set(name, missed);
    setImmediate(() => {
      this.missed.delete(name);
      const { count, first, last } = missed;
      const held = `the scheduler was held up past ${count === 1 ? 'its' : 'their'} time by more than ${TICK_TOLERANCE_MS / 1000} s, or the next one was due`;
      this.options.logger.warn({ job: name, missed: count, firstTick: first.toISOString(), lastTick: last.toISOString() }, `missed ${count === 1 ? 'a run' : `${count} runs`}: ${held}`);
    });
  }

  private tick(name: string): void {
    const { logger } = this.options;
    const entry = this.scheduled.get(name);
    if (this.stopped || !entry) return;
    const going = this.running.get(name);
    if (going) {
      // Since when: a run has no time limit, and one that hangs shows here, tick after tick.
      logger.warn({ job: name, runningSince: going.since.toISOString() }, 'skipping this tick: the previous run of the job is still going');
      return;
    }
    const drift = entry.watch.check();
    if (drift === 'changed') {
      logger.warn(
        { job: name, file: entry.job.file },
        'the job file changed since the scheduler loaded it: this run and the next ones use the job as it was loaded; send SIGHUP (systemctl reload adsync) to load the file again',
      );
    } else if (drift === 'gone') {
      logger.warn(
        { job: name, file: entry.job.file },
        'the job file is gone since the scheduler loaded it: the job still runs as it was loaded; send SIGHUP (systemctl reload adsync) to take it off the schedule',
      );
    }
    const since = new Date();
    const run = runJob(entry.job, this.options.environment, { command: 'run', dryRun: false, full: false, rejectsWithValues: false })
      .then((summary) => {
        const elsewhere = summary.error?.includes('is already running') === true;
        // A run the stop (SIGTERM) interrupted is no error: every restart would log one per run in progress.
        const stopped = summary.status === 'interrupted' && this.stopped;
        const level = summary.status === 'success' ? 'info' : elsewhere || stopped ? 'warn' : 'error';
        logger[level]({ summary }, elsewhere ? 'run skipped: the job is running elsewhere' : `run ${summary.status}`);
        this.options.onRun?.(summary);
        // Only a run that will be made: none once stopped (SIGTERM), none for a job a reload
        // removed; the job as scheduled now, for one a reload changed.
        const current = this.scheduled.get(name);
        if (!this.stopped && current) logger.info({ job: name, nextRun: current.task.getNextRun()?.toISOString() }, 'next run');
      })
      .catch((error: unknown) => {
        logger.error({ job: name, error: String(error) }, 'run crashed');
        this.alerts.runCrashed(entry.job, error);
      })
      .finally(() => this.running.delete(name));
    this.running.set(name, { run, since });
  }

  /** Stops scheduling; waits for the runs in progress (they stop at the next batch boundary) and the alerts being sent. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const entry of this.scheduled.values()) await entry.task.destroy();
    this.scheduled.clear();
    if (this.running.size > 0) this.options.logger.info({ runs: this.running.size }, 'waiting for the runs in progress to commit their work in flight');
    await Promise.allSettled([...this.running.values()].map((going) => going.run));
    await this.alerts.settled();
  }
}
