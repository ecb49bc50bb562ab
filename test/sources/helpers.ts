/** Shared helpers of the source tests: streams from bytes, collecting readers, temp dirs. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import type { ByteSource } from '../../src/sources/byte-source.js';
import type { CsvReader } from '../../src/sources/csv.js';
import type { CsvRow, FeedBatch, FeedItem, RowReject } from '../../src/sources/types.js';

export const FIXTURES = fileURLToPath(new URL('../fixtures/sources/', import.meta.url));

export function fixturePath(name: string): string {
  return join(FIXTURES, name);
}

/** `bytes` cut into chunks of `chunkBytes` (one chunk when 0), as a stream. */
export function streamOf(bytes: Buffer | string, chunkBytes = 0): Readable {
  const buffer = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
  const chunks: Buffer[] = [];
  if (chunkBytes <= 0) chunks.push(buffer);
  else for (let at = 0; at < buffer.length; at += chunkBytes) chunks.push(buffer.subarray(at, at + chunkBytes));
  return Readable.from(chunks);
}

/** `bytes` cut at the given offsets (out of range and repeated ones ignored). */
export function cutAt(buffer: Buffer, cuts: readonly number[]): Buffer[] {
  const sorted = [...new Set(cuts)].filter((cut) => cut > 0 && cut < buffer.length).sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const cut of sorted) {
    chunks.push(buffer.subarray(from, cut));
    from = cut;
  }
  chunks.push(buffer.subarray(from));
  return chunks;
}

/** `bytes` cut at the given offsets, as a stream. */
export function streamCutAt(buffer: Buffer, cuts: readonly number[]): Readable {
  return Readable.from(cutAt(buffer, cuts));
}

export function sourceOf(bytes: Buffer | string, name = 'test.csv', chunkBytes = 0): ByteSource {
  return { name, stream: streamOf(bytes, chunkBytes) };
}

export interface CsvResult {
  header: string[];
  rows: CsvRow[];
  rejects: RowReject[];
}

/** Everything a CSV reader yields; throws what it throws. */
export async function readAllCsv(reader: CsvReader): Promise<CsvResult> {
  const header = await reader.header();
  const rows: CsvRow[] = [];
  const rejects: RowReject[] = [];
  for await (const batch of reader) {
    rows.push(...batch.rows);
    rejects.push(...batch.rejects);
  }
  return { header, rows, rejects };
}

export interface FeedResult {
  items: FeedItem[];
  rejects: RowReject[];
  /** What the reader threw at the end, if anything. */
  error: unknown;
}

/** Everything a feed reader yields, and the error it ended with (not rethrown). */
export async function readAllFeed(batches: AsyncIterable<FeedBatch>): Promise<FeedResult> {
  const items: FeedItem[] = [];
  const rejects: RowReject[] = [];
  let error: unknown;
  try {
    for await (const batch of batches) {
      items.push(...batch.items);
      rejects.push(...batch.rejects);
    }
  } catch (thrown) {
    error = thrown;
  }
  return { items, rejects, error };
}

/** Plain objects of the items (fields without the null prototype), for toEqual. */
export function plainItems(items: readonly FeedItem[]): { row: number; line: number; fields: Record<string, string | string[]> }[] {
  return items.map((item) => ({ row: item.row, line: item.line, fields: { ...item.fields } }));
}

/** What `run` rejects with (fails the test when it resolves). */
export async function errorOf(run: () => Promise<unknown>): Promise<Error> {
  try {
    await run();
  } catch (error) {
    if (error instanceof Error) return error;
    throw new Error(`threw a non-Error: ${String(error)}`, { cause: error });
  }
  throw new Error('expected an error, but it resolved');
}

export async function withTempDir<T>(use: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'adsync-sources-'));
  try {
    return await use(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Bytes that are not text (or not UTF-8) for the edits below. */
export const RAW_BYTES = [Buffer.from([0xff]), Buffer.from([0xc3]), Buffer.from([0x80]), Buffer.from([0xf0, 0x9f]), Buffer.from([0x00])];

/** An edit of an input: a token inserted, bytes deleted or repeated, or the input cut short. */
export type Edit =
  | { kind: 'insert'; at: number; token: Buffer }
  | { kind: 'delete'; at: number; length: number }
  | { kind: 'repeat'; at: number; length: number }
  | { kind: 'cut'; at: number };

/** Random edits inserting these tokens (and RAW_BYTES); `at` is a fraction of the input. */
export function editArbitrary(tokens: readonly Buffer[]): fc.Arbitrary<Edit> {
  const at = fc.double({ min: 0, max: 1, noNaN: true });
  return fc.oneof(
    fc.record({ kind: fc.constant('insert' as const), at, token: fc.constantFrom(...tokens, ...RAW_BYTES) }),
    fc.record({ kind: fc.constant('delete' as const), at, length: fc.integer({ min: 1, max: 40 }) }),
    fc.record({ kind: fc.constant('repeat' as const), at, length: fc.integer({ min: 1, max: 200 }) }),
    fc.record({ kind: fc.constant('cut' as const), at }),
  );
}

export function applyEdits(input: Buffer, edits: readonly Edit[]): Buffer {
  let bytes = input;
  for (const edit of edits) {
    const at = Math.floor(edit.at * bytes.length);
    switch (edit.kind) {
      case 'insert':
        bytes = Buffer.concat([bytes.subarray(0, at), edit.token, bytes.subarray(at)]);
        break;
      case 'delete':
        bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + edit.length)]);
        break;
      case 'repeat':
        bytes = Buffer.concat([bytes.subarray(0, at + edit.length), bytes.subarray(at)]);
        break;
      case 'cut':
        bytes = bytes.subarray(0, at);
        break;
    }
  }
  return bytes;
}

/** Random chunk borders (offsets) of an input. */
export const cutsArbitrary = fc.array(fc.integer({ min: 1, max: 20_000 }), { maxLength: 12 });
