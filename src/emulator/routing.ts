/**
 * The route table: what a request to the emulator is, what a handler answers, and matching
 * of `METHOD /path/:param` patterns. Route patterns are also the keys of the request
 * counters of GET /_emulator/state.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { HttpMethod } from '../api/http.js';
import type { EmulatorFamily } from './rate-limits.js';
import type { RequestParams } from './request-params.js';
import type { AccessTokenRecord, RequestTokenRecord } from './token-registry.js';

export type { HttpMethod };

/**
 * How a route authenticates: an access token (every Ads API call and token revocation), the
 * consumer alone (request_token), a request token (access_token), HTTP Basic (oauth2/token)
 * or nothing (the browser page of the flow).
 */
export type AuthMode = 'access_token' | 'consumer_only' | 'request_token' | 'basic' | 'none';

export interface Caller {
  consumerKey: string;
  /** The OAuth protocol parameters of the request, from the header, query and form. */
  oauthParams: Readonly<Record<string, string>>;
  accessToken?: AccessTokenRecord;
  requestToken?: RequestTokenRecord;
}

export interface ApiRequest {
  method: HttpMethod;
  url: URL;
  /** The route pattern, e.g. /12/accounts/:account_id. */
  pattern: string;
  pathParams: Readonly<Record<string, string>>;
  params: RequestParams;
  body: Buffer;
  /** The media type of Content-Type, lower case, without parameters. */
  contentType: string | undefined;
  headers: IncomingHttpHeaders;
  caller: Caller | undefined;
  /** The emulator clock at arrival, epoch ms. */
  now: number;
  /** A count_mismatch fault applies: answer one success fewer than the records applied. */
  countMismatch: boolean;
}

export type RouteResult =
  | { status: number; json: unknown; headers?: Record<string, string> }
  | { status: number; text: string; contentType: string; headers?: Record<string, string> };

export interface RouteDefinition {
  method: HttpMethod;
  pattern: string;
  auth: AuthMode;
  /**
   * The rate-limit family; by default `read` for GET (`total_count` with with_total_count=true)
   * and `write` otherwise on access-token routes, and none on the others. null: not limited.
   */
  family?: EmulatorFamily | null;
  /**
   * The handler reads req.body only while it runs and keeps nothing of it (no view of the
   * Buffer, directly or in what it stores): the body may then be read into a Buffer that later
   * requests reuse (see http-body.ts).
   */
  bodyIsTransient?: boolean;
  handle(req: ApiRequest): RouteResult;
}

export interface RouteMatch {
  route: RouteDefinition;
  pathParams: Record<string, string>;
}

type PatternSegment = { literal: string } | { param: string };

export class Router {
  private readonly compiled: { route: RouteDefinition; segments: PatternSegment[] }[];

  constructor(routes: readonly RouteDefinition[]) {
    this.compiled = routes.map((route) => ({
      route,
      segments: route.pattern
        .split('/')
        .slice(1)
        .map((s) => (s.startsWith(':') ? { param: s.slice(1) } : { literal: s })),
    }));
  }

  match(method: string, pathname: string): RouteMatch | undefined {
    const parts = pathname.split('/').slice(1);
    let decoded: string[];
    try {
      decoded = parts.map((p) => decodeURIComponent(p));
    } catch {
      return undefined;
    }
    for (const { route, segments } of this.compiled) {
      if (route.method !== method || segments.length !== decoded.length) continue;
      const pathParams: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < segments.length && ok; i++) {
        const segment = segments[i];
        const value = decoded[i] ?? '';
        if (segment === undefined) ok = false;
        else if ('literal' in segment) ok = segment.literal === value;
        else if (value === '') ok = false;
        else pathParams[segment.param] = value;
      }
      if (ok) return { route, pathParams };
    }
    return undefined;
  }
}
