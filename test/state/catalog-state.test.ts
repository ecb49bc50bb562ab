import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStateStore, type StateStore } from '../../src/state/index.js';

let store: StateStore | undefined;
function open(): StateStore {
  store = openStateStore(join(mkdtempSync(join(tmpdir(), 'adsync-state-')), 'state.sqlite'));
  return store;
}
afterEach(async () => {
  await store?.close();
  store = undefined;
});
async function collect<T>(gen: AsyncGenerator<T[]>): Promise<T[]> {
  const out: T[] = [];
  for await (const batch of gen) out.push(...batch);
  return out;
}
const p = (id: string, row: number, hash: string) => ({ id, row, contentHash: hash, payload: JSON.stringify({ id, v: hash }) });

describe('catalog state', () => {
  it('keeps the last occurrence of a duplicated id and counts the others as duplicates', async () => {
    const s = open();
    const scan = await s.catalog('c1').scan();
    await scan.add([p('a', 1, 'h1'), p('b', 2, 'h2'), p('a', 3, 'h3')]);
    await scan.add([p('b', 4, 'h4')]);
    expect(await scan.duplicates()).toBe(2);
    expect(await scan.counts({ mirror: true, full: false })).toEqual({ products: 2, creates: 2, updates: 0, unchanged: 0, deletes: 0, known: 0 });
    const ups = await collect(scan.upserts({ full: false }, 10));
    expect(ups.map((u) => [u.id, u.row, u.contentHash, u.isNew])).toEqual([
      ['a', 3, 'h3', true],
      ['b', 4, 'h4', true],
    ]);
  });

  it('sends only new and changed products, and deletes only what left the feed', async () => {
    const s = open();
    const cat = s.catalog('c1');
    await cat.commitUpserts(
      [
        { id: 'a', contentHash: 'h1', productKey: 'k-a' },
        { id: 'b', contentHash: 'h2', productKey: 'k-b' },
        { id: 'c', contentHash: 'h3', productKey: 'k-c' },
      ],
      1,
    );
    const scan = await cat.scan();
    await scan.add([p('a', 1, 'h1'), p('b', 2, 'h2-changed'), p('d', 3, 'h4')]);
    expect(await scan.counts({ mirror: true, full: false })).toEqual({ products: 3, creates: 1, updates: 1, unchanged: 1, deletes: 1, known: 3 });
    expect((await collect(scan.upserts({ full: false }, 10))).map((u) => [u.id, u.isNew])).toEqual([
      ['b', false],
      ['d', true],
    ]);
    expect(await collect(scan.deletes(10))).toEqual([{ id: 'c', productKey: 'k-c' }]);
    expect(await scan.counts({ mirror: false, full: true })).toMatchObject({ updates: 2, deletes: 0 });
  });

  it('never deletes an id that is in the feed but was rejected, unless a later valid occurrence replaces it', async () => {
    const s = open();
    const cat = s.catalog('c1');
    await cat.commitUpserts([{ id: 'a', contentHash: 'h1', productKey: 'k-a' }, { id: 'b', contentHash: 'h2', productKey: 'k-b' }], 1);
    const scan = await cat.scan();
    await scan.add([p('b', 1, 'h2')]);
    await scan.keep(['a', 'b']); // b's last occurrence is invalid: not sent, not deleted
    expect(await collect(scan.deletes(10))).toEqual([]);
    expect(await collect(scan.upserts({ full: true }, 10))).toEqual([]);
    expect(await scan.duplicates()).toBe(1);
  });

  it('rebuilds lost state from the service: content unknown, so everything in the feed is sent again', async () => {
    const s = open();
    const cat = s.catalog('c1');
    async function* pages() {
      yield [{ id: 'a', productKey: 'k-a' }];
      yield [{ id: 'z', productKey: 'k-z' }];
    }
    expect(await cat.rebuild(pages())).toBe(2);
    const scan = await cat.scan();
    await scan.add([p('a', 1, 'h1')]);
    expect(await scan.counts({ mirror: true, full: false })).toEqual({ products: 1, creates: 0, updates: 1, unchanged: 0, deletes: 1, known: 2 });
    expect(await collect(scan.deletes(10))).toEqual([{ id: 'z', productKey: 'k-z' }]);
    expect(await cat.productKeys(['a', 'nope'])).toEqual(new Map([['a', 'k-a']]));
  });

  it('leaves the state untouched when listing the catalog fails half way', async () => {
    const s = open();
    const cat = s.catalog('c1');
    await cat.commitUpserts([{ id: 'a', contentHash: 'h1', productKey: 'k-a' }], 1);
    async function* failing() {
      yield [{ id: 'x', productKey: 'k-x' }];
      throw new Error('network');
    }
    await expect(cat.rebuild(failing())).rejects.toThrow('network');
    expect(await cat.productCount()).toBe(1);
    expect(await cat.productKeys(['a'])).toEqual(new Map([['a', 'k-a']]));
  });
});
