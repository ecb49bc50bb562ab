/**
 * The external sort behind an audience scan, against the obvious implementation: every
 * identifier in an array, sorted with Buffer.compare (SQLite's BLOB order: memcmp, then the
 * shorter first), deduplicated with a Map. Values are chosen to hit every branch of the
 * number sort: SHA-256-like values, partner ids sharing long prefixes, short and empty values,
 * zero bytes at the end (which the zero-padded windows must not confuse with a shorter value),
 * and duplicates across runs.
 */
import { describe, expect, it } from 'vitest';
import { IdentifierList } from '../../src/state/identifier-list.js';
import { SpoolFile } from '../../src/state/spool-file.js';
import { sortedOrder } from '../../src/state/external-sort/sort-identifiers.js';
import { SortedRuns } from '../../src/state/external-sort/sorted-runs.js';
import { mergeDistinct, reduceRuns } from '../../src/state/external-sort/merge-distinct.js';
import { compareValues, RecordCursor, RecordWriter } from '../../src/state/external-sort/packed-records.js';
import { BUCKET_ROW_BITS, RowBucketWriter, rowOrderedPages } from '../../src/state/external-sort/row-buckets.js';
import { seededRandom as prng } from '../helpers/seeded-random.js';

interface Id {
  code: number;
  value: Buffer;
  row: number;
}

function randomValue(rnd: () => number): { code: number; value: Buffer } {
  const kind = Math.floor(rnd() * 6);
  if (kind <= 1) {
    // A hash (32 bytes); some share their first four or eight bytes.
    const v = Buffer.alloc(32);
    for (let i = 0; i < 32; i++) v[i] = Math.floor(rnd() * 256);
    if (rnd() < 0.3) v.fill(7, 0, rnd() < 0.5 ? 4 : 8);
    return { code: Math.floor(rnd() * 3), value: v };
  }
  if (kind === 2) return { code: 5, value: Buffer.from(`crm-${String(Math.floor(rnd() * 5000)).padStart(8, '0')}`) };
  if (kind === 3) {
    // Short values over a tiny alphabet with zero bytes: "ab" < "ab\0" < "ab\0\0" < "ab\0\x01".
    const n = Math.floor(rnd() * 10);
    const v = Buffer.alloc(n);
    for (let i = 0; i < n; i++) v[i] = [0, 0, 1, 0x61, 0xff][Math.floor(rnd() * 5)] ?? 0;
    return { code: 5, value: v };
  }
  if (kind === 4) return { code: 5, value: Buffer.from(`user-é-${Math.floor(rnd() * 300)}`) };
  return { code: 4, value: Buffer.from(String(Math.floor(rnd() * 1000)).repeat(Math.floor(rnd() * 5) + 1)) };
}

function generate(seed: number, n: number): Id[] {
  const rnd = prng(seed);
  const ids: Id[] = [];
  for (let i = 0; i < n; i++) {
    if (ids.length > 0 && rnd() < 0.15) {
      // A duplicate of an earlier identifier, from another row.
      const earlier = ids[Math.floor(rnd() * ids.length)] as Id;
      ids.push({ code: earlier.code, value: earlier.value, row: Math.floor(rnd() * 1e6) });
    } else {
      ids.push({ ...randomValue(rnd), row: Math.floor(rnd() * 1e6) });
    }
  }
  return ids;
}

const byKey = (a: { code: number; value: Buffer }, b: { code: number; value: Buffer }): number => a.code - b.code || Buffer.compare(a.value, b.value);

function listOf(ids: readonly Id[]): IdentifierList {
  const list = new IdentifierList(4);
  for (const id of ids) list.pushBytes(id.code, id.value, id.row);
  return list;
}

function naiveDistinct(ids: readonly Id[]): Id[] {
  const first = new Map<string, Id>();
  for (const id of ids) {
    const key = `${id.code}:${id.value.toString('hex')}`;
    const seen = first.get(key);
    if (!seen || id.row < seen.row) first.set(key, id);
  }
  return [...first.values()].sort(byKey);
}

const show = (ids: readonly Id[]): string[] => ids.map((id) => `${id.code}:${id.value.toString('hex')}:${id.row}`);

