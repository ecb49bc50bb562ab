/**
 * A catalog upload killed (SIGKILL) after the service applied some PUTs whose products the
 * state had not committed yet (they are committed a thousand at a time): when the feed then
 * drops those products, the next mirror run must still delete them. It finds them by
 * comparing the state with the products the service holds, because the killed upload left
 * its mark on the catalog.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { collect, createWorkspace, summaries, type Workspace } from '../helpers/e2e.js';
import { committedCatalog, csvFeedOf, emulatorCatalog, expectCatalog, expectCatalogStateExact, feedOf, range, waitFor, type ProductSpec } from '../reliability/support.js';

const PUT_ROUTE = 'PUT /12/product_catalogs/:product_catalog_id/products';
const JOB = 'name: shop\naccount_id: emu-account\nconcurrency: 1\nrequest_timeout_ms: 30000\nsource: { path: feed.xml }\ncatalog:\n  product_catalog_id: emu-catalog\n';

let ws: Workspace;
beforeEach(async () => {
  ws = await createWorkspace();
});
afterEach(async () => {
  await ws.close();
});

const puts = (): number => ws.emulator.stateSummary().requests.by_route[PUT_ROUTE] ?? 0;

describe('a killed catalog upload', () => {
  it('leaves no product behind that the feed dropped before the next run', { timeout: 60_000 }, async () => {
    const kept: ProductSpec[] = range(1, 30).map((n) => ({ n, price: '10.00 USD' }));
    const added: ProductSpec[] = range(101, 200).map((n) => ({ n, price: '10.00 USD' }));
    ws.write('shop.yaml', JOB);
    ws.write('feed.xml', feedOf(kept));
    expect((await ws.cli(['run', 'shop.yaml'])).code).toBe(0);

    // 100 new products in 4 PUTs, one at a time, each applied by the service and then
    // answered after 600 ms: killed after the third PUT reached the service, the first two
    // were acknowledged and none of their products committed.
    ws.write('feed.xml', feedOf([...kept, ...added]));
    const before = puts();
    ws.fault({ route: 'PUT /12/product_catalogs/*/products', kind: 'delay', ms: 600, before: false, times: 4 });
    const child = ws.spawn(['run', 'shop.yaml', '--json']);
    const done = collect(child);
    await waitFor(() => puts() >= before + 3, 30_000);
    child.kill('SIGKILL');
    expect((await done).signal).toBe('SIGKILL');
    const held = ws.emulator.state().catalogs['emu-catalog']?.products.length ?? 0;
    expect(held).toBeGreaterThanOrEqual(30 + 50);
    expect(committedCatalog(ws.statePath).size).toBe(30);

    // The feed drops the new products again: every one the service holds is deleted.
    ws.write('feed.xml', feedOf(kept));
    const rerun = await ws.cli(['run', 'shop.yaml', '--json', '--max-delete-ratio', '1']);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(summaries(rerun)[0]).toMatchObject({ status: 'success', created: 0, updated: 0, deleted: held - 30 });
    expect(rerun.stderr).toContain(
      `the last upload to catalog emu-catalog did not finish (killed, or answers lost): compared the saved state with the products the service holds; ${held - 30} it did not list (sent again while in the feed, deleted once not), 0 no longer there`,
    );
    expectCatalog(ws, kept);
    expectCatalogStateExact(ws);
    // The killed run's locks (the job's and the catalog's) are taken over; those warnings and the note name the job once.
    const warnings = rerun.stderr.split('\n').filter((l) => l.includes('taking the lock over') || l.includes('did not finish'));
    expect(warnings).toHaveLength(3);
    expect(warnings.filter((l) => l.includes('"msg":"the process holding the lock of catalog emu-catalog is gone (killed or crashed): taking the lock over"'))).toHaveLength(1);
    for (const line of warnings) expect(line.match(/"job":/g)).toHaveLength(1);

    // The killed run is in the history as failed, without counts: one "-" for what it sent.
    const history = (await ws.cli(['runs'])).stdout.trimEnd().split('\n');
    const killedRow = history[2]?.split(/ {2,}/) ?? [];
    expect(killedRow.slice(1, 4)).toEqual(['shop', 'catalog', 'failed']);
    expect(killedRow.slice(5, 8)).toEqual(['-', '-', '-']);

    // Reconciled once: the next run neither lists the catalog again nor sends anything.
    const again = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(summaries(again)[0]).toMatchObject({ status: 'success', requests: 0, deleted: 0 });
    expect(again.stderr).not.toContain('did not finish');
  });

  // The service applied new prices the kill kept from the state; the feed then goes back to
  // the prices the state still lists. The next run must send them, although they equal the
  // state's.
  const old: ProductSpec[] = range(1, 10).map((n) => ({ n, price: '10.00 USD' }));
  const changed: ProductSpec[] = range(1, 10).map((n) => ({ n, price: '20.00 USD' }));
  const pricesHeld = (): string[] => [...new Set([...emulatorCatalog(ws).values()].map((p) => String(p.price)))];

  async function killOnceApplied(args: string[]): Promise<void> {
    ws.fault({ route: 'PUT /12/product_catalogs/*/products', kind: 'delay', ms: 20_000, before: false, times: 1 });
    const child = ws.spawn(args);
    const done = collect(child);
    await waitFor(() => pricesHeld().join() === '20.00 USD', 30_000);
    child.kill('SIGKILL');
    expect((await done).signal).toBe('SIGKILL');
    ws.emulator.clearFaults();
  }

  it('a run killed after the service applied new prices, then a feed back to the old ones: the old prices are sent again', { timeout: 60_000 }, async () => {
    ws.write('shop.yaml', JOB);
    ws.write('feed.xml', feedOf(old));
    expect((await ws.cli(['run', 'shop.yaml'])).code).toBe(0);
    ws.write('feed.xml', feedOf(changed));
    await killOnceApplied(['run', 'shop.yaml']);

    ws.write('feed.xml', feedOf(old));
    const rerun = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(summaries(rerun)[0]).toMatchObject({ status: 'success', updated: 10 });
    expectCatalog(ws, old);
    expectCatalogStateExact(ws);
    const again = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(summaries(again)[0]).toMatchObject({ status: 'success', requests: 0 });
  });

  it('a backfill killed after the service applied its prices, then a run of the feed: the feed prices are sent again', { timeout: 60_000 }, async () => {
    ws.write('shop.yaml', JOB);
    ws.write('feed.xml', feedOf(old));
    expect((await ws.cli(['run', 'shop.yaml'])).code).toBe(0);
    ws.write('history.csv', csvFeedOf(changed));
    await killOnceApplied(['backfill', 'shop.yaml', '--source', 'history.csv']);

    const run = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(summaries(run)[0]).toMatchObject({ status: 'success', updated: 10 });
    expectCatalog(ws, old);
    expectCatalogStateExact(ws);
  });
});
