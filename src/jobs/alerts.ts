/**
 * Alerts: when a run fails, or its reject ratio passes the alert threshold, the JSON summary
 * is POSTed to the job's (or config's) webhook (`adsync.run`). When a job cannot run at all
 * and so has no summary (its job file does not load, its run crashed, the scheduler could not
 * start), the scheduler sends the smaller `adsync.job` or `adsync.schedule` alert instead.
 * Retried a few times, bounded in time, and never able to fail or block the run: a failed
 * alert is logged and dropped. An alert holds counts, names and paths only, never a credential.
 */
import type { Logger } from 'pino';
import { sendHttp } from '../api/http.js';
import { RetryableHttpError, ApiRequestError } from '../api/errors.js';
import { redirectOrigin } from '../api/client.js';
import { withRetry } from '../api/retry.js';
import type { RunSummary } from './summary.js';

/** A run that failed or rejected too much: its summary. */
export interface RunAlert {
  event: 'adsync.run';
  reason: string;
  summary: RunSummary;
}

/**
 * A job that cannot run and has no run summary: its job file does not load, another file has
 * its job name, or its run crashed; or a run of it that died (killed), which its next run
 * sends. `job` is the job's name as far as the file tells it (`name:`, else the file name);
 * `job_file` the file as the scheduler (or the run) found it.
 */
export interface JobAlert {
  event: 'adsync.job';
  reason: string;
  job: string;
  job_file: string;
}

/** The scheduler could not start, so no job of its folder runs. */
export interface ScheduleAlert {
  event: 'adsync.schedule';
  reason: string;
  jobs_dir: string;
}

export type Alert = RunAlert | JobAlert | ScheduleAlert;

export interface AlertDecision {
  send: boolean;
  reason: string;
}

export function shouldAlert(summary: RunSummary, rejectRatio: number): AlertDecision {
  if (summary.dry_run) return { send: false, reason: 'dry run' };
  if (summary.status === 'failed') return { send: true, reason: `run failed${summary.error ? `: ${summary.error}` : ''}` };
  const ratio = summary.read > 0 ? summary.rejected / summary.read : 0;
  if (ratio > rejectRatio) {
    return { send: true, reason: `${(ratio * 100).toFixed(1)}% of rows rejected (alert threshold ${(rejectRatio * 100).toFixed(1)}%)` };
  }
  return { send: false, reason: 'ok' };
}

/**
 * The webhook in messages: its origin only. For Slack-style webhooks the path is the secret,
 * so it never appears in a log line or an error.
 */
const WEBHOOK_PATH = '<webhook path>';

/**
 * How long an attempt waits for the webhook's answer. The webhook has the alert by then: an
 * attempt given up on may have been delivered, and the retry is a second page. Long enough for
 * a slow webhook; a hung one is tried twice within the budget (~20 s).
 */
const ATTEMPT_TIMEOUT_MS = 10_000;

/** POSTs the alert as JSON; true once the webhook took it. A delivery that fails is logged (without the webhook's path), and false. */
export async function sendAlert(url: string, alert: Alert, logger: Logger): Promise<boolean> {
  const target = new URL(url);
  const body = Buffer.from(JSON.stringify(alert));
  try {
    await withRetry(
      async () => {
        const answer = await sendHttp({
          method: 'POST',
          url: target,
          headers: { 'content-type': 'application/json', 'user-agent': 'adsync' },
          body,
          timeoutMs: ATTEMPT_TIMEOUT_MS,
        });
        if (answer.status >= 500 || answer.status === 429 || answer.status === 408) {
          throw new RetryableHttpError({ method: 'POST', path: WEBHOOK_PATH, status: answer.status, errors: [] });
        }
        const context = { method: 'POST', path: WEBHOOK_PATH, status: answer.status, errors: [] };
        if (answer.status >= 300 && answer.status <= 399) {
          // Not followed (the alert would be sent where no one configured it), and every attempt
          // would be answered the same: where it points (its origin only) is what to set.
          const to = redirectOrigin(answer.headers.location);
          throw new ApiRequestError(context, `POST ${WEBHOOK_PATH} answered HTTP ${answer.status}, a redirect${to ? ` to ${to}` : ''}: adsync does not follow redirects; set alerts.webhook_url to the address it points to`);
        }
        if (answer.status >= 300) throw new ApiRequestError(context);
      },
      { retries: 3, minDelayMs: 250, maxDelayMs: 2000, budgetMs: 15_000 },
    );
    logger.info({ webhook: target.origin, event: alert.event, reason: alert.reason }, 'alert sent');
    return true;
  } catch (error) {
    // sendHttp names the path it was given in network errors: put the placeholder back in (a
    // root path "/" hides nothing, and would replace every slash of the message).
    const raw = error instanceof Error ? error.message : String(error);
    let message = target.pathname === '/' ? raw : raw.split(target.pathname).join(WEBHOOK_PATH);
    if (target.search) message = message.split(target.search).join('');
    logger.warn({ webhook: target.origin, error: message }, 'alert could not be delivered');
    return false;
  }
}
