/**
 * The catalog feed read the fast way (src/jobs/catalog-feed-scan.ts: items cut out of the
 * bytes, skipped when their raw fingerprint is known, read in worker threads) against the
 * obvious way (readXmlFeed + buildProduct): the same outcomes, rows, lines, products,
 * rejects and error, and a skipped item is always one that would have given exactly the
 * product whose fingerprint it has.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openCatalogFeed, outcomeOfItem, type CatalogFeedReaderFactory, type ItemOutcome } from '../../src/jobs/catalog-feed-scan.js';
import { itemReaderFactory } from '../../src/jobs/catalog-workers.js';
import type { CatalogJob } from '../../src/jobs/job.js';
import { openSource } from '../../src/sources/open.js';
import { readXmlFeed } from '../../src/sources/xml-feed.js';
import type { CatalogState, FingerprintMatch } from '../../src/state/store.js';

const dir = mkdtempSync(join(tmpdir(), 'adsync-feed-scan-'));
let files = 0;

function jobFor(xml: string | Buffer): CatalogJob {
  const path = join(dir, `feed-${++files}.xml`);
  writeFileSync(path, xml);
  return { source: { path }, catalog: { catalogId: 'c', mode: 'mirror', maxDeleteRatio: 1, fields: {}, productSets: [] } } as unknown as CatalogJob;
}

type Plain = Record<string, unknown>;

function plain(o: ItemOutcome): Plain {
  switch (o.kind) {
    case 'product':
      return { kind: o.kind, row: o.row, line: o.line, id: o.id, contentHash: o.contentHash, payload: o.payload.toString(), warnings: o.warnings };
    case 'unchanged':
      return { kind: o.kind, row: o.row, line: o.line, id: o.id, warnings: [...o.warnings] };
    case 'invalid':
      return { kind: o.kind, row: o.row, line: o.line, id: o.id, reasons: o.reasons };
    case 'unreadable':
      return { kind: o.kind, row: o.row, line: o.line, reason: o.reason };
  }
}

interface Read {
  outcomes: ItemOutcome[];
  error: string | undefined;
}

/** The obvious way: the full XML reader, each item built with buildProduct. */
async function reference(job: CatalogJob): Promise<{ outcomes: Plain[]; error: string | undefined }> {
  const outcomes: Plain[] = [];
  let error: string | undefined;
  try {
    const source = await openSource(job.source);
    for await (const batch of readXmlFeed(source, { encoding: source.encoding })) {
      const all: ItemOutcome[] = [...batch.items.map((item) => outcomeOfItem(item, job)), ...batch.rejects.map((r) => ({ kind: 'unreadable' as const, row: r.row, line: r.line, reason: r.reason }))];
      outcomes.push(...all.sort((a, b) => a.row - b.row).map(plain));
    }
  } catch (thrown) {
    error = (thrown as Error).message;
  }
  return { outcomes, error };
}

async function fast(job: CatalogJob, options: { state?: Map<string, FingerprintMatch>; itemReader?: CatalogFeedReaderFactory; doubts?: string[] } = {}): Promise<Read> {
  const known = options.state;
  const fingerprints =
    known === undefined ? undefined : ({ productsByFingerprint: (fps: readonly Buffer[]) => Promise.resolve(fps.map((fp) => known.get(fp.toString('hex')))) } as unknown as CatalogState);
  const outcomes: ItemOutcome[] = [];
  let error: string | undefined;
  try {
    const reader = await openCatalogFeed(job, { fingerprints, itemReader: options.itemReader, onDoubt: (reason) => options.doubts?.push(reason) });
    for await (const batch of reader.outcomes) outcomes.push(...batch);
  } catch (thrown) {
    error = (thrown as Error).message;
  }
  return { outcomes, error };
}

/** What a run saves after a first read: for the last occurrence of each id that is a product, its fingerprint. */
function savedState(first: Read): { fingerprints: Map<string, FingerprintMatch>; products: Map<string, Plain> } {
  const last = new Map<string, ItemOutcome>();
  for (const o of first.outcomes) if ((o.kind === 'product' || o.kind === 'invalid') && o.id !== undefined) last.set(o.id, o);
  const fingerprints = new Map<string, FingerprintMatch>();
  const products = new Map<string, Plain>();
  for (const [id, o] of last) {
    if (o.kind !== 'product' || o.fingerprint === undefined) continue;
    fingerprints.set(o.fingerprint.toString('hex'), { id, warnings: o.warnings });
    products.set(id, plain(o));
  }
  return { fingerprints, products };
}

