/**
 * A product feed becomes exactly the expected catalog, through the real CLI against the
 * emulator: every trap of a Google Merchant feed, every invalid item in the rejects file with
 * every reason, and the same catalog from RSS, Atom, CSV, TSV, gzip and http://.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { createWorkspace, type Workspace } from '../helpers/e2e.js';
import { catalogJob, catalogProducts, counts, feedItem, fixture, fixtureBytes, productRequests, rssFeed, summaryOf } from '../fixtures/catalog/catalog-e2e.js';

const EXPECTED = JSON.parse(fixture('merchant.expected.json')) as Record<string, unknown>[];

let open: Workspace[] = [];
let servers: Server[] = [];
async function workspace(): Promise<Workspace> {
  const ws = await createWorkspace();
  open.push(ws);
  return ws;
}
afterEach(async () => {
  await Promise.all(open.map((ws) => ws.close()));
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  open = [];
  servers = [];
});

/** Serves `body` at every path on 127.0.0.1; returns the base URL. */
async function serve(body: Buffer, headers: Record<string, string>): Promise<string> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-length': String(body.length), ...headers });
    res.end(body);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('adsync run: a Merchant feed with every trap', () => {
  it('gives exactly the expected catalog, and every invalid item is rejected with every reason', async () => {
    const ws = await workspace();
    ws.write('feeds/google.xml', fixture('merchant-traps.xml'));
    ws.write('shop.yaml', catalogJob({ source: 'feeds/google.xml', maxRejectRatio: 0.6 }));

    const result = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(result.code, result.stderr).toBe(0);
    const summary = summaryOf(result);
    // 21 items: 10 valid (8 products once the 3 earlier occurrences of SKU-5, SKU-6 and
    // SKU-7 are replaced), 11 rejected (SKU-6's first occurrence and SKU-7's last included).
    expect(counts(summary)).toEqual({
      status: 'success',
      read: 21,
      valid: 10,
      rejected: 11,
      duplicates: 3,
      unchanged: 0,
      created: 8,
      updated: 0,
      deleted: 0,
      exit_code: 0,
    });
    expect(catalogProducts(ws)).toEqual(EXPECTED);
    // One request of 8 products; no id twice in it; nothing invalid ever reached the service.
    expect(productRequests(ws, 'PUT')).toBe(1);
    expect(ws.emulator.state().requests.by_status).toEqual({ '200': 2 });

    const rejectsFile = String(summary.rejects_file);
    expect(rejectsFile).toMatch(/rejects\/shop\/[^/]+\.csv$/);
    expect(readFileSync(rejectsFile, 'utf8')).toBe(fixture('merchant-traps.rejects.csv'));
  });

  it('fails when more items are rejected than max_reject_ratio allows, after sending the valid ones', async () => {
    const ws = await workspace();
    ws.write('feeds/google.xml', fixture('merchant-traps.xml'));
    ws.write('shop.yaml', catalogJob({ source: 'feeds/google.xml', maxRejectRatio: 0.4 }));

    const result = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(result.code).toBe(1);
    const summary = summaryOf(result);
    expect(counts(summary)).toMatchObject({ status: 'failed', rejected: 11, created: 8 });
    expect(summary.error).toMatch(/^11 of 21 rows rejected \(52\.4%, more than max_reject_ratio 0\.4\); see .*\.csv$/);
    expect(catalogProducts(ws)).toEqual(EXPECTED);
  });
});

describe('adsync run: every feed format gives the same catalog', () => {
  const cases: { name: string; file: string; content: () => Buffer; read: number; duplicates: number }[] = [
    { name: 'CSV (quoted cells, repeated columns, header spellings)', file: 'feeds/products.csv', content: () => fixtureBytes('merchant.csv'), read: 9, duplicates: 1 },
    { name: 'TSV (unquoted Merchant export)', file: 'feeds/products.tsv', content: () => fixtureBytes('merchant.tsv'), read: 9, duplicates: 1 },
    { name: 'Atom', file: 'feeds/products.atom', content: () => fixtureBytes('merchant-atom.xml'), read: 9, duplicates: 1 },
    { name: 'gzip of the RSS feed', file: 'feeds/google.xml.gz', content: () => gzipSync(fixtureBytes('merchant-traps.xml')), read: 21, duplicates: 3 },
    { name: 'gzip of the CSV', file: 'feeds/products.csv.gz', content: () => gzipSync(fixtureBytes('merchant.csv')), read: 9, duplicates: 1 },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const ws = await workspace();
      ws.write(c.file, c.content());
      ws.write('shop.yaml', catalogJob({ source: c.file, maxRejectRatio: 0.6 }));
      const result = await ws.cli(['run', 'shop.yaml', '--json']);
      expect(result.code, result.stderr).toBe(0);
      expect(counts(summaryOf(result))).toMatchObject({ status: 'success', read: c.read, duplicates: c.duplicates, created: 8, updated: 0, deleted: 0 });
      expect(catalogProducts(ws)).toEqual(EXPECTED);
    });
  }

  it('an http:// feed (RSS, sent gzip-encoded) and an http:// CSV named only by its Content-Type', async () => {
    const rss = await serve(gzipSync(fixtureBytes('merchant-traps.xml')), { 'content-type': 'application/rss+xml', 'content-encoding': 'gzip' });
    const ws = await workspace();
    ws.write('shop.yaml', catalogJob({ source: `${rss}/feeds/google.xml`, maxRejectRatio: 0.6 }));
    const result = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(result.code, result.stderr).toBe(0);
    const summary = summaryOf(result);
    expect(counts(summary)).toMatchObject({ status: 'success', read: 21, rejected: 11, duplicates: 3, created: 8 });
    expect(catalogProducts(ws)).toEqual(EXPECTED);
    expect(readFileSync(String(summary.rejects_file), 'utf8')).toBe(fixture('merchant-traps.rejects.csv'));

    const csv = await serve(fixtureBytes('merchant.csv'), { 'content-type': 'text/csv; charset=utf-8' });
    const other = await workspace();
    other.write('shop.yaml', catalogJob({ source: `${csv}/export?shop=1` }));
    const second = await other.cli(['run', 'shop.yaml', '--json']);
    expect(second.code, second.stderr).toBe(0);
    expect(counts(summaryOf(second))).toMatchObject({ status: 'success', read: 9, duplicates: 1, created: 8 });
    expect(catalogProducts(other)).toEqual(EXPECTED);
  });
});

