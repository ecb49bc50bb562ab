/**
 * The response envelope of every Ads API answer: {request, data, next_cursor, total_count},
 * and the service's error body {errors: [...], operation_errors: [...]}.
 */
import { z } from 'zod';
import type { OperationErrorItem, ServiceErrorItem } from './errors.js';

export interface Envelope<T> {
  request: unknown;
  data: T;
  /** Present on lists; null on the last page. */
  next_cursor?: string | null | undefined;
  total_count?: number | undefined;
}

export const envelopeSchema = z.looseObject({
  request: z.unknown().optional(),
  data: z.unknown(),
  next_cursor: z.string().nullable().optional(),
  total_count: z.number().optional(),
});

const serviceErrorSchema = z.looseObject({
  code: z.union([z.string(), z.number()]).optional(),
  message: z.string().optional(),
  parameter: z.string().optional(),
});

const errorBodySchema = z.looseObject({
  errors: z.array(serviceErrorSchema).optional(),
  operation_errors: z.array(z.unknown()).optional(),
});

function toServiceError(e: z.infer<typeof serviceErrorSchema>): ServiceErrorItem {
  return {
    code: e.code ?? 'UNKNOWN',
    message: e.message ?? '',
    ...(e.parameter === undefined ? {} : { parameter: e.parameter }),
  };
}

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
}

/**
 * Reads an error body. operation_errors may come as [{index, errors}] or as an array indexed
 * like the input, holding an empty placeholder for operations without error: null, [], {} or
 * {index, errors: []} name no error, and their operation's users are not refused. An operation
 * named in several entries (one per error) is one item holding all its errors: its users are
 * refused once.
 */
export function parseErrorBody(body: unknown): { errors: ServiceErrorItem[]; operationErrors: OperationErrorItem[] } {
  const parsed = errorBodySchema.safeParse(body);
  if (!parsed.success) return { errors: [], operationErrors: [] };
  const errors = (parsed.data.errors ?? []).map(toServiceError);
  const byIndex = new Map<number, OperationErrorItem>();
  const add = (index: number, items: ServiceErrorItem[]): void => {
    const known = byIndex.get(index);
    if (known) known.errors.push(...items);
    else byIndex.set(index, { index, errors: items });
  };
  (parsed.data.operation_errors ?? []).forEach((item, position) => {
    if (item === null || item === undefined || isEmptyObject(item)) return;
    const asList = z.array(serviceErrorSchema).safeParse(item);
    if (asList.success) {
      const listed = asList.data.filter((e) => !isEmptyObject(e));
      if (listed.length > 0) add(position, listed.map(toServiceError));
      return;
    }
    const asIndexed = z
      .looseObject({ index: z.number().int(), errors: z.array(serviceErrorSchema) })
      .safeParse(item);
    if (asIndexed.success) {
      if (asIndexed.data.errors.length > 0) add(asIndexed.data.index, asIndexed.data.errors.map(toServiceError));
      return;
    }
    const single = serviceErrorSchema.safeParse(item);
    if (single.success) add(position, [toServiceError(single.data)]);
  });
  return { errors, operationErrors: [...byIndex.values()] };
}