/** A skipped item stands for the saved product (the same content, hash and warnings) at its own row and line. */
function resolved(read: Read, products: Map<string, Plain>): { outcomes: Plain[]; error: string | undefined } {
  return {
    outcomes: read.outcomes.map((o) => {
      if (o.kind !== 'unchanged') return plain(o);
      const saved = products.get(o.id);
      if (saved === undefined) throw new Error(`skipped item of row ${o.row} has an unknown product ${o.id}`);
      return { ...saved, row: o.row, line: o.line, warnings: [...o.warnings] };
    }),
    error: read.error,
  };
}

const G = 'http://base.google.com/ns/1.0';
const rss = (items: string, channel = `<channel xmlns:g="${G}">`) => `<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0">${channel}<title>t</title>\n${items}</channel></rss>\n`;
function product(i: number, price = `${(i % 97) + 1}.00 USD`, extra = ''): string {
  return `<item>\n  <g:id>SKU-${i}</g:id>\n  <title>Product ${i}</title>\n  <description>Desc ${i} &amp; more</description>\n  <g:description>Google desc ${i}</g:description>\n  <link>https://shop.example/p/${i}</link>\n  <g:image_link>https://cdn.example/${i}.jpg</g:image_link>\n  <g:price>${price}</g:price>\n  <g:availability>in stock</g:availability>\n  <g:condition>new</g:condition>\n  <g:brand>Acme</g:brand>${extra}\n</item>\n`;
}

/** Edits of a feed of products, each a realistic change or a hostile one. */
const EDITS: readonly ((items: string[], i: number) => void)[] = [
  (items, i) => (items[i] = product(i, '5.55 USD')), // a changed price
  (items, i) => (items[i] = product(i, 'free')), // now invalid
  (items, i) => (items[i] = product(i, undefined, '\n  <g:shipping><g:country>US</g:country></g:shipping>')), // a warning
  (items, i) => items.splice(i, 0, items[(i * 7) % items.length] ?? ''), // a duplicate of another item, same bytes
  (items, i) => items.splice(i, 1), // removed
  (items, i) => (items[i] = `<group xmlns:g="urn:not-google">${items[i] ?? ''}</group>`), // same bytes, another namespace
  (items, i) => (items[i] = `<group>${items[i] ?? ''}</group>`), // same bytes, deeper
  (items, i) => (items[i] = (items[i] ?? '').replace('<title>', '<title>&nbsp;')), // an undefined entity: rejected
  (items, i) => (items[i] = (items[i] ?? '').replace('</title>', '</titel>')), // not well-formed
  (items, i) => (items[i] = (items[i] ?? '').replace('<item>', '<item xmlns:g="urn:x">')), // rebinding on the item
  (items, i) => (items[i] = `<!-- ${items[i] ?? ''} -->`), // commented out
  (items, i) => (items[i] = `<![CDATA[${items[i] ?? ''}]]>`), // hidden in CDATA, between items
  (items, i) => (items[i] = (items[i] ?? '').replace(/\n/g, '\r\n')), // CR LF
  (items, i) => (items[i] = `${items[i] ?? ''}<!DOCTYPE x [<!ENTITY e "boom">]>`), // a DOCTYPE with entities mid-feed
];

