/**
 * What one run of one job carries: the job, its options, the state store, a lazily built
 * API client, the live counters, the rejects file, the summary being filled in, and the
 * reasons it will fail for.
 */
import type { Logger } from 'pino';
import { AdsApiClient } from '../api/client.js';
import { loadCredentials } from '../api/credentials.js';
import type { Settings } from '../config/settings.js';
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
      this.clientInstance = this.env.clientFor ? this.env.clientFor(this.job, this.logger) : defaultClient(this.job, this.env, this.logger);
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

  note(text: string): void {
    this.notes.push(text);
    this.logger.warn({ job: this.job.name }, text);
  }
}

export function defaultClient(job: Job, env: Pick<RunEnvironment, 'settings' | 'env'>, logger: Logger): AdsApiClient {
  const credentials = loadCredentials({ profile: job.credentials, env: env.env, credentialsPath: env.settings.credentialsFile });
  return new AdsApiClient({
    credentials,
    adsUrl: env.settings.adsUrl,
    apiUrl: env.settings.apiUrl,
    timeoutMs: job.requestTimeoutMs,
    retry: job.retry,
    rateLimits: env.settings.rateLimits,
    logger,
  });
}
