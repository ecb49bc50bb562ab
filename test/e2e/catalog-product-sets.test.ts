/**
 * Product sets declared in a catalog job (MANUAL by product ids, FILTERED by filters) are
 * created when missing, once; and the demo catalog job `npm start` runs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { AdsApiClient } from '../../src/api/client.js';
import { Credentials } from '../../src/api/credentials.js';
import { getProductSet } from '../../src/api/resources/catalogs.js';
import { createWorkspace, type Workspace } from '../helpers/e2e.js';
import { CATALOG, catalogJob, counts, feedItem, requestCounts, rssFeed, summaryOf } from '../fixtures/catalog/catalog-e2e.js';

const SETS_ROUTE = 'POST /12/product_catalogs/:product_catalog_id/product_sets';
const SET_ROUTE = 'GET /12/product_catalogs/:product_catalog_id/product_sets/:product_set_id';

let workspaces: Workspace[] = [];
afterEach(async () => {
  await Promise.all(workspaces.map((ws) => ws.close()));
  workspaces = [];
});

const PRODUCT_SETS = `    - name: Featured
      description: Front page
      product_ids: [P-01, P-03, NOT-IN-FEED]
    - name: Cheap
      filters:
        - { attribute: price, operator: LESS_THAN, value: 6 }
    - name: Camping
      filters:
        - { attribute: product_type, operator: CONTAINS, value: camping }
        - { attribute: custom_label_0, operator: EQUAL_TO, value: summer }
`;

async function workspace(): Promise<Workspace> {
  const ws = await createWorkspace();
  workspaces.push(ws);
  ws.write('shop.yaml', catalogJob({ source: 'feed.xml', productSets: PRODUCT_SETS }));
  ws.write(
    'feed.xml',
    rssFeed([
      feedItem('P-01'),
      feedItem('P-02', { price: '5.00 USD' }),
      feedItem('P-03'),
      feedItem('P-04', { product_type: 'Outdoor > Camping > Tents', custom_label_0: 'summer' }),
      feedItem('P-05', { product_type: 'Outdoor > Camping' }),
    ]),
  );
  return ws;
}

/** The catalog's product sets, by name, as GET product_sets/:id answers (product_ids worked out by the service). */
async function productSets(ws: Workspace): Promise<Record<string, unknown>> {
  const c = ws.emulator.credentials;
  const client = new AdsApiClient({
    credentials: new Credentials('test', c.consumerKey, c.consumerSecret, c.accessToken, c.accessTokenSecret),
    adsUrl: ws.emulator.url,
    retry: { retries: 0 },
  });
  const out: Record<string, unknown> = {};
  for (const { id } of ws.emulator.store.productSets.values()) {
    const set = await getProductSet(client, CATALOG, id);
    out[set.name] = { type: set.type, description: set.description, filters: set.filters, product_ids: set.product_ids };
  }
  return out;
}

