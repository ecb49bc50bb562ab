/**
 * The typed X Ads API client: OAuth 1.0a signing of every attempt, node:http transport with
 * keep-alive, client-side rate limiting per endpoint family, retries through p-retry, and
 * typed errors. Resource methods live in src/api/resources/*.ts and call `call()`.
 */
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Credentials } from './credentials.js';
import { parseErrorBody, envelopeSchema, type Envelope } from './envelope.js';
import {
  ApiRequestError,
  ApiValidationError,
  AuthError,
  CallStoppedError,
  CLOCK_SKEW_MS,
  ForbiddenError,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  RedirectedError,
  RetryableHttpError,
  operationErrorsError,
  type HttpErrorContext,
} from './errors.js';
import { sendHttp, type HttpMethod, type HttpResponse } from './http.js';
import { percentEncode, signRequest, type ParamPair, type TokenCredentials } from './oauth1.js';
import { RateLimiter, readRateLimitHeaders, readResetHeader, sleep, DEFAULT_RATE_LIMITS, type EndpointFamily, type RateLimitSettings } from './rate-limiter.js';
import { withRetry, DEFAULT_RETRY, type RetryEvent, type RetrySettings } from './retry.js';
import { isAdsyncError } from '../errors.js';
import { silentLogger } from '../logging/logger.js';
import { registerSecrets } from '../logging/secrets.js';

export const DEFAULT_ADS_URL = 'https://ads-api.x.com';
export const DEFAULT_API_URL = 'https://api.x.com';
export const DEFAULT_TIMEOUT_MS = 60_000;

export type QueryValue = string | number | boolean | undefined;

export interface ApiCall {
  method: HttpMethod;
  /** Path beginning with a slash, e.g. /12/accounts/abc. Path segments must already be encoded. */
  path: string;
  query?: Readonly<Record<string, QueryValue>>;
  /** A JSON body: a Buffer built once by the caller (reused on every retry) or a value to serialize once. */
  json?: unknown;
  /** An application/x-www-form-urlencoded body (signed, unlike JSON). */
  form?: readonly ParamPair[];
  family: EndpointFamily;
  /** Which address: the Ads API (default) or the platform's OAuth endpoints. */
  base?: 'ads' | 'api';
  /** Extra oauth_* protocol parameters (oauth_callback, oauth_verifier). */
  oauthParams?: Readonly<Record<string, string>>;
  /** Sign with this token instead of the client's; null signs without a token. */
  token?: TokenCredentials | null;
  /** HTTP Basic credentials instead of OAuth (oauth2/token only). */
  basicAuth?: { user: string; password: string };
  /** Called before each retry of this call (e.g. so a caller knows a not-found may be its own earlier attempt). */
  onRetry?: () => void;
}

export interface ClientStats {
  requests: number;
  retries: number;
  byFamily: Partial<Record<EndpointFamily, number>>;
}

export interface AdsApiClientOptions {
  credentials: Credentials;
  adsUrl?: string;
  apiUrl?: string;
  timeoutMs?: number;
  retry?: Partial<RetrySettings>;
  rateLimits?: RateLimitSettings;
  logger?: Logger;
  /** Aborts waits and requests in flight. */
  signal?: AbortSignal;
  /**
   * A stop request (the first SIGTERM): what waits to be sent (for the rate limiter, or for
   * a retry: a backoff, a 503's Retry-After, a 429's reset) is not sent, and the call fails
   * with InterruptedError; a request already on the wire is answered as usual.
   */
  stop?: AbortSignal;
  onRetry?: (event: RetryEvent & { call: ApiCall }) => void;
}

/** A raw answer that was 2xx; the body is not yet interpreted. */
export interface RawAnswer {
  status: number;
  headers: HttpResponse['headers'];
  body: Buffer;
}

function headerValue(headers: HttpResponse['headers'], name: string): string | undefined {
  const raw = headers[name];
  return Array.isArray(raw) ? raw[0] : raw;
}

/** Retry-After: delta seconds or an HTTP date (of the service's clock, `serviceAheadMs` ahead of ours), as epoch ms of this machine's clock. */
function retryAfter(headers: HttpResponse['headers'], now: number, serviceAheadMs: number): number | undefined {
  const raw = headerValue(headers, 'retry-after');
  if (!raw) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return now + seconds * 1000;
  const date = Date.parse(raw);
  return Number.isFinite(date) ? date - serviceAheadMs : undefined;
}

