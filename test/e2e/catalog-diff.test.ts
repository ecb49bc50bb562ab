/**
 * What a catalog run sends, through the real CLI against the emulator (behind a recording
 * proxy, so the exact products of every request are known): nothing for an unchanged feed,
 * exactly the difference otherwise; the delete guards and their overrides; upsert mode;
 * --dry-run.
 */
import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliResult } from '../helpers/cli.js';
import { createWorkspace, type Workspace } from '../helpers/e2e.js';
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

interface Harness {
  ws: Workspace;
  proxy: RecordingProxy;
  /** Writes the feed (feed.xml) that the job file shop.yaml reads. */
  feed(items: readonly FeedItemValues[]): void;
  /** `adsync run shop.yaml --json ...args` through the proxy. */
  run(...args: string[]): Promise<CliResult>;
  /** PUT ids and DELETE keys recorded since the last call. */
  sent(): { puts: string[][]; deletes: string[][] };
}

let open: Harness[] = [];
afterEach(async () => {
  await Promise.all(open.map(async (h) => Promise.all([h.proxy.close(), h.ws.close()])));
  open = [];
});

async function harness(job: Parameters<typeof catalogJob>[0] = { source: 'feed.xml' }): Promise<Harness> {
  const ws = await createWorkspace();
  const proxy = await recordingProxy(ws.emulator.url);
  ws.write('shop.yaml', catalogJob(job));
  let putsSeen = 0;
  let deletesSeen = 0;
  const h: Harness = {
    ws,
    proxy,
    feed: (items) => ws.write('feed.xml', rssFeed(items)),
    run: (...args) => ws.cli(['run', 'shop.yaml', '--json', ...args], { ADSYNC_ADS_URL: proxy.url }),
    sent() {
      const puts = proxy.putIds().slice(putsSeen);
      const deletes = proxy.deleteKeys().slice(deletesSeen);
      putsSeen += puts.length;
      deletesSeen += deletes.length;
      return { puts, deletes };
    },
  };
  open.push(h);
  return h;
}

const TEN = ids(10);
const tenItems = (): FeedItemValues[] => TEN.map((id) => feedItem(id));

/** Runs the ten-product feed once and checks it was all created. */
async function seedTen(h: Harness): Promise<void> {
  h.feed(tenItems());
  const first = await h.run();
  expect(first.code, first.stderr).toBe(0);
  expect(counts(summaryOf(first))).toMatchObject({ created: 10, deleted: 0 });
  expect(h.sent()).toEqual({ puts: [TEN], deletes: [] });
}

