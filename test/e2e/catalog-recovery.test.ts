/**
 * A catalog run when things go wrong, through the real CLI against the emulator: failed and
 * dropped requests are retried and the catalog is still exact; a product the service refuses
 * becomes a reject with the service's reason; a lost state is rebuilt from the service, item
 * group variants included, before anything is deleted.
 */
import { readFileSync, rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { collect, createWorkspace, jsonLines, type Workspace } from '../helpers/e2e.js';
import {
  catalogIds,
  catalogJob,
  catalogProducts,
  counts,
  feedItem,
  ids,
  productKeys,
  productRequests,
  recordingProxy,
  rssFeed,
  summaryOf,
  type FeedItemValues,
  type RecordingProxy,
} from '../fixtures/catalog/catalog-e2e.js';

const PUT_ROUTE = 'PUT /12/product_catalogs/*/products';
const DELETE_ROUTE = 'DELETE /12/product_catalogs/*/products';

let workspaces: Workspace[] = [];
let proxies: RecordingProxy[] = [];
afterEach(async () => {
  await Promise.all([...proxies.map((p) => p.close()), ...workspaces.map((ws) => ws.close())]);
  workspaces = [];
  proxies = [];
});

async function workspace(job: Parameters<typeof catalogJob>[0] = { source: 'feed.xml' }): Promise<Workspace> {
  const ws = await createWorkspace();
  workspaces.push(ws);
  ws.write('shop.yaml', catalogJob(job));
  return ws;
}

const run = (ws: Workspace, ...args: string[]) => ws.cli(['run', 'shop.yaml', '--json', ...args]);

/** The 1-based line of the n-th <item> of an RSS feed. */
function lineOfItem(feed: string, n: number): number {
  const lines = feed.split('\n');
  let seen = 0;
  for (let i = 0; i < lines.length; i++) if ((lines[i] ?? '').trim() === '<item>' && ++seen === n) return i + 1;
  throw new Error(`no item ${n}`);
}

function deleteStateFile(ws: Workspace): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${ws.statePath}${suffix}`, { force: true });
}

describe('adsync run (catalog): failed requests', () => {
  it('503s and a dropped connection in the middle of the PUTs and DELETEs are retried; the catalog is exact', async () => {
    const ws = await workspace();
    const hundred = ids(100, 'P-');
    ws.write('feed.xml', rssFeed(hundred.map((id) => feedItem(id))));
    ws.fault({ route: PUT_ROUTE, kind: 'status', status: 503, code: 'SERVICE_UNAVAILABLE', times: 2 });
    ws.fault({ route: PUT_ROUTE, kind: 'drop' });
    const first = await run(ws);
    expect(first.code, first.stderr).toBe(0);
    const summary = summaryOf(first);
    expect(counts(summary)).toMatchObject({ status: 'success', created: 100, updated: 0, unchanged: 0 });
    expect(summary.retries).toBe(3);
    expect(ws.emulator.state().requests.by_status).toMatchObject({ '503': 2, dropped: 1 });
    expect(catalogIds(ws)).toEqual(hundred);
    expect(catalogProducts(ws)).toEqual(hundred.map((id) => feedItem(id)));

    // Nothing is sent twice by the next run: every retried product was committed once acknowledged.
    ws.write('feed.xml', rssFeed(hundred.slice(0, 60).map((id) => feedItem(id))));
    ws.write('shop.yaml', catalogJob({ source: 'feed.xml', maxDeleteRatio: 0.5 }));
    ws.fault({ route: DELETE_ROUTE, kind: 'status', status: 503, times: 1 });
    const second = await run(ws);
    expect(second.code, second.stderr).toBe(0);
    expect(counts(summaryOf(second))).toMatchObject({ status: 'success', unchanged: 60, created: 0, updated: 0, deleted: 40 });
    expect(summaryOf(second).retries).toBe(1);
    expect(productRequests(ws, 'PUT')).toBe(4 + 3);
    expect(catalogIds(ws)).toEqual(hundred.slice(0, 60));
  });

  it('a PUT the service applied but answered too late is sent again, answered NO_CHANGE, and its new products count as created', async () => {
    const ws = await workspace();
    const fifty = ids(50);
    ws.write('feed.xml', rssFeed(fifty.map((id) => feedItem(id))));
    // The test settings time requests out after 2 s.
    ws.fault({ route: PUT_ROUTE, kind: 'delay', ms: 2500 });
    const result = await run(ws);
    expect(result.code, result.stderr).toBe(0);
    const summary = summaryOf(result);
    expect(summary.retries).toBe(1);
    // The first attempt, applied but unanswered, created the 25 products the retry finds unchanged.
    expect(counts(summary)).toMatchObject({ status: 'success', created: 50, updated: 0, unchanged: 0 });
    expect(catalogProducts(ws)).toEqual(fifty.map((id) => feedItem(id)));

    // A product the state already lists and the service already holds as sent is NO_CHANGE
    // after a retry too: that is unchanged, not created.
    ws.fault({ route: PUT_ROUTE, kind: 'delay', ms: 2500 });
    const full = await run(ws, '--full');
    expect(full.code, full.stderr).toBe(0);
    expect(counts(summaryOf(full))).toMatchObject({ status: 'success', created: 0, updated: 0, unchanged: 50 });
  });

  it('a request refused as a whole fails the run; the next run sends its products', async () => {
    const ws = await workspace();
    const fifty = ids(50);
    ws.write('feed.xml', rssFeed(fifty.map((id) => feedItem(id))));
    ws.write('shop.yaml', ['name: shop', 'account_id: emu-account', 'source: { path: feed.xml }', 'catalog: { product_catalog_id: emu-catalog }', 'concurrency: 1', ''].join('\n'));
    ws.fault({ route: PUT_ROUTE, kind: 'status', status: 400, code: 'INVALID_PARAMETER', times: 1 });
    const first = await run(ws);
    expect(first.code).toBe(1);
    expect(summaryOf(first)).toMatchObject({ status: 'failed', created: 25, error: '25 products could not be delivered (PUT /12/product_catalogs/emu-catalog/products answered HTTP 400: INVALID_PARAMETER injected fault: HTTP 400); the next run sends them again' });
    expect(catalogIds(ws)).toEqual(fifty.slice(25));

    const second = await run(ws);
    expect(second.code, second.stderr).toBe(0);
    expect(counts(summaryOf(second))).toMatchObject({ status: 'success', created: 25, unchanged: 25 });
    expect(catalogIds(ws)).toEqual(fifty);
  });
});

describe('adsync run (catalog): stopped by a signal', () => {
  it('SIGTERM during the PUTs finishes and commits the request in flight, sends nothing more, and reports interrupted', async () => {
    const ws = await workspace();
    ws.write('shop.yaml', ['name: shop', 'account_id: emu-account', 'source: { path: feed.xml }', 'catalog: { product_catalog_id: emu-catalog }', 'concurrency: 1', ''].join('\n'));
    const fifty = ids(50);
    ws.write('feed.xml', rssFeed(fifty.map((id) => feedItem(id))));
    const proxy = await recordingProxy(ws.emulator.url);
    proxies.push(proxy);
    ws.fault({ route: PUT_ROUTE, kind: 'delay', ms: 1000 });
    const child = ws.spawn(['run', 'shop.yaml', '--json'], { ADSYNC_ADS_URL: proxy.url });
    const done = collect(child);
    while (!proxy.calls.some((c) => c.method === 'PUT')) await new Promise((resolve) => setTimeout(resolve, 20));
    child.kill('SIGTERM');
    const result = await done;
    expect(result.code).toBe(1);
    expect(summaryOf(result)).toMatchObject({
      status: 'interrupted',
      created: 25,
      deleted: 0,
      error: 'stopped by a signal after committing the work in flight: 25 of the 50 products to send acknowledged; the next run sends the rest',
    });
    expect(proxy.putIds()).toEqual([fifty.slice(0, 25)]);
    expect(catalogIds(ws)).toEqual(fifty.slice(0, 25));

    const next = await ws.cli(['run', 'shop.yaml', '--json'], { ADSYNC_ADS_URL: proxy.url });
    expect(next.code, next.stderr).toBe(0);
    expect(counts(summaryOf(next))).toMatchObject({ status: 'success', created: 25, unchanged: 25 });
    expect(proxy.putIds()).toEqual([fifty.slice(0, 25), fifty.slice(25)]);
  });
});

/** Deletes a product in the service, as someone in the X Ads interface would. */
function removeByHand(ws: Workspace, id: string): void {
  const catalog = ws.emulator.store.catalogs.get('emu-catalog');
  const product = catalog?.getById(id);
  if (product) catalog?.remove(product);
}

/**
 * A run of the ten-product feed with a new price for `changed`, whose PUT the service applies
 * but answers after the timeout on every attempt: the run fails and leaves the upload marked.
 * The job file is then the plain one again.
 */
async function runLosingEveryAnswer(ws: Workspace, changed: string): Promise<void> {
  ws.write(
    'shop.yaml',
    ['name: shop', 'account_id: emu-account', 'source: { path: feed.xml }', 'catalog: { product_catalog_id: emu-catalog }', 'request_timeout_ms: 600', 'retry: { retries: 1 }', ''].join('\n'),
  );
  ws.write('feed.xml', rssFeed(ids(10).map((id) => (id === changed ? feedItem(id, { price: '12.00 USD' }) : feedItem(id)))));
  ws.fault({ route: PUT_ROUTE, kind: 'delay', ms: 1000, times: 2 });
  expect((await run(ws)).code).toBe(1);
  ws.write('shop.yaml', catalogJob({ source: 'feed.xml' }));
}

describe('adsync run (catalog): changes made outside adsync', () => {
  it('a product deleted in the service and then dropped from the feed is forgotten, not a failure forever', async () => {
    const ws = await workspace();
    ws.write('feed.xml', rssFeed(ids(10).map((id) => feedItem(id))));
    expect((await run(ws)).code).toBe(0);
    // Someone deletes P-04 in the X Ads interface (product deletion is permanent).
    const catalog = ws.emulator.store.catalogs.get('emu-catalog');
    const p04 = catalog?.getById('P-04');
    if (p04) catalog?.remove(p04);

    ws.write('feed.xml', rssFeed(ids(10).filter((id) => id !== 'P-04' && id !== 'P-05').map((id) => feedItem(id))));
    const result = await run(ws);
    expect(result.code, result.stderr).toBe(0);
    expect(counts(summaryOf(result))).toMatchObject({ status: 'success', unchanged: 8, deleted: 1 });
    expect(summaryOf(result).notes).toEqual(['1 product was already gone from the catalog (deleted outside adsync); the state no longer lists them']);
    expect(catalogIds(ws)).toEqual(ids(10).filter((id) => id !== 'P-04' && id !== 'P-05'));

    const again = await run(ws);
    expect(again.code, again.stderr).toBe(0);
    expect(summaryOf(again)).toMatchObject({ deleted: 0, requests: 0 });
    expect(summaryOf(again).notes).toBeUndefined();
  });

  it('a product deleted by hand and created again by an upload whose answers were lost: the next run learns its new product_key and deletes it', async () => {
    const ws = await workspace();
    ws.write('feed.xml', rssFeed(ids(10).map((id) => feedItem(id))));
    expect((await run(ws)).code).toBe(0);
    const oldKey = productKeys(ws).get('P-04');
    removeByHand(ws, 'P-04');
    // A new price for P-04: the service creates it again (a new product_key), but the state
    // still has the old key.
    await runLosingEveryAnswer(ws, 'P-04');
    const newKey = productKeys(ws).get('P-04');
    expect(newKey).toBeDefined();
    expect(newKey).not.toBe(oldKey);

    // The feed drops P-04: the run compares the state with the service and deletes it by its new key.
    ws.write('feed.xml', rssFeed(ids(10).filter((id) => id !== 'P-04').map((id) => feedItem(id))));
    const proxy = await recordingProxy(ws.emulator.url);
    proxies.push(proxy);
    const next = await ws.cli(['run', 'shop.yaml', '--json'], { ADSYNC_ADS_URL: proxy.url });
    expect(next.code, next.stderr).toBe(0);
    expect(counts(summaryOf(next))).toMatchObject({ status: 'success', deleted: 1 });
    expect(proxy.deleteKeys()).toEqual([[newKey]]);
    expect(catalogIds(ws)).toEqual(ids(10).filter((id) => id !== 'P-04'));
  });

  it('after an upload whose answers were lost, a product deleted by hand is created again although its item did not change', async () => {
    const ws = await workspace();
    const feed = rssFeed(ids(10).map((id) => feedItem(id)));
    ws.write('feed.xml', feed);
    expect((await run(ws)).code).toBe(0);
    removeByHand(ws, 'P-04');
    await runLosingEveryAnswer(ws, 'P-01');

    // The first feed again, byte for byte: the run compares the state with the service, which
    // no longer holds P-04, and must then send P-04 (its item's bytes are those it sent once).
    ws.write('feed.xml', feed);
    const next = await run(ws);
    expect(next.code, next.stderr).toBe(0);
    expect(counts(summaryOf(next))).toMatchObject({ status: 'success', read: 10, created: 1, updated: 1, unchanged: 8, deleted: 0 });
    expect(catalogProducts(ws)).toEqual(ids(10).map((id) => feedItem(id)));
  });

  it('--full sends every product again, which restores one deleted in the service while still in the feed', async () => {
    const ws = await workspace();
    ws.write('feed.xml', rssFeed(ids(10).map((id) => feedItem(id))));
    expect((await run(ws)).code).toBe(0);
    const catalog = ws.emulator.store.catalogs.get('emu-catalog');
    const p04 = catalog?.getById('P-04');
    if (p04) catalog?.remove(p04);

    expect(summaryOf(await run(ws))).toMatchObject({ unchanged: 10, requests: 0 });
    const full = await run(ws, '--full');
    expect(full.code, full.stderr).toBe(0);
    expect(counts(summaryOf(full))).toMatchObject({ status: 'success', created: 1, unchanged: 9, updated: 0 });
    expect(catalogIds(ws)).toEqual(ids(10));
  });
});

describe('adsync run (catalog): per-product results of the service', () => {
  it('an ERROR status becomes a reject with the service reason; warnings are counted; the product is tried again next run', async () => {
    const ws = await workspace();
    const proxy = await recordingProxy(ws.emulator.url);
    proxies.push(proxy);
    // A "<" followed by a quote that never closes is text to adsync (not a tag it could remove),
    // while the service takes '<M "and>' for a tag; an .svg image is accepted with a warning.
    const items: FeedItemValues[] = [
      feedItem('P-01'),
      feedItem('P-02', { image_link: 'https://img.example.com/p-02.svg' }),
      feedItem('P-03'),
      feedItem('P-04'),
      feedItem('P-05', { description: 'Fits sizes <M "and> up' }),
    ];
    const feed = rssFeed(items);
    ws.write('feed.xml', feed);
    const env = { ADSYNC_ADS_URL: proxy.url };

    const first = await ws.cli(['run', 'shop.yaml', '--json'], env);
    expect(first.code, first.stderr).toBe(0);
    const summary = summaryOf(first);
    expect(counts(summary)).toEqual({
      status: 'success',
      read: 5,
      valid: 5,
      rejected: 1,
      duplicates: 0,
      unchanged: 0,
      created: 4,
      updated: 0,
      deleted: 0,
      exit_code: 0,
    });
    expect(summary.warnings).toBe(1);
    expect(summary.notes).toEqual(["the service refused 1 product; see the rejects file for the service's reasons"]);
    expect(proxy.putIds()).toEqual([['P-01', 'P-02', 'P-03', 'P-04', 'P-05']]);
    expect(readFileSync(String(summary.rejects_file), 'utf8')).toBe(
      `row,line,id,field,reason\n5,${lineOfItem(feed, 5)},P-05,description,"refused by the service: INVALID_PARAMETER description must be plain text, without HTML tags"\n`,
    );
    expect(catalogIds(ws)).toEqual(['P-01', 'P-02', 'P-03', 'P-04']);

    const second = await ws.cli(['run', 'shop.yaml', '--json'], env);
    expect(second.code, second.stderr).toBe(0);
    expect(counts(summaryOf(second))).toMatchObject({ unchanged: 4, created: 0, rejected: 1 });
    expect(proxy.putIds()).toEqual([['P-01', 'P-02', 'P-03', 'P-04', 'P-05'], ['P-05']]);
  });

  it('refusals count toward max_reject_ratio', async () => {
    const ws = await workspace();
    ws.write('feed.xml', rssFeed([feedItem('P-01'), feedItem('P-02', { description: 'Fits <M "and> up' }), feedItem('P-03', { description: 'Fits <L "and> up' })]));
    const result = await run(ws);
    expect(result.code).toBe(1);
    expect(summaryOf(result)).toMatchObject({ status: 'failed', rejected: 2, created: 1 });
    expect(String(summaryOf(result).error)).toMatch(/^2 of 3 rows rejected \(66\.7%, more than max_reject_ratio 0\.2\)/);
  });
});

describe('adsync run (catalog): lost state', () => {
  const group = (id: string, size: string): FeedItemValues => feedItem(id, { item_group_id: 'G', size, title: 'Grouped tee' });

  it('is rebuilt from the service before deleting, item-group variants included; later runs delete exactly what left the feed', async () => {
    const ws = await workspace();
    // 110 plain products (two pages of GET products) and a group of three variants, of which
    // the service lists only G-1 without item_group_key.
    const plain = ids(110, 'P-');
    const everything = [...plain.map((id) => feedItem(id)), group('G-1', 'S'), group('G-2', 'M'), group('G-3', 'L')];
    ws.write('feed.xml', rssFeed(everything));
    const first = await run(ws);
    expect(first.code, first.stderr).toBe(0);
    expect(counts(summaryOf(first))).toMatchObject({ created: 113 });
    const keys = productKeys(ws);

    deleteStateFile(ws);
    const getsBefore = productRequests(ws, 'GET');
    ws.write('feed.xml', rssFeed(everything.filter((i) => i.id !== 'G-3' && i.id !== 'P-002')));
    const proxy = await recordingProxy(ws.emulator.url);
    proxies.push(proxy);
    const rebuilt = await ws.cli(['run', 'shop.yaml', '--json'], { ADSYNC_ADS_URL: proxy.url });
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    const summary = summaryOf(rebuilt);
    expect(summary.notes).toEqual(['the saved state of catalog emu-catalog was empty: rebuilt it from the 113 products the service holds']);
    // Content unknown after the rebuild: what is in the feed is sent again and is NO_CHANGE.
    expect(counts(summary)).toMatchObject({ status: 'success', read: 111, unchanged: 111, created: 0, updated: 0, deleted: 2 });
    expect(proxy.deleteKeys()).toEqual([[keys.get('G-3'), keys.get('P-002')]]); // in id order
    // Two pages of the catalog, then the group's members by item_group_key.
    expect(productRequests(ws, 'GET') - getsBefore).toBe(3);
    expect(proxy.calls.filter((c) => c.method === 'GET').map((c) => new URLSearchParams(c.query).get('item_group_key'))).toEqual([null, null, 'emu-catalog-group-1']);
    expect(catalogIds(ws)).toEqual([...plain.filter((id) => id !== 'P-002'), 'G-1', 'G-2'].sort());

    // The state is whole again: an unchanged feed sends nothing...
    const again = await run(ws);
    expect(counts(summaryOf(again))).toMatchObject({ unchanged: 111, created: 0, updated: 0, deleted: 0 });
    expect(summaryOf(again).requests).toBe(0);

    // ...and removing the group's listed member deletes exactly it.
    ws.write('feed.xml', rssFeed(everything.filter((i) => i.id !== 'G-3' && i.id !== 'P-002' && i.id !== 'G-1')));
    const third = await ws.cli(['run', 'shop.yaml', '--json'], { ADSYNC_ADS_URL: proxy.url });
    expect(third.code, third.stderr).toBe(0);
    expect(counts(summaryOf(third))).toMatchObject({ unchanged: 110, deleted: 1 });
    expect(proxy.deleteKeys()[1]).toEqual([keys.get('G-1')]);
    expect(catalogIds(ws)).toEqual([...plain.filter((id) => id !== 'P-002'), 'G-2'].sort());
  });

  it('says when it starts listing the service, and shows the phase `listing` with the products listed so far', { timeout: 30_000 }, async () => {
    const ws = await workspace();
    const everything = [...ids(110, 'P-').map((id) => feedItem(id)), group('G-1', 'S'), group('G-2', 'M'), group('G-3', 'L')];
    ws.write('feed.xml', rssFeed(everything));
    expect((await run(ws)).code).toBe(0);
    deleteStateFile(ws);
    ws.write('adsync.yaml', `${ws.read('adsync.yaml')}progress_interval_seconds: 1\n`);
    // Each of the three GETs (two pages of 100 and 13, then the group's members) answers after
    // 1.6 s: each count of products listed so far is there for at least one progress tick.
    ws.fault({ route: 'GET /12/product_catalogs/*/products', kind: 'delay', ms: 1600, times: 3 });
    const result = await ws.cli(['run', 'shop.yaml', '--json'], { ADSYNC_LOG_LEVEL: 'info' });
    expect(result.code, result.stderr).toBe(0);
    const logs = jsonLines(result.stderr);
    const messages = logs.map((l) => String(l.msg));
    const started = messages.indexOf(
      'listing the products the service holds (a GET per 100 products and one per item group): the saved state of catalog emu-catalog is empty: it is rebuilt from them',
    );
    expect(started, result.stderr).toBeGreaterThan(messages.indexOf('feed read'));
    expect(logs[started]).toMatchObject({ level: 30, catalog: 'emu-catalog' });
    const plan = messages.indexOf('plan');
    const progress = logs.map((l, at): Record<string, unknown> & { at: number } => ({ ...l, at })).filter((l) => l.msg === 'progress');
    const listing = progress.filter((l) => l.phase === 'listing');
    // 0 while the first page is awaited, 100 after it, 111 after the second (the group's listed member with it).
    expect([...new Set(listing.map((l) => l.listed))], result.stderr).toEqual([0, 100, 111]);
    // All between the line that says the listing starts and the plan made once it is done.
    expect(listing.every((l) => l.at > started && l.at < plan), result.stderr).toBe(true);
    // `listed` is a field of the listing phase only.
    expect(progress.filter((l) => l.phase !== 'listing' && 'listed' in l)).toEqual([]);
    expect(summaryOf(result).notes).toEqual(['the saved state of catalog emu-catalog was empty: rebuilt it from the 113 products the service holds']);
  });

  it('a rebuild that would delete too much is refused like any other run', async () => {
    const ws = await workspace();
    ws.write('feed.xml', rssFeed(ids(10).map((id) => feedItem(id))));
    expect((await run(ws)).code).toBe(0);
    deleteStateFile(ws);
    ws.write('feed.xml', rssFeed(ids(3).map((id) => feedItem(id))));
    const result = await run(ws);
    expect(result.code).toBe(1);
    expect(String(summaryOf(result).error)).toMatch(/^the feed would delete 7 of 10 products/);
    expect(catalogIds(ws)).toEqual(ids(10));
  });
});
