/**
 * Hostile and broken product feeds through the real CLI, against a catalog seeded with ten
 * products by a good feed. Each gives a clear one-line error or per-item rejects, a non-zero
 * exit where the run cannot proceed, never a stack trace, and never a destructive mirror:
 * after every case the catalog and the state still hold the ten products, unchanged. An
 * XML feed's entities are never expanded and the local file an external entity names is
 * never opened.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createWorkspace, type Workspace } from '../helpers/e2e.js';
import type { CliResult } from '../helpers/cli.js';
import { committedCatalog, csvFeedOf, errorLines, expectCatalog, expectNoStackTrace, feedOf, range, summaryOf, type ProductSpec } from './support.js';

const SEED: ProductSpec[] = range(1, 10).map((n) => ({ n, price: '10.00 USD' }));
const GOOD_XML = feedOf(SEED);
const GOOD_CSV = csvFeedOf(SEED);
/** The feeds without P-010: a run of one would delete it, unless a guard says no. */
const NINE_XML = feedOf(SEED.slice(0, 9));
const NINE_CSV = csvFeedOf(SEED.slice(0, 9));
const CSV_HEADER = GOOD_CSV.slice(0, GOOD_CSV.indexOf('\n') + 1);

let ws: Workspace;
let seededState: ReturnType<typeof committedCatalog>;

function job(file: string): string {
  return `name: shop\naccount_id: emu-account\nsource: { path: ${file} }\ncatalog:\n  product_catalog_id: emu-catalog\n`;
}

beforeAll(async () => {
  ws = await createWorkspace();
  for (const ext of ['xml', 'csv', 'xml.gz']) ws.write(`feed-${ext}.yaml`, job(`feed.${ext}`));
  ws.write('feed.xml', GOOD_XML);
  const seeded = await ws.cli(['run', 'feed-xml.yaml']);
  expect(seeded.code, seeded.stderr).toBe(0);
  expectCatalog(ws, SEED);
  seededState = committedCatalog(ws.statePath);
});
afterAll(async () => {
  await ws.close();
});
// Each case starts from the seeded catalog, even after a case that failed and changed it.
beforeEach(async () => {
  const catalog = ws.emulator.state().catalogs['emu-catalog']?.products ?? [];
  if (catalog.length === SEED.length && JSON.stringify([...committedCatalog(ws.statePath)]) === JSON.stringify([...seededState])) return;
  ws.write('feed.xml', GOOD_XML);
  await ws.cli(['run', 'feed-xml.yaml', '--max-delete-ratio', '1']);
  seededState = committedCatalog(ws.statePath);
});

/** Runs the job on `content` as its feed; checks the universal promises; returns the result. */
async function runOn(file: string, content: string | Buffer): Promise<CliResult & { summary: Record<string, unknown> }> {
  ws.write(file, content);
  const result = await ws.cli(['run', `feed-${file.slice('feed.'.length)}.yaml`, '--json']);
  expectNoStackTrace(result);
  // Never a destructive mirror: the ten products and the state that lists them are untouched.
  expectCatalog(ws, SEED);
  expect(committedCatalog(ws.statePath)).toEqual(seededState);
  return { ...result, summary: summaryOf(result) };
}

function expectOneError(result: CliResult, pattern: RegExp): void {
  expect(result.code, result.stderr).toBe(1);
  const lines = errorLines(result.stderr);
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
}

const UNREADABLE = (row: number, line: number, reason: string) =>
  new RegExp(
    `^adsync: job shop failed: 1 row of the source could not be read \\(first: row ${row}, line ${line}: ${reason}\\); such a row may hold one that is still current, so no deletes were made`,
  );

/** The 1-based line of the n-th <item> of an RSS feed. */
function lineOfItem(feed: string, n: number): number {
  const lines = feed.split('\n');
  let seen = 0;
  for (let i = 0; i < lines.length; i++) if ((lines[i] ?? '').trim() === '<item>' && ++seen === n) return i + 1;
  throw new Error(`no item ${n}`);
}

function insertAt(text: string, marker: string, bytes: Buffer): Buffer {
  const at = text.indexOf(marker);
  return Buffer.concat([Buffer.from(text.slice(0, at)), bytes, Buffer.from(text.slice(at))]);
}