describe('adsync run (catalog): product sets', () => {
  it('creates MANUAL and FILTERED sets when missing, once; a set gone from the service is created again', async () => {
    const ws = await workspace();

    const dry = await ws.cli(['run', 'shop.yaml', '--json', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(summaryOf(dry).notes).toEqual([
      'product set "Featured" (MANUAL) would be created',
      'product set "Cheap" (FILTERED) would be created',
      'product set "Camping" (FILTERED) would be created',
    ]);
    expect(requestCounts(ws)[SETS_ROUTE]).toBeUndefined();

    const first = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(first.code, first.stderr).toBe(0);
    expect(counts(summaryOf(first))).toMatchObject({ status: 'success', created: 5 });
    expect(summaryOf(first).notes).toEqual(['product set "Featured": 1 of its product ids is not in the catalog (NOT-IN-FEED)']);
    expect(await productSets(ws)).toEqual({
      Featured: { type: 'MANUAL', description: 'Front page', filters: [], product_ids: ['P-01', 'P-03'] },
      Cheap: { type: 'FILTERED', description: null, filters: [{ attribute: 'price', operator: 'LESS_THAN', value: '6' }], product_ids: ['P-02'] },
      Camping: {
        type: 'FILTERED',
        description: null,
        filters: [
          { attribute: 'product_type', operator: 'CONTAINS', value: 'camping' },
          { attribute: 'custom_label_0', operator: 'EQUAL_TO', value: 'summer' },
        ],
        product_ids: ['P-04'],
      },
    });
    expect(requestCounts(ws)[SETS_ROUTE]).toBe(3);

    const getsBefore = requestCounts(ws)[SET_ROUTE] ?? 0;
    const second = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(second.code, second.stderr).toBe(0);
    expect(summaryOf(second)).toMatchObject({ unchanged: 5, requests: 3 });
    expect(summaryOf(second).notes).toBeUndefined();
    expect(requestCounts(ws)[SETS_ROUTE]).toBe(3);
    expect((requestCounts(ws)[SET_ROUTE] ?? 0) - getsBefore).toBe(3);

    // Someone deletes "Cheap" in the service: the next run creates it again, and only it.
    const cheap = [...ws.emulator.store.productSets.values()].find((s) => s.name === 'Cheap');
    ws.emulator.store.productSets.delete(cheap?.id ?? '');
    const third = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(third.code, third.stderr).toBe(0);
    expect(requestCounts(ws)[SETS_ROUTE]).toBe(4);
    expect(Object.keys(await productSets(ws)).sort()).toEqual(['Camping', 'Cheap', 'Featured']);
  });

  it('a MANUAL set none of whose products is in the catalog is not created, and the run fails saying so', async () => {
    const ws = await workspace();
    ws.write('shop.yaml', catalogJob({ source: 'feed.xml', productSets: '    - name: Ghosts\n      product_ids: [X-1, X-2]\n' }));
    const result = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(result.code).toBe(1);
    expect(summaryOf(result)).toMatchObject({ status: 'failed', created: 5, error: 'product set "Ghosts" was not created: none of its products are in the catalog' });
    expect(ws.emulator.store.productSets.size).toBe(0);
  });

  it('says so in a note when a set in the service no longer is what the job defines (products re-created, definition edited)', async () => {
    const ws = await workspace();
    expect((await ws.cli(['run', 'shop.yaml', '--json'])).code).toBe(0);
    const ids = Object.fromEntries([...ws.emulator.store.productSets.values()].map((s) => [s.name, s.id]));
    const advice = 'product sets cannot be changed: delete it in Ads Manager and the next run creates it as the job defines it';

    // P-01 leaves the feed (deleted), then comes back: the service gives it a new product_key,
    // which the MANUAL set "Featured" does not hold.
    const items = [feedItem('P-01'), feedItem('P-02', { price: '5.00 USD' }), feedItem('P-03'), feedItem('P-04', { product_type: 'Outdoor > Camping > Tents', custom_label_0: 'summer' }), feedItem('P-05', { product_type: 'Outdoor > Camping' })];
    ws.write('feed.xml', rssFeed(items.slice(1)));
    const gone = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(counts(summaryOf(gone))).toMatchObject({ status: 'success', deleted: 1 });
    ws.write('feed.xml', rssFeed(items));
    const back = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(back.code, back.stderr).toBe(0);
    expect(summaryOf(back).notes).toEqual([`product set "Featured" (id ${ids.Featured}) lacks 1 of the job's products that are in the catalog (P-01); ${advice}`]);

    // The job's definitions are edited: the sets in the service stay as they were, and the run says so.
    ws.write('shop.yaml', catalogJob({ source: 'feed.xml', productSets: PRODUCT_SETS.replace('[P-01, P-03, NOT-IN-FEED]', '[P-01, P-02]').replace('value: 6 }', 'value: 8 }') }));
    const edited = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(edited.code, edited.stderr).toBe(0);
    expect(summaryOf(edited).notes).toEqual([
      `product set "Featured" (id ${ids.Featured}) lacks 2 of the job's products that are in the catalog (P-01, P-02) and holds 1 product the job does not list (P-03); ${advice}`,
      `product set "Cheap" (id ${ids.Cheap}) has other filters in the service than in the job; ${advice}`,
    ]);
    expect(ws.emulator.store.productSets.size).toBe(3);
  });

  it('a set the service refuses fails the run naming it, and the sets after it are still created', async () => {
    const ws = await workspace();
    ws.write('shop.yaml', catalogJob({ source: 'feed.xml' }));
    expect((await ws.cli(['run', 'shop.yaml', '--json'])).code).toBe(0);
    // P-01 and P-03 are deleted in Ads Manager while still in the feed: the state keeps their old keys.
    const catalog = ws.emulator.store.catalogs.get(CATALOG);
    for (const id of ['P-01', 'P-03']) {
      const product = catalog?.getById(id);
      if (product !== undefined) catalog?.remove(product);
    }
    ws.write('shop.yaml', catalogJob({ source: 'feed.xml', productSets: PRODUCT_SETS }));
    const result = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(result.code).toBe(1);
    const summary = summaryOf(result);
    expect(String(summary.error)).toMatch(
      /^product set "Featured" was not created: POST \/12\/product_catalogs\/emu-catalog\/product_sets answered HTTP 400: INVALID_PARAMETER product key \S+ was not found in catalog emu-catalog \(parameter product_keys\) \(products deleted in Ads Manager while still in the feed: run once with --full to send them again\)$/,
    );
    expect(Object.keys(await productSets(ws)).sort()).toEqual(['Camping', 'Cheap']);

    const full = await ws.cli(['run', 'shop.yaml', '--json', '--full']);
    expect(full.code, full.stderr).toBe(0);
    expect(Object.keys(await productSets(ws)).sort()).toEqual(['Camping', 'Cheap', 'Featured']);
  });
});

describe('adsync demo (npm start): the catalog job', () => {
  it('mirrors the bundled feed, rejects its two invalid items, creates its product sets, then sends nothing', async () => {
    const ws = await createWorkspace();
    workspaces.push(ws);
    const result = await ws.cli(['demo', '--json']);
    expect(result.code, result.stderr).toBe(0);
    const catalogRuns = result.stdout
      .split('\n')
      .filter((l) => l.startsWith('{"job":"demo-catalog"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(catalogRuns.map(counts)).toEqual([
      { status: 'success', read: 14, valid: 12, rejected: 2, duplicates: 0, unchanged: 0, created: 12, updated: 0, deleted: 0, exit_code: 0 },
      { status: 'success', read: 14, valid: 12, rejected: 2, duplicates: 0, unchanged: 12, created: 0, updated: 0, deleted: 0, exit_code: 0 },
    ]);
    // Second run: only the two product sets are checked.
    expect(catalogRuns[1]?.requests).toBe(2);
  });
});
