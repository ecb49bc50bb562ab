/**
 * Identifier records packed into bytes, the form in which an audience scan keeps its sorted
 * runs and its plan in a spool file: one byte of field code, four bytes of row (big-endian,
 * signed), two bytes of value length (big-endian), then the value's bytes.
 */
import type { SpoolFile, SpoolReader } from '../spool-file.js';
import { copyBytes } from '../copy-bytes.js';

export const RECORD_HEADER_BYTES = 7;
/** The longest value a record holds (its length is two bytes). */
export const MAX_VALUE_BYTES = 0xffff;

/** Records written one after another at `offset` of a spool file. */
export interface RecordRange {
  offset: number;
  bytes: number;
  count: number;
}

const EMPTY: RecordRange = { offset: 0, bytes: 0, count: 0 };
const STAGING_BYTES = 1024 * 1024;

/*
 * The header by byte arithmetic: Buffer's readInt32BE and writeUInt16BE check their arguments
 * and cost a call each, for every identifier of an export several times over.
 */

/** Writes the header of a record (code, row, value length) at `at`. */
export function writeRecordHeader(target: Uint8Array, at: number, code: number, row: number, length: number): void {
  if (length > MAX_VALUE_BYTES) throw new RangeError(`a value of ${length} bytes: a record holds at most ${MAX_VALUE_BYTES}`);
  // A typed array keeps the low eight bits of what is stored.
  target[at] = code;
  target[at + 1] = row >>> 24;
  target[at + 2] = row >>> 16;
  target[at + 3] = row >>> 8;
  target[at + 4] = row;
  target[at + 5] = length >>> 8;
  target[at + 6] = length;
}

/** The row of the record at `at` (signed). */
export function recordRow(buf: Uint8Array, at: number): number {
  return ((buf[at + 1] ?? 0) << 24) | ((buf[at + 2] ?? 0) << 16) | ((buf[at + 3] ?? 0) << 8) | (buf[at + 4] ?? 0);
}

/** The value length of the record at `at`. */
export function recordValueLength(buf: Uint8Array, at: number): number {
  return ((buf[at + 5] ?? 0) << 8) | (buf[at + 6] ?? 0);
}

/** Writes the whole record of value source[start, end) at `at` (RECORD_HEADER_BYTES + its length). */
export function writeRecord(target: Uint8Array, at: number, code: number, source: Uint8Array, start: number, end: number, row: number): void {
  writeRecordHeader(target, at, code, row, end - start);
  copyBytes(source, start, end, target, at + RECORD_HEADER_BYTES);
}

/**
 * Appends records to a spool file through a staging buffer. The records of one writer are
 * contiguous in the file as long as nothing else appends to it between start() and finish().
 */
export class RecordWriter {
  private readonly staging = Buffer.allocUnsafe(STAGING_BYTES);
  private used = 0;
  private offset = 0;
  private bytes = 0;
  private count = 0;

  constructor(private readonly spool: SpoolFile) {}

  start(): void {
    this.used = 0;
    this.offset = this.spool.size;
    this.bytes = 0;
    this.count = 0;
  }

  /** Appends the record of value source[start, end). */
  write(code: number, source: Uint8Array, start: number, end: number, row: number): void {
    const length = end - start;
    if (this.used + RECORD_HEADER_BYTES + length > STAGING_BYTES) this.flush();
    writeRecord(this.staging, this.used, code, source, start, end, row);
    this.used += RECORD_HEADER_BYTES + length;
    this.bytes += RECORD_HEADER_BYTES + length;
    this.count += 1;
  }

  finish(): RecordRange {
    this.flush();
    return this.count === 0 ? EMPTY : { offset: this.offset, bytes: this.bytes, count: this.count };
  }

  private flush(): void {
    if (this.used > 0) this.spool.append(this.staging.subarray(0, this.used));
    this.used = 0;
  }
}

const READ_BYTES = 64 * 1024;
const TWO_32 = 2 ** 32;

/**
 * Reads the records of a range one at a time. After next() returns true, the record is
 * `code`, `row` and the value buf[valueStart, valueEnd); `key` orders records by field and
 * the first four value bytes (see prefixKey).
 */
export class RecordCursor {
  buf: Buffer = Buffer.allocUnsafe(READ_BYTES);
  code = 0;
  row = 0;
  valueStart = 0;
  valueEnd = 0;
  key = 0;
  private pos = 0;
  private filled = 0;
  private fileNext: number;
  private readonly fileEnd: number;

  constructor(
    private readonly spool: SpoolReader,
    range: RecordRange,
  ) {
    this.fileNext = range.offset;
    this.fileEnd = range.offset + range.bytes;
  }

  next(): boolean {
    if (!this.ensure(RECORD_HEADER_BYTES)) return false;
    const length = recordValueLength(this.buf, this.pos);
    // ensure() may move the bytes (and replace buf): read pos and buf again after it.
    if (!this.ensure(RECORD_HEADER_BYTES + length)) throw new Error('spool file: a record is cut short');
    const q = this.pos;
    this.code = this.buf[q] ?? 0;
    this.row = recordRow(this.buf, q);
    this.valueStart = q + RECORD_HEADER_BYTES;
    this.valueEnd = this.valueStart + length;
    this.key = prefixKey(this.code, this.buf, this.valueStart, this.valueEnd);
    this.pos = this.valueEnd;
    return true;
  }

  /** Makes `n` bytes from pos available in buf; false at the end of the range. */
  private ensure(n: number): boolean {
    if (this.filled - this.pos >= n) return true;
    const left = this.filled - this.pos;
    if (this.fileNext >= this.fileEnd) {
      if (left === 0) return false;
      throw new Error('spool file: a record is cut short');
    }
    if (n > this.buf.length) {
      const bigger = Buffer.allocUnsafe(Math.max(n, this.buf.length * 2));
      this.buf.copy(bigger, 0, this.pos, this.filled);
      this.buf = bigger;
    } else {
      this.buf.copyWithin(0, this.pos, this.filled);
    }
    this.pos = 0;
    this.filled = left;
    const take = Math.min(this.buf.length - left, this.fileEnd - this.fileNext);
    this.spool.readInto(this.buf, left, this.fileNext, take);
    this.fileNext += take;
    this.filled += take;
    return this.filled - this.pos >= n;
  }
}

/**
 * A number that orders values by field code, then by their first four bytes (zero-padded):
 * a < b as numbers means record a comes before record b in (field, value) byte order; equal
 * numbers need a full comparison (compareValues).
 */
export function prefixKey(code: number, buf: Uint8Array, start: number, end: number): number {
  let w = 0;
  for (let i = 0; i < 4; i++) w = w * 256 + (start + i < end ? (buf[start + i] ?? 0) : 0);
  return code * TWO_32 + w;
}

/**
 * Byte order of a[aStart, aEnd) and b[bStart, bEnd), as SQLite orders BLOBs (memcmp, then the
 * shorter first): <0, 0, >0. A loop here, not Buffer.compare: values are short and mostly differ
 * early, where a native call costs more than the comparison.
 */
export function compareValues(a: Uint8Array, aStart: number, aEnd: number, b: Uint8Array, bStart: number, bEnd: number): number {
  const aLength = aEnd - aStart;
  const bLength = bEnd - bStart;
  const n = aLength < bLength ? aLength : bLength;
  for (let i = 0; i < n; i++) {
    const d = (a[aStart + i] ?? 0) - (b[bStart + i] ?? 0);
    if (d !== 0) return d;
  }
  return aLength - bLength;
}