describe('compareValues', () => {
  it('orders as Buffer.compare does (memcmp, then the shorter first)', () => {
    const values = ['', '00', '0000', '0001', '61', '6100', '610000', '6101', 'ff', 'ff00ff'].map((h) => Buffer.from(h, 'hex'));
    for (const a of values) {
      for (const b of values) expect(Math.sign(compareValues(a, 0, a.length, b, 0, b.length))).toBe(Buffer.compare(a, b));
    }
  });
});

describe('sortedOrder', () => {
  it.each([1, 2, 3, 4, 5])('puts 20,000 mixed identifiers in (field, value) order (seed %i)', (seed) => {
    const ids = generate(seed, 20_000);
    const order = sortedOrder(listOf(ids).view());
    const sorted = Array.from(order, (i) => ids[i] as Id);
    expect(new Set(order).size).toBe(ids.length);
    for (let k = 1; k < sorted.length; k++) {
      if (byKey(sorted[k - 1] as Id, sorted[k] as Id) > 0) throw new Error(`out of order at ${k}: ${show(sorted.slice(k - 1, k + 1)).join(' > ')}`);
    }
  });

  it('sorts a batch of one, of none, and of the largest size', () => {
    expect(Array.from(sortedOrder(listOf([]).view()))).toEqual([]);
    expect(Array.from(sortedOrder(listOf(generate(9, 1)).view()))).toEqual([0]);
    const ids = generate(10, 2 ** 18);
    const order = sortedOrder(listOf(ids).view());
    expect(byKey(ids[order[0] ?? 0] as Id, ids[order[order.length - 1] ?? 0] as Id)).toBeLessThanOrEqual(0);
    expect(() => sortedOrder(listOf(generate(11, 2 ** 18 + 1)).view())).toThrow(RangeError);
  });
});

describe('sorted runs merged', () => {
  it.each([
    [1, 1000],
    [7, 333],
    [50, 64],
    [20_000, 2 ** 17],
  ])('give each distinct identifier once, in order, with its first row (runs of %i, %i identifiers)', (runSize, n) => {
    const ids = generate(runSize + n, n);
    const spool = new SpoolFile('test-scan');
    try {
      const runs = new SortedRuns(spool, runSize);
      // Added in pieces of varied size, as the readers hand them over.
      for (let i = 0; i < ids.length; ) {
        const take = 1 + ((i * 7) % 97);
        runs.add(listOf(ids.slice(i, i + take)));
        i += take;
      }
      expect(runs.added).toBe(n);
      // A fan-in of 3 makes several merge levels out of many runs.
      const reduced = reduceRuns(spool, runs.finish(), 3);
      expect(reduced.length).toBeLessThanOrEqual(3);
      const merged: Id[] = [];
      const count = mergeDistinct(spool, reduced, (code, value, start, end, row) => merged.push({ code, value: Buffer.from(value.subarray(start, end)), row }));
      const expected = naiveDistinct(ids);
      expect(count).toBe(expected.length);
      expect(show(merged)).toEqual(show(expected));
    } finally {
      spool.close();
    }
  });

  it('refuses identifiers after finish()', () => {
    const spool = new SpoolFile('test-scan');
    const runs = new SortedRuns(spool, 10);
    runs.finish();
    expect(() => runs.add(listOf(generate(1, 3)))).toThrow(RangeError);
    spool.close();
  });
});

