/**
 * The request pipeline of the emulator, on node:http:
 *   admin paths (/_emulator/*) go straight to their handlers; every other request goes
 *   fault (drop, status, rate_limit, or a flag for delay/count_mismatch)
 *   -> body (one Buffer, at most 5,000,000 bytes, else 413)
 *   -> a delay fault with before: true holds the request here
 *   -> route (unknown: 404 NOT_FOUND)
 *   -> authentication (OAuth 1.0a, Basic, or none for the browser page)
 *   -> rate limit of the route's family (headers on every answer of a limited family; 429)
 *   -> handler -> answer (held back by a delay fault), counted per route and status.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { authenticate } from './authenticate.js';
import { errorBody, requestEcho, type RequestEcho } from './envelope.js';
import { EmulatorHttpError, errorCodeForStatus, payloadTooLarge, notFound, invalidParameter } from './errors.js';
import type { ActiveFault } from './faults.js';
import { BodyBufferPool, dropAfterPartOfBody, readBody } from './http-body.js';
import { DEFAULT_EMULATOR_RATE_LIMITS, type EmulatorFamily } from './rate-limits.js';
import { RequestParams } from './request-params.js';
import type { CountedStatus } from './request-counters.js';
import type { ApiRequest, HttpMethod, RouteDefinition, RouteMatch, RouteResult } from './routing.js';
import type { EmulatorRuntime } from './runtime.js';

const METHODS: ReadonlySet<string> = new Set(['GET', 'POST', 'PUT', 'DELETE']);
const ADMIN_PREFIX = '/_emulator/';

function isHttpMethod(method: string): method is HttpMethod {
  return METHODS.has(method);
}

/** The Ads API paths answer errors with the `request` echo; the platform's OAuth paths do not. */
function isAdsApiPath(pathname: string): boolean {
  return pathname.startsWith('/12/') || pathname.startsWith('/5/');
}

function mediaType(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const type = header.split(';', 1)[0]?.trim().toLowerCase();
  return type === '' ? undefined : type;
}

/** The rate-limit family of a request to a route, or undefined when it is not limited. */
function familyOf(route: RouteDefinition, params: RequestParams): EmulatorFamily | undefined {
  if (route.family === null) return undefined;
  if (route.family !== undefined) return route.family;
  if (route.auth !== 'access_token') return undefined;
  if (route.method === 'GET') return params.get('with_total_count') === 'true' ? 'total_count' : 'read';
  return 'write';
}

function errorResult(error: EmulatorHttpError, echo: RequestEcho | undefined): RouteResult {
  const errors = error.errors.length > 0 ? error.errors : undefined;
  const body = errors ? errorBody(errors, echo, error.extraBody) : { ...error.extraBody, ...(echo ? { request: echo } : {}) };
  return { status: error.status, json: body, headers: { ...error.headers } };
}

/** The result with the rate-limit headers of its family, when it has some. */
function withHeaders(result: RouteResult, headers: Record<string, string> | undefined): RouteResult {
  return headers === undefined ? result : { ...result, headers: { ...headers, ...result.headers } };
}

function send(res: ServerResponse, result: RouteResult): void {
  const isJson = 'json' in result;
  const body = Buffer.from(isJson ? JSON.stringify(result.json) : result.text);
  res.writeHead(result.status, {
    ...result.headers,
    'content-type': isJson ? 'application/json; charset=utf-8' : result.contentType,
    'content-length': body.length,
  });
  res.end(body);
}

