/**
 * The catalog fingerprint thread (src/jobs/catalog-fingerprint-thread.ts): a feed read against a
 * saved state gives exactly the outcomes (and fingerprints) of the lookup on the main thread,
 * and every way the thread can fail (its connection cannot be opened, a lookup throws, the
 * thread throws or exits) ends the read with a clear error: no hang, no item taken as unchanged.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InternalError, StateError } from '../../src/errors.js';
import { openCatalogFeed, type ItemMatcherFactory, type ItemOutcome } from '../../src/jobs/catalog-feed-scan.js';
import { fingerprintThreadMatcher } from '../../src/jobs/catalog-fingerprint-thread.js';
import type { CatalogJob } from '../../src/jobs/job.js';
import { SqliteCatalogState } from '../../src/state/sqlite/catalog-state.js';
import { openDatabase, type Db } from '../../src/state/sqlite/database.js';
import type { CatalogState, FingerprintMatch } from '../../src/state/store.js';

const dir = mkdtempSync(join(tmpdir(), 'adsync-fp-thread-'));
let files = 0;

function jobFor(xml: string): CatalogJob {
  const path = join(dir, `feed-${++files}.xml`);
  writeFileSync(path, xml);
  return { source: { path }, catalog: { catalogId: 'c', mode: 'mirror', maxDeleteRatio: 1, fields: {}, productSets: [] } } as unknown as CatalogJob;
}

const G = 'http://base.google.com/ns/1.0';
const rss = (items: string) => `<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"><channel xmlns:g="${G}"><title>t</title>\n${items}</channel></rss>\n`;
function product(i: number, price = `${(i % 97) + 1}.00 USD`): string {
  return `<item>\n  <g:id>SKU-${i}</g:id>\n  <title>Product ${i}</title>\n  <description>Desc ${i}</description>\n  <link>https://shop.example/p/${i}</link>\n  <g:image_link>https://cdn.example/${i}.jpg</g:image_link>\n  <g:price>${price}</g:price>\n  <g:availability>in stock</g:availability>\n  <g:condition>new</g:condition>\n  <g:brand>Acme</g:brand>\n</item>\n`;
}

/** An outcome with its fingerprint, comparable with toEqual. */
function plain(o: ItemOutcome): Record<string, unknown> {
  if (o.kind === 'product') return { kind: o.kind, row: o.row, id: o.id, contentHash: o.contentHash, warnings: o.warnings, fingerprint: o.fingerprint?.toString('hex') };
  if (o.kind === 'unchanged') return { kind: o.kind, row: o.row, id: o.id, warnings: [...o.warnings] };
  return { kind: o.kind, row: o.row };
}

/** `readAhead` 1: while the first lookup waits (see counted), at most one more batch is asked for on the main thread. */
async function read(job: CatalogJob, state: CatalogState | undefined, itemMatcher?: ItemMatcherFactory, readAhead?: number): Promise<{ outcomes: ItemOutcome[]; error: unknown }> {
  const outcomes: ItemOutcome[] = [];
  let error: unknown;
  try {
    const reader = await openCatalogFeed(job, { fingerprints: state, itemMatcher, readAhead });
    for await (const batch of reader.outcomes) outcomes.push(...batch);
  } catch (thrown) {
    error = thrown;
  }
  return { outcomes, error };
}

/** A state database with catalog `c` holding the fingerprints of a first read of `job`, with the given warnings. */
async function savedState(job: CatalogJob, warn: (row: number) => string[] | null = () => null): Promise<{ db: Db; path: string; catalog: SqliteCatalogState }> {
  const path = join(mkdtempSync(join(dir, 'state-')), 'state.sqlite');
  const db = openDatabase(path);
  const catalog = new SqliteCatalogState(db, 'c', null);
  const first = await read(job, undefined);
  const insert = db.prepare(
    `INSERT INTO catalog_products (catalog, id, content_hash, product_key, sent_at, raw_fp, feed_warnings) VALUES (1, ?, 'h', 'k', 1, ?, ?)
     ON CONFLICT (catalog, id) DO UPDATE SET raw_fp = excluded.raw_fp, feed_warnings = excluded.feed_warnings`,
  );
  for (const o of first.outcomes) {
    if (o.kind !== 'product' || o.fingerprint === undefined) continue;
    const warnings = warn(o.row);
    insert.run(o.id, o.fingerprint, warnings === null ? null : JSON.stringify(warnings));
  }
  return { db, path, catalog };
}

