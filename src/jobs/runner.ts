/**
 * One run of one job: take the job's lock (one run per job at a time, across processes),
 * record the run, wait for its target's lock (one run per catalog or audience at a time:
 * target-lock.ts), run the sync, decide its status and exit code, write the history, send
 * an alert when it failed. The kind-specific work is in run-audience.ts, run-catalog.ts and
 * the backfills.
 */
import { randomBytes } from 'node:crypto';
import { defaultMaxListeners, setMaxListeners } from 'node:events';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { ExitCode, LockedError, reportedMessage, reportedText, toAdsyncError, type AdsyncError } from '../errors.js';
import { STOP_LISTENERS_PER_CALL } from '../api/client.js';
import { CallStoppedError } from '../api/errors.js';
import { whyRetryingStopped } from '../api/retry.js';
import type { AdsApiClient } from '../api/client.js';
import type { EndpointFamily } from '../api/rate-limiter.js';
import { usersFamily } from '../api/resources/audiences.js';
import type { RunKind } from '../state/store.js';
import { sendAlert, shouldAlert } from './alerts.js';
import { acquireLock, lockHeldSince } from './job-lock.js';
import type { Job } from './job.js';
import type { RunCounters } from './progress.js';
import { RejectsFile } from './rejects-file.js';
import { RunContext, type RunEnvironment, type RunOptions } from './run-context.js';
import { RunStop } from './run-stop.js';
import { emptySummary, type RunSummary } from './summary.js';
import { BACKFILL_RESUMES, stoppedBySignal } from './stopped-by-signal.js';
import { describeTarget, targetLockKey, targetLockOwner, waitForTargetLock } from './target-lock.js';

/**
 * When a run started: the wall clock's time, which names the run and dates it in the history,
 * and a mark of the monotonic clock its duration is measured from. A wall clock that NTP steps
 * back (or forward) mid-run would make a duration negative (`-3599.9s` in `adsync runs`), or
 * an hour too long.
 */
export interface RunStart {
  at: number;
  mark: number;
}

function startNow(): RunStart {
  return { at: Date.now(), mark: performance.now() };
}

function elapsedMs(start: RunStart): number {
  return Math.round(performance.now() - start.mark);
}

export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}

export function kindOf(job: Job): RunKind {
  return job.kind;
}

/**
 * What a run says of the earlier runs of its job it found dead (an OOM kill, kill -9, a crash):
 * they ended without a summary or an alert, so this run's notes and an `adsync.job` alert say it.
 */
function abandonedRuns(job: Job, count: number, runId: string): string {
  const runs = count === 1 ? 'an earlier run' : `${count} earlier runs`;
  return `${runs} of job ${job.name} stopped before ${count === 1 ? 'it' : 'they'} finished (killed or crashed), without a summary or an alert of ${count === 1 ? 'its' : 'their'} own: \`adsync runs --job ${job.name}\` lists ${count === 1 ? 'it' : 'them'} as failed; committed work is kept, and run ${runId} sends the rest`;
}

/**
 * Sends the alert a finished run calls for, if any. `lostLock`: the lock the run lost (another
 * process took it over after it expired), which calls for one whatever its status.
 */
async function alertOn(job: Job, finished: RunSummary, logger: Logger, lostLock?: string): Promise<void> {
  const alert = shouldAlert(finished, job.alerts.rejectRatio);
  const reason =
    alert.send || lostLock === undefined
      ? alert.reason
      : `run ${finished.status}: ${finished.error ?? `${lostLock} was lost`} (another process took it over after lock.ttl_seconds without a heartbeat); ${finished.status === 'success' ? 'its work was done' : 'what was not sent is sent by the next run'}`;
  if ((alert.send || lostLock !== undefined) && job.alerts.webhookUrl) await sendAlert(job.alerts.webhookUrl, { event: 'adsync.run', reason, summary: finished }, logger);
}

