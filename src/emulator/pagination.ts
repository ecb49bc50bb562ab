/**
 * Lists: count, cursor and with_total_count as the service treats them. Records carry an
 * increasing sequence number; a cursor names the last sequence number of the page before, so
 * pages stay stable while records are added or removed.
 */
import { invalidParameter } from './errors.js';
import type { RequestParams } from './request-params.js';

export interface Sequenced {
  readonly seq: number;
}

export interface PagingRequest {
  count: number;
  /** Records after this sequence number; 0 for the first page. */
  afterSeq: number;
  withTotalCount: boolean;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export function encodeCursor(seq: number): string {
  return Buffer.from(`after:${seq}`).toString('base64url');
}

export function decodeCursor(cursor: string): number {
  const match = /^after:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  if (!match?.[1]) throw invalidParameter('cursor', `cursor "${cursor}" is not a cursor this list gave out`);
  return Number(match[1]);
}

/** Reads count (within [1, maxCount], default defaultCount), cursor and with_total_count. */
export function readPaging(params: RequestParams, defaultCount: number, maxCount: number, totalCountAllowed = true): PagingRequest {
  const count = params.integer('count', 1, maxCount, defaultCount);
  const cursor = params.get('cursor');
  const withTotalCount = totalCountAllowed ? params.boolean('with_total_count', false) : false;
  if (withTotalCount && cursor !== undefined) {
    throw invalidParameter('with_total_count', 'with_total_count cannot be combined with cursor');
  }
  return { count, afterSeq: cursor === undefined ? 0 : decodeCursor(cursor), withTotalCount };
}

/** sort_by orders lists by other attributes; the emulator keeps creation order only and says so. */
export function refuseSortBy(params: RequestParams): void {
  if (params.get('sort_by') !== undefined) throw invalidParameter('sort_by', 'sort_by is not supported by the emulator');
}

/** One page of records already filtered and ordered by sequence number. */
export function pageOf<T extends Sequenced>(records: readonly T[], paging: PagingRequest): Page<T> {
  let start = 0;
  while (start < records.length && (records[start]?.seq ?? 0) <= paging.afterSeq) start += 1;
  const items = records.slice(start, start + paging.count);
  const last = items[items.length - 1];
  const more = start + paging.count < records.length;
  return { items, nextCursor: more && last ? encodeCursor(last.seq) : null };
}
