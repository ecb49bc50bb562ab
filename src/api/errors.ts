/**
 * Typed errors of the Ads API client. Each one says whether a retry can help:
 *
 * | class                  | when                                              | retryable |
 * |------------------------|---------------------------------------------------|-----------|
 * | ApiValidationError     | 400, with the service's errors[] and operation_errors[]; a 2xx with operation_errors that are not all retryable | no  |
 * | OperationsFailedError  | a 2xx with operation_errors whose codes all say to retry (503, 500, 429, ...) | yes |
 * | AuthError              | 401 (revoked: code 89)                            | no (exit 3) |
 * | ForbiddenError         | 403                                               | no        |
 * | NotFoundError          | 404                                               | no        |
 * | RateLimitedError       | 429, with the reset time when the service sent it; a request the headers hold past the budget | yes |
 * | RetryableHttpError     | 408, 423, 500, 502, 503, 504                      | yes       |
 * | NetworkError           | connection refused or reset, timeout, bad framing | yes       |
 * | TlsError               | an https address whose server speaks no TLS, or a refused certificate | no |
 * | TlsExpectedError       | an http address whose server hung up without an answer and speaks TLS | no |
 * | CountMismatchError     | success_count/total_count differ from the records sent | yes  |
 * | RedirectedError        | 3xx (the address is not the service's own)        | no        |
 * | ApiRequestError        | any other non-2xx answer                          | no        |
 */
import { AdsyncError, ExitCode, InterruptedError, type AdsyncErrorOptions } from '../errors.js';
import { isDefaultProfile, profileFlag } from './credentials.js';

/** One entry of the service's `errors` array. */
export interface ServiceErrorItem {
  code: string | number;
  message: string;
  parameter?: string;
}

/** One entry of a batch response's `operation_errors` array, indexed like the input operations. */
export interface OperationErrorItem {
  index: number;
  errors: ServiceErrorItem[];
}

export interface HttpErrorContext {
  method: string;
  /** The path without query string; never carries credentials. */
  path: string;
  status: number;
  errors: ServiceErrorItem[];
}

function describe(ctx: HttpErrorContext): string {
  const first = ctx.errors[0];
  const detail = first
    ? `: ${String(first.code)} ${first.message}${first.parameter ? ` (parameter ${first.parameter})` : ''}`
    : '';
  return `${ctx.method} ${ctx.path} answered HTTP ${ctx.status}${detail}`;
}

export abstract class ApiError extends AdsyncError {
  readonly status: number | undefined;
  readonly method: string;
  readonly path: string;
  readonly serviceErrors: ServiceErrorItem[];

  constructor(ctx: HttpErrorContext | { method: string; path: string }, message?: string, options?: AdsyncErrorOptions) {
    super(message ?? ('status' in ctx ? describe(ctx) : `${ctx.method} ${ctx.path} failed`), options);
    this.method = ctx.method;
    this.path = ctx.path;
    this.status = 'status' in ctx ? ctx.status : undefined;
    this.serviceErrors = 'errors' in ctx ? ctx.errors : [];
  }
}

/**
 * HTTP 400, or a 2xx whose operation_errors say an operation is wrong: the request itself is
 * wrong. Retrying the same request cannot help.
 */
export class ApiValidationError extends ApiError {
  readonly code = 'API_VALIDATION';
  readonly retryable = false;
  readonly operationErrors: OperationErrorItem[];

  constructor(ctx: HttpErrorContext, operationErrors: OperationErrorItem[] = [], message?: string) {
    super(ctx, message);
    this.operationErrors = operationErrors;
  }
}

/** The service's error codes that say the same request may succeed later (x-ads-facts.md: 408, 423, 429, 500, 503). */
const RETRYABLE_CODES: ReadonlySet<string> = new Set(['CANCELLED_REQUEST', 'LOCK_ACQUISITION_TIMEOUT', 'TOO_MANY_REQUESTS', 'INTERNAL_ERROR', 'SERVICE_UNAVAILABLE', 'OVER_CAPACITY']);

/** Whether every error of an operation says to retry it: the operation is not wrong, the service was unable. */
export function isRetryableOperation(item: OperationErrorItem): boolean {
  return item.errors.length > 0 && item.errors.every((e) => RETRYABLE_CODES.has(String(e.code)));
}