function deleteStateFile(ws: Workspace): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${ws.statePath}${suffix}`, { force: true });
}

describe('adsync run (catalog): the difference, and only it', () => {
  it('an unchanged feed sends no product, even reordered and spelled differently', async () => {
    const h = await harness();
    await seedTen(h);

    // Same content: other order, Google spellings, extra spaces, HTML in a description.
    h.feed(
      tenItems()
        .reverse()
        .map((item) => ({ ...item, availability: 'in_stock', title: `  ${item.title ?? ''}  `, description: `<p>${item.description ?? ''}</p>` })),
    );
    const second = await h.run();
    expect(second.code, second.stderr).toBe(0);
    expect(counts(summaryOf(second))).toEqual({
      status: 'success',
      read: 10,
      valid: 10,
      rejected: 0,
      duplicates: 0,
      unchanged: 10,
      created: 0,
      updated: 0,
      deleted: 0,
      exit_code: 0,
    });
    expect(h.sent()).toEqual({ puts: [], deletes: [] });
    expect(summaryOf(second).requests).toBe(0);
    expect(productRequests(h.ws, 'PUT')).toBe(1);
  });

  it('one changed price and one removed item send exactly one product and one delete', async () => {
    const h = await harness();
    await seedTen(h);
    const keyOfP07 = productKeys(h.ws).get('P-07');

    h.feed(tenItems().filter((i) => i.id !== 'P-07').map((i) => (i.id === 'P-03' ? { ...i, price: '11.50 USD' } : i)));
    const second = await h.run();
    expect(second.code, second.stderr).toBe(0);
    expect(counts(summaryOf(second))).toEqual({
      status: 'success',
      read: 9,
      valid: 9,
      rejected: 0,
      duplicates: 0,
      unchanged: 8,
      created: 0,
      updated: 1,
      deleted: 1,
      exit_code: 0,
    });
    expect(h.sent()).toEqual({ puts: [['P-03']], deletes: [[keyOfP07]] });
    expect(catalogIds(h.ws)).toEqual(TEN.filter((id) => id !== 'P-07'));
    expect(catalogProducts(h.ws).find((p) => p.id === 'P-03')).toEqual({ ...feedItem('P-03'), price: '11.50 USD' });

    // And the run after that has nothing left to do.
    const third = await h.run();
    expect(counts(summaryOf(third))).toMatchObject({ unchanged: 9, created: 0, updated: 0, deleted: 0 });
    expect(h.sent()).toEqual({ puts: [], deletes: [] });
  });

  it('sends new and changed products in PUTs of at most 25, in feed order, each id once', async () => {
    const h = await harness();
    const sixty = ids(60);
    // Every product twice: the second occurrence wins and is the one sent.
    h.feed([...sixty.map((id) => feedItem(id, { price: '1.00 USD' })), ...sixty.map((id) => feedItem(id))]);
    const first = await h.run();
    expect(first.code, first.stderr).toBe(0);
    expect(counts(summaryOf(first))).toMatchObject({ read: 120, valid: 120, duplicates: 60, created: 60 });
    const { puts } = h.sent();
    expect(puts.map((p) => p.length).sort((a, b) => b - a)).toEqual([25, 25, 10]);
    expect(puts.flat().sort()).toEqual(sixty);
    for (const p of puts) expect(new Set(p).size).toBe(p.length);
    expect(catalogProducts(h.ws).every((p) => p.price === '10.00 USD')).toBe(true);
  });
});

describe('adsync run (catalog): the delete guards', () => {
  const emptyFeedError =
    'the feed has no valid products: a mirror run would delete all 10 products of the catalog; nothing was deleted (check the feed; to empty the catalog on purpose, run once with --max-delete-ratio 1 and a feed without items)';

  it('an empty feed deletes nothing and fails, unless --max-delete-ratio 1 says to empty the catalog', async () => {
    const h = await harness();
    await seedTen(h);

    h.feed([]);
    const empty = await h.run();
    expect(empty.code).toBe(1);
    expect(summaryOf(empty).error).toBe(emptyFeedError);
    expect(empty.stderr).toContain(`adsync: job shop failed: ${emptyFeedError}`);
    expect(counts(summaryOf(empty))).toMatchObject({ status: 'failed', read: 0, deleted: 0 });

    // A feed of only invalid items fails too; their ids are in the feed, so none is deleted,
    // even with the override.
    h.feed(TEN.map((id) => feedItem(id, { link: `http://shop.example.com/${id}` })));
    const invalid = await h.run('--max-delete-ratio', '1');
    expect(invalid.code).toBe(1);
    expect(summaryOf(invalid).error).toMatch(/^the feed has no valid products; nothing was deleted .*; 10 of 10 rows rejected \(100\.0%, more than max_reject_ratio 0\.2\)/);
    expect(counts(summaryOf(invalid))).toMatchObject({ read: 10, rejected: 10, deleted: 0 });

    // A zero-byte file cannot be read at all.
    h.ws.write('feed.xml', '');
    const nothing = await h.run();
    expect(nothing.code).toBe(1);
    expect(summaryOf(nothing).error).toMatch(/feed\.xml is empty$/);

    expect(h.sent()).toEqual({ puts: [], deletes: [] });
    expect(catalogIds(h.ws)).toEqual(TEN);

    h.feed([]);
    const emptied = await h.run('--max-delete-ratio', '1');
    expect(emptied.code, emptied.stderr).toBe(0);
    expect(counts(summaryOf(emptied))).toMatchObject({ status: 'success', deleted: 10 });
    expect(summaryOf(emptied).notes).toEqual(['the feed has no products and --max-delete-ratio 1 was given: emptying the catalog (10 deletes)']);
    expect(catalogIds(h.ws)).toEqual([]);
  });

  it('a feed that would delete more than max_delete_ratio deletes nothing and names the override', async () => {
    const h = await harness();
    await seedTen(h);
    const keys = productKeys(h.ws);

    // 6 of 10 is more than the default 0.5; the new product is still created.
    h.feed([...ids(4).map((id) => feedItem(id)), feedItem('P-11')]);
    const refused = await h.run();
    expect(refused.code).toBe(1);
    expect(summaryOf(refused).error).toBe(
      `the feed would delete 6 of 10 products (60.0%, more than max_delete_ratio 0.5); nothing was deleted. If this is intended, raise catalog.max_delete_ratio in ${h.ws.dir}/shop.yaml or run once with --max-delete-ratio 1`,
    );
    expect(counts(summaryOf(refused))).toMatchObject({ status: 'failed', created: 1, deleted: 0, exit_code: 1 });
    expect(h.sent()).toEqual({ puts: [['P-11']], deletes: [] });
    expect(catalogIds(h.ws)).toEqual([...TEN, 'P-11']);

    // The same feed with the override for this run: 6 of 11.
    const forced = await h.run('--max-delete-ratio', '1');
    expect(forced.code, forced.stderr).toBe(0);
    expect(counts(summaryOf(forced))).toMatchObject({ status: 'success', unchanged: 5, created: 0, deleted: 6 });
    expect(h.sent()).toEqual({ puts: [], deletes: [['P-05', 'P-06', 'P-07', 'P-08', 'P-09', 'P-10'].map((id) => keys.get(id))] });
    expect(catalogIds(h.ws)).toEqual([...ids(4), 'P-11']);
  });

  it('a feed with more rejected items than max_reject_ratio deletes nothing (its valid products still go), and fails', async () => {
    const h = await harness();
    await seedTen(h);
    // P-10 gone (a delete within max_delete_ratio), P-01 changed, and 3 of the 12 items
    // invalid (an http link): 25%, more than the default max_reject_ratio of 0.2.
    const bad = ['P-12', 'P-13', 'P-14'].map((id) => ({ ...feedItem(id), link: `http://shop.example.com/p/${id.toLowerCase()}` }));
    h.feed([...ids(9).map((id) => (id === 'P-01' ? { ...feedItem(id), price: '12.00 USD' } : feedItem(id))), ...bad]);
    const r = await h.run();
    expect(r.code).toBe(1);
    expect(counts(summaryOf(r))).toMatchObject({ status: 'failed', read: 12, valid: 9, rejected: 3, updated: 1, deleted: 0, exit_code: 1 });
    expect(summaryOf(r).notes).toContain('too many rejected items to trust the feed: 1 delete was not made');
    expect(h.sent()).toEqual({ puts: [['P-01']], deletes: [] });
    expect(catalogIds(h.ws)).toEqual(TEN);
  });

  it('max_delete_ratio of the job file; exactly the ratio is allowed', async () => {
    const h = await harness({ source: 'feed.xml', maxDeleteRatio: 0.6 });
    await seedTen(h);
    h.feed(ids(4).map((id) => feedItem(id)));
    const result = await h.run();
    expect(result.code, result.stderr).toBe(0);
    expect(counts(summaryOf(result))).toMatchObject({ status: 'success', unchanged: 4, deleted: 6 });

    h.ws.write('shop.yaml', catalogJob({ source: 'feed.xml', maxDeleteRatio: 0.2 }));
    h.feed(ids(3).map((id) => feedItem(id)));
    const refused = await h.run();
    expect(refused.code).toBe(1);
    expect(summaryOf(refused).error).toMatch(/^the feed would delete 1 of 4 products \(25\.0%, more than max_delete_ratio 0\.2\); nothing was deleted/);
    expect(catalogIds(h.ws)).toEqual(ids(4));
  });

  it('exactly the ratio is allowed also where ratio x products falls just short in floating point (29 of 50 at 0.58)', async () => {
    const h = await harness({ source: 'feed.xml', maxDeleteRatio: 0.58 });
    const fifty = ids(50);
    h.feed(fifty.map((id) => feedItem(id)));
    expect((await h.run()).code).toBe(0);
    // 0.58 * 50 is 28.999999999999996: compared that way, 29 deletes were "more than" the ratio.
    h.feed(fifty.slice(0, 21).map((id) => feedItem(id)));
    const result = await h.run();
    expect(result.code, result.stderr).toBe(0);
    expect(counts(summaryOf(result))).toMatchObject({ status: 'success', unchanged: 21, deleted: 29 });
    expect(catalogIds(h.ws)).toEqual(fifty.slice(0, 21));
  });

  it('upsert mode never deletes', async () => {
    const h = await harness({ source: 'feed.xml', mode: 'upsert' });
    await seedTen(h);

    h.feed([feedItem('P-02', { price: '9.00 USD' }), feedItem('P-05'), feedItem('P-12')]);
    const partial = await h.run('--max-delete-ratio', '1');
    expect(partial.code, partial.stderr).toBe(0);
    expect(counts(summaryOf(partial))).toEqual({
      status: 'success',
      read: 3,
      valid: 3,
      rejected: 0,
      duplicates: 0,
      unchanged: 1,
      created: 1,
      updated: 1,
      deleted: 0,
      exit_code: 0,
    });
    expect(h.sent()).toEqual({ puts: [['P-02', 'P-12']], deletes: [] });

    h.feed([]);
    const empty = await h.run();
    expect(empty.code, empty.stderr).toBe(0);
    expect(counts(summaryOf(empty))).toMatchObject({ status: 'success', read: 0, deleted: 0 });
    expect(h.sent()).toEqual({ puts: [], deletes: [] });
    expect(productRequests(h.ws, 'DELETE')).toBe(0);
    expect(catalogIds(h.ws)).toEqual([...TEN, 'P-12']);
  });
});

