/**
 * The members read in (field, value) order, page by page. A page's concatenation is not
 * sorted by SQLite's aggregate (SQLite keeps the order of the ordered subquery, which it does
 * not promise), so each page is checked and read again sorted when it is out of order: here
 * forced with an aggregate order that is not the key's.
 */
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/state/sqlite/database.js';
import { OrderedMembers, pageInKeyOrder } from '../../src/state/sqlite/audience-members-reader.js';
import { seededRandom } from '../helpers/seeded-random.js';

/** A packed page: field, status, two bytes of length, then the value, for each member. */
function page(members: readonly (readonly [code: number, value: string])[]): Buffer {
  return Buffer.concat(
    members.map(([code, value]) => {
      const bytes = Buffer.from(value);
      return Buffer.concat([Buffer.from([code, 2, bytes.length >> 8, bytes.length & 0xff]), bytes]);
    }),
  );
}

describe('pageInKeyOrder', () => {
  it('accepts a page in strictly ascending (field, value) order, the shorter of two values first', () => {
    expect(pageInKeyOrder(page([]))).toBe(true);
    expect(pageInKeyOrder(page([[0, 'b'], [0, 'ba'], [0, 'c'], [1, 'a'], [5, ''], [5, 'a']]))).toBe(true);
  });

  it.each([
    ['two values swapped', [[0, 'b'], [0, 'a']]],
    ['a value twice', [[1, 'a'], [1, 'a']]],
    ['a longer value before its prefix', [[5, 'crm-12'], [5, 'crm-1']]],
    ['fields descending', [[2, 'a'], [1, 'b']]],
  ] as const)('refuses %s', (_, members) => {
    expect(pageInKeyOrder(page(members))).toBe(false);
  });

  it('refuses a page cut short in a value', () => {
    expect(pageInKeyOrder(page([[0, 'abc']]).subarray(0, 6))).toBe(false);
  });
});

describe('OrderedMembers', () => {
  /** An audience of `n` members: hashes of three fields and partner ids that are prefixes of each other. */
  function audience(n: number): { db: ReturnType<typeof openDatabase>; keys: string[] } {
    const db = openDatabase(':memory:');
    db.prepare("INSERT INTO audiences (id, key) VALUES (1, 'a')").run();
    const insert = db.prepare('INSERT INTO audience_members (audience, field, value, present, sent_at) VALUES (1, ?, ?, 1, 5)');
    const rnd = seededRandom(9);
    const members: { code: number; value: Buffer }[] = [];
    for (let i = 0; i < n; i++) {
      if (i % 4 === 0) members.push({ code: 5, value: Buffer.from(i % 8 === 0 ? `crm-${i}` : `crm-${i}`.slice(0, 5 + (i % 5))) });
      else members.push({ code: i % 3, value: Buffer.from(Array.from({ length: 32 }, () => Math.floor(rnd() * 256))) });
    }
    const keys = new Map<string, { code: number; value: Buffer }>();
    for (const m of members) keys.set(`${m.code}:${m.value.toString('hex')}`, m);
    db.transaction(() => {
      for (const m of keys.values()) insert.run(m.code, m.value);
    })();
    const sorted = [...keys.values()].sort((a, b) => a.code - b.code || Buffer.compare(a.value, b.value));
    return { db, keys: sorted.map((m) => `${m.code}:${m.value.toString('hex')}`) };
  }

  /** What the reader gives, up to `most` members (a reader that goes round in circles fails, not hangs). */
  function readAll(reader: OrderedMembers, most: number): string[] {
    const out: string[] = [];
    while (out.length < most && reader.next()) out.push(`${reader.code}:${reader.buf.subarray(reader.valueStart, reader.valueEnd).toString('hex')}`);
    return out;
  }

  it('reads every member once, in key order, over several pages', () => {
    const { db, keys } = audience(5000);
    try {
      const reader = new OrderedMembers(db, 1, 0, false);
      expect(readAll(reader, keys.length + 1)).toEqual(keys);
      // SQLite here keeps the subquery's order: no page is read twice.
      expect(reader.pagesReadAgain).toBe(0);
    } finally {
      db.close();
    }
  });

  it('reads a page again sorted when it comes out of order, and gives the same members', () => {
    const { db, keys } = audience(5000);
    try {
      const reader = new OrderedMembers(db, 1, 0, false, 'ORDER BY field DESC, value DESC');
      expect(readAll(reader, keys.length + 1)).toEqual(keys);
      // Every page of 1,500 (the last one too) came reversed.
      expect(reader.pagesReadAgain).toBe(Math.ceil(keys.length / 1500));
    } finally {
      db.close();
    }
  });
});