describe('hostile and broken product feeds (catalog mirror)', () => {
  it('an empty XML file and an empty CSV file: a clear error, exit 1', async () => {
    expectOneError(await runOn('feed.xml', ''), /^adsync: job shop failed: \S+feed\.xml is empty$/);
    expectOneError(await runOn('feed.csv', ''), /^adsync: job shop failed: \S+feed\.csv is empty \(no header row\)/);
  });

  it('a CSV header without rows, an RSS feed without items: no valid products, nothing deleted', async () => {
    const message = /^adsync: job shop failed: the feed has no valid products: a mirror run would delete all 10 products of the catalog; nothing was deleted/;
    expectOneError(await runOn('feed.csv', CSV_HEADER), message);
    expectOneError(await runOn('feed.xml', feedOf([])), message);
  });

  it('an unclosed quote: an error naming the row and line, nothing sent', async () => {
    const r = await runOn('feed.csv', GOOD_CSV.replace('Product P-005', '"Product P-005'));
    expectOneError(r, /^adsync: job shop failed: \S+feed\.csv line 6: a quote opened in row 5 is never closed/);
    expect(r.summary).toMatchObject({ status: 'failed', created: 0, updated: 0, deleted: 0, requests: 0 });
  });

  it('a ragged row: a reject with row and line; the product it may hold is not deleted', async () => {
    const r = await runOn('feed.csv', `${NINE_CSV}P-010,x\n`);
    expectOneError(r, UNREADABLE(10, 11, 'row has 2 fields, header has 9'));
    expect(r.summary).toMatchObject({ read: 10, valid: 9, rejected: 1, deleted: 0 });
    expect(readFileSync(String(r.summary.rejects_file), 'utf8')).toBe('row,line,id,field,reason\n10,11,,,"row has 2 fields, header has 9"\n');
  });

  it('an item whose id is empty, blank or missing: a reject; the product it may be is not deleted', async () => {
    const line = lineOfItem(GOOD_XML, 10);
    const noId = UNREADABLE(10, line, 'the item has no usable id \\(id is required\\)');
    for (const replacement of ['<g:id></g:id>', '<g:id>   </g:id>', '']) {
      const r = await runOn('feed.xml', GOOD_XML.replace('<g:id>P-010</g:id>', replacement));
      expectOneError(r, noId);
      expect(r.summary).toMatchObject({ read: 10, valid: 9, rejected: 1, deleted: 0, unchanged: 9 });
    }
    const csv = await runOn('feed.csv', GOOD_CSV.replace(/^P-010,/m, ','));
    expectOneError(csv, UNREADABLE(10, 11, 'the item has no usable id \\(id is required\\)'));
    expect(readFileSync(String(csv.summary.rejects_file), 'utf8')).toBe('row,line,id,field,reason\n10,11,,id,is required\n');
  });

  it('a 50 MB single line in a CSV feed: a reject, not a crash; nothing deleted', async () => {
    const huge = Buffer.alloc(50 * 1024 * 1024, 'x');
    const r = await runOn('feed.csv', Buffer.concat([Buffer.from(NINE_CSV), Buffer.from('P-010,'), huge, Buffer.from('\n')]));
    expectOneError(r, UNREADABLE(10, 11, 'row is longer than 1048576 bytes \\(a line of 52428806 bytes\\); skipped'));
    expect(r.summary).toMatchObject({ read: 10, valid: 9, rejected: 1, deleted: 0 });
  });

  it('50 MB of XML text without markup: refused without reading it whole; nothing deleted', async () => {
    const r = await runOn('feed.xml', insertAt(NINE_XML, 'Product P-003', Buffer.alloc(50 * 1024 * 1024, 'x')));
    expectOneError(r, /^adsync: job shop failed: \S+feed\.xml line \d+, column \d+: more than \d+ characters without any markup .*the feed is incomplete\)$/);
    expect(r.summary).toMatchObject({ created: 0, updated: 0, deleted: 0, requests: 0 });
  });

  it('binary garbage named .xml or .csv: a clear error, exit 1', async () => {
    const garbage = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256));
    expectOneError(await runOn('feed.xml', garbage), /^adsync: job shop failed: \S+feed\.xml is not a text file/);
    expectOneError(await runOn('feed.csv', garbage), /^adsync: job shop failed: \S+feed\.csv is not a text file/);
  });

  it('invalid UTF-8 in one item, and a Latin-1 feed declared as UTF-8: that item rejected with the hint, nothing deleted', async () => {
    const hint = 'item contains bytes that are not UTF-8 \\(is the feed Latin-1\\? declare encoding="ISO-8859-1" or set source\\.encoding: latin1\\)';
    const line = lineOfItem(GOOD_XML, 10);
    const invalid = await runOn('feed.xml', insertAt(GOOD_XML, 'Product P-010', Buffer.from([0xff, 0xfe])));
    expectOneError(invalid, UNREADABLE(10, line, hint));
    const latin1 = await runOn('feed.xml', Buffer.from(GOOD_XML.replace('Product P-010', 'Produit été P-010'), 'latin1'));
    expectOneError(latin1, UNREADABLE(10, line, hint));
    expect(latin1.summary).toMatchObject({ read: 10, valid: 9, rejected: 1, deleted: 0, unchanged: 9 });
  });

  it('a Latin-1 feed that declares its encoding is read right (and changes only that title)', async () => {
    const declared = Buffer.from(GOOD_XML.replace('Product P-010', 'Produit été P-010').replace('encoding="UTF-8"', 'encoding="ISO-8859-1"'), 'latin1');
    ws.write('feed.xml', declared);
    const r = await ws.cli(['run', 'feed-xml.yaml', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(summaryOf(r)).toMatchObject({ read: 10, valid: 10, rejected: 0, updated: 1, unchanged: 9 });
    expect(ws.emulator.state().catalogs['emu-catalog']?.products.find((p) => p.id === 'P-010')?.title).toBe('Produit été P-010');
    // Back to the seeded catalog for the other cases.
    ws.write('feed.xml', GOOD_XML);
    expect((await ws.cli(['run', 'feed-xml.yaml'])).code).toBe(0);
    expectCatalog(ws, SEED);
    seededState = committedCatalog(ws.statePath);
  });

  it('XML that is not well-formed: line and column, nothing sent or deleted', async () => {
    const r = await runOn('feed.xml', NINE_XML.replace('</g:price>', '</g:prize>'));
    expectOneError(r, /^adsync: job shop failed: \S+feed\.xml line 13, column 34: not well-formed XML: unexpected close tag\.$/);
    expect(r.summary).toMatchObject({ created: 0, updated: 0, deleted: 0, requests: 0 });
  });

  it('an RSS feed cut off in the middle of an item: the feed is incomplete, nothing sent or deleted', async () => {
    const r = await runOn('feed.xml', GOOD_XML.slice(0, GOOD_XML.indexOf('P-007') + 20));
    expectOneError(r, /^adsync: job shop failed: \S+feed\.xml line \d+, column \d+: not well-formed XML: unclosed tag: item \(6 items were read before it; the feed is incomplete\)$/);
    expect(r.summary).toMatchObject({ created: 0, updated: 0, deleted: 0, requests: 0 });
  });

  it('a gzip feed cut short: a clear error, nothing deleted', async () => {
    const gz = gzipSync(Buffer.from(NINE_XML));
    expectOneError(await runOn('feed.xml.gz', gz.subarray(0, Math.floor(gz.length / 2))), /^adsync: job shop failed: \S+feed\.xml\.gz is cut short/);
  });

  it('a DOCTYPE with the billion laughs: refused at once, nothing expanded', async () => {
    const lol = ['<!ENTITY lol "lol">', ...range(1, 9).map((i) => `<!ENTITY lol${i} "${`&lol${i === 1 ? '' : i - 1};`.repeat(10)}">`)].join('');
    const r = await runOn('feed.xml', NINE_XML.replace('<rss', `<!DOCTYPE rss [${lol}]>\n<rss`).replace('Product P-003', '&lol9;'));
    expectOneError(r, /^adsync: job shop failed: \S+feed\.xml line 2, column \d+: the DOCTYPE declares entities, which adsync refuses to read \(they can expand without limit or read local files\) \(remove the <!DOCTYPE \.\.\.> declaration from the feed\)$/);
    expect(Number(r.summary.duration_ms)).toBeLessThan(2000);
    expect(r.stdout + r.stderr).not.toContain('lollollol');
  });

  it('an external entity or DTD naming a local file: the file is never opened, its content never appears', async () => {
    // A FIFO without a writer: opening it for reading would block the run forever.
    const fifo = join(ws.dir, 'never-open.fifo');
    execFileSync('mkfifo', [fifo]);
    const secret = ws.write('secret.txt', 'TOP-SECRET-MARKER\n');
    const variants = [
      `<!DOCTYPE rss [<!ENTITY xxe SYSTEM "file://${secret}">]>`,
      `<!DOCTYPE rss [<!ENTITY xxe SYSTEM "file://${fifo}">]>`,
      `<!DOCTYPE rss [<!ENTITY % p SYSTEM "file://${fifo}"> %p;]>`,
    ];
    for (const doctype of variants) {
      const r = await runOn('feed.xml', NINE_XML.replace('<rss', `${doctype}\n<rss`).replace('Product P-003', '&xxe;'));
      expectOneError(r, /the DOCTYPE declares entities, which adsync refuses to read/);
      expect(r.stdout + r.stderr).not.toContain('TOP-SECRET-MARKER');
    }
    // A DOCTYPE naming an external DTD but declaring no entity is read (old RSS 0.91 feeds do
    // this); the DTD is never fetched, so the FIFO never blocks the run.
    ws.write('feed.xml', GOOD_XML.replace('<rss', `<!DOCTYPE rss SYSTEM "file://${fifo}">\n<rss`));
    const dtd = await ws.cli(['run', 'feed-xml.yaml', '--json']);
    expect(dtd.code, dtd.stderr).toBe(0);
    expect(summaryOf(dtd)).toMatchObject({ read: 10, valid: 10, unchanged: 10 });
    // Nothing anywhere holds the marker: outputs, rejects files, the state database.
    const files = [ws.statePath, `${ws.statePath}-wal`, ...listFiles(join(ws.dir, 'rejects'))].filter((f) => existsSync(f));
    for (const file of files) expect(readFileSync(file).includes('TOP-SECRET-MARKER'), file).toBe(false);
    expect(JSON.stringify(ws.emulator.state())).not.toContain('TOP-SECRET-MARKER');
  });
});