/** The endpoint family of a job's upload: its rate limit paces the upload. */
function uploadFamily(job: Job): EndpointFamily {
  return job.kind === 'catalog' ? 'catalog_write' : usersFamily(job);
}

/**
 * How long the upload's records left take at the rate limits: their requests, at the records
 * per request of the upload so far (a catalog's 25 products, an audience's bodies full to the
 * byte limit), through `AdsApiClient.timeFor`. Undefined before a request was acknowledged.
 */
function uploadTimeAtLimits(client: AdsApiClient, family: EndpointFamily, counters: RunCounters): { ms: number; paced: boolean } | undefined {
  const requests = client.stats.byFamily[family] ?? 0;
  const left = counters.toSend - counters.sent;
  if (requests === 0 || counters.sent === 0 || left <= 0) return undefined;
  return client.timeFor(family, Math.ceil(left / (counters.sent / requests)));
}

/**
 * The sync of the job's kind, for the command: imported when a run gets to it, so that a process
 * loads the sync of the kinds it runs only (an audience run neither the catalog's feed readers,
 * product rules and workers nor its uploader; a catalog run none of the export's).
 */
async function runSync(ctx: RunContext, job: Job, command: RunOptions['command']): Promise<void> {
  if (command === 'backfill') {
    if (job.kind === 'catalog') await (await import('./backfill-catalog.js')).backfillCatalog(ctx, job);
    else await (await import('./backfill-audience.js')).backfillAudience(ctx, job);
  } else if (job.kind === 'catalog') await (await import('./run-catalog.js')).runCatalog(ctx, job);
  else await (await import('./run-audience.js')).runAudience(ctx, job);
}

/**
 * The summary of a run that could not start (the job is locked, the state database cannot be
 * opened or written): nothing was done. It alerts as a failed run does, unless the job is
 * running elsewhere: that run is going, and alerts for itself.
 */
export async function runNotStarted(
  job: Job,
  error: AdsyncError,
  run: { dryRun: boolean; logger: Logger; runId?: string; started?: RunStart },
): Promise<RunSummary> {
  const started = run.started ?? startNow();
  const runId = run.runId ?? newRunId(new Date(started.at));
  const failed: RunSummary = {
    ...emptySummary(job.name, kindOf(job), runId, run.dryRun),
    status: 'failed',
    error: reportedMessage(error),
    exit_code: error.exitCode,
    duration_ms: elapsedMs(started),
  };
  if (!(error instanceof LockedError)) await alertOn(job, failed, run.runId === undefined ? run.logger.child({ job: job.name, run: runId }) : run.logger);
  return failed;
}