function wait(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

class RequestPipeline {
  /** Bodies of the routes that keep nothing of them (bodyIsTransient). */
  private readonly bodyBuffers: BodyBufferPool;

  constructor(private readonly rt: EmulatorRuntime) {
    this.bodyBuffers = new BodyBufferPool(rt.settings.maxBodyBytes);
  }

  async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    // The service's clock, as the real service sends it: a client can tell its own is off.
    res.setHeader('date', new Date(this.rt.settings.now()).toUTCString());
    const method = (req.method ?? 'GET').toUpperCase();
    let url: URL;
    try {
      url = new URL(req.url ?? '/', `http://${req.headers.host ?? this.rt.settings.host}`);
    } catch {
      send(res, errorResult(invalidParameter('Host', 'the request URL or Host header is malformed'), undefined));
      return;
    }
    const admin = url.pathname.startsWith(ADMIN_PREFIX);
    const router = admin ? this.rt.adminRouter : this.rt.apiRouter;
    const match = isHttpMethod(method) ? router.match(method, url.pathname) : undefined;
    const fault = admin ? undefined : this.rt.faults.take(method, url.pathname);
    const done = (status: CountedStatus): void => {
      if (admin) return;
      this.rt.counters.record(`${method} ${match?.route.pattern ?? '(unknown route)'}`, status);
      this.rt.settings.logger?.(`${method} ${url.pathname} ${String(status)} ${Math.round(performance.now() - started)}ms`);
    };

    if (fault?.kind === 'drop') {
      dropAfterPartOfBody(req);
      done('dropped');
      return;
    }
    const read = await readBody(req, this.rt.settings.maxBodyBytes, match?.route.bodyIsTransient === true ? this.bodyBuffers : undefined);
    if (read.kind === 'aborted') {
      done('aborted');
      return;
    }
    if (fault?.kind === 'delay' && fault.before) {
      // The service is slow to take the request up; a client gone meanwhile never had it applied.
      await wait(fault.ms);
      if (res.destroyed || req.socket.destroyed) {
        if (read.kind === 'complete') read.release();
        done('aborted');
        return;
      }
    }
    // The `request` echo of an answer the pipeline gives itself (handlers echo their own).
    const echo = (): RequestEcho | undefined =>
      isAdsApiPath(url.pathname) ? requestEcho({ pathParams: match?.pathParams ?? {}, params: new RequestParams(url.searchParams, undefined) }) : undefined;
    let result: RouteResult;
    if (fault?.kind === 'status' || fault?.kind === 'rate_limit' || fault?.kind === 'operation_errors') {
      result = this.faultResult(fault, match, echo());
    } else if (read.kind === 'too_large') {
      result = errorResult(payloadTooLarge(this.rt.settings.maxBodyBytes), echo());
    } else if (!match) {
      result = errorResult(notFound(`no route matches ${method} ${url.pathname}`), echo());
    } else {
      result = this.runRoute(match, req, url, read.body, fault?.kind === 'count_mismatch', admin);
    }
    if (read.kind === 'complete') read.release();
    if (fault?.kind === 'delay' && !fault.before) await wait(fault.ms);
    if (!res.destroyed && !req.socket.destroyed) send(res, result);
    done(result.status);
  }

  private faultResult(fault: ActiveFault & { kind: 'status' | 'rate_limit' | 'operation_errors' }, match: RouteMatch | undefined, echo: RequestEcho | undefined): RouteResult {
    if (fault.kind === 'operation_errors') {
      // The batch failed as a whole (nothing applied): the item-level errors, indexed like its operations.
      const operationErrors = [...Array.from({ length: fault.index }, () => null), [{ code: fault.code, message: fault.message }]];
      return { status: fault.status, json: { data: { success_count: 0, total_count: 0 }, operation_errors: operationErrors, ...(echo ? { request: echo } : {}) } };
    }
    if (fault.kind === 'status') {
      const error = new EmulatorHttpError(
        fault.status,
        [{ code: fault.code ?? errorCodeForStatus(fault.status), message: fault.message ?? `injected fault: HTTP ${fault.status}` }],
        {},
        fault.retry_after === undefined ? {} : { 'retry-after': String(fault.retry_after) },
      );
      return errorResult(error, echo);
    }
    const family = match?.route.family ?? (match?.route.method === 'GET' ? 'read' : 'write');
    const limit = this.rt.limits[family] ?? DEFAULT_EMULATOR_RATE_LIMITS[family];
    const headers: Record<string, string> = fault.with_reset
      ? {
          'x-rate-limit-limit': String(limit.limit),
          'x-rate-limit-remaining': '0',
          'x-rate-limit-reset': String(Math.ceil(this.rt.settings.now() / 1000) + fault.retry_after),
        }
      : {};
    return errorResult(new EmulatorHttpError(429, [{ code: 'TOO_MANY_REQUESTS', message: 'Rate limit exceeded' }], {}, headers), echo);
  }

  private runRoute(match: RouteMatch, req: IncomingMessage, url: URL, body: Buffer, countMismatch: boolean, admin: boolean): RouteResult {
    const { route, pathParams } = match;
    const contentType = mediaType(req.headers['content-type']);
    const form = contentType === 'application/x-www-form-urlencoded' && !admin ? new URLSearchParams(body.toString('utf8')) : undefined;
    const apiRequest: ApiRequest = {
      method: route.method,
      url,
      pattern: route.pattern,
      pathParams,
      params: new RequestParams(url.searchParams, form),
      body,
      contentType,
      headers: req.headers,
      caller: undefined,
      now: this.rt.settings.now(),
      countMismatch,
    };
    const echo = (): RequestEcho | undefined => (isAdsApiPath(url.pathname) ? requestEcho(apiRequest) : undefined);
    let rateHeaders: Record<string, string> | undefined;
    try {
      apiRequest.caller = authenticate(route.auth, { method: route.method, url, authorization: req.headers.authorization, form }, this.rt.verifier);
      const family = familyOf(route, apiRequest.params);
      if (family) {
        const caller = apiRequest.caller;
        const verdict = this.rt.rateLimits.consume(family, caller?.accessToken?.token ?? caller?.consumerKey ?? '');
        if (verdict) {
          rateHeaders = verdict.headers;
          if (!verdict.allowed) {
            throw family === 'oauth2_token'
              ? new EmulatorHttpError(403, [{ code: 99, message: 'Bearer token requested too often; cache the token instead.' }])
              : new EmulatorHttpError(429, [{ code: 'TOO_MANY_REQUESTS', message: 'Rate limit exceeded' }]);
          }
        }
      }
      return withHeaders(route.handle(apiRequest), rateHeaders);
    } catch (error) {
      if (error instanceof EmulatorHttpError) return withHeaders(errorResult(error, echo()), rateHeaders);
      const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
      (this.rt.settings.logger ?? ((line: string) => process.stderr.write(`${line}\n`)))(
        `emulator: internal error on ${route.method} ${route.pattern}: ${detail}`,
      );
      const internal = new EmulatorHttpError(500, [{ code: 'INTERNAL_ERROR', message: 'the emulator failed on this request' }]);
      return withHeaders(errorResult(internal, echo()), rateHeaders);
    }
  }
}

export function createRequestListener(runtime: EmulatorRuntime): RequestListener {
  const pipeline = new RequestPipeline(runtime);
  return (req, res) => {
    pipeline.serve(req, res).catch((error: unknown) => {
      if (!res.headersSent && !res.destroyed) {
        send(res, errorResult(new EmulatorHttpError(500, [{ code: 'INTERNAL_ERROR', message: String(error) }]), undefined));
      }
    });
  };
}
