/**
 * A compact, growable list of identifiers: field codes, source rows and value bytes in typed
 * arrays (a SHA-256 hash is its 32 bytes, a partner_user_id its UTF-8). This is what flows
 * between the source, the state store and the uploader: a million-row export makes a few
 * large arrays instead of millions of small objects and hex strings, and a hash is turned into
 * hex only when it is written into a request body.
 */
import { IDENTIFIER_TYPES, type IdentifierType } from '../hash/types.js';
import { copyBytes } from './copy-bytes.js';

export const FIELD_CODES: Readonly<Record<IdentifierType, number>> = Object.fromEntries(IDENTIFIER_TYPES.map((t, i) => [t, i])) as Record<IdentifierType, number>;
export const PARTNER_CODE = FIELD_CODES.partner_user_id;

/** A count per identifier type (types without any left out). */
export type CountsByField = Partial<Record<IdentifierType, number>>;

/** Counts by field code, for hot loops (a typed-array increment per count), read as counts by type. */
export class FieldTally {
  private readonly perCode = new Float64Array(IDENTIFIER_TYPES.length);

  add(code: number, n = 1): void {
    this.perCode[code] = (this.perCode[code] ?? 0) + n;
  }

  /** The sum of the counts. */
  total(): number {
    let n = 0;
    for (const c of this.perCode) n += c;
    return n;
  }

  /** The counts by type, types without any left out. */
  counts(): CountsByField {
    const counts: CountsByField = {};
    IDENTIFIER_TYPES.forEach((type, code) => {
      const n = this.perCode[code] ?? 0;
      if (n > 0) counts[type] = n;
    });
    return counts;
  }
}

/** Adds counts by type into `into`. */
export function addCountsByField(into: CountsByField, from: CountsByField): void {
  for (const [field, n] of Object.entries(from) as [IdentifierType, number][]) into[field] = (into[field] ?? 0) + n;
}

/** The two lowercase hex digits of each byte, as character codes (two tables: no pair to take apart per byte). */
const HEX_DIGITS = '0123456789abcdef';
const HEX_HIGH = Uint8Array.from({ length: 256 }, (_, b) => HEX_DIGITS.charCodeAt(b >> 4));
const HEX_LOW = Uint8Array.from({ length: 256 }, (_, b) => HEX_DIGITS.charCodeAt(b & 15));

/**
 * The arrays behind an IdentifierList, for code that walks many identifiers without a call per
 * field (the scan's sort): value i is data[ends[i - 1] (0 for i = 0), ends[i]). Read only.
 */
export interface IdentifierListView {
  readonly length: number;
  readonly codes: Uint8Array;
  readonly rows: Int32Array;
  readonly ends: Int32Array;
  readonly data: Buffer;
}

/** An IdentifierList's arrays, to pass between threads. */
export interface TransferableIdentifierList {
  length: number;
  codes: Uint8Array;
  rows: Int32Array;
  ends: Int32Array;
  data: Uint8Array;
}

/** The buffers to transfer (not copy) with a postMessage of these lists. */
export function transferList(...lists: (TransferableIdentifierList | undefined)[]): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  for (const t of lists) {
    if (!t) continue;
    for (const a of [t.codes, t.rows, t.ends, t.data]) if (a.buffer instanceof ArrayBuffer && a.buffer.byteLength > 0) buffers.add(a.buffer);
  }
  return [...buffers];
}

/** Ranges of at most this many identifiers are appended entry by entry (pushRange). */
const SMALL_RANGE = 16;

export class IdentifierList {
  private codes: Uint8Array;
  private rowsArr: Int32Array;
  /** ends[i] is where value i ends in data; it starts where value i - 1 ends. */
  private ends: Int32Array;
  private data: Buffer;
  length = 0;

  constructor(capacity = 1024) {
    this.codes = new Uint8Array(capacity);
    this.rowsArr = new Int32Array(capacity);
    this.ends = new Int32Array(capacity);
    this.data = Buffer.allocUnsafe(capacity * 32);
  }