/**
 * The state as the run sees it, its main-thread lookups counted; the first `delayed` of them
 * wait `delayMs` each (the thread has opened its connection by then, and takes the later
 * batches; on a loaded machine a second or third wait gives it the time it needs).
 */
function counted(state: CatalogState, delayMs: number, delayed = 1): { state: CatalogState; here: () => number } {
  let here = 0;
  let waits = 0;
  const wrapped = {
    productsByFingerprint: async (fingerprints: readonly Buffer[]): Promise<(FingerprintMatch | undefined)[]> => {
      here += fingerprints.length;
      if (waits < delayed) {
        waits += 1;
        await new Promise((resolve) => setTimeout(resolve, delayMs));
      }
      return state.productsByFingerprint(fingerprints);
    },
    fingerprintLookupAddress: () => state.fingerprintLookupAddress(),
  } as unknown as CatalogState;
  return { state: wrapped, here: () => here };
}

const ITEMS = 3000;
const base = Array.from({ length: ITEMS }, (_, i) => product(i));

describe('the catalog fingerprint thread', () => {
  it('gives the outcomes and fingerprints of the lookup on the main thread, for any changes to a saved feed', async () => {
    const firstJob = jobFor(rss(base.join('')));
    // Some saved products carry feed warnings: a skipped item must give them back.
    const { db, catalog } = await savedState(firstJob, (row) => (row % 5 === 0 ? ['w1'] : null));
    let skipped = 0;
    let byThread = 0;
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(fc.tuple(fc.integer({ min: 0, max: ITEMS - 1 }), fc.constantFrom('price', 'remove', 'duplicate', 'large')), { maxLength: 30 }), async (edits) => {
          const items = [...base];
          for (const [at, edit] of edits) {
            if (edit === 'price') items[at] = product(at, '1.23 USD');
            else if (edit === 'remove') items[at] = '';
            // Larger than a slot (1 MiB): a batch of its own buffer.
            else if (edit === 'large') items[at] = product(at).replace('<description>', `<description>${'x'.repeat(1_100_000)}`);
            else items[at] = `${items[at] ?? ''}${base[(at * 7) % ITEMS] ?? ''}`;
          }
          const job = jobFor(rss(items.join('')));
          const expected = await read(job, catalog);
          const lookups = counted(catalog, 300, 4);
          const got = await read(job, lookups.state, fingerprintThreadMatcher(0), 1);
          expect(got.error).toBeUndefined();
          expect(expected.error).toBeUndefined();
          expect(got.outcomes.map(plain)).toEqual(expected.outcomes.map(plain));
          skipped += got.outcomes.filter((o) => o.kind === 'unchanged').length;
          byThread += got.outcomes.length - lookups.here();
        }),
        { numRuns: Number(process.env.ADSYNC_FUZZ_RUNS ?? 12), examples: [[[]], [[[10, 'price']]], [[[2900, 'large']]]] },
      );
    } finally {
      db.close();
    }
    // Not equal by never skipping, nor by never using the thread.
    expect(skipped).toBeGreaterThan(ITEMS * 2);
    expect(byThread).toBeGreaterThan(ITEMS * 2);
  });

  it('ends the read with a StateError when a lookup on the thread fails (its table gone)', async () => {
    const job = jobFor(rss(base.join('')));
    const { db, path, catalog } = await savedState(job);
    // The main thread's lookups answer from what was saved; the thread's own connection finds no table.
    const saved = new Map<string, FingerprintMatch | undefined>();
    const all = (await read(job, undefined)).outcomes.flatMap((o) => (o.kind === 'product' && o.fingerprint !== undefined ? [o.fingerprint] : []));
    (await catalog.productsByFingerprint(all)).forEach((match, i) => saved.set(all[i]?.toString('hex') ?? '', match));
    db.exec('ALTER TABLE catalog_products RENAME TO catalog_products_gone');
    const state = {
      productsByFingerprint: (fps: readonly Buffer[]) => Promise.resolve(fps.map((fp) => saved.get(fp.toString('hex')))),
      fingerprintLookupAddress: () => ({ database: path, catalog: 1 }),
    } as unknown as CatalogState;
    const got = await read(job, counted(state, 1000).state, fingerprintThreadMatcher(0));
    db.close();
    expect(got.error).toBeInstanceOf(StateError);
    expect((got.error as StateError).message).toContain(`cannot read the state database ${path}`);
    expect((got.error as StateError).message).toContain('no such table: catalog_products');
    expect(got.outcomes.length).toBeLessThan(ITEMS);
  });

  it('ends the read with a StateError that says what to do when the database stays locked', { timeout: 60_000 }, async () => {
    const job = jobFor(rss(base.join('')));
    const { db, path } = await savedState(job);
    db.close();
    // Another process's connection holding the file (exclusive locking mode): the thread's own
    // connection waits the busy timeout (10 s), then fails.
    const holder = new Database(path);
    holder.pragma('locking_mode = EXCLUSIVE');
    holder.exec('BEGIN EXCLUSIVE; COMMIT');
    try {
      const state = {
        productsByFingerprint: (fps: readonly Buffer[]) => Promise.resolve(fps.map(() => undefined)),
        fingerprintLookupAddress: () => ({ database: path, catalog: 1 }),
      } as unknown as CatalogState;
      // The main thread's first lookup outlasts the thread's wait: the batches after it fail.
      const got = await read(job, counted(state, 11_000).state, fingerprintThreadMatcher(0));
      expect(got.error).toBeInstanceOf(StateError);
      expect((got.error as StateError).message).toContain(path);
      expect((got.error as StateError).message).toContain('database is locked');
      expect((got.error as StateError).hint).toContain('another process kept it locked');
    } finally {
      holder.close();
    }
  });

  it.each([
    ['exits', 'parentPort.on("message", () => process.exit(7));', /the catalog fingerprint thread exited \(code 7\)/],
    ['throws', 'parentPort.on("message", (m) => { if (m.type === "match") throw new Error("boom"); });', /the catalog fingerprint thread failed: boom/],
    ['says it failed', 'parentPort.on("message", (m) => { if (m.type === "match") parentPort.postMessage({ type: "failed", state: false, message: "no key" }); });', /the catalog fingerprint thread failed: no key/],
  ])('ends the read with an internal error when the thread %s while it holds batches', async (_, body, error) => {
    const worker = join(dir, `worker-${++files}.mjs`);
    writeFileSync(worker, `import { parentPort } from 'node:worker_threads';\nparentPort.postMessage({ type: 'ready' });\n${body}\n`);
    const job = jobFor(rss(base.join('')));
    const { db, catalog } = await savedState(job);
    try {
      const got = await read(job, counted(catalog, 1000).state, fingerprintThreadMatcher(0, pathToFileURL(worker)));
      expect(got.error).toBeInstanceOf(InternalError);
      expect((got.error as Error).message).toMatch(error);
      // The batches looked up on the main thread came out; none after the thread failed.
      expect(got.outcomes.length).toBeLessThan(ITEMS);
      expect(got.outcomes.every((o) => o.kind === 'unchanged')).toBe(true);
    } finally {
      db.close();
    }
  });
});
