/**
 * What the commands that run jobs share: loading job files (a bad one is reported and
 * skipped, the others still run), the state store, the progress display, printing the
 * summary, and the exit code.
 */
import { statSync } from 'node:fs';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { ExitCode, isAdsyncError, reportedMessage } from '../errors.js';
import type { Job } from '../jobs/job.js';
import { displayPath, loadJob, peekJobFile } from '../jobs/load-job.js';
import { BarProgress, LogProgress, NoProgress, type ProgressDisplay } from '../jobs/progress.js';
import type { RunEnvironment } from '../jobs/run-context.js';
import { runNotStarted } from '../jobs/runner.js';
import { formatSummaryTable, unloadedJobSummary, type RunSummary } from '../jobs/summary.js';
import { openStateStore } from '../state/index.js';
import type { StateStore } from '../state/store.js';
import type { CliContext } from './context.js';
import { describeFailure } from './errors.js';

export function lockOwner(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

export interface LoadJobsOptions {
  /** Replaces the job's source (backfill --source). */
  sourceOverride?: string | undefined;
  /** `--json`: a job file that fails to load gets its JSON summary object too. */
  json?: boolean;
  /** The dry_run of those summary objects. */
  dryRun?: boolean;
}

/**
 * Loads each job file; prints the problems of the ones that fail (with --json, a failed
 * summary object for each too, so a job never goes missing from the output) and raises the
 * exit code. Two jobs of one name: neither runs (only the message, as before).
 */
export function loadJobs(ctx: CliContext, files: readonly string[], options: LoadJobsOptions = {}): Job[] {
  const jobs: Job[] = [];
  // A settings file that cannot be loaded is no job's problem: it ends the command, once.
  const settings = ctx.settings;
  for (const file of files) {
    try {
      jobs.push(loadJob(file, settings, { cwd: ctx.cwd, sourceOverride: options.sourceOverride }));
    } catch (error) {
      if (!isAdsyncError(error)) throw error;
      const { text, exitCode } = describeFailure(error);
      if (options.json) {
        const message = reportedMessage(error);
        ctx.io.stdout(`${JSON.stringify(unloadedJobSummary(peekJobFile(file, ctx.cwd), message, exitCode, options.dryRun === true))}\n`);
      }
      ctx.io.stderr(text);
      ctx.fail(exitCode);
    }
  }
  const names = new Map<string, string>();
  for (const job of jobs) {
    const other = names.get(job.name);
    if (other !== undefined) {
      ctx.io.stderr(`adsync: ${job.file} and ${other} have the same job name "${job.name}"; give one of them a different name (name: in the job file)\n`);
      ctx.fail(2);
      return [];
    }
    names.set(job.name, job.file);
  }
  return jobs;
}

export function progressFor(ctx: CliContext, quiet: boolean): ProgressDisplay {
  if (quiet) return new NoProgress();
  return ctx.io.isTty && !ctx.dumbTerminal ? new BarProgress(ctx.terminal) : new LogProgress(ctx.logger, ctx.settings.progressIntervalMs);
}

export function runEnvironment(ctx: CliContext, store: StateStore, progress: ProgressDisplay, owner = lockOwner()): RunEnvironment {
  return { settings: ctx.settings, store, logger: ctx.logger, env: ctx.env, progress, owner, stop: ctx.shutdown.signal };
}

/**
 * The state store for running `jobs`. One that cannot be opened (damaged, held by another
 * process past the busy timeout, not writable) fails each job before it starts, as a run that
 * could not start does: its failed summary (with --json, its JSON line) and its alert, so that a
 * run from cron is not silent; then the error ends the command.
 */
export async function openStoreForJobs(ctx: CliContext, jobs: readonly Job[], options: { json: boolean; dryRun: boolean }): Promise<StateStore> {
  try {
    return openStore(ctx);
  } catch (error) {
    if (!isAdsyncError(error)) throw error;
    for (const job of jobs) {
      const summary = await runNotStarted(job, error, { dryRun: options.dryRun, logger: ctx.logger });
      if (options.json) ctx.io.stdout(`${JSON.stringify(summary)}\n`);
    }
    throw error;
  }
}

export function openStore(ctx: CliContext): StateStore {
  const store = openStateStore(ctx.settings.statePath, { offThreadCommitMin: ctx.settings.commitThreadMin });
  warnIfReadableByOthers(ctx, ctx.settings.statePath);
  return store;
}

/**
 * The state database holds hashed identifiers: a new one is made 0600, but one made by an
 * earlier adsync (0644) keeps its mode, which is the operator's to change: a warning says so.
 */
function warnIfReadableByOthers(ctx: CliContext, path: string): void {
  let mode: number;
  try {
    mode = statSync(path).mode;
  } catch {
    return;
  }
  if ((mode & 0o077) === 0) return;
  ctx.logger.warn(
    { state: path, mode: `0${(mode & 0o777).toString(8)}` },
    `the state database can be read by other users of this machine (it holds the audiences' hashed identifiers): chmod 600 ${path}`,
  );
}

/**
 * A job that a stop request (SIGTERM, Ctrl-C) kept from starting: no run was made. It is said
 * (with --json, a summary object like that of a job file that did not load, `interrupted`), so
 * that neither the exit code nor a --json log passes over it.
 */
export function reportNotRun(ctx: CliContext, job: Job, options: { json: boolean; dryRun: boolean }): void {
  const why = 'not run: stopped by a signal before it started';
  if (options.json) {
    const summary = unloadedJobSummary({ name: job.name, kind: job.kind, file: displayPath(job.file, ctx.cwd) }, why, ExitCode.failed, options.dryRun);
    ctx.io.stdout(`${JSON.stringify({ ...summary, status: 'interrupted' })}\n`);
  }
  ctx.io.stderr(`adsync: job ${job.name} ${why}\n`);
  ctx.fail(ExitCode.failed);
}

/** Prints a run's outcome: the JSON line, or the table (validate's without the sending counts); a failure line on stderr. */
export function reportRun(ctx: CliContext, summary: RunSummary, json: boolean, validation = false): void {
  if (json) ctx.io.stdout(`${JSON.stringify(summary)}\n`);
  else ctx.io.stdout(formatSummaryTable(summary, { validation }));
  if (summary.status !== 'success' && summary.error) ctx.io.stderr(`adsync: job ${summary.job} ${summary.status}: ${summary.error}\n`);
  ctx.fail(summary.exit_code);
}