describe('packed records', () => {
  it('read back exactly as written, across read-buffer boundaries and with long values', () => {
    const spool = new SpoolFile('test-records');
    try {
      const writer = new RecordWriter(spool);
      writer.start();
      const written: Id[] = [];
      for (let i = 0; i < 5000; i++) {
        const value = Buffer.alloc(i % 50 === 0 ? 40_000 + i : i % 33, i & 0xff);
        written.push({ code: i % 6, value, row: i % 3 === 0 ? -(i + 1) : i * 1000 });
        writer.write(i % 6, value, 0, value.length, written[i]?.row ?? 0);
      }
      const range = writer.finish();
      expect(range.count).toBe(5000);
      const cursor = new RecordCursor(spool, range);
      const read: Id[] = [];
      while (cursor.next()) read.push({ code: cursor.code, value: Buffer.from(cursor.buf.subarray(cursor.valueStart, cursor.valueEnd)), row: cursor.row });
      expect(read.length).toBe(5000);
      expect(read.map((r) => [r.code, r.row, r.value.length])).toEqual(written.map((r) => [r.code, r.row, r.value.length]));
      expect(read.every((r, i) => r.value.equals((written[i] as Id).value))).toBe(true);
    } finally {
      spool.close();
    }
  });

  it('refuses a value longer than its two length bytes hold, writing nothing', () => {
    const spool = new SpoolFile('test-records');
    try {
      const writer = new RecordWriter(spool);
      writer.start();
      writer.write(5, Buffer.alloc(0xffff, 1), 0, 0xffff, 1);
      expect(() => writer.write(5, Buffer.alloc(0x10000, 2), 0, 0x10000, 2)).toThrow(RangeError);
      const range = writer.finish();
      expect(range.count).toBe(1);
      const cursor = new RecordCursor(spool, range);
      expect(cursor.next()).toBe(true);
      expect([cursor.row, cursor.valueEnd - cursor.valueStart]).toEqual([1, 0xffff]);
      expect(cursor.next()).toBe(false);
    } finally {
      spool.close();
    }
  });
});

describe('row buckets', () => {
  /** The pages of `ids` written to row buckets in this order, each page's identifiers copied out. */
  function pagesOf(ids: readonly Id[], pageSize: number): Id[][] {
    const spool = new SpoolFile('test-row-buckets');
    try {
      const writer = new RowBucketWriter(spool);
      for (const id of ids) writer.write(id.code, id.value, 0, id.value.length, id.row);
      const buckets = writer.finish();
      spool.flush();
      const pages: Id[][] = [];
      for (const page of rowOrderedPages(spool, buckets, pageSize)) {
        pages.push(Array.from({ length: page.length }, (_, i) => ({ code: page.code(i), value: Buffer.from(page.bytes(i)), row: page.row(i) })));
      }
      return pages;
    } finally {
      spool.close();
    }
  }

  it.each([
    ['SHA-256 values, partner ids and short values over 31 buckets', 1, 20_000, 500],
    ['the same in pages of one identifier', 2, 3000, 1],
    ['values longer than a staging buffer, rows of another part, a row larger than a page', 3, 4000, 64],
  ])('reads %s back in row order, each row in one page, written order kept within a row', (_, seed, n, pageSize) => {
    const rnd = prng(seed);
    const ids = generate(seed, n);
    if (seed === 3) {
      // Rows of a part read by another thread (provisional rows from 2^28), values of 65 to
      // 20,000 bytes, and one row with more identifiers than a page holds.
      for (let i = 0; i < 300; i++) {
        const value = Buffer.alloc(i % 10 === 0 ? 20_000 + i : 65 + i, i & 0xff);
        ids.push({ code: 5, value, row: 2 ** 28 + Math.floor(rnd() * 100_000) });
      }
      for (let i = 0; i < 3 * pageSize; i++) ids.push({ code: i % 4, value: Buffer.from(`same-row-${i}`), row: 77_777 });
      ids.sort(() => rnd() - 0.5);
    }
    const pages = pagesOf(ids, pageSize);
    // Stable: a row's identifiers in the order they were written.
    const inRowOrder = [...ids].sort((a, b) => a.row - b.row);
    expect(show(pages.flat())).toEqual(show(inRowOrder));
    const rowsSeen = new Set<number>();
    pages.forEach((page, p) => {
      expect(page.length).toBeGreaterThan(0);
      // At least pageSize (but the last), ending with the first row that fills the page.
      if (p < pages.length - 1) expect(page.length).toBeGreaterThanOrEqual(pageSize);
      const lastRow = page[page.length - 1]?.row;
      expect(page.findIndex((id) => id.row === lastRow)).toBeLessThan(pageSize);
      for (const row of new Set(page.map((id) => id.row))) {
        expect(rowsSeen.has(row)).toBe(false);
        rowsSeen.add(row);
      }
    });
    expect(new Set(ids.map((id) => id.row >> BUCKET_ROW_BITS)).size).toBeGreaterThan(seed === 2 ? 20 : 30);
  });
});