/** A service error as one clause: `CODE message (parameter p)`. */
export function describeServiceErrors(errors: readonly ServiceErrorItem[]): string {
  return errors.map((e) => [e.code, e.message, e.parameter ? `(${e.parameter})` : ''].filter((part) => part !== '').join(' ')).join('; ');
}

/** Operations named in a message at most; the others are counted. */
const OPERATIONS_NAMED = 3;

/**
 * The error of a 2xx answer that holds operation_errors. A batch succeeds or fails as a whole
 * (ads-api.md, x-ads-facts.md): none of it was applied, whatever its counts say. When every
 * operation's errors say to retry (OperationsFailedError), the batch is sent again as a whole;
 * else (ApiValidationError) the operations named are refused and the others sent again.
 */
export function operationErrorsError(method: string, path: string, status: number, operationErrors: OperationErrorItem[]): ApiError {
  const named = operationErrors.slice(0, OPERATIONS_NAMED).map((o) => `operation ${o.index}: ${describeServiceErrors(o.errors)}`);
  const more = operationErrors.length - named.length;
  const message = `${method} ${path} answered HTTP ${status} with operation_errors, so the service applied none of the batch: ${named.join('; ')}${more > 0 ? `; and ${more} more operations` : ''}`;
  const ctx: HttpErrorContext = { method, path, status, errors: [] };
  return operationErrors.every(isRetryableOperation) ? new OperationsFailedError(ctx, message, operationErrors) : new ApiValidationError(ctx, operationErrors, message);
}

/** A 2xx with operation_errors whose codes all say to retry: the batch is sent again as a whole. */
export class OperationsFailedError extends ApiError {
  readonly code = 'OPERATIONS_FAILED';
  readonly retryable = true;

  constructor(
    ctx: HttpErrorContext,
    message: string,
    readonly operationErrors: OperationErrorItem[],
  ) {
    super(ctx, message);
  }
}

/** How far the clock may be off before a 401 is blamed on it: the platform's OAuth window, 5 minutes. */
export const CLOCK_SKEW_MS = 300_000;

/** HTTP 401. `revoked` is true for error code 89 (the access token was invalidated). */
export class AuthError extends ApiError {
  readonly code = 'AUTH_FAILED';
  readonly retryable = false;
  override readonly exitCode = ExitCode.auth;
  readonly revoked: boolean;
  /** The service's answer is dated more than CLOCK_SKEW_MS from this machine's clock: the likely cause. */
  readonly clockOff: boolean;

  /**
   * `profile`: the credentials profile the request was signed with, named in the hint.
   * `clockOffsetMs`: how far the service's clock (the answer's Date header) is ahead of this
   * machine's; beyond CLOCK_SKEW_MS the hint is the clock, which every signature carries.
   */
  constructor(ctx: HttpErrorContext, profile = 'default', clockOffsetMs?: number) {
    const revoked = ctx.errors.some((e) => String(e.code) === '89');
    const clockOff = !revoked && clockOffsetMs !== undefined && Math.abs(clockOffsetMs) > CLOCK_SKEW_MS;
    const named = profileFlag(profile);
    super(
      ctx,
      revoked
        ? `the access token was revoked (HTTP 401, code 89) on ${ctx.method} ${ctx.path}`
        : `authentication failed: ${describe(ctx)}`,
      {
        hint: revoked
          ? `run \`adsync auth login${named}\` to authorize again, then update the credentials profile the job uses`
          : clockOff && clockOffsetMs !== undefined
            ? `this machine's clock is ${Math.round(Math.abs(clockOffsetMs) / 60_000)} minutes ${clockOffsetMs > 0 ? 'behind' : 'ahead of'} the service's (the Date of its answer), and OAuth 1.0a timestamps must be within a few minutes of it: set the clock right (NTP), then run again`
            : `check the consumer key/secret and access token/secret of the credentials profile${isDefaultProfile(profile) ? '' : ` "${profile}"`} (see README, "Credentials")`,
      },
    );
    this.revoked = revoked;
    this.clockOff = clockOff;
  }
}

