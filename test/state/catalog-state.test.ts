import { mkdtempSync } from 'node:fs';
import fc from 'fast-check';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { StateError } from '../../src/errors.js';
import { openStateStore, type StateStore } from '../../src/state/index.js';
import { SqliteCatalogState } from '../../src/state/sqlite/catalog-state.js';
import { openDatabase } from '../../src/state/sqlite/database.js';

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
    const scan = await s.catalog('c1', null).scan();
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
    const cat = s.catalog('c1', null);
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
    const cat = s.catalog('c1', null);
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
    const cat = s.catalog('c1', null);
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
    const cat = s.catalog('c1', null);
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

describe('raw fingerprints of catalog items', () => {
  const fp = (n: number) => Buffer.alloc(32, n);
  const withFp = (id: string, row: number, hash: string, fingerprint: Buffer, warnings: string[] = []) => ({ ...p(id, row, hash), fingerprint, warnings });

  it('are saved for products the state holds as the feed gives them, and found by their bytes', async () => {
    const s = open();
    const cat = s.catalog('c1', null);
    expect(await cat.hasFingerprints()).toBe(false);
    await cat.commitUpserts([{ id: 'a', contentHash: 'h1', productKey: 'k-a' }, { id: 'b', contentHash: 'h2', productKey: 'k-b' }, { id: 'c', contentHash: 'old', productKey: 'k-c' }], 1);
    const scan = await cat.scan();
    // a: unchanged; b: its earlier occurrence is replaced by a later one; c: changed and not (yet) acknowledged; d: new, not sent.
    await scan.add([withFp('a', 1, 'h1', fp(1), ['w1']), withFp('b', 2, 'h2', fp(2)), withFp('c', 3, 'new', fp(3)), withFp('b', 4, 'h2', fp(4)), withFp('d', 5, 'h5', fp(5))]);
    expect(await scan.saveFingerprints()).toBe(2);
    await scan.close();
    expect(await cat.hasFingerprints()).toBe(true);
    expect(await cat.productsByFingerprint([fp(1), fp(2), fp(3), fp(4), fp(5), fp(1)])).toEqual([
      { id: 'a', warnings: ['w1'] },
      undefined,
      undefined,
      { id: 'b', warnings: [] },
      undefined,
      { id: 'a', warnings: ['w1'] },
    ]);
    // Another catalog does not see them.
    expect(await s.catalog('c2', null).productsByFingerprint([fp(1)])).toEqual([undefined]);
    // More than one statement's worth of lookups.
    const many = Array.from({ length: 150 }, (_, i) => (i === 149 ? fp(4) : fp(100 + (i % 50))));
    const found = await cat.productsByFingerprint(many);
    expect(found.length).toBe(150);
    expect(found[149]).toEqual({ id: 'b', warnings: [] });
    expect(found.slice(0, 149).every((m) => m === undefined)).toBe(true);
  });

  it('are forgotten when a product changes, and skipped items count as unchanged products of the state', async () => {
    const s = open();
    const cat = s.catalog('c1', null);
    await cat.commitUpserts([{ id: 'a', contentHash: 'h1', productKey: 'k-a' }, { id: 'b', contentHash: 'h2', productKey: 'k-b' }, { id: 'gone', contentHash: 'hg', productKey: 'k-g' }], 1);
    let scan = await cat.scan();
    await scan.add([withFp('a', 1, 'h1', fp(1)), withFp('b', 2, 'h2', fp(2))]);
    expect(await scan.saveFingerprints()).toBe(2);
    await scan.close();

    scan = await cat.scan();
    await scan.add([{ id: 'a', row: 1, line: 3, unchanged: true }, withFp('b', 2, 'h2-new', fp(22)), withFp('n', 3, 'hn', fp(3))]);
    expect(await scan.counts({ mirror: true, full: false })).toEqual({ products: 3, creates: 1, updates: 1, unchanged: 1, deletes: 1, known: 3 });
    expect((await collect(scan.upserts({ full: false }, 10))).map((u) => [u.id, u.payload.toString(), u.isNew])).toEqual([
      ['b', JSON.stringify({ id: 'b', v: 'h2-new' }), false],
      ['n', JSON.stringify({ id: 'n', v: 'hn' }), true],
    ]);
    expect(await collect(scan.deletes(10))).toEqual([{ id: 'gone', productKey: 'k-g' }]);
    // b acknowledged: its old fingerprint is forgotten, the new one saved at the end; n never acknowledged.
    await cat.commitUpserts([{ id: 'b', contentHash: 'h2-new', productKey: 'k-b' }], 2);
    expect(await cat.productsByFingerprint([fp(1), fp(2)])).toEqual([{ id: 'a', warnings: [] }, undefined]);
    expect(await scan.saveFingerprints()).toBe(1);
    await scan.close();
    expect(await cat.productsByFingerprint([fp(1), fp(22), fp(3)])).toEqual([{ id: 'a', warnings: [] }, { id: 'b', warnings: [] }, undefined]);
  });

  it("are not saved for a product another job took during the run (two jobs of one catalog run at once): it is read again and taken back", async () => {
    const s = open();
    const a = s.catalog('c1', 'a');
    const b = s.catalog('c1', 'b');
    await a.commitUpserts([{ id: 'x', contentHash: 'hx', productKey: 'k-x' }, { id: 'y', contentHash: 'hy', productKey: 'k-y' }], 1);
    // Job a's run reads x and y and takes them (they are its own already).
    const runOfA = await a.scan();
    await runOfA.add([withFp('x', 1, 'hx', fp(1)), withFp('y', 2, 'hy', fp(2))]);
    expect(await runOfA.claim()).toEqual(new Map());
    // Meanwhile job b (another process: jobs have their own locks) takes x, which its feed also holds.
    const runOfB = await b.scan();
    await runOfB.add([withFp('x', 1, 'hx', fp(11))]);
    expect(await runOfB.claim()).toEqual(new Map([['a', 1]]));
    await runOfB.close();
    // a's run ends: the fingerprint of a's item is saved for y only; x is b's.
    expect(await runOfA.saveFingerprints()).toBe(1);
    await runOfA.close();
    expect(await a.productsByFingerprint([fp(1), fp(2)])).toEqual([undefined, { id: 'y', warnings: [] }]);
    // a's next run reads x (not skipped as unchanged), takes it back, and deletes nothing.
    const next = await a.scan();
    await next.add([withFp('x', 1, 'hx', fp(1)), { id: 'y', row: 2, line: 2, unchanged: true }]);
    expect(await next.counts({ mirror: true, full: false })).toEqual({ products: 2, creates: 0, updates: 0, unchanged: 2, deletes: 0, known: 1 });
    expect(await next.claim()).toEqual(new Map([['b', 1]]));
    await next.close();
  });

  it('reconciles with the service after an interrupted upload: adds what it lacks, forgets what is gone, keeps known content', async () => {
    const s = open();
    const cat = s.catalog('c1', null);
    await cat.commitUpserts([{ id: 'a', contentHash: 'h1', productKey: 'k-a' }, { id: 'gone', contentHash: 'h2', productKey: 'k-gone' }], 1);
    expect(await cat.uploadInterrupted()).toBe(false);
    await cat.beginUpload();
    await cat.beginUpload();
    expect(await cat.uploadInterrupted()).toBe(true);
    async function* pages() {
      yield [{ id: 'a', productKey: 'k-a' }];
      yield [{ id: 'orphan', productKey: 'k-orphan' }];
    }
    expect(await cat.reconcile(pages())).toEqual({ added: 1, forgotten: 1 });
    // Reconciling does not end the mark: the caller does, once it is done.
    expect(await cat.uploadInterrupted()).toBe(true);
    await cat.endUpload();
    expect(await cat.uploadInterrupted()).toBe(false);
    const scan = await cat.scan();
    await scan.add([p('a', 1, 'h1')]);
    // a unchanged (its content kept), orphan deleted by its key, gone no longer known.
    expect(await scan.counts({ mirror: true, full: false })).toEqual({ products: 1, creates: 0, updates: 0, unchanged: 1, deletes: 1, known: 2 });
    expect(await collect(scan.deletes(10))).toEqual([{ id: 'orphan', productKey: 'k-orphan' }]);
  });

  it("gives the products a reconcile adds to the job whose upload was marked, or to no job when several jobs' were", async () => {
    const s = open();
    const a = s.catalog('c1', 'a');
    const b = s.catalog('c1', 'b');
    async function* listed(...ids: string[]) {
      yield ids.map((id) => ({ id, productKey: `k-${id}` }));
    }
    const deletableBy = async (cat: typeof a): Promise<string[]> => {
      const scan = await cat.scan();
      await scan.add([p('other', 1, 'h')]);
      const ids = (await collect(scan.deletes(10))).map((d) => d.id);
      await scan.close();
      return ids;
    };
    await a.beginUpload();
    await a.beginUpload();
    expect(await b.reconcile(listed('left-by-a'))).toEqual({ added: 1, forgotten: 0 });
    await b.endUpload();
    expect(await deletableBy(b)).toEqual([]);
    expect(await deletableBy(a)).toEqual(['left-by-a']);

    await a.beginUpload();
    await b.beginUpload();
    await a.beginUpload();
    expect(await b.reconcile(listed('left-by-a', 'left-by-either'))).toEqual({ added: 1, forgotten: 0 });
    await b.endUpload();
    expect(await deletableBy(b)).toEqual(['left-by-either']);
    expect(await deletableBy(a)).toEqual(['left-by-a', 'left-by-either']);
  });

  it('keeps the state and the mark when listing fails during a reconcile', async () => {
    const s = open();
    const cat = s.catalog('c1', null);
    await cat.commitUpserts([{ id: 'a', contentHash: 'h1', productKey: 'k-a' }], 1);
    await cat.beginUpload();
    async function* failing() {
      yield [{ id: 'x', productKey: 'k-x' }];
      throw new Error('network');
    }
    await expect(cat.reconcile(failing())).rejects.toThrow('network');
    expect(await cat.productCount()).toBe(1);
    expect(await cat.uploadInterrupted()).toBe(true);
  });
});

