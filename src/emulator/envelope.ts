/**
 * The service's response envelope: {request: {params}, data, next_cursor, total_count} for
 * answers, {errors: [...], request} for failures.
 */
import type { ServiceErrorItem } from './errors.js';
import type { ApiRequest, RouteResult } from './routing.js';

export interface RequestEcho {
  params: Record<string, string>;
}

/** The `request` member: the path and query parameters the call was made with. */
export function requestEcho(req: Pick<ApiRequest, 'pathParams' | 'params'>): RequestEcho {
  return { params: { ...req.pathParams, ...req.params.echo() } };
}

export function dataAnswer(req: ApiRequest, data: unknown, status = 200): RouteResult {
  return { status, json: { request: requestEcho(req), data } };
}

export function listAnswer(req: ApiRequest, data: unknown[], nextCursor: string | null, totalCount?: number): RouteResult {
  return {
    status: 200,
    json: { request: requestEcho(req), data, next_cursor: nextCursor, ...(totalCount === undefined ? {} : { total_count: totalCount }) },
  };
}

export function errorBody(errors: ServiceErrorItem[], request: RequestEcho | undefined, extra: Readonly<Record<string, unknown>> = {}): unknown {
  return { errors, ...extra, ...(request === undefined ? {} : { request }) };
}
