/**
 * The second half of the external sort: the sorted runs merged into one stream in (field,
 * value) order, each distinct identifier once, with the lowest row it had in any run (the
 * first row of the export it appeared in). A k-way merge over a binary heap; records are
 * compared by a number first (field and four value bytes), by bytes only when those agree.
 * More than MAX_FAN_IN runs are first merged in groups into longer runs, so the read buffers
 * stay bounded (64 KB per run read at once).
 */
import { copyBytes } from '../copy-bytes.js';
import type { SpoolFile } from '../spool-file.js';
import { compareValues, RecordCursor, RecordWriter, type RecordRange } from './packed-records.js';

export const MAX_FAN_IN = 128;

/** Receives each distinct identifier: its value is value[start, end) (valid during the call). */
export type DistinctRecordHandler = (code: number, value: Buffer, start: number, end: number, row: number) => void;

function before(a: RecordCursor, b: RecordCursor): boolean {
  if (a.key !== b.key) return a.key < b.key;
  return compareValues(a.buf, a.valueStart, a.valueEnd, b.buf, b.valueStart, b.valueEnd) < 0;
}

/** Merges `runs` into at most MAX_FAN_IN runs (appended to the spool); returns them. */
export function reduceRuns(spool: SpoolFile, runs: readonly RecordRange[], fanIn = MAX_FAN_IN): RecordRange[] {
  let left = runs.filter((r) => r.count > 0);
  const writer = new RecordWriter(spool);
  while (left.length > fanIn) {
    const group = left.slice(0, fanIn);
    writer.start();
    mergeDistinct(spool, group, (code, value, start, end, row) => writer.write(code, value, start, end, row));
    left = [...left.slice(fanIn), writer.finish()];
  }
  return left;
}

/** Streams the distinct identifiers of `runs` (at most MAX_FAN_IN) in order; returns how many. */
export function mergeDistinct(spool: SpoolFile, runs: readonly RecordRange[], onRecord: DistinctRecordHandler): number {
  const heap: RecordCursor[] = [];
  for (const run of runs) {
    const cursor = new RecordCursor(spool, run);
    if (cursor.next()) heap.push(cursor);
  }
  for (let i = (heap.length >> 1) - 1; i >= 0; i--) siftDown(heap, i);

  let pending = Buffer.allocUnsafe(256);
  let pendingLength = 0;
  let pendingCode = -1;
  let pendingKey = -1;
  let pendingRow = 0;
  let distinct = 0;

  while (heap.length > 0) {
    const top = heap[0] as RecordCursor;
    const length = top.valueEnd - top.valueStart;
    const same =
      pendingCode === top.code && pendingKey === top.key && pendingLength === length && compareValues(pending, 0, pendingLength, top.buf, top.valueStart, top.valueEnd) === 0;
    if (same) {
      if (top.row < pendingRow) pendingRow = top.row;
    } else {
      if (pendingCode >= 0) {
        onRecord(pendingCode, pending, 0, pendingLength, pendingRow);
        distinct += 1;
      }
      if (length > pending.length) pending = Buffer.allocUnsafe(Math.max(length, pending.length * 2));
      copyBytes(top.buf, top.valueStart, top.valueEnd, pending, 0);
      pendingLength = length;
      pendingCode = top.code;
      pendingKey = top.key;
      pendingRow = top.row;
    }
    if (top.next()) {
      siftDown(heap, 0);
    } else {
      const last = heap.pop() as RecordCursor;
      if (heap.length > 0) {
        heap[0] = last;
        siftDown(heap, 0);
      }
    }
  }
  if (pendingCode >= 0) {
    onRecord(pendingCode, pending, 0, pendingLength, pendingRow);
    distinct += 1;
  }
  return distinct;
}

function siftDown(heap: RecordCursor[], at: number): void {
  const n = heap.length;
  const item = heap[at] as RecordCursor;
  let i = at;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= n) break;
    const r = l + 1;
    let c = l;
    if (r < n && before(heap[r] as RecordCursor, heap[l] as RecordCursor)) c = r;
    const child = heap[c] as RecordCursor;
    if (!before(child, item)) break;
    heap[i] = child;
    i = c;
  }
  heap[i] = item;
}