/**
 * HTTP 401 when `adsync auth login` exchanges the PIN for an access token: the request token
 * was just obtained with the same consumer key, so the PIN (oauth_verifier) is what the
 * platform refused: a typo, a PIN already used, or an authorization that expired.
 */
export class PinRejectedError extends ApiError {
  readonly code = 'PIN_REJECTED';
  readonly retryable = false;
  override readonly exitCode = ExitCode.auth;

  constructor(cause: AuthError, hint: string) {
    super(
      { method: cause.method, path: cause.path },
      `the PIN was not accepted (it is wrong, or was already used): ${cause.message.replace(/^authentication failed: /, '')}`,
      { cause, hint },
    );
  }
}

/**
 * HTTP 401 on the first step of `adsync auth login` (oauth/request_token): it is signed with
 * the app's consumer key and secret alone, so those are what the platform refused (unless the
 * clock is off, which the AuthError's own hint says). The message is the AuthError's.
 */
export class ConsumerKeyRejectedError extends ApiError {
  readonly code = 'CONSUMER_KEY_REJECTED';
  readonly retryable = false;
  override readonly exitCode = ExitCode.auth;

  constructor(cause: AuthError, hint: string) {
    super({ method: cause.method, path: cause.path }, cause.message, { cause, hint });
  }
}

function forbiddenHint(path: string): { hint?: string } {
  if (/^\/\d+\/product_catalogs\//.test(path)) {
    return {
      hint: "the app or the credentials' user is not allowed this request: X's catalog endpoints are early access, so check that the app (its consumer key) is approved for them, and in X Ads Manager that the user may edit this catalog; the next run sends what was not acknowledged",
    };
  }
  if (/^\/\d+\//.test(path)) {
    return {
      hint: "the credentials' user is not allowed this request: check in X Ads Manager that it has access to this ads account and may edit its audiences and catalogs (an audience shared READ_ONLY cannot be changed); the next run sends what was not acknowledged",
    };
  }
  return {};
}

/** HTTP 403: authenticated, but not allowed (for example an account not associated with the user). */
export class ForbiddenError extends ApiError {
  readonly code = 'FORBIDDEN';
  readonly retryable = false;

  /**
   * An Ads API path (/12/..., /5/...) gets a hint, a catalog's its own (X's catalog endpoints
   * are early access: an app not approved for them is refused whatever the user may do); the
   * OAuth endpoints' 403s say enough themselves.
   */
  constructor(ctx: HttpErrorContext) {
    super(ctx, undefined, forbiddenHint(ctx.path));
  }
}

/** HTTP 404: the account, catalog, audience or list does not exist (or is not visible to this user). */
export class NotFoundError extends ApiError {
  readonly code = 'NOT_FOUND';
  readonly retryable = false;
}

/**
 * HTTP 429, or a request not sent because the rate-limit headers of earlier answers allow no
 * more of its kind before their reset. `retryAt` is when the window resets (epoch ms), when
 * the service said so.
 */
export class RateLimitedError extends ApiError {
  readonly code = 'RATE_LIMITED';
  readonly retryable = true;
  readonly retryAt: number | undefined;

  constructor(ctx: HttpErrorContext | { method: string; path: string }, retryAt: number | undefined) {
    super(
      ctx,
      'status' in ctx
        ? undefined
        : `${ctx.method} ${ctx.path} was not sent: the service's rate-limit headers (x-rate-limit-remaining 0) allow no more of these requests before their reset`,
    );
    this.retryAt = retryAt;
  }
}

/** 408, 423, 500, 502, 503, 504: the service may answer the same request later. */
export class RetryableHttpError extends ApiError {
  readonly code = 'SERVICE_UNAVAILABLE';
  readonly retryable = true;
  /** From a Retry-After header, epoch ms. */
  readonly retryAt: number | undefined;

  constructor(ctx: HttpErrorContext, retryAt?: number) {
    super(ctx);
    this.retryAt = retryAt;
  }
}

/**
 * A 3xx: the address is not the service's own (http:// for an https service, an old host
 * name). adsync does not follow redirects (a signed request names its URL); every request
 * would be answered the same, so the upload stops. `to`: the origin the answer points to.
 */
