/**
 * A plan's additions sorted back into source-row order, for an upload that sends each export
 * row's identifiers as one user record (what the service's user object is for, and ~2% fewer
 * bytes than a record per identifier).
 *
 * The plan is made in (field, value) order, so a row's identifiers come out of it far apart.
 * While it is made, each addition is also appended to the bucket of its row: rows
 * [k * 2^BUCKET_ROW_BITS, (k + 1) * 2^BUCKET_ROW_BITS). A bucket is written to the spool file in
 * segments (a small staging buffer per bucket), so memory is one staging buffer per bucket,
 * whatever the size of the export. The upload reads one bucket at a time, orders its records
 * by row with a counting sort (stable: a row's identifiers stay in (field, value) order, so its
 * fields come grouped, as a user record writes them), and hands them out in pages that never
 * split a row.
 *
 * A bucket is also the unit in which staged additions are confirmed (member-status.ts): small
 * enough that a killed upload loses little, large enough that a request (~22,000 rows of a
 * four-identifier export) spans one or two.
 */
import { copyBytes } from '../copy-bytes.js';
import { IdentifierList } from '../identifier-list.js';
import type { SpoolFile, SpoolReader } from '../spool-file.js';
import { RECORD_HEADER_BYTES, recordRow, recordValueLength, writeRecord } from './packed-records.js';

/** Rows per bucket: 2^15 = 32,768 (~4 MB of records read at once for a four-identifier export). */
export const BUCKET_ROW_BITS = 15;
const ROWS_PER_BUCKET = 2 ** BUCKET_ROW_BITS;
const ROW_MASK = ROWS_PER_BUCKET - 1;
/** Staging per bucket: 306 buckets of a 10M-row export hold ~5 MB. */
const STAGING_BYTES = 16 * 1024;

/** The bucket of a (non-negative) row. */
export function bucketOfRow(row: number): number {
  return Math.floor(row / ROWS_PER_BUCKET);
}

interface Segment {
  offset: number;
  bytes: number;
}

/** One bucket's records in the spool file. */
export interface RowBucket {
  bucket: number;
  segments: readonly Segment[];
  count: number;
  bytes: number;
}

class BucketWriter {
  readonly staging = Buffer.allocUnsafe(STAGING_BYTES);
  used = 0;
  readonly segments: Segment[] = [];
  count = 0;
  bytes = 0;
}

/** Appends records to the buckets of their rows (records as packed-records.ts writes them). */
export class RowBucketWriter {
  private readonly open = new Map<number, BucketWriter>();

  constructor(private readonly spool: SpoolFile) {}

  /** Appends the record of value source[start, end) of `row`. */
  write(code: number, source: Uint8Array, start: number, end: number, row: number): void {
    const bucket = bucketOfRow(row);
    let w = this.open.get(bucket);
    if (!w) {
      w = new BucketWriter();
      this.open.set(bucket, w);
    }
    const length = end - start;
    const size = RECORD_HEADER_BYTES + length;
    if (w.used + size > STAGING_BYTES) this.flush(w);
    if (size > STAGING_BYTES) {
      // A value longer than the staging buffer (a partner id of 16 KB): a segment of its own.
      const one = Buffer.allocUnsafe(size);
      writeRecord(one, 0, code, source, start, end, row);
      w.segments.push({ offset: this.spool.append(one), bytes: size });
    } else {
      writeRecord(w.staging, w.used, code, source, start, end, row);
      w.used += size;
    }
    w.count += 1;
    w.bytes += size;
  }

  /** The buckets, in row order; the staging buffers are let go. */
  finish(): RowBucket[] {
    const buckets: RowBucket[] = [];
    for (const [bucket, w] of [...this.open.entries()].sort((a, b) => a[0] - b[0])) {
      this.flush(w);
      buckets.push({ bucket, segments: w.segments, count: w.count, bytes: w.bytes });
    }
    this.open.clear();
    return buckets;
  }

  private flush(w: BucketWriter): void {
    if (w.used === 0) return;
    const offset = this.spool.append(w.staging.subarray(0, w.used));
    const last = w.segments[w.segments.length - 1];
    // The spool file appends in order: a segment right after the last one extends it.
    if (last && last.offset + last.bytes === offset) last.bytes += w.used;
    else w.segments.push({ offset, bytes: w.used });
    w.used = 0;
  }
}