describe("taking over the feed's products (claim)", () => {
  const fp = (n: number) => Buffer.alloc(32, n);
  it('looks at no product when every item was skipped as unchanged, and only at those read otherwise', async () => {
    const db = openDatabase(join(mkdtempSync(join(tmpdir(), 'adsync-state-')), 'state.sqlite'));
    try {
      const a = new SqliteCatalogState(db, 'c1', 'a');
      const b = new SqliteCatalogState(db, 'c1', 'b');
      await a.commitUpserts([{ id: 'x', contentHash: 'hx', productKey: 'k-x' }, { id: 'y', contentHash: 'hy', productKey: 'k-y' }], 1);
      await b.commitUpserts([{ id: 'z', contentHash: 'hz', productKey: 'k-z' }], 1);
      let scan = await a.scan();
      await scan.add([{ ...p('x', 1, 'hx'), fingerprint: fp(1), warnings: [] }, { ...p('y', 2, 'hy'), fingerprint: fp(2), warnings: [] }]);
      await scan.counts({ mirror: true, full: false });
      expect(await scan.claim()).toEqual(new Map());
      expect(await scan.saveFingerprints()).toBe(2);
      await scan.close();

      // An unchanged feed: every item skipped; claim prepares no statement (no pass over the catalog's products).
      scan = await a.scan();
      await scan.add([{ id: 'x', row: 1, line: 1, unchanged: true }, { id: 'y', row: 2, line: 2, unchanged: true }]);
      await scan.counts({ mirror: true, full: false });
      const prepare = vi.spyOn(db, 'prepare');
      try {
        expect(await scan.claim()).toEqual(new Map());
        expect(prepare).not.toHaveBeenCalled();
      } finally {
        prepare.mockRestore();
      }
      await scan.close();

      // z moves to a's feed: taken, the others untouched.
      scan = await a.scan();
      await scan.add([{ id: 'x', row: 1, line: 1, unchanged: true }, { ...p('z', 2, 'hz'), fingerprint: fp(3), warnings: [] }]);
      await scan.counts({ mirror: true, full: false });
      expect(await scan.claim()).toEqual(new Map([['b', 1]]));
      await scan.close();
      expect(db.prepare('SELECT id, job FROM catalog_products ORDER BY id').all()).toEqual([
        { id: 'x', job: 'a' },
        { id: 'y', job: 'a' },
        { id: 'z', job: 'a' },
      ]);
    } finally {
      db.close();
    }
  });
});

