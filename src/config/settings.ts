/**
 * Global settings: config/adsync.yaml (or the file named by --config / ADSYNC_CONFIG), every
 * key optional with the defaults below; environment variables win over the file for the
 * endpoints and the state path. Job files may override the per-run keys (concurrency,
 * request timeout, retry, alerts, max_reject_ratio, timezone).
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { DEFAULT_ADS_URL, DEFAULT_API_URL } from '../api/client.js';
import type { EndpointFamily, FamilyLimit, RateLimitSettings } from '../api/rate-limiter.js';
import type { RetrySettings } from '../api/retry.js';
import { ConfigError } from '../errors.js';
import { OFF_THREAD_MIN_IDENTIFIERS } from '../state/sqlite/audience-commits.js';
import { parseWithSchema, readYamlFile } from './yaml-file.js';
import { expandHome } from './home-path.js';

const ratio = z.number().min(0).max(1);
const positiveInt = z.number().int().positive();

/** The longest a Node.js timer can wait (~24.8 days): a longer delay fires after 1 ms instead. */
const MAX_TIMER_MS = 2_147_483_647;
/** A duration in milliseconds that timers wait for. */
export const timerMs = z.number().int().min(0).max(MAX_TIMER_MS, `at most ${MAX_TIMER_MS} (about 24.8 days: a longer wait cannot be timed)`);
/** A duration in whole seconds (at least 1) that timers wait for. */
const timerSeconds = positiveInt.max(Math.floor(MAX_TIMER_MS / 1000), `at most ${Math.floor(MAX_TIMER_MS / 1000)} (about 24.8 days: a longer wait cannot be timed)`);
/**
 * The longest refresh_after_days: audience and do-not-reach memberships expire 13 months (at
 * least 393 days) after they are sent, so a member must be sent again before that, on a run
 * that comes before it (a month of margin for the schedule).
 */
export const MAX_REFRESH_AFTER_DAYS = 365;
export const refreshAfterDays = positiveInt.max(
  MAX_REFRESH_AFTER_DAYS,
  `at most ${MAX_REFRESH_AFTER_DAYS}: memberships expire 13 months after they are sent, so members must be sent again before then`,
);

export const retrySchema = z.strictObject({
  retries: z.number().int().min(0).max(100).optional(),
  min_delay_ms: timerMs.optional(),
  max_delay_ms: timerMs.optional(),
  budget_ms: timerMs.optional(),
});

export const alertsSchema = z.strictObject({
  webhook_url: z.url({ protocol: /^https?$/ }).nullable().optional(),
  reject_ratio: ratio.optional(),
});

const familyLimitSchema = z.strictObject({ requests: positiveInt, window_seconds: timerSeconds }).nullable();

export const FAMILIES = ['audience_users', 'do_not_reach_users', 'catalog_read', 'catalog_write', 'audiences', 'accounts', 'oauth', 'other'] as const satisfies readonly EndpointFamily[];

export const settingsFileSchema = z.strictObject({
  ads_url: z.url().optional(),
  api_url: z.url().optional(),
  state: z.string().min(1).optional(),
  rejects_dir: z.string().min(1).optional(),
  credentials_file: z.string().min(1).optional(),
  concurrency: z.number().int().min(1).max(64).optional(),
  read_threads: z.number().int().min(1).max(16).optional(),
  commit_thread_min: positiveInt.nullable().optional(),
  request_timeout_ms: timerMs.min(1).optional(),
  retry: retrySchema.optional(),
  rate_limits: z.partialRecord(z.enum(FAMILIES), familyLimitSchema).optional(),
  timezone: z.string().optional(),
  max_reject_ratio: ratio.optional(),
  alerts: alertsSchema.optional(),
  lock: z.strictObject({ ttl_seconds: timerSeconds.optional(), heartbeat_seconds: timerSeconds.optional() }).optional(),
  progress_interval_seconds: timerSeconds.optional(),
  audience: z.strictObject({ refresh_after_days: refreshAfterDays.optional(), max_remove_ratio: ratio.optional() }).optional(),
  catalog: z.strictObject({ max_delete_ratio: ratio.optional() }).optional(),
});
export type SettingsFile = z.infer<typeof settingsFileSchema>;

export interface AlertSettings {
  webhookUrl: string | undefined;
  rejectRatio: number;
}

export interface Settings {
  /** Where the settings came from (a file path), or undefined for built-in defaults. */
  file: string | undefined;
  adsUrl: string;
  apiUrl: string;
  statePath: string;
  rejectsDir: string;
  credentialsFile: string | undefined;
  concurrency: number;
  /** Threads that read a large local CRM export (1: the main thread only). */
  readThreads: number;
  /** Acknowledged audience batches of at least this many identifiers are committed by a second thread; null: never. */
  commitThreadMin: number | null;
  requestTimeoutMs: number;
  retry: RetrySettings;
  rateLimits: RateLimitSettings;
  timezone: string;
  maxRejectRatio: number;
  alerts: AlertSettings;
  lockTtlMs: number;
  lockHeartbeatMs: number;
  progressIntervalMs: number;
  refreshAfterDays: number;
  maxRemoveRatio: number;
  maxDeleteRatio: number;
}