/**
 * One bucket's records at a time in row order, as an identifier list over arrays reused from
 * bucket to bucket. A counting sort by the row's place in the bucket that moves the values: a
 * first pass counts each row's records and value bytes, a second walks the records as written
 * and copies each value to its row's place (stable: a row's identifiers stay in the order they
 * were written). Reading the records in file order and writing the values out of order was
 * ~1.5x faster than the reverse (sorting positions, then reading the ~4 MB bucket in row order,
 * where nearly every value missed the caches); the pages are then cut out of the list in runs.
 */
class BucketInRowOrder {
  /** The bucket's records as written. */
  private records = Buffer.allocUnsafe(0);
  /** Their values in row order; value i is values[ends[i - 1] (0 for i = 0), ends[i]). */
  private values = Buffer.allocUnsafe(0);
  private codes = new Uint8Array(0);
  private rows = new Int32Array(0);
  private ends = new Int32Array(0);
  /** Per row of the bucket (at its place + 1): records, then where its next one goes. */
  private readonly counts = new Int32Array(ROWS_PER_BUCKET + 1);
  /** Per row of the bucket (at its place + 1): value bytes, then where its next value goes. */
  private readonly offsets = new Int32Array(ROWS_PER_BUCKET + 1);

  /** The records of bucket `b` in row order (valid until the next bucket is read). */
  read(spool: SpoolReader, b: RowBucket): IdentifierList {
    if (this.records.length < b.bytes) {
      const bytes = Math.max(b.bytes, Math.ceil(this.records.length * 1.5));
      this.records = Buffer.allocUnsafe(bytes);
      this.values = Buffer.allocUnsafe(bytes);
    }
    if (this.rows.length < b.count) {
      const n = Math.max(b.count, Math.ceil(this.rows.length * 1.5));
      this.codes = new Uint8Array(n);
      this.rows = new Int32Array(n);
      this.ends = new Int32Array(n);
    }
    const { records: buf, values, codes, rows, ends, counts, offsets } = this;
    let at = 0;
    for (const s of b.segments) {
      spool.readInto(buf, at, s.offset, s.bytes);
      at += s.bytes;
    }
    counts.fill(0);
    offsets.fill(0);
    for (let i = 0, o = 0; i < b.count; i++) {
      const slot = recordRow(buf, o) & ROW_MASK;
      const length = recordValueLength(buf, o);
      counts[slot + 1] = (counts[slot + 1] ?? 0) + 1;
      offsets[slot + 1] = (offsets[slot + 1] ?? 0) + length;
      o += RECORD_HEADER_BYTES + length;
    }
    for (let r = 0; r < ROWS_PER_BUCKET; r++) {
      counts[r + 1] = (counts[r + 1] ?? 0) + (counts[r] ?? 0);
      offsets[r + 1] = (offsets[r + 1] ?? 0) + (offsets[r] ?? 0);
    }
    for (let i = 0, o = 0; i < b.count; i++) {
      const row = recordRow(buf, o);
      const length = recordValueLength(buf, o);
      const slot = row & ROW_MASK;
      const k = counts[slot] ?? 0;
      counts[slot] = k + 1;
      const to = offsets[slot] ?? 0;
      offsets[slot] = to + length;
      codes[k] = buf[o] ?? 0;
      rows[k] = row;
      ends[k] = to + length;
      const from = o + RECORD_HEADER_BYTES;
      copyBytes(buf, from, from + length, values, to);
      o = from + length;
    }
    return IdentifierList.fromTransferable({ length: b.count, codes, rows, ends, data: values });
  }
}

/**
 * The records of `buckets` in row order, in pages of at least `pageSize` identifiers (the last
 * one smaller), a row's identifiers always in the same page, in the order they were written.
 * One list is reused for every page: it is valid until the next one is asked for.
 */
export function* rowOrderedPages(spool: SpoolReader, buckets: readonly RowBucket[], pageSize: number): Generator<IdentifierList> {
  const size = Math.max(1, pageSize);
  const page = new IdentifierList(Math.max(16, size + 8));
  const bucket = new BucketInRowOrder();
  for (const b of buckets) {
    const list = bucket.read(spool, b);
    // A page ends at the end of the first row that fills it; rows never cross buckets.
    for (let k = 0; k < list.length; ) {
      if (page.length >= size) {
        yield page;
        page.clear();
      }
      let end = Math.min(list.length, k + size - page.length);
      const lastRow = list.row(end - 1);
      while (end < list.length && list.row(end) === lastRow) end++;
      page.pushRange(list, k, end);
      k = end;
    }
  }
  if (page.length > 0) yield page;
}
