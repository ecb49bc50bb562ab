/**
 * Two jobs feeding one catalog (X gives each user one catalog, so two feeds must share it),
 * through the real CLI against the emulator: a mirror job deletes only the products of its
 * own feed that its feed dropped, never those another job sent; a product that moves from one
 * feed to the other becomes the other job's; products that predate the job column (or came
 * from the service) may still be deleted by any mirror job, as before.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CliResult } from '../helpers/cli.js';
import { createWorkspace, type Workspace } from '../helpers/e2e.js';
import { catalogIds, catalogJob, counts, feedItem, ids, rssFeed, summaryOf } from '../fixtures/catalog/catalog-e2e.js';
import { openTestDatabase } from '../helpers/sqlite.js';

let workspaces: Workspace[] = [];
afterEach(async () => {
  await Promise.all(workspaces.map((ws) => ws.close()));
  workspaces = [];
});

async function twoJobs(modeOfB: 'mirror' | 'upsert'): Promise<{ ws: Workspace; feed: (job: 'a' | 'b', ids: readonly string[]) => void; run: (job: 'a' | 'b') => Promise<CliResult> }> {
  const ws = await createWorkspace();
  workspaces.push(ws);
  ws.write('a.yaml', catalogJob({ name: 'a', source: 'a.xml', mode: 'mirror' }));
  ws.write('b.yaml', catalogJob({ name: 'b', source: 'b.xml', mode: modeOfB }));
  return {
    ws,
    feed: (job, list) => ws.write(`${job}.xml`, rssFeed(list.map((id) => feedItem(id)))),
    run: (job) => ws.cli(['run', `${job}.yaml`, '--json']),
  };
}

const A = ids(6, 'A-');
const B = ids(4, 'B-');

describe('two jobs on one catalog', () => {
  it("a mirror job never deletes the products of another job's feed, and deletes what its own feed dropped", async () => {
    const { ws, feed, run } = await twoJobs('upsert');
    feed('a', A);
    feed('b', B);
    for (const job of ['a', 'b', 'a', 'b'] as const) {
      const r = await run(job);
      expect(r.code, r.stderr).toBe(0);
    }
    // a's second run deleted none of b's four products (it would have: 4 of 10, within 0.5).
    expect(catalogIds(ws).sort()).toEqual([...A, ...B].sort());

    feed('a', A.slice(0, 5));
    const dropped = await run('a');
    expect(dropped.code, dropped.stderr).toBe(0);
    expect(counts(summaryOf(dropped))).toMatchObject({ created: 0, updated: 0, deleted: 1 });
    expect(catalogIds(ws).sort()).toEqual([...A.slice(0, 5), ...B].sort());
  });

  it('a product moved from one feed to the other becomes the other job\'s, with a note, and is not deleted by the job it left', async () => {
    const { ws, feed, run } = await twoJobs('mirror');
    feed('a', A);
    feed('b', B);
    for (const job of ['a', 'b'] as const) expect((await run(job)).code).toBe(0);

    // B-01 moves to a's feed, unchanged; a runs first: it takes the product without sending it.
    feed('a', [...A, B[0] ?? '']);
    feed('b', B.slice(1));
    const taking = await run('a');
    expect(taking.code, taking.stderr).toBe(0);
    const summary = summaryOf(taking);
    expect(counts(summary)).toMatchObject({ created: 0, updated: 0, deleted: 0, unchanged: 7 });
    expect(summary.notes).toContain("1 product of this feed was job b's (in its feed too, or moved from it to this one): now this job's, so a mirror run of b no longer deletes it");

    const left = await run('b');
    expect(left.code, left.stderr).toBe(0);
    expect(counts(summaryOf(left))).toMatchObject({ deleted: 0, unchanged: 3 });
    expect(catalogIds(ws).sort()).toEqual([...A, ...B].sort());
  });

  it("the delete guards' messages do not count another job's products as the job's: they stay", async () => {
    const { ws, feed, run } = await twoJobs('upsert');
    feed('a', A);
    feed('b', B);
    for (const job of ['a', 'b'] as const) expect((await run(job)).code).toBe(0);

    feed('a', []);
    const empty = await run('a');
    expect(empty.code).toBe(1);
    expect(summaryOf(empty).error).toBe(
      'the feed has no valid products: a mirror run would delete all 6 products of the catalog but the 4 of other jobs; nothing was deleted (check the feed; to empty the catalog on purpose, run once with --max-delete-ratio 1 and a feed without items)',
    );
    feed('a', A.slice(0, 2));
    const share = await run('a');
    expect(share.code).toBe(1);
    expect(String(summaryOf(share).error)).toMatch(/^the feed would delete 4 of 6 products, not counting the 4 of other jobs \(66\.7%, more than max_delete_ratio 0\.5\); nothing was deleted/);

    feed('a', []);
    const emptied = await ws.cli(['run', 'a.yaml', '--json', '--max-delete-ratio', '1']);
    expect(emptied.code, emptied.stderr).toBe(0);
    expect(summaryOf(emptied).notes).toEqual(['the feed has no products and --max-delete-ratio 1 was given: emptying the catalog but for the 4 products of other jobs (6 deletes)']);
    expect(catalogIds(ws).sort()).toEqual(B);
  });

  it("products an interrupted upload left in the catalog are the uploading job's: another job's mirror run reconciles and does not delete them", async () => {
    const { ws, feed, run } = await twoJobs('mirror');
    feed('a', A);
    feed('b', B);
    for (const job of ['a', 'b'] as const) expect((await run(job)).code).toBe(0);

    // a sends two new products; the service applies the PUT but every answer is lost.
    feed('a', [...A, 'A-07', 'A-08']);
    ws.write('a.yaml', `${catalogJob({ name: 'a', source: 'a.xml', mode: 'mirror' })}request_timeout_ms: 600\nretry: { retries: 1 }\n`);
    ws.fault({ route: 'PUT /12/product_catalogs/*/products', kind: 'delay', ms: 1000, times: 2 });
    expect((await run('a')).code).toBe(1);
    ws.write('a.yaml', catalogJob({ name: 'a', source: 'a.xml', mode: 'mirror' }));
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(catalogIds(ws)).toContain('A-08');

    // b runs next: it reconciles the state with the service and leaves a's two products alone.
    const reconciled = await run('b');
    expect(reconciled.code, reconciled.stderr).toBe(0);
    expect(counts(summaryOf(reconciled))).toMatchObject({ deleted: 0, unchanged: 4 });
    expect(catalogIds(ws).sort()).toEqual([...A, 'A-07', 'A-08', ...B].sort());
    // a's next run sends them as its own (the state did not know their content); nothing is created again.
    const next = await run('a');
    expect(next.code, next.stderr).toBe(0);
    expect(counts(summaryOf(next))).toMatchObject({ created: 0, deleted: 0 });
    feed('a', A);
    expect(counts(summaryOf(await run('a')))).toMatchObject({ deleted: 2 });
    expect(catalogIds(ws).sort()).toEqual([...A, ...B].sort());
  });

  it('a mirror job still deletes products of no job (sent before jobs were recorded, or listed from the service)', async () => {
    const { ws, feed, run } = await twoJobs('mirror');
    feed('a', A);
    expect((await run('a')).code).toBe(0);
    // As an adsync before the job column left them: products of no job.
    const db = openTestDatabase(ws.statePath);
    db.prepare('UPDATE catalog_products SET job = NULL').run();
    db.close();

    feed('a', A.slice(0, 4));
    const r = await run('a');
    expect(r.code, r.stderr).toBe(0);
    expect(counts(summaryOf(r))).toMatchObject({ deleted: 2 });
    expect(catalogIds(ws).sort()).toEqual(A.slice(0, 4));
  });
});