export class RedirectedError extends ApiError {
  readonly code = 'REDIRECTED';
  readonly retryable = false;

  constructor(ctx: HttpErrorContext, to: string | undefined) {
    super(ctx, `${ctx.method} ${ctx.path} answered HTTP ${ctx.status}, a redirect${to ? ` to ${to}` : ''}`, {
      hint: `adsync does not follow redirects: set ADSYNC_ADS_URL and ADSYNC_API_URL (or ads_url and api_url in the settings file) to the service's own address${to ? `, ${to} here` : ''}`,
    });
  }
}

/** Any other non-2xx answer (405, 409, 413, 415, 501, ...): retrying cannot help. */
export class ApiRequestError extends ApiError {
  readonly code = 'API_REQUEST_FAILED';
  readonly retryable = false;
}

/** No usable HTTP answer: refused, reset, timed out, or a body that is not the envelope. */
export class NetworkError extends ApiError {
  readonly code = 'NETWORK_ERROR';
  readonly retryable = true;

  constructor(method: string, path: string, reason: string, cause?: unknown) {
    super({ method, path }, `${method} ${path} failed: ${reason}`, { cause });
  }
}

/** The hint of an address whose scheme or port does not match the server's. */
const CHECK_SCHEME = 'check the scheme (http or https) and the port of ADSYNC_ADS_URL and ADSYNC_API_URL, or of ads_url and api_url in the settings file';

/**
 * No TLS connection to an https address: the server does not speak TLS (an http server, or
 * the wrong port) or its certificate was refused. The same address fails the same way again.
 */
export class TlsError extends ApiError {
  readonly code = 'TLS_FAILED';
  readonly retryable = false;

  /** `certificate`: the server's certificate was refused (else the server spoke no TLS). */
  constructor(method: string, path: string, host: string, reason: string, certificate: boolean, cause?: unknown) {
    super({ method, path }, `${method} ${path} failed: no TLS connection to ${host}: ${reason}`, {
      cause,
      hint: certificate
        ? 'check that ADSYNC_ADS_URL and ADSYNC_API_URL (or ads_url and api_url in the settings file) name the service; behind a proxy that inspects TLS, give Node its CA certificate with NODE_EXTRA_CA_CERTS'
        : CHECK_SCHEME,
    });
  }
}

/**
 * An http address whose server closed the connection without an answer and accepts a TLS
 * handshake: it wants https. Every request to it is refused the same way.
 */
export class TlsExpectedError extends ApiError {
  readonly code = 'TLS_EXPECTED';
  readonly retryable = false;

  constructor(method: string, path: string, host: string, cause?: unknown) {
    super({ method, path }, `${method} ${path} failed: ${host} closed the connection without an answer, and it speaks TLS there: the server may want https, not http`, {
      cause,
      hint: CHECK_SCHEME,
    });
  }
}

/**
 * A call not made, or not made again, because the run was asked to stop while the call waited
 * (for the rate limiter, or for its next attempt). `sent`: an earlier attempt went out and got
 * no answer that settles it (a timeout, a 503, a dropped connection), so the service may have
 * applied it.
 */
export class CallStoppedError extends InterruptedError {
  constructor(
    method: string,
    path: string,
    readonly sent: boolean,
    cause?: unknown,
  ) {
    super(`${method} ${path} was stopped before it was ${sent ? 'sent again (an earlier attempt got no answer that settles it)' : 'sent'}: the next run sends it`, { cause });
  }
}

/**
 * A batch answer whose success_count/total_count differ from the number of user records
 * sent. The service asks for the batch to be retried as a whole.
 */
export class CountMismatchError extends ApiError {
  readonly code = 'COUNT_MISMATCH';
  readonly retryable = true;
  readonly expected: number;
  readonly successCount: number;
  readonly totalCount: number;

  constructor(method: string, path: string, expected: number, successCount: number, totalCount: number) {
    super(
      { method, path },
      `${method} ${path}: the service counted success_count=${successCount} total_count=${totalCount} for ${expected} user records sent`,
    );
    this.expected = expected;
    this.successCount = successCount;
    this.totalCount = totalCount;
  }
}
