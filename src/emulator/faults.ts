/**
 * Fault injection (POST /_emulator/faults): the next `times` requests matching a route answer
 * with a chosen failure instead of, or on top of, the normal answer:
 * - status: that HTTP status with the service's error body (its code and message as asked,
 *   and Retry-After when asked); nothing is applied;
 * - count_mismatch: the batch is applied, but success_count is one less than the records;
 * - operation_errors: the batch is not applied; the answer (status 200 unless asked) holds
 *   `operation_errors`, indexed like the operations, with one error at `index`, and counts 0;
 * - delay: the answer is held back `ms` milliseconds (the request is still applied); with
 *   `before: true` the request is held `ms` before the service handles it instead, and one
 *   whose client has gone away by then is never applied;
 * - drop: the connection is destroyed after part of the request body is read, before any answer;
 * - rate_limit: a 429 TOO_MANY_REQUESTS, with or without x-rate-limit-* headers.
 *
 * A route is "<METHOD> <path>": METHOD is GET, POST, PUT, DELETE or *; the path is a glob
 * (`*` within one segment, `**` across segments) or, after `re:`, a regular expression; both
 * are matched against the whole path, without query string.
 */
import { z } from 'zod';
import { invalidParameter } from './errors.js';

const routeSchema = z.string().regex(/^(GET|POST|PUT|DELETE|\*)\s+\S+$/, 'route must be "<METHOD> <path glob or re:regex>"');
const times = z.number().int().min(1).default(1);

export const faultSpecSchema = z.discriminatedUnion('kind', [
  z.object({
    route: routeSchema,
    kind: z.literal('status'),
    status: z.number().int().min(400).max(599),
    retry_after: z.number().int().min(0).optional(),
    code: z.string().regex(/^[A-Z][A-Z_]*$/).optional(),
    /** The error's message; default "injected fault: HTTP <status>". Any text, line breaks included. */
    message: z.string().max(10_000).optional(),
    times,
  }),
  z.object({ route: routeSchema, kind: z.literal('count_mismatch'), times }),
  z.object({
    route: routeSchema,
    kind: z.literal('operation_errors'),
    /** The answer's status: a 2xx (default 200) or an error status. */
    status: z.number().int().min(200).max(599).default(200),
    /** The operation the error is at (0-based, as the body's operations). */
    index: z.number().int().min(0).max(2499).default(0),
    code: z.string().regex(/^[A-Z][A-Z_]*$/).default('INVALID_PARAMETER'),
    message: z.string().max(10_000).default('injected operation error'),
    times,
  }),
  z.object({ route: routeSchema, kind: z.literal('delay'), ms: z.number().int().min(0).max(600_000), before: z.boolean().default(false), times }),
  z.object({ route: routeSchema, kind: z.literal('drop'), times }),
  z.object({
    route: routeSchema,
    kind: z.literal('rate_limit'),
    with_reset: z.boolean().default(true),
    /** Seconds from now to the x-rate-limit-reset sent with the 429. */
    retry_after: z.number().int().min(0).default(1),
    times,
  }),
]);
export type FaultSpec = z.infer<typeof faultSpecSchema>;

export type ActiveFault = FaultSpec & { id: number; remaining: number };

function compileRoute(route: string): { method: string; path: RegExp } {
  const [method = '*', pattern = ''] = route.trim().split(/\s+/, 2);
  if (pattern.startsWith('re:')) {
    try {
      return { method, path: new RegExp(pattern.slice(3)) };
    } catch (error) {
      throw invalidParameter('route', `route has an invalid regular expression: ${(error as Error).message}`);
    }
  }
  const source = pattern
    .split(/(\*\*|\*|\?)/)
    .map((part) => (part === '**' ? '.*' : part === '*' ? '[^/]*' : part === '?' ? '[^/]' : part.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return { method, path: new RegExp(`^${source}$`) };
}

export class FaultTable {
  private faults: (ActiveFault & { matcher: { method: string; path: RegExp } })[] = [];
  private nextId = 1;

  /** Validates and adds a fault; throws a 400 for a bad specification. */
  add(input: unknown): ActiveFault {
    const parsed = faultSpecSchema.safeParse(input);
    if (!parsed.success) throw invalidParameter(undefined, `invalid fault: ${z.prettifyError(parsed.error).replace(/\n/g, ' ')}`);
    const fault = { ...parsed.data, id: this.nextId++, remaining: parsed.data.times };
    this.faults.push({ ...fault, matcher: compileRoute(fault.route) });
    return fault;
  }

  /** The first fault matching the request, with one use consumed. */
  take(method: string, pathname: string): ActiveFault | undefined {
    const index = this.faults.findIndex((f) => (f.matcher.method === '*' || f.matcher.method === method) && f.matcher.path.test(pathname));
    const found = this.faults[index];
    if (!found) return undefined;
    found.remaining -= 1;
    if (found.remaining <= 0) this.faults.splice(index, 1);
    const { matcher: _matcher, ...fault } = found;
    return fault;
  }

  list(): ActiveFault[] {
    return this.faults.map(({ matcher: _matcher, ...fault }) => fault);
  }

  /** Disarms every fault; ids start again from 1. */
  clear(): void {
    this.faults = [];
    this.nextId = 1;
  }
}