function listFiles(dir: string): string[] {
  let out: string[] = [];
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of entries) {
    const path = join(dir, name);
    out = statSync(path).isDirectory() ? [...out, ...listFiles(path)] : [...out, path];
  }
  return out;
}

describe('broken catalog job files', () => {
  it('wrong types, unknown keys, a missing source: exit 2, every problem named, nothing touched', async () => {
    const cases: [string, string[]][] = [
      [
        'account_id: emu-account\nsource: { path: feed.xml }\ncatalog: { product_catalog_id: [1, 2], max_delete_ratio: half, mode: mirorr }\nconcurrency: many\n',
        ['catalog.product_catalog_id:', 'catalog.max_delete_ratio:', 'catalog.mode: expected one of "mirror", "upsert", got "mirorr"', 'concurrency:'],
      ],
      ['account_id: emu-account\nsource: { path: feed.xml, fromat: xml }\ncatalog: { product_catalog_id: emu-catalog, mdoe: upsert }\n', ['source.fromat: unknown key (did you mean "format"?)', 'catalog.mdoe: unknown key (did you mean "mode"?)']],
      ['account_id: emu-account\ncatalog: { product_catalog_id: emu-catalog }\n', ['source: is required']],
      ['account_id: emu-account\nsource: { path: feed.xml }\ncatalog: { product_catalog_id: emu-catalog }\naudience: { custom_audience_id: x, identifiers: { email: Email } }\n', ['exactly one of an `audience:` block and a `catalog:` block']],
      ['account_id: emu-account\nsource: { path: feed.xml\ncatalog: [\n', ['not valid YAML']],
    ];
    for (const [i, [yaml, messages]] of cases.entries()) {
      ws.write(`bad-${i}.yaml`, yaml);
      const r = await ws.cli(['run', `bad-${i}.yaml`]);
      expect(r.code, r.stderr).toBe(2);
      expectNoStackTrace(r);
      expect(r.stderr).toMatch(new RegExp(`^adsync: \\S*bad-${i}\\.yaml`));
      for (const m of messages) expect(r.stderr).toContain(m);
    }
    // A source that does not exist: the run cannot start (exit 1), and nothing is deleted.
    ws.write('gone.yaml', job('no-such-feed.xml'));
    const gone = await ws.cli(['run', 'gone.yaml']);
    expect(gone.code).toBe(1);
    expect(errorLines(gone.stderr)[0]).toMatch(/no-such-feed\.xml does not exist/);
    expectCatalog(ws, SEED);
    expect(committedCatalog(ws.statePath)).toEqual(seededState);
  });
});