describe('adsync run and backfill: catalog.fields with a CSV feed', () => {
  const csv = [
    'SKU,Product Name,description,availability,condition,price,link,image_link,brand',
    'SKU-1001,Trail Tent,Two-person tent.,in stock,new,129.00 USD,https://shop.example.com/p/1001,https://img.example.com/1001.jpg,Acme',
    '',
  ].join('\n');
  const job = catalogJob({ source: 'feeds/products.csv' }).replace('  product_catalog_id: emu-catalog\n', '  product_catalog_id: emu-catalog\n  fields:\n    id: SKU\n    title: Product Name\n');

  it('reads a mapped attribute from the column headed as the mapping names it (README: title: Product Name)', async () => {
    const ws = await workspace();
    ws.write('feeds/products.csv', csv);
    ws.write('shop.yaml', job);
    const result = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(counts(summaryOf(result))).toMatchObject({ status: 'success', read: 1, valid: 1, rejected: 0, created: 1 });
    expect(catalogProducts(ws).map((p) => [p.id, p.title])).toEqual([['SKU-1001', 'Trail Tent']]);

    const other = await workspace();
    other.write('feeds/products.csv', csv);
    other.write('shop.yaml', job);
    const backfill = await other.cli(['backfill', 'shop.yaml', '--source', `${other.dir}/feeds/products.csv`, '--json']);
    expect(backfill.code, backfill.stderr).toBe(0);
    expect(catalogProducts(other).map((p) => [p.id, p.title])).toEqual([['SKU-1001', 'Trail Tent']]);
  });
});

describe('adsync run: catalog.fields naming a Google element as the feed writes it', () => {
  it('id: g:sku reads <g:sku> (like id: sku)', async () => {
    const ws = await workspace();
    const { id: _id, ...rest } = feedItem('SKU-1');
    ws.write('feed.xml', rssFeed([{ sku: 'SKU-1', ...rest }]));
    ws.write('shop.yaml', catalogJob({ source: 'feed.xml' }).replace('  product_catalog_id: emu-catalog\n', '  product_catalog_id: emu-catalog\n  fields:\n    id: g:sku\n'));
    const result = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(counts(summaryOf(result))).toMatchObject({ status: 'success', read: 1, valid: 1, created: 1 });
    expect(catalogProducts(ws).map((p) => p.id)).toEqual(['SKU-1']);
  });
});

describe('adsync run: a CSV feed saved from a spreadsheet, with empty rows (",,,,") at its end', () => {
  it('skips them: the mirror run deletes the product that left the feed and succeeds', async () => {
    const ws = await workspace();
    const header = 'id,title,description,availability,condition,price,link,image_link,brand';
    const row = (n: number): string => `P-${n},Product ${n},About ${n}.,in stock,new,10.00 USD,https://shop.example.com/p/${n},https://img.example.com/${n}.jpg,Acme`;
    ws.write('feeds/products.csv', [header, row(1), row(2), row(3), ''].join('\r\n'));
    ws.write('shop.yaml', catalogJob({ source: 'feeds/products.csv' }));
    expect((await ws.cli(['run', 'shop.yaml', '--json'])).code).toBe(0);

    ws.write('feeds/products.csv', [header, row(1), row(2), ',,,,,,,,', ',,,,,,,,', ''].join('\r\n'));
    const result = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(counts(summaryOf(result))).toMatchObject({ status: 'success', read: 2, valid: 2, rejected: 0, unchanged: 2, deleted: 1 });
    expect(catalogProducts(ws).map((p) => p.id)).toEqual(['P-1', 'P-2']);
  });
});