export const DEFAULT_SETTINGS_PATH = 'config/adsync.yaml';

export const DEFAULTS = {
  state: '.adsync/state.sqlite',
  rejects_dir: '.adsync/rejects',
  concurrency: 4,
  read_threads: 2,
  commit_thread_min: OFF_THREAD_MIN_IDENTIFIERS,
  request_timeout_ms: 60_000,
  retry: { retries: 8, min_delay_ms: 500, max_delay_ms: 30_000, budget_ms: 300_000 },
  rate_limits: { audience_users: { requests: 1500, window_seconds: 60 }, do_not_reach_users: { requests: 1500, window_seconds: 60 } },
  timezone: 'UTC',
  max_reject_ratio: 0.2,
  alerts: { reject_ratio: 0.05 },
  lock: { ttl_seconds: 120, heartbeat_seconds: 20 },
  progress_interval_seconds: 10,
  audience: { refresh_after_days: 330, max_remove_ratio: 0.5 },
  catalog: { max_delete_ratio: 0.5 },
} as const;

export function retryFrom(file: z.infer<typeof retrySchema> | undefined, base: RetrySettings): RetrySettings {
  return {
    retries: file?.retries ?? base.retries,
    minDelayMs: file?.min_delay_ms ?? base.minDelayMs,
    maxDelayMs: file?.max_delay_ms ?? base.maxDelayMs,
    budgetMs: file?.budget_ms ?? base.budgetMs,
  };
}

/**
 * The problem of a retry policy whose shortest wait is longer than its longest, if it has one.
 * `origin` says where a value not set in the file being checked came from (", the default").
 */
export function retryDelayProblem(retry: RetrySettings, origin: (key: 'min_delay_ms' | 'max_delay_ms') => string): string | undefined {
  if (retry.minDelayMs <= retry.maxDelayMs) return undefined;
  return `retry.min_delay_ms (${retry.minDelayMs}${origin('min_delay_ms')}) must not be greater than retry.max_delay_ms (${retry.maxDelayMs}${origin('max_delay_ms')})`;
}

function rateLimitsFrom(file: SettingsFile['rate_limits']): RateLimitSettings {
  const merged: Partial<Record<EndpointFamily, { requests: number; window_seconds: number } | null>> = { ...DEFAULTS.rate_limits, ...file };
  const out: RateLimitSettings = {};
  for (const [family, limit] of Object.entries(merged) as [EndpointFamily, { requests: number; window_seconds: number } | null][]) {
    out[family] = limit === null ? null : ({ requests: limit.requests, windowMs: limit.window_seconds * 1000 } satisfies FamilyLimit);
  }
  return out;
}

export function isValidTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

export interface LoadSettingsOptions {
  /** An explicit settings file (--config); it must exist. */
  path?: string | undefined;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** X's own hosts (x.com, twitter.com and their subdomains), which answer on https only. */
function isXHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  return ['x.com', 'twitter.com'].some((domain) => host === domain || host.endsWith(`.${domain}`));
}

/**
 * The base URL of an API as configured (`where`: the variable or the settings key): http or
 * https, nothing around it, and no path, query or fragment (each request's path is added to
 * it: a /12 copied from a request would make every one a 404 that seems to say the job's
 * audience or catalog does not exist). Checked before anything is read, so that a typo is not
 * found only when the first request fails (as "could not be delivered; the next run sends
 * them again"). http is for the emulator and local stand-ins: X's own hosts are refused over it.
 */
function serviceUrl(value: string, where: string, example: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url === undefined || value.trim() !== value || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new ConfigError(`${where} is ${JSON.stringify(value)}: expected an http or https URL such as ${example}, without spaces`);
  }
  if (url.protocol === 'http:' && isXHost(url.hostname)) {
    throw new ConfigError(
      `${where} is ${JSON.stringify(value)}: X's services take https only, and a request sent over http would carry the consumer key, the access token and the signature in clear before being refused; use ${url.href.replace(/^http:/, 'https:').replace(/\/$/, '')}`,
    );
  }
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '' || /[?#]/.test(value)) {
    throw new ConfigError(
      `${where} is ${JSON.stringify(value)}: expected the service's address without a path, query or fragment, such as ${example} (adsync adds each request's path, /12/... or /oauth/..., itself)`,
    );
  }
  return value;
}

/** An API's base URL: the variable's when set (not empty), else the settings key's, else the default; checked. */
function configuredUrl(variable: string | undefined, variableName: string, key: string | undefined, keyName: string, fallback: string): string {
  if (variable) return serviceUrl(variable, variableName, fallback);
  return key ? serviceUrl(key, keyName, fallback) : fallback;
}