function parseJsonBody(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** How far the service's clock (its answer's Date header) is ahead of this machine's, in ms. */
function clockOffsetMs(headers: HttpResponse['headers'], now: number): number | undefined {
  const raw = headerValue(headers, 'date');
  const date = raw === undefined ? NaN : Date.parse(raw);
  return Number.isFinite(date) ? date - now : undefined;
}

/**
 * How far the service's clock is ahead of this machine's (negative: behind), in ms, for reading
 * its x-rate-limit-reset and Retry-After dates on this machine's clock; 0 when the two agree as
 * far as its answer's Date header can tell. The service dated its answer between `sentAt` and
 * `receivedAt` (this machine's clock), at a time in [Date, Date + 1 s): a clock a few minutes
 * off (no NTP) would otherwise wait minutes for a reset due in a second (and fail the run past
 * retry.budget_ms), or, ahead, take every reset for past and send again every second. Of the
 * offsets the answer allows, the one that puts the reset latest is taken. One of more than
 * CLOCK_SKEW_MS either way is not believed (0): OAuth refuses a clock that far off, so such a
 * Date is not the service's clock (a cached answer's, a proxy's), and it would hold a request
 * for hours.
 */
export function serviceClockAheadMs(headers: HttpResponse['headers'], sentAt: number, receivedAt: number): number {
  const least = clockOffsetMs(headers, receivedAt);
  if (least === undefined) return 0;
  return (least > 0 || receivedAt + least + 1000 < sentAt) && Math.abs(least) <= CLOCK_SKEW_MS ? least : 0;
}

/** An epoch time of the service's clock on this machine's. */
function onOurClock(serviceTime: number | undefined, serviceAheadMs: number): number | undefined {
  return serviceTime === undefined ? undefined : serviceTime - serviceAheadMs;
}