  /**
   * Hands the list's arrays to another thread without a copy: post the result with
   * transferList() of it. Until takeBack() returns them, the list keeps its length but holds
   * no identifier (its arrays are empty): do not read it meanwhile. Undefined when the values
   * share memory with other Buffers (a small list from Node's Buffer pool): copy those
   * (toTransferable()).
   */
  lend(): TransferableIdentifierList | undefined {
    const data = this.data;
    if (data.byteOffset !== 0 || data.buffer.byteLength !== data.byteLength || !(data.buffer instanceof ArrayBuffer)) return undefined;
    const lent: TransferableIdentifierList = { length: this.length, codes: this.codes, rows: this.rowsArr, ends: this.ends, data };
    this.codes = new Uint8Array(0);
    this.rowsArr = new Int32Array(0);
    this.ends = new Int32Array(0);
    this.data = Buffer.alloc(0);
    return lent;
  }

  /** Takes back arrays lent with lend() (as the other thread returned them). */
  takeBack(lent: TransferableIdentifierList): void {
    this.codes = lent.codes;
    this.rowsArr = lent.rows;
    this.ends = lent.ends;
    this.data = Buffer.from(lent.data.buffer, lent.data.byteOffset, lent.data.byteLength);
  }

  private get used(): number {
    return this.length === 0 ? 0 : (this.ends[this.length - 1] ?? 0);
  }

  private reserve(bytes: number): void {
    if (this.length === this.codes.length) this.growEntries();
    const need = this.used + bytes;
    if (need > this.data.length) {
      // Grown by half: the uploader keeps a few lists of ~70,000 identifiers (a full request)
      // for a whole run, and doubling left them a quarter empty on average.
      const data = Buffer.allocUnsafe(Math.max(need, Math.ceil(this.data.length * 1.5)));
      this.data.copy(data, 0, 0, this.used);
      this.data = data;
    }
  }

  private growEntries(): void {
    const n = Math.max(4, Math.ceil(this.codes.length * 1.5));
    const codes = new Uint8Array(n);
    codes.set(this.codes);
    const rows = new Int32Array(n);
    rows.set(this.rowsArr);
    const ends = new Int32Array(n);
    ends.set(this.ends);
    this.codes = codes;
    this.rowsArr = rows;
    this.ends = ends;
  }

  /** Appends a value as the normalizers give it: 64 hex characters, or a raw partner_user_id. */
  pushText(code: number, text: string, row: number): void {
    const bytes = code === PARTNER_CODE ? Buffer.byteLength(text) : text.length >>> 1;
    this.reserve(bytes);
    const start = this.used;
    this.data.write(text, start, bytes, code === PARTNER_CODE ? 'utf8' : 'hex');
    this.append(code, start + bytes, row);
  }

  /** Appends a value already in storage form (from the state store). */
  pushBytes(code: number, bytes: Uint8Array, row: number): void {
    this.pushSlice(code, bytes, 0, bytes.length, row);
  }

  /** Appends a value that is bytes [start, end) of `source`. */
  pushSlice(code: number, source: Uint8Array, start: number, end: number, row: number): void {
    const length = end - start;
    this.reserve(length);
    const at = this.used;
    copyBytes(source, start, end, this.data, at);
    this.append(code, at + length, row);
  }

  /** Appends identifiers [from, to) of another list, in one copy per array. */
  pushRange(other: IdentifierList, from: number, to: number): void {
    const n = to - from;
    if (n <= 0) return;
    while (this.codes.length < this.length + n) this.growEntries();
    const dataFrom = other.start(from);
    const dataTo = other.ends[to - 1] ?? 0;
    const at = this.used;
    this.reserve(dataTo - dataFrom);
    copyBytes(other.data, dataFrom, dataTo, this.data, at);
    const shift = at - dataFrom;
    const { codes, rowsArr, ends, length } = this;
    if (n <= SMALL_RANGE) {
      // A user record's few identifiers: no subarrays to make.
      for (let i = 0; i < n; i++) {
        codes[length + i] = other.codes[from + i] ?? 0;
        rowsArr[length + i] = other.rowsArr[from + i] ?? 0;
      }
    } else {
      codes.set(other.codes.subarray(from, to), length);
      rowsArr.set(other.rowsArr.subarray(from, to), length);
    }
    for (let i = 0; i < n; i++) ends[length + i] = (other.ends[from + i] ?? 0) + shift;
    this.length += n;
  }