/** Loads the settings file (when there is one) and applies defaults and the environment. */
export function loadSettings(options: LoadSettingsOptions = {}): Settings {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  // An empty ADSYNC_CONFIG (`ADSYNC_CONFIG=` in an EnvironmentFile) is unset, as every ADSYNC_* variable.
  const explicit = options.path ?? (env.ADSYNC_CONFIG || undefined);
  const candidate = explicit ?? DEFAULT_SETTINGS_PATH;
  const path = resolve(cwd, candidate);
  let file: SettingsFile = {};
  let used: string | undefined;
  if (explicit !== undefined || existsSync(path)) {
    const data = readYamlFile(path, candidate, 'settings file') ?? {};
    file = parseWithSchema(settingsFileSchema, data, candidate, (p) =>
      p.length === 0 ? Object.keys(settingsFileSchema.shape) : undefined,
    );
    used = path;
  }
  if (file.timezone !== undefined && !isValidTimezone(file.timezone)) {
    throw new ConfigError(`${candidate}: timezone: unknown time zone "${file.timezone}"`, { hint: "use an IANA name such as Europe/Berlin or UTC" });
  }
  const base: RetrySettings = {
    retries: DEFAULTS.retry.retries,
    minDelayMs: DEFAULTS.retry.min_delay_ms,
    maxDelayMs: DEFAULTS.retry.max_delay_ms,
    budgetMs: DEFAULTS.retry.budget_ms,
  };
  // Constraints between keys, on the values in effect (a key the file does not set has its default).
  const problems: string[] = [];
  const ttlSeconds = file.lock?.ttl_seconds ?? DEFAULTS.lock.ttl_seconds;
  const heartbeatSeconds = file.lock?.heartbeat_seconds ?? DEFAULTS.lock.heartbeat_seconds;
  if (ttlSeconds <= heartbeatSeconds) {
    const origin = (key: 'ttl_seconds' | 'heartbeat_seconds'): string => (file.lock?.[key] === undefined ? ', the default' : '');
    problems.push(
      `lock.ttl_seconds (${ttlSeconds}${origin('ttl_seconds')}) must be greater than lock.heartbeat_seconds (${heartbeatSeconds}${origin('heartbeat_seconds')}): a running job's lock would expire between two heartbeats and another run could take it`,
    );
  }
  const retry = retryFrom(file.retry, base);
  const retryProblem = retryDelayProblem(retry, (key) => (file.retry?.[key] === undefined ? ', the default' : ''));
  if (retryProblem !== undefined) problems.push(retryProblem);
  if (problems.length > 0) throw new ConfigError(`${candidate} is not valid:\n  ${problems.join('\n  ')}`);
  return {
    file: used,
    adsUrl: configuredUrl(env.ADSYNC_ADS_URL, 'ADSYNC_ADS_URL', file.ads_url, `${candidate}: ads_url`, DEFAULT_ADS_URL),
    apiUrl: configuredUrl(env.ADSYNC_API_URL, 'ADSYNC_API_URL', file.api_url, `${candidate}: api_url`, DEFAULT_API_URL),
    statePath: resolve(cwd, expandHome(env.ADSYNC_STATE || file.state || DEFAULTS.state, env)),
    rejectsDir: resolve(cwd, expandHome(file.rejects_dir ?? DEFAULTS.rejects_dir, env)),
    credentialsFile: file.credentials_file === undefined ? undefined : resolve(cwd, expandHome(file.credentials_file, env)),
    concurrency: file.concurrency ?? DEFAULTS.concurrency,
    readThreads: file.read_threads ?? DEFAULTS.read_threads,
    commitThreadMin: file.commit_thread_min === undefined ? DEFAULTS.commit_thread_min : file.commit_thread_min,
    requestTimeoutMs: file.request_timeout_ms ?? DEFAULTS.request_timeout_ms,
    retry,
    rateLimits: rateLimitsFrom(file.rate_limits),
    timezone: file.timezone ?? DEFAULTS.timezone,
    maxRejectRatio: file.max_reject_ratio ?? DEFAULTS.max_reject_ratio,
    alerts: {
      webhookUrl: file.alerts?.webhook_url ?? undefined,
      rejectRatio: file.alerts?.reject_ratio ?? DEFAULTS.alerts.reject_ratio,
    },
    lockTtlMs: (file.lock?.ttl_seconds ?? DEFAULTS.lock.ttl_seconds) * 1000,
    lockHeartbeatMs: (file.lock?.heartbeat_seconds ?? DEFAULTS.lock.heartbeat_seconds) * 1000,
    progressIntervalMs: (file.progress_interval_seconds ?? DEFAULTS.progress_interval_seconds) * 1000,
    refreshAfterDays: file.audience?.refresh_after_days ?? DEFAULTS.audience.refresh_after_days,
    maxRemoveRatio: file.audience?.max_remove_ratio ?? DEFAULTS.audience.max_remove_ratio,
    maxDeleteRatio: file.catalog?.max_delete_ratio ?? DEFAULTS.catalog.max_delete_ratio,
  };
}