/** The origin a Location header points to (never its path or query, which may carry a token); undefined for none or a relative one. */
export function redirectOrigin(location: string | undefined): string | undefined {
  if (!location) return undefined;
  try {
    const url = new URL(location);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/** Maps a non-2xx answer to its typed error; `serviceAheadMs` as serviceClockAheadMs gives it. */
export function errorForAnswer(method: string, path: string, answer: HttpResponse, now = Date.now(), profile?: string, serviceAheadMs = 0): Error {
  const { errors, operationErrors } = parseErrorBody(parseJsonBody(answer.body));
  const ctx: HttpErrorContext = { method, path, status: answer.status, errors };
  const s = answer.status;
  if (s === 400) return new ApiValidationError(ctx, operationErrors);
  if (s === 401) return new AuthError(ctx, profile, clockOffsetMs(answer.headers, now));
  if (s === 403) return new ForbiddenError(ctx);
  if (s === 404) return new NotFoundError(ctx);
  if (s === 429) {
    const reset = onOurClock(readResetHeader(answer.headers), serviceAheadMs) ?? retryAfter(answer.headers, now, serviceAheadMs);
    return new RateLimitedError(ctx, reset);
  }
  if (s === 408 || s === 423 || s === 500 || s === 502 || s === 503 || s === 504) {
    return new RetryableHttpError(ctx, retryAfter(answer.headers, now, serviceAheadMs));
  }
  if (s >= 300 && s <= 399) return new RedirectedError(ctx, redirectOrigin(headerValue(answer.headers, 'location')));
  return new ApiRequestError(ctx);
}

/**
 * Listeners a call under way adds to the stop signal (AdsApiClientOptions.stop), each removed
 * when it is done: withRetry's, which ends the waits between attempts, and the rate limiter's
 * wait. The owner of the signal allows for them (setMaxListeners): with more than 10 in all,
 * Node warns of a leak.
 */
export const STOP_LISTENERS_PER_CALL = 2;

/** A call's body, built once and sent as is by every attempt. */
interface CallBody {
  buffer: Buffer | undefined;
  contentType: string | undefined;
}

export class AdsApiClient {
  readonly adsUrl: string;
  readonly apiUrl: string;
  readonly stats: ClientStats = { requests: 0, retries: 0, byFamily: {} };
  private readonly credentials: Credentials;
  private readonly timeoutMs: number;
  private readonly retry: RetrySettings;
  private readonly limiter: RateLimiter;
  private readonly logger: Logger;
  private readonly signal: AbortSignal | undefined;
  private readonly stop: AbortSignal | undefined;
  private readonly onRetry: AdsApiClientOptions['onRetry'];

  constructor(options: AdsApiClientOptions) {
    this.credentials = options.credentials;
    registerSecrets(options.credentials.secrets());
    this.adsUrl = (options.adsUrl ?? DEFAULT_ADS_URL).replace(/\/+$/, '');
    this.apiUrl = (options.apiUrl ?? DEFAULT_API_URL).replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.logger = options.logger ?? silentLogger();
    this.limiter = new RateLimiter(
      options.rateLimits ?? DEFAULT_RATE_LIMITS,
      Date.now,
      sleep,
      ({ family, waitMs, until, cause }) =>
        this.logger.info({ family, waitSeconds: Math.round(waitMs / 1000), until: new Date(until).toISOString(), cause }, 'waiting for the rate limit before sending more'),
      () => performance.now(),
    );
    this.signal = options.signal;
    this.stop = options.stop;
    this.onRetry = options.onRetry;
  }

  /**
   * Sends one call, retrying what may be retried. `accept` runs on every 2xx answer inside
   * the retry loop: it may throw a retryable error (a count mismatch) to have the call sent
   * again, freshly signed.
   */
  async send<T>(call: ApiCall, accept: (answer: RawAnswer) => T): Promise<T> {
    const body = this.bodyOf(call);
    const progress = { sent: false };
    try {
      return await this.sendWithRetries(call, body, accept, progress);
    } catch (error) {
      // Stopped while it waited to be sent (or sent again). An answer that came meanwhile and
      // may not be retried anyway (a 400, a 401) keeps its own error.
      if (this.stop?.aborted && !(isAdsyncError(error) && !error.retryable)) throw new CallStoppedError(call.method, call.path, progress.sent, error);
      throw error;
    }
  }

  private sendWithRetries<T>(call: ApiCall, body: CallBody, accept: (answer: RawAnswer) => T, progress: { sent: boolean }): Promise<T> {
    return withRetry(
      async () => {
        const answer = await this.attempt(call, body, progress);
        return accept(answer);
      },
      this.retry,
      {
        signal: this.signal,
        stop: this.stop,
        onRetry: (event) => {
          this.stats.retries += 1;
          this.logger.warn(
            { method: call.method, path: call.path, attempt: event.attempt, waitMs: event.waitMs, error: event.error.message },
            'retrying API call',
          );
          call.onRetry?.();
          this.onRetry?.({ ...event, call });
        },
      },
    );
  }

  /** Sends a call and parses the envelope; `parse` validates `data` (usually a zod schema's parse). */
  async call<T>(call: ApiCall, parse: (data: unknown) => T, check?: (envelope: Envelope<T>) => void): Promise<Envelope<T>> {
    return this.send(call, (answer) => {
      const envelope = this.parseEnvelope(call, answer, parse);
      check?.(envelope);
      return envelope;
    });
  }

  /**
   * Follows next_cursor until the last page, yielding each page's data. A next_cursor that was
   * already followed would list the same pages forever: it stops the listing with an error.
   * A stop request ends a listing before its next page (CallStoppedError): a listing changes
   * nothing, and one of a large catalog (a page per 100 products, one or more per item group)
   * would otherwise hold a stop for minutes.
   */
  async *paginate<T>(call: ApiCall, parse: (data: unknown) => T[]): AsyncGenerator<T[]> {
    const followed = new Set<string>();
    let cursor: string | undefined;
    do {
      if (this.stop?.aborted) throw new CallStoppedError(call.method, call.path, false);
      const page: Envelope<T[]> = await this.call({ ...call, query: { ...call.query, cursor } }, parse);
      yield page.data;
      cursor = page.next_cursor ?? undefined;
      if (cursor !== undefined && followed.has(cursor)) {
        throw new ApiRequestError(
          { method: call.method, path: call.path },
          `${call.method} ${call.path}: the service gave next_cursor "${cursor}" again after ${followed.size + 1} pages; stopped listing (the list would never end)`,
        );
      }
      if (cursor !== undefined) followed.add(cursor);
    } while (cursor);
  }

  /** How long `requests` more calls of the family take at the rate limits known, for an ETA: RateLimiter.timeFor. */
  timeFor(family: EndpointFamily, requests: number): { ms: number; paced: boolean } | undefined {
    return this.limiter.timeFor(family, requests);
  }

  private bodyOf(call: ApiCall): CallBody {
    if (call.json !== undefined) {
      const buffer = Buffer.isBuffer(call.json) ? call.json : Buffer.from(JSON.stringify(call.json));
      return { buffer, contentType: 'application/json' };
    }
    if (call.form) {
      const text = call.form.map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`).join('&');
      return { buffer: Buffer.from(text), contentType: 'application/x-www-form-urlencoded' };
    }
    return { buffer: undefined, contentType: undefined };
  }

  private urlOf(call: ApiCall): URL {
    const base = call.base === 'api' ? this.apiUrl : this.adsUrl;
    const url = new URL(base + call.path);
    const pairs = Object.entries(call.query ?? {}).filter((e): e is [string, string | number | boolean] => e[1] !== undefined);
    if (pairs.length > 0) url.search = pairs.map(([k, v]) => `${percentEncode(k)}=${percentEncode(String(v))}`).join('&');
    return url;
  }

  /** One attempt: acquire the rate limiter, sign afresh, send, classify. */
  private async attempt(call: ApiCall, body: CallBody, progress: { sent: boolean }): Promise<RawAnswer> {
    // Waiting for the rate limiter sends nothing yet: a stop request ends the wait. A wait the
    // service's headers impose beyond the retry budget is not waited out, as a 429's is not.
    const heldUntil = await this.limiter.acquire(call.family, this.stop ?? this.signal, this.retry.budgetMs);
    if (heldUntil !== undefined) throw new RateLimitedError({ method: call.method, path: call.path }, heldUntil);
    const url = this.urlOf(call);
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'adsync' };
    if (body.contentType) headers['content-type'] = body.contentType;
    if (call.basicAuth) {
      const { user, password } = call.basicAuth;
      headers.authorization = `Basic ${Buffer.from(`${percentEncode(user)}:${percentEncode(password)}`).toString('base64')}`;
    } else {
      headers.authorization = signRequest({
        method: call.method,
        url,
        consumer: this.credentials.consumer,
        token: call.token === null ? undefined : (call.token ?? this.credentials.token),
        ...(call.form ? { formParams: call.form } : {}),
        ...(call.oauthParams ? { extraOAuthParams: call.oauthParams } : {}),
      }).header;
    }
    this.stats.requests += 1;
    this.stats.byFamily[call.family] = (this.stats.byFamily[call.family] ?? 0) + 1;
    const started = performance.now();
    const sentAt = Date.now();
    let answer: HttpResponse;
    progress.sent = true;
    try {
      answer = await sendHttp({ method: call.method, url, headers, body: body.buffer, timeoutMs: this.timeoutMs, signal: this.signal });
    } catch (error) {
      this.limiter.release(call.family);
      this.logger.debug({ method: call.method, path: call.path, error: (error as Error).message }, 'API call failed');
      throw error;
    }
    const receivedAt = Date.now();
    const serviceAheadMs = serviceClockAheadMs(answer.headers, sentAt, receivedAt);
    const observed = readRateLimitHeaders(answer.headers);
    this.limiter.release(call.family, observed && { ...observed, resetAt: observed.resetAt - serviceAheadMs });
    this.logger.debug(
      { method: call.method, path: call.path, status: answer.status, ms: Math.round(performance.now() - started), bytes: body.buffer?.length ?? 0 },
      'API call',
    );
    if (answer.status < 200 || answer.status > 299) throw errorForAnswer(call.method, call.path, answer, receivedAt, this.credentials.profile, serviceAheadMs);
    return answer;
  }

  private parseEnvelope<T>(call: ApiCall, answer: RawAnswer, parse: (data: unknown) => T): Envelope<T> {
    const json = parseJsonBody(answer.body);
    const envelope = envelopeSchema.safeParse(json);
    if (!envelope.success) {
      // A 2xx that is not the envelope: a proxy page or a cut-off body. Worth another try.
      throw new NetworkError(call.method, call.path, `HTTP ${answer.status} answer is not the API's JSON envelope`);
    }
    // A batch that failed as a whole may still be a 2xx: its operation_errors, not its counts, say so.
    const { operationErrors } = parseErrorBody(json);
    if (operationErrors.length > 0) throw operationErrorsError(call.method, call.path, answer.status, operationErrors);
    let data: T;
    try {
      data = parse(envelope.data.data);
    } catch (error) {
      const detail = error instanceof z.ZodError ? z.prettifyError(error).split('\n').slice(0, 3).join('; ') : String(error);
      throw new ApiRequestError(
        { method: call.method, path: call.path },
        `${call.method} ${call.path}: unexpected answer from the service: ${detail}`,
        { cause: error },
      );
    }
    return { request: envelope.data.request, data, next_cursor: envelope.data.next_cursor, total_count: envelope.data.total_count };
  }
}