describe('the catalog feed read the fast way', () => {
  it('gives the outcomes of the full reader, and skips only items that give the saved product', async () => {
    const base = Array.from({ length: 40 }, (_, i) => product(i));
    const firstJob = jobFor(rss(base.join('')));
    const first = await fast(firstJob);
    expect(first.outcomes.map(plain)).toEqual((await reference(firstJob)).outcomes);
    const { fingerprints, products } = savedState(first);
    expect(fingerprints.size).toBe(40);

    // The same feed again: every item skipped, nothing read.
    const again = await fast(jobFor(rss(base.join(''))), { state: fingerprints });
    expect(again.outcomes.map((o) => o.kind)).toEqual(base.map(() => 'unchanged'));

    let skipped = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 0, max: EDITS.length - 1 }), fc.integer({ min: 0, max: 39 })), { maxLength: 5 }),
        fc.boolean(),
        fc.constantFrom(`<channel xmlns:g="${G}">`, '<channel>', '<channel xmlns:g="urn:other">', `<channel xmlns:g="${G}" xmlns="${G}">`),
        fc.constantFrom<Record<string, string>>({}, { description: 'title' }),
        async (edits, crlf, channel, fields) => {
          const items = [...base];
          for (const [edit, at] of edits) EDITS[edit]?.(items, Math.min(at, items.length - 1));
          let xml = rss(items.join(''), channel);
          if (crlf) xml = xml.replace(/\n/g, '\r\n');
          const job = jobFor(xml);
          job.catalog.fields = fields;
          const read = await fast(job, { state: fingerprints });
          skipped += read.outcomes.filter((o) => o.kind === 'unchanged').length;
          expect(resolved(read, products)).toEqual(await reference(job));
        },
      ),
      // Run first: a feed with one price changed, every other item skippable. Random runs skip
      // only when they draw the default channel, no field mapping and LF (1 in 16), so a bound on
      // their skips alone failed now and then (71 skips, not over 100, in 150 runs).
      { numRuns: Number(process.env.ADSYNC_FUZZ_RUNS ?? 150), examples: [[[[0, 5]], false, `<channel xmlns:g="${G}">`, {}]] },
    );
    // The property must not hold by never skipping: the example alone skips its 39 unchanged items.
    expect(skipped).toBeGreaterThanOrEqual(39);
  });

  it('never skips an item whose bytes are known but read differently (namespace, depth, field mapping)', async () => {
    const base = Array.from({ length: 5 }, (_, i) => product(i));
    const first = await fast(jobFor(rss(base.join(''))));
    const { fingerprints } = savedState(first);
    for (const xml of [rss(base.join(''), '<channel xmlns:g="urn:other">'), rss(`<group>${base.join('')}</group>`), rss(base.join(''), `<channel xmlns:g="${G}" xmlns:x="urn:x">`)]) {
      const read = await fast(jobFor(xml), { state: fingerprints });
      expect(read.outcomes.filter((o) => o.kind === 'unchanged')).toEqual([]);
    }
    const mapped = jobFor(rss(base.join('')));
    mapped.catalog.fields = { title: 'description' };
    const read = await fast(mapped, { state: fingerprints });
    expect(read.outcomes.filter((o) => o.kind === 'unchanged')).toEqual([]);
    expect(read.outcomes.map(plain)).toEqual((await reference(mapped)).outcomes);
  });

  it('refuses a DOCTYPE with entities exactly as the full reader does, with fingerprints known or not', async () => {
    const base = Array.from({ length: 5 }, (_, i) => product(i));
    const { fingerprints } = savedState(await fast(jobFor(rss(base.join('')))));
    const xml = rss(base.join('')).replace('<rss', '<!DOCTYPE rss [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]>\n<rss').replace('Product 1<', 'Product 1 &lol2;<');
    const job = jobFor(xml);
    const expected = await reference(job);
    expect(expected.error).toMatch(/DOCTYPE|entit/i);
    for (const state of [undefined, fingerprints]) {
      const read = await fast(job, { state });
      expect(read.outcomes.map(plain)).toEqual(expected.outcomes);
      expect(read.error).toBe(expected.error);
    }
  });

  it('reads in worker threads exactly as on one thread, doubts and rejects included', async () => {
    const items = Array.from({ length: 3000 }, (_, i) => {
      if (i % 97 === 5) return product(i, 'free');
      if (i % 89 === 7) return product(i).replace('<title>', '<title>&nbsp;');
      if (i % 83 === 9) return product(i).replace('<item>', '<item xmlns:g="urn:x">');
      if (i % 131 === 3) return `<!-- c -->${product(i, undefined, '<g:shipping><g:country>US</g:country></g:shipping>')}`;
      return product(i);
    });
    const workers = itemReaderFactory(jobFor(''), { threads: 1, threshold: 0 });
    for (const [xml, doubted] of [
      [rss(items.join('')), false],
      [rss(items.join('').replace('<title>Product 2500</title>', '<title>Product 2500</titl>')), true],
    ] as const) {
      const job = jobFor(xml);
      const doubts: string[] = [];
      const read = await fast(job, { itemReader: workers, doubts });
      const expected = await reference(job);
      expect(read.outcomes.map(plain)).toEqual(expected.outcomes);
      expect(read.error).toBe(expected.error);
      expect(read.outcomes.length).toBeGreaterThan(2400);
      // Read the fast way up to the malformed item (a doubt would hide a worker's mistakes).
      expect(doubts.length).toBe(doubted ? 1 : 0);
    }
  });

  it('on a re-run, looks items up and reads them in batches of several chunks, with the outcomes of the full reader, doubts included', async () => {
    const items = Array.from({ length: 3000 }, (_, i) => product(i));
    const { fingerprints, products } = savedState(await fast(jobFor(rss(items.join('')))));
    const edited = items.map((item, i) => (i % 211 === 17 ? product(i, '7.77 USD') : i % 307 === 11 ? product(i, 'free') : item));
    const workers = itemReaderFactory(jobFor(''), { threads: 1, threshold: 0 });
    for (const [what, xml, doubted] of [
      ['unchanged', rss(items.join('')), false],
      ['edited here and there', rss(edited.join('')), false],
      ['not well-formed late in the feed', rss(edited.join('').replace('<title>Product 2500</title>', '<title>Product 2500</titl>')), true],
      ['a DOCTYPE with entities mid-feed', rss(edited.join('').replace('<item>\n  <g:id>SKU-1500<', '<!DOCTYPE x [<!ENTITY e "boom">]><item>\n  <g:id>SKU-1500<')), true],
    ] as const) {
      const job = jobFor(xml);
      const lookups: number[] = [];
      const state = {
        productsByFingerprint: (fps: readonly Buffer[]) => {
          lookups.push(fps.length);
          return Promise.resolve(fps.map((fp) => fingerprints.get(fp.toString('hex'))));
        },
      } as unknown as CatalogState;
      const doubts: string[] = [];
      const outcomes: ItemOutcome[] = [];
      let error: string | undefined;
      try {
        const reader = await openCatalogFeed(job, { fingerprints: state, itemReader: workers, onDoubt: (reason) => doubts.push(reason) });
        for await (const batch of reader.outcomes) outcomes.push(...batch);
      } catch (thrown) {
        error = (thrown as Error).message;
      }
      expect(resolved({ outcomes, error }, products), what).toEqual(await reference(job));
      expect(doubts.length, what).toBe(doubted ? 1 : 0);
      // ~160 items a 64 KiB chunk: at least 256 a lookup, but for the last (and the one a doubt ends).
      expect(lookups.slice(0, -2).every((n) => n >= 256), what).toBe(true);
      expect(lookups.length, what).toBeLessThan(16);
    }
  });

  it('stops with a clear error, not a mix of two feeds, when the feed changes before the second read', async () => {
    const items = Array.from({ length: 400 }, (_, i) => product(i));
    // An item larger than the cutter takes (4 MB) is read again with the full reader: a doubt, not an error.
    const doubtful = rss(items.join('').replace('Desc 300 &amp; more', 'x'.repeat(4_300_000)));
    const variants: [string, string | Buffer, RegExp | undefined][] = [
      ['rewritten the same', doubtful, undefined],
      ['an early item changed', doubtful.replace('<title>Product 10</title>', '<title>Product 10!</title>'), /changed while adsync was reading it/],
      ['cut short', doubtful.slice(0, 2000), /changed while adsync was reading it/],
    ];
    for (const [what, rewrite, error] of variants) {
      const job = jobFor(doubtful);
      const expected = await reference(job);
      let reread = 0;
      const outcomes: ItemOutcome[] = [];
      let failure: string | undefined;
      try {
        const reader = await openCatalogFeed(job, {
          onDoubt: () => {
            reread += 1;
            writeFileSync(job.source.path, rewrite);
          },
        });
        for await (const batch of reader.outcomes) outcomes.push(...batch);
      } catch (thrown) {
        failure = (thrown as Error).message;
      }
      expect(reread, what).toBe(1);
      if (error === undefined) {
        expect(outcomes.map(plain), what).toEqual(expected.outcomes);
        expect(failure, what).toBe(expected.error);
      } else {
        expect(failure, what).toMatch(error);
        expect(failure, what).toContain(job.source.path);
      }
    }
  });
});