/** Runs a job once. Never throws for a failed run: the summary says how it ended. */
export async function runJob(job: Job, env: RunEnvironment, options: RunOptions): Promise<RunSummary> {
  const started = startNow();
  const runId = newRunId(new Date(started.at));
  const logger = env.logger.child({ job: job.name, run: runId });
  const summary = emptySummary(job.name, kindOf(job), runId, options.dryRun);
  const takesLock = !options.dryRun;
  /** A run that could not start: see runNotStarted. */
  const notStarted = (error: AdsyncError): Promise<RunSummary> => runNotStarted(job, error, { dryRun: options.dryRun, runId, started, logger });
  if (takesLock) {
    let lock: Awaited<ReturnType<typeof acquireLock>>;
    try {
      lock = await acquireLock(env.store, job.name, env.owner, env.settings.lockTtlMs, logger);
    } catch (error) {
      return notStarted(toAdsyncError(error));
    }
    if (!lock.acquired) {
      const h = lock.holder;
      const expiry = new Date(h.expiresAt).toISOString();
      return notStarted(
        new LockedError(
          `job ${job.name} is already running (${lockHeldSince(h)}); nothing was done`,
          {
            hint:
              h.expiresAt <= Date.now()
                ? `its lock's expiry, ${expiry}, has passed, but that process is still running on this host: the clock was stepped forward since its last heartbeat, or it is stuck; let it end, or stop it`
                : `if that process is gone, the lock expires at ${expiry}; or remove it with \`adsync unlock ${job.name}\``,
          },
        ),
      );
    }
  }

  const lockLost = new AbortController();
  // The target's lock (a write run's, taken once the run is recorded): lost like the job's.
  const target = takesLock ? targetLockKey(job) : undefined;
  const targetOwner = targetLockOwner(env.owner, runId);
  let targetHeld = false;
  const targetLost = new AbortController();
  const runStop = new RunStop(env.stop, [lockLost.signal, targetLost.signal]);
  const stop = runStop.signal;
  // Every API call in flight listens to it (up to `concurrency` at once), besides the source
  // reader and the like: Node's warning of a listener leak would be a false alarm.
  setMaxListeners(defaultMaxListeners + STOP_LISTENERS_PER_CALL * job.concurrency, stop);
  let heartbeat: NodeJS.Timeout | undefined;
  if (takesLock) {
    heartbeat = setInterval(() => {
      env.store.locks
        .heartbeat(job.name, env.owner, env.settings.lockTtlMs, Date.now())
        .then((held) => {
          if (!held && !lockLost.signal.aborted) {
            logger.error('lost the job lock (another process took it over after it expired): stopping after the requests in flight');
            lockLost.abort();
          }
        })
        .catch((error: unknown) => logger.warn({ error: String(error) }, 'lock heartbeat failed'));
      if (target === undefined || !targetHeld) return;
      env.store.locks
        .heartbeat(target, targetOwner, env.settings.lockTtlMs, Date.now())
        .then((held) => {
          if (!held && !targetLost.signal.aborted) {
            logger.error(`lost the lock of ${describeTarget(target)} (another process took it over after it expired): stopping after the requests in flight`);
            targetLost.abort();
          }
        })
        .catch((error: unknown) => logger.warn({ error: String(error) }, 'lock heartbeat failed'));
    }, env.settings.lockHeartbeatMs);
    heartbeat.unref();
  }
  /** Earlier runs of the job whose process died: they could not say so themselves (see abandonedRuns). */
  let abandoned: string[] = [];
  try {
    if (takesLock) abandoned = await env.store.runs.markAbandoned(job.name, started.at);
    await env.store.runs.start({ runId, job: job.name, kind: summary.kind, command: options.command, dryRun: options.dryRun, startedAt: started.at });
  } catch (error) {
    // The lock is not left behind, kept alive by a heartbeat of a run that never started.
    clearInterval(heartbeat);
    runStop.end();
    if (takesLock) await env.store.locks.release(job.name, env.owner).catch(() => undefined);
    return notStarted(toAdsyncError(error));
  }

  const rejects = new RejectsFile(join(env.settings.rejectsDir, job.name, `${runId}.csv`), options.rejectsWithValues);
  const counters: RunCounters = {
    phase: 'reading',
    rowsRead: 0,
    waitedMs: 0,
    bytesRead: 0,
    bytesTotal: undefined,
    listed: 0,
    toSend: 0,
    sent: 0,
    requests: () => (ctx.hasClient ? ctx.client().stats.requests : 0),
    retries: () => (ctx.hasClient ? ctx.client().stats.retries : 0),
    limitedTimeLeft: () => (ctx.hasClient && counters.phase === 'uploading' ? uploadTimeAtLimits(ctx.client(), uploadFamily(job), counters) : undefined),
  };
  // The phase the stop signal came in, for the summary's `error` (stopped-by-signal.ts). The
  // listener is removed when the run ends: a signal of AbortSignal.any with a listener stays
  // referenced until it aborts, and with it this run's counters (the scheduler's runs add up).
  let stoppedIn: RunCounters['phase'] | undefined = stop.aborted ? counters.phase : undefined;
  const noteStopPhase = (): void => {
    stoppedIn ??= counters.phase;
  };
  stop.addEventListener('abort', noteStopPhase, { once: true });
  const ctx = new RunContext(job, runId, env, options, summary, counters, rejects, logger, stop);
  const abandonedNote = abandoned.length > 0 ? abandonedRuns(job, abandoned.length, runId) : undefined;
  if (abandonedNote !== undefined) ctx.note(abandonedNote);
  logger.info({ kind: summary.kind, command: options.command, dryRun: options.dryRun, full: options.full }, 'run started');
  // This run's own display: a concurrent run of the scheduler has another.
  const progress = env.progress.start(job.name, counters, runId);

  let fatal: AdsyncError | undefined;
  /** The holders of the target's lock this run waited for, while it waits or if it was stopped waiting. */
  let waitingFor: string[] | undefined;
  try {
    // Credentials are checked before the source is read: a missing variable should not cost
    // a pass over a ten-million-row export first (nor a wait for the target).
    if (!options.dryRun) ctx.client();
    if (target !== undefined) {
      counters.phase = 'waiting';
      waitingFor = [];
      const waitStarted = performance.now();
      const held = await waitForTargetLock({ store: env.store, key: target, owner: targetOwner, ttlMs: env.settings.lockTtlMs, pollMs: Math.min(1000, env.settings.lockHeartbeatMs), signal: stop, logger, onWait: (holder) => waitingFor?.push(holder) });
      counters.waitedMs = Math.round(performance.now() - waitStarted);
      if (held === undefined) ctx.interrupted = true;
      else {
        targetHeld = true;
        waitingFor = undefined;
        counters.phase = 'reading';
        if (held.waitedMs > 0) ctx.note(`waited ${(held.waitedMs / 1000).toFixed(1)} s for ${describeTarget(target)}: ${held.waitedFor.join(', then ')} was writing to it (jobs on one target take turns)`);
      }
    }
    if (ctx.interrupted) {
      // Stopped while waiting for the target: nothing was read or sent.
    } else await runSync(ctx, job, options.command);
    // A dry run ends after planning: its display ends as a run's that ran to its end does.
    if (!ctx.interrupted) counters.phase = 'finishing';
  } catch (error) {
    // A call the stop request kept from being sent (a product listing, a lookup): interrupted.
    if (error instanceof CallStoppedError && stop.aborted) ctx.interrupted = true;
    else fatal = toAdsyncError(error);
    if (fatal?.code === 'INTERNAL_ERROR') logger.error({ err: error }, 'run failed with an internal error');
  } finally {
    progress.stop();
    try {
      rejects.close();
    } catch (error) {
      // The run's own failure, if any, comes first; this one still fails the run.
      fatal ??= toAdsyncError(error);
    }
    if (heartbeat) clearInterval(heartbeat);
    stop.removeEventListener('abort', noteStopPhase);
    runStop.end();
  }

  summary.rejected = rejects.count;
  summary.rejects_file = rejects.created ? rejects.path : null;
  if (ctx.hasClient) {
    summary.requests = ctx.client().stats.requests;
    summary.retries = ctx.client().stats.retries;
  }
  if (summary.read > 0 && summary.rejected / summary.read > job.maxRejectRatio && !fatal) {
    ctx.fail(
      `${summary.rejected} of ${summary.read} rows rejected (${((summary.rejected / summary.read) * 100).toFixed(1)}%, more than max_reject_ratio ${job.maxRejectRatio}); see ${summary.rejects_file ?? 'the rejects file'}`,
    );
  }
  if (fatal) {
    summary.status = 'failed';
    // A retryable error that ends a run outlived its retries: say so, and that nothing is lost.
    const resume = options.command === 'backfill' ? BACKFILL_RESUMES : 'what was not acknowledged is sent by the next run';
    const hint = fatal.hint ?? (fatal.retryable ? `${whyRetryingStopped(fatal) ?? 'gave up after retrying'}; ${resume}` : undefined);
    summary.error = reportedText(fatal.message, hint);
    summary.exit_code = fatal.exitCode;
  } else if (ctx.failures.length > 0) {
    summary.status = 'failed';
    // Failures and notes may quote the service (a refused delete's message), which may quote the request.
    summary.error = reportedText(ctx.failures.join('; '));
    summary.exit_code = ExitCode.failed;
  } else if (ctx.interrupted) {
    summary.status = 'interrupted';
    summary.error = lockLost.signal.aborted
      ? 'the job lock was lost'
      : targetLost.signal.aborted && target !== undefined
        ? `the lock of ${describeTarget(target)} was lost`
        : waitingFor !== undefined && target !== undefined
          ? `stopped by a signal while waiting for ${describeTarget(target)} (${waitingFor.at(-1) ?? 'another run'} was writing to it); nothing was read or sent`
          : stoppedBySignal({ kind: summary.kind, command: options.command, phase: stoppedIn ?? counters.phase, read: summary.read, counters });
    summary.exit_code = ExitCode.failed;
  } else {
    summary.status = 'success';
    summary.exit_code = ExitCode.ok;
  }
  if (ctx.notes.length > 0) summary.notes = ctx.notes.map((note) => reportedText(note));
  summary.duration_ms = elapsedMs(started);

  // A run that lost its lock is alerted once: by itself, unless the run that took its job lock
  // over (and marked it abandoned) has reported it already (see RunHistory.reportsItself).
  const lostLock = lockLost.signal.aborted ? 'the job lock' : targetLost.signal.aborted && target !== undefined ? `the lock of ${describeTarget(target)}` : undefined;
  const reportsItself = lostLock === undefined || (await env.store.runs.reportsItself(runId).catch(() => true));

  // A state database that cannot record the end of the run (a full disk, a lock held by another
  // tool) fails the run, which still has its summary (--json, the scheduler's log) and alert.
  try {
    await env.store.runs.finish(runId, {
      status: summary.status,
      // The start and the duration measured: `adsync runs` shows their difference.
      finishedAt: started.at + summary.duration_ms,
      summary: { ...summary },
      error: summary.error,
      rejectsFile: summary.rejects_file ?? undefined,
    });
  } catch (error) {
    const failure = toAdsyncError(error);
    const why = `the run could not be recorded in the run history: ${reportedMessage(failure)}`;
    summary.status = 'failed';
    summary.error = summary.error ? `${summary.error}; ${why}` : why;
    summary.exit_code = Math.max(summary.exit_code, failure.exitCode);
  }
  if (targetHeld && target !== undefined) {
    await env.store.locks.release(target, targetOwner).catch((error: unknown) => {
      logger.warn({ error: toAdsyncError(error).message }, `the lock of ${describeTarget(target)} could not be released: a run on it waits until it expires (lock.ttl_seconds after this run's last heartbeat), or until this process has ended for a run on this host`);
    });
  }
  if (takesLock) {
    await env.store.locks.release(job.name, env.owner).catch((error: unknown) => {
      logger.warn({ error: toAdsyncError(error).message }, 'the job lock could not be released: the next run of the job on this host takes it over, one elsewhere after lock.ttl_seconds');
    });
  }
  logger.info({ status: summary.status, durationMs: summary.duration_ms }, 'run finished');

  if (reportsItself) await alertOn(job, summary, logger, lostLock);
  else logger.info(`no alert: the run that took ${lostLock ?? 'the lock'} over has reported this run already`);
  // The runs it marked abandoned that have not ended themselves since (a run that lost its lock
  // and is alive ends itself, and alerts for itself).
  if (abandoned.length > 0 && job.alerts.webhookUrl) {
    const unreported = (await Promise.all(abandoned.map((id) => env.store.runs.reportAbandoned(id, runId).catch(() => true)))).filter(Boolean).length;
    if (unreported > 0) await sendAlert(job.alerts.webhookUrl, { event: 'adsync.job', reason: abandonedRuns(job, unreported, runId), job: job.name, job_file: job.file }, logger);
  }
  return summary;
}