  /** The arrays behind the list (valid until it changes). */
  view(): IdentifierListView {
    return { length: this.length, codes: this.codes, rows: this.rowsArr, ends: this.ends, data: this.data };
  }

  /** Appends identifier `i` of another list. */
  pushFrom(other: IdentifierList, i: number): void {
    this.pushSlice(other.code(i), other.data, other.start(i), other.ends[i] ?? 0, other.row(i));
  }

  private append(code: number, end: number, row: number): void {
    this.codes[this.length] = code;
    this.rowsArr[this.length] = row;
    this.ends[this.length] = end;
    this.length += 1;
  }

  code(i: number): number {
    return this.codes[i] ?? 0;
  }

  field(i: number): IdentifierType {
    return IDENTIFIER_TYPES[this.code(i)] ?? 'email';
  }

  row(i: number): number {
    return this.rowsArr[i] ?? 0;
  }

  private start(i: number): number {
    return i === 0 ? 0 : (this.ends[i - 1] ?? 0);
  }

  /** The stored bytes of value i (a view, valid until the list changes). */
  bytes(i: number): Buffer {
    return this.data.subarray(this.start(i), this.ends[i] ?? 0);
  }

  /** Value i as sent: 64 lowercase hex, or the partner_user_id. */
  text(i: number): string {
    return this.code(i) === PARTNER_CODE ? this.bytes(i).toString('utf8') : this.bytes(i).toString('hex');
  }

  /** Bytes value i takes in a JSON body, quotes included. */
  jsonLength(i: number): number {
    if (this.code(i) !== PARTNER_CODE) return ((this.ends[i] ?? 0) - this.start(i)) * 2 + 2;
    if (this.isPlainAscii(i)) return (this.ends[i] ?? 0) - this.start(i) + 2;
    return Buffer.byteLength(JSON.stringify(this.text(i)));
  }

  /**
   * Whether value i is printable ASCII without a quote or backslash: JSON.stringify would
   * write it as it is, between quotes (nearly every partner_user_id). Such values are written
   * byte for byte, without making strings.
   */
  private isPlainAscii(i: number): boolean {
    const data = this.data;
    for (let b = this.start(i), to = this.ends[i] ?? 0; b < to; b++) {
      const c = data[b] ?? 0;
      if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return false;
    }
    return true;
  }

  /** Writes value i as a JSON string into `target` at `offset`; returns the bytes written. */
  writeJson(i: number, target: Buffer, offset: number): number {
    if (this.code(i) === PARTNER_CODE) {
      if (!this.isPlainAscii(i)) return target.write(JSON.stringify(this.text(i)), offset, 'utf8');
      const from = this.start(i);
      const to = this.ends[i] ?? 0;
      target[offset] = 0x22;
      copyBytes(this.data, from, to, target, offset + 1);
      target[offset + 1 + to - from] = 0x22;
      return to - from + 2;
    }
    const from = this.start(i);
    const to = this.ends[i] ?? 0;
    const data = this.data;
    let o = offset;
    target[o++] = 0x22;
    for (let b = from; b < to; b++) {
      const byte = data[b] ?? 0;
      target[o++] = HEX_HIGH[byte] ?? 0;
      target[o++] = HEX_LOW[byte] ?? 0;
    }
    target[o++] = 0x22;
    return o - offset;
  }

  clear(): void {
    this.length = 0;
  }

  /** Copies of the used part of the arrays (to post to another thread). */
  toTransferable(): TransferableIdentifierList {
    return {
      length: this.length,
      codes: this.codes.slice(0, this.length),
      rows: this.rowsArr.slice(0, this.length),
      ends: this.ends.slice(0, this.length),
      data: Uint8Array.prototype.slice.call(this.data, 0, this.used),
    };
  }

  /** A list over arrays received from another thread (not copied). */
  static fromTransferable(t: TransferableIdentifierList): IdentifierList {
    const list = new IdentifierList(1);
    list.codes = t.codes;
    list.rowsArr = t.rows;
    list.ends = t.ends;
    list.data = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
    list.length = t.length;
    return list;
  }
}