describe('adsync run --dry-run (catalog)', () => {
  it('sends nothing, writes no state, and reports what a run would do', async () => {
    const h = await harness();
    h.feed(tenItems());
    const firstDry = await h.run('--dry-run');
    expect(firstDry.code, firstDry.stderr).toBe(0);
    expect(summaryOf(firstDry)).toMatchObject({ dry_run: true, status: 'success', created: 10, updated: 0, deleted: 0, unchanged: 0 });
    expect(h.sent()).toEqual({ puts: [], deletes: [] });
    expect(catalogIds(h.ws)).toEqual([]);

    await seedTen(h);
    h.feed([...tenItems().filter((i) => i.id !== 'P-07').map((i) => (i.id === 'P-03' ? { ...i, price: '11.50 USD' } : i)), feedItem('P-11')]);
    const dry = await h.run('--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    expect(counts(summaryOf(dry))).toEqual({
      status: 'success',
      read: 10,
      valid: 10,
      rejected: 0,
      duplicates: 0,
      unchanged: 8,
      created: 1,
      updated: 1,
      deleted: 1,
      exit_code: 0,
    });
    expect(summaryOf(dry).dry_run).toBe(true);
    expect(h.sent()).toEqual({ puts: [], deletes: [] });
    expect(h.proxy.calls.filter((c) => c.method !== 'GET')).toHaveLength(1); // the first run's PUT
    expect(catalogIds(h.ws)).toEqual(TEN);

    // The state was not touched: the real run does exactly what the dry run said.
    const real = await h.run();
    expect(counts(summaryOf(real))).toEqual({ ...counts(summaryOf(dry)) });
    expect(h.sent()).toEqual({ puts: [['P-03', 'P-11']], deletes: [[expect.any(String)]] });
  });

  it('with lost state, plans against what the service holds without rebuilding the state', async () => {
    const h = await harness();
    await seedTen(h);
    deleteStateFile(h.ws);

    h.feed(tenItems().filter((i) => i.id !== 'P-07'));
    const dry = await h.run('--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    // Content unknown: the 9 products still in the feed would be sent again.
    expect(counts(summaryOf(dry))).toMatchObject({ status: 'success', created: 0, updated: 9, deleted: 1, unchanged: 0 });
    expect(summaryOf(dry).notes).toEqual([
      'the saved state of catalog emu-catalog is empty: planned against the 10 products the service holds (a real run rebuilds the state from them)',
    ]);
    expect(h.sent()).toEqual({ puts: [], deletes: [] });

    // The dry run left the state empty: the real run rebuilds it.
    const real = await h.run();
    expect(real.code, real.stderr).toBe(0);
    expect(summaryOf(real).notes).toEqual(['the saved state of catalog emu-catalog was empty: rebuilt it from the 10 products the service holds']);
    expect(counts(summaryOf(real))).toMatchObject({ unchanged: 9, updated: 0, deleted: 1 });
  });

  it('reports a refused delete as the real run would, and fails like it', async () => {
    const h = await harness();
    await seedTen(h);
    h.feed(ids(2).map((id) => feedItem(id)));
    const dry = await h.run('--dry-run');
    expect(dry.code).toBe(1);
    expect(summaryOf(dry)).toMatchObject({ dry_run: true, status: 'failed', deleted: 0 });
    expect(String(summaryOf(dry).error)).toMatch(/^the feed would delete 8 of 10 products/);
    expect(h.sent()).toEqual({ puts: [], deletes: [] });
  });
});
