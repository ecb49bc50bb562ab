/**
 * What one run of one job carries: the job, its options, the state store, a lazily built
 * API client, the live counters, the rejects file, the summary being filled in, and the
 * reasons it will fail for.
 */
import type { Logger } from 'pino';
import { AdsApiClient } from '../api/client.js';
import { loadCredentials } from '../api/credentials.js';
import type { Settings } from '../config/settings.js';
import { reportedMessage, type AdsyncError } from '../errors.js';
import type { StateStore } from '../state/store.js';
import type { Job } from './job.js';
import type { ProgressDisplay, RunCounters } from './progress.js';
import type { RejectsFile } from './rejects-file.js';
import type { RunSummary } from './summary.js';

export interface RunEnvironment {
  settings: Settings;
  store: StateStore;
  logger: Logger;
  /** Environment variables (credentials). */
  env: NodeJS.ProcessEnv;
  progress: ProgressDisplay;
  /** Identifies this process as a lock owner. */
  owner: string;
  /** Aborted to stop: the work in flight finishes and is committed, nothing new starts. */
  stop: AbortSignal;
  /** Builds the API client of a job (tests may replace it). */
  clientFor?: (job: Job, logger: Logger) => AdsApiClient;
}

export interface RunOptions {
  command: 'run' | 'backfill';
  dryRun: boolean;
  /** Ignore the saved state and send everything. */
  full: boolean;
  rejectsWithValues: boolean;
  /** backfill: ignore a saved checkpoint and start over. */
  restart?: boolean;
  /** Overrides the job's max_delete_ratio / max_remove_ratio for this run. */
  maxDeleteRatio?: number | undefined;
  /** `adsync validate`: read and check the source, plan nothing, call no API. */
  validateOnly?: boolean;
}

export class RunContext {
  readonly failures: string[] = [];
  /** Set when the stop signal left work undone (the next run does it). */
  interrupted = false;
  /** Rows or items the source could not read at all (their identifiers or ids are unknown). */
  readonly unreadable = { count: 0, first: undefined as { row: number; line: number; reason: string } | undefined };
  readonly notes: string[] = [];
  private clientInstance: AdsApiClient | undefined;

  constructor(
    readonly job: Job,
    readonly runId: string,
    readonly env: RunEnvironment,
    readonly options: RunOptions,
    readonly summary: RunSummary,
    readonly counters: RunCounters,
    readonly rejects: RejectsFile,
    readonly logger: Logger,
    /** Stop requested, or the lock was lost. */
    readonly stop: AbortSignal,
  ) {}

  get store(): StateStore {
    return this.env.store;
  }

  get settings(): Settings {
    return this.env.settings;
  }

  client(): AdsApiClient {
    if (!this.clientInstance) {
      this.clientInstance = this.env.clientFor ? this.env.clientFor(this.job, this.logger) : defaultClient(this.job, { ...this.env, stop: this.stop }, this.logger);
    }
    return this.clientInstance;
  }

  get hasClient(): boolean {
    return this.clientInstance !== undefined;
  }

  /** Marks the run failed for this reason (the run goes on unless the caller stops). */
  fail(reason: string): void {
    this.failures.push(reason);
  }

  /**
   * Marks the run failed because `what` ("25 products") could not be delivered, saying why the
   * first request that failed was not (a 413, a 400 refusing it as a whole ...).
   */
  failDelivery(what: string, firstFailure: AdsyncError | undefined): void {
    this.fail(`${what} could not be delivered${firstFailure ? ` (${reportedMessage(firstFailure)})` : ''}; the next run sends them again`);
  }

  /** Turns a row as stored into the row of the source file (see parallel-export-read.ts). */
  displayRow: (row: number) => number = (row) => row;

  /** Undoes what reading the source recorded, for a read that starts over. */
  restartReading(): void {
    this.rejects.reset();
    this.unreadable.count = 0;
    this.unreadable.first = undefined;
    this.summary.read = 0;
    this.summary.valid = 0;
    this.counters.rowsRead = 0;
    this.counters.bytesRead = 0;
  }

  /**
   * For a read of the source stopped by the stop signal, which aborts it where it is (a
   * download waiting on a stalled server too): what the read then throws is the stop, and the
   * caller ends the read quietly, as on a stop seen between two batches. Rethrows anything else.
   */
  rethrowUnlessStopped(error: unknown): void {
    if (!this.stop.aborted) throw error;
  }

  /** Counts a row or item the source could not read. */
  unreadableRow(row: number, line: number, reason: string): void {
    this.unreadable.count += 1;
    this.unreadable.first ??= { row, line, reason };
  }

  /**
   * Mirror runs make no removal or delete when some rows could not be read: such a row may
   * hold a member or product that is still current. Returns false (and fails the run) then.
   * `adsync validate` cannot know whether a run would have any to make: it warns instead.
   */
  allowsDestructiveChanges(what: string): boolean {
    const u = this.unreadable;
    if (u.count === 0 || !u.first) return true;
    const rows = `${u.count} ${u.count === 1 ? 'row' : 'rows'} of the source could not be read (first: row ${u.first.row}, line ${u.first.line}: ${u.first.reason}); such a row may hold one that is still current`;
    if (this.options.validateOnly) {
      this.note(`${rows}: a mirror run that has ${what} to make will make none and fail. Fix those rows (see the rejects file)`);
    } else {
      this.fail(`${rows}, so no ${what} were made. Fix those rows (see the rejects file) and run again`);
    }
    return false;
  }

  note(text: string): void {
    this.notes.push(text);
    this.logger.warn(text);
  }
}

/** `stop`: the run's stop request (see AdsApiClientOptions.stop). */
export function defaultClient(job: Job, env: Pick<RunEnvironment, 'settings' | 'env'> & { stop?: AbortSignal | undefined }, logger: Logger): AdsApiClient {
  const credentials = loadCredentials({ profile: job.credentials, env: env.env, credentialsPath: env.settings.credentialsFile });
  return new AdsApiClient({
    credentials,
    adsUrl: env.settings.adsUrl,
    apiUrl: env.settings.apiUrl,
    timeoutMs: job.requestTimeoutMs,
    retry: job.retry,
    rateLimits: env.settings.rateLimits,
    logger,
    // A stop request does not wait for a rate limit's reset or a retry's delay to pass.
    stop: env.stop,
  });
}