describe('a full temporary folder', () => {
  it("the scan's temporary table that cannot grow fails with where and what to do (TMPDIR), not as an internal error", async () => {
    const db = openDatabase(join(mkdtempSync(join(tmpdir(), 'adsync-state-')), 'state.sqlite'));
    try {
      const scan = await new SqliteCatalogState(db, 'c1', null).scan();
      // SQLite keeps temporary tables in TMPDIR; a limit on their pages is a full folder to it (SQLITE_FULL).
      db.pragma('temp.max_page_count = 16');
      const products = Array.from({ length: 5000 }, (_, i) => p(`product-${i}`, i + 1, `hash-${i}`));
      let failure: unknown;
      try {
        await scan.add(products);
      } catch (error) {
        failure = error;
      }
      expect(failure).toBeInstanceOf(StateError);
      expect((failure as StateError).message).toBe(`cannot write a temporary table in ${process.env.SQLITE_TMPDIR ?? tmpdir()}: database or disk is full`);
      expect((failure as StateError).hint).toContain('set TMPDIR to a writable folder with room');
      await scan.close();
    } finally {
      db.close();
    }
  });
});

describe('looking products up by raw fingerprint (one seek each, in one read transaction)', () => {
  /** The lookup as it was made before: 64 fingerprints per IN statement, the last row of a fingerprint kept. */
  function lookupWithInLists(db: ReturnType<typeof openDatabase>, catalog: number, fingerprints: readonly Buffer[]): ({ id: string; warnings: string[] } | undefined)[] {
    const stmt = db.prepare(`SELECT raw_fp, id, feed_warnings FROM catalog_products WHERE catalog = ? AND raw_fp IN (${Array.from({ length: 64 }, () => '?').join(', ')})`);
    const found = new Map<string, { id: string; warnings: string[] }>();
    for (let from = 0; from < fingerprints.length; from += 64) {
      const params: unknown[] = [catalog];
      for (let i = 0; i < 64; i++) params.push(fingerprints[from + i] ?? fingerprints[from]);
      for (const row of stmt.all(params) as { raw_fp: Buffer; id: string; feed_warnings: string | null }[]) {
        found.set(row.raw_fp.toString('latin1'), { id: row.id, warnings: row.feed_warnings === null ? [] : (JSON.parse(row.feed_warnings) as string[]) });
      }
    }
    return fingerprints.map((fp) => found.get(fp.toString('latin1')));
  }

  it('finds what the lookup with IN lists found, for any products, fingerprints (shared ones too) and catalogs', async () => {
    const fp = (n: number) => Buffer.alloc(32, n);
    const product = fc.record({ id: fc.integer({ min: 0, max: 40 }), catalog: fc.integer({ min: 1, max: 2 }), fp: fc.option(fc.integer({ min: 0, max: 30 })), warnings: fc.option(fc.array(fc.constantFrom('w1', 'w2'), { minLength: 1, maxLength: 2 })) });
    await fc.assert(
      fc.asyncProperty(fc.array(product, { maxLength: 60 }), fc.array(fc.integer({ min: 0, max: 31 }), { maxLength: 150 }), async (products, wanted) => {
        const db = openDatabase(join(mkdtempSync(join(tmpdir(), 'adsync-state-')), 'state.sqlite'));
        try {
          const catalogs = [new SqliteCatalogState(db, 'c1', null), new SqliteCatalogState(db, 'c2', null)];
          const upsert = db.prepare(
            `INSERT INTO catalog_products (catalog, id, content_hash, product_key, sent_at, raw_fp, feed_warnings) VALUES (?, ?, 'h', 'k', 1, ?, ?)
             ON CONFLICT (catalog, id) DO UPDATE SET raw_fp = excluded.raw_fp, feed_warnings = excluded.feed_warnings`,
          );
          for (const p of products) upsert.run(p.catalog, `p${p.id}`, p.fp === null ? null : fp(p.fp), p.warnings === null ? null : JSON.stringify(p.warnings));
          const fingerprints = wanted.map(fp);
          for (const [index, catalog] of catalogs.entries()) {
            expect(await catalog.productsByFingerprint(fingerprints)).toEqual(lookupWithInLists(db, index + 1, fingerprints));
          }
        } finally {
          db.close();
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe('the plan of a scan (counts, deletes, fingerprints saved) against a model of it', () => {
  type Kind = 'unchanged' | 'read' | 'rejected';
  const ids = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
  const stateProduct = fc.record({ id: fc.constantFrom(...ids), hash: fc.constantFrom('h0', 'h1'), job: fc.constantFrom('j1', 'other', null) });
  const occurrence = fc.record({ id: fc.constantFrom(...ids), kind: fc.constantFrom<Kind>('unchanged', 'read', 'read', 'rejected'), hash: fc.constantFrom('h0', 'h1'), withFp: fc.boolean() });

  it('gives what the model gives, for any mix of unchanged, read and rejected occurrences, duplicates, mirror and full', async () => {
    const s = open();
    let catalogs = 0;
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(stateProduct, { selector: (x) => x.id, maxLength: 8 }), fc.array(occurrence, { maxLength: 14 }), fc.boolean(), fc.boolean(), fc.boolean(), async (state, raw, mirror, full, noneRead) => {
        const catalogId = `c${++catalogs}`;
        for (const job of ['j1', 'other', null]) {
          const owned = state.filter((x) => x.job === job);
          if (owned.length > 0) await s.catalog(catalogId, job).commitUpserts(owned.map((x) => ({ id: x.id, contentHash: x.hash, productKey: `k-${x.id}` })), 1);
        }
        const inState = new Map(state.map((x) => [x.id, x]));
        // An item is skipped as unchanged only for a product of the job's own (its fingerprint has the job in it).
        // noneRead: an unchanged feed (every item skipped, or rejected).
        const occurrences = raw
          .map((o) => (noneRead && o.kind === 'read' ? { ...o, kind: 'unchanged' as const } : o))
          .map((o) => (o.kind === 'unchanged' && inState.get(o.id)?.job !== 'j1' ? { ...o, kind: noneRead ? ('rejected' as const) : ('read' as const) } : o));
        const scan = await s.catalog(catalogId, 'j1').scan();
        await scan.add(
          occurrences.map((o, i) =>
            o.kind === 'unchanged'
              ? { id: o.id, row: i + 1, line: i + 1, unchanged: true as const }
              : o.kind === 'rejected'
                ? { id: o.id, row: i + 1, rejected: true as const }
                : { ...p(o.id, i + 1, o.hash), fingerprint: o.withFp ? Buffer.alloc(32, i + 1) : undefined, warnings: [] },
          ),
        );
        // The model: the last occurrence of an id wins.
        const last = new Map(occurrences.map((o) => [o.id, o]));
        const finals = [...last.values()];
        const deletable = state.filter((x) => x.job !== 'other');
        const reads = finals.filter((o) => o.kind === 'read');
        const creates = reads.filter((o) => !inState.has(o.id)).length;
        const updates = reads.filter((o) => inState.has(o.id) && (full || inState.get(o.id)?.hash !== o.hash)).length;
        const products = finals.filter((o) => o.kind !== 'rejected').length;
        const deletes = mirror ? deletable.filter((x) => !last.has(x.id)).length : 0;
        expect(await scan.duplicates()).toBe(occurrences.length - last.size);
        expect(await scan.counts({ mirror, full })).toEqual({ products, creates, updates, unchanged: products - creates - updates, deletes, known: deletable.length });
        expect((await collect(scan.deletes(10))).length).toBe(deletable.filter((x) => !last.has(x.id)).length);
        await scan.claim();
        // Saved for the products read whose content the state holds (as it does for a product just acknowledged), now the job's own.
        const saved = reads.filter((o) => o.withFp && inState.get(o.id)?.hash === o.hash).length;
        expect(await scan.saveFingerprints()).toBe(saved);
        await scan.close();
      }),
      { numRuns: 300 },
    );
  });
});
