/**
 * Catalog backfills: a feed upserted in full, checkpointed per acknowledged request, never
 * deleting; killed with SIGKILL it resumes and ends exactly as an uninterrupted run.
 */
import { openTestDatabase } from '../helpers/sqlite.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { collect, createWorkspace, summaries, type Workspace } from '../helpers/e2e.js';
import { json, startScriptedServer } from '../helpers/scripted-server.js';

const PUT_ROUTE = 'PUT /12/product_catalogs/:product_catalog_id/products';
let ws: Workspace;
beforeEach(async () => {
  ws = await createWorkspace();
});
afterEach(async () => {
  await ws.close();
});

function feedCsv(n: number, price: (i: number) => string = () => '19.99 USD', extra: string[] = []): string {
  const lines = ['id,title,description,availability,condition,price,link,image_link,brand,inventory'];
  for (let i = 1; i <= n; i++) {
    lines.push(`SKU-${i},Product ${i},Description of product ${i},in_stock,new,${price(i)},https://shop.example.com/p/${i},https://shop.example.com/i/${i}.jpg,Acme,${i}`);
  }
  return `${[...lines, ...extra].join('\n')}\n`;
}

function products(): Map<string, Record<string, unknown>> {
  const list = ws.emulator.state().catalogs['emu-catalog']?.products ?? [];
  return new Map(list.map((p) => [String(p.id), p]));
}

const JOB = 'account_id: emu-account\nconcurrency: 2\nsource: { path: feed.csv }\ncatalog:\n  product_catalog_id: emu-catalog\n';

describe('adsync backfill of a catalog job', () => {
  it('upserts the whole feed, keeps the last version of a repeated id, never deletes', async () => {
    ws.write('cat.yaml', JOB);
    // An existing product not in the backfill file must survive: a backfill never deletes.
    ws.write('feed.csv', feedCsv(1).replace('SKU-1,', 'KEEP-1,'));
    expect((await ws.cli(['run', 'cat.yaml'])).code).toBe(0);
    // SKU-3 appears again 60 rows later with another price: the later one must win.
    ws.write('history.csv', feedCsv(80, () => '19.99 USD', ['SKU-3,Product 3,Description of product 3,in_stock,new,5.00 USD,https://shop.example.com/p/3,https://shop.example.com/i/3.jpg,Acme,3', 'BAD,,,,,,,,,']));
    const r = await ws.cli(['backfill', 'cat.yaml', '--source', 'history.csv', '--json']);
    expect(r.code, r.stderr).toBe(0);
    // SKU-3's first version was long acknowledged when the second came: it is sent again (and
    // wins); only a repeat within the requests in flight is caught and counted as a duplicate.
    expect(summaries(r)[0]).toMatchObject({ status: 'success', read: 82, valid: 81, rejected: 1, duplicates: 0, created: 80, updated: 1, deleted: 0 });
    const p = products();
    expect(p.size).toBe(81);
    expect(p.get('KEEP-1')).toBeDefined();
    expect(p.get('SKU-3')?.price).toBe('5.00 USD');
    expect(p.get('SKU-80')?.price).toBe('19.99 USD');
  });

  it('holds back a repeat of an id still in flight, so the later version wins even with requests in parallel', async () => {
    ws.write('cat.yaml', JOB.replace('concurrency: 2', 'concurrency: 4'));
    // SKU-2 again right after the first request (SKU-1..25) leaves. That request's first
    // attempt is dropped, so it is applied only after its retry: sent in parallel, the
    // request with the newer SKU-2 would be applied first and then overwritten.
    ws.write('history.csv', feedCsv(30, () => '19.99 USD', ['SKU-2,Product 2,Description of product 2,in_stock,new,7.00 USD,https://shop.example.com/p/2,https://shop.example.com/i/2.jpg,Acme,2']));
    ws.write('cat.yaml', JOB.replace('concurrency: 2', 'concurrency: 4\nretry: { retries: 4, min_delay_ms: 300, max_delay_ms: 300, budget_ms: 10000 }'));
    ws.fault({ route: 'PUT /12/product_catalogs/**', kind: 'drop', times: 1 });
    const r = await ws.cli(['backfill', 'cat.yaml', '--source', 'history.csv', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(summaries(r)[0]).toMatchObject({ status: 'success', read: 31, duplicates: 1, created: 30, updated: 1, retries: 1 });
    expect(products().get('SKU-2')?.price).toBe('7.00 USD');
  });

  it('resumes after SIGKILLs and ends exactly like an uninterrupted run', { timeout: 120_000 }, async () => {
    ws.write('cat.yaml', JOB.replace('concurrency: 2', 'concurrency: 1'));
    ws.write('history.csv', feedCsv(600, (i) => `${(i % 90) + 10}.00 USD`));
    ws.fault({ route: 'PUT /12/product_catalogs/**', kind: 'delay', ms: 150, times: 10_000 });
    let last = 0;
    for (const killAfter of [4, 9]) {
      const child = ws.spawn(['backfill', 'cat.yaml', '--source', 'history.csv']);
      const done = collect(child);
      const until = Date.now() + 60_000;
      while ((ws.emulator.stateSummary().requests.by_route[PUT_ROUTE] ?? 0) < killAfter && Date.now() < until) await new Promise((res) => setTimeout(res, 10));
      child.kill('SIGKILL');
      expect((await done).signal).toBe('SIGKILL');
      const db = openTestDatabase(ws.statePath, { readonly: true });
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      const rows = (db.prepare('SELECT rows_done FROM checkpoints').get() as { rows_done: number } | undefined)?.rows_done ?? -1;
      db.close();
      expect(rows).toBeGreaterThanOrEqual(last);
      last = rows;
    }
    expect(last).toBeGreaterThan(0);
    ws.emulator.clearFaults();
    const final = await ws.cli(['backfill', 'cat.yaml', '--source', 'history.csv', '--json']);
    expect(final.code, final.stderr).toBe(0);
    expect(summaries(final)[0]).toMatchObject({ status: 'success', resumed_from_row: last, read: 600 - last });
    const p = products();
    expect(p.size).toBe(600);
    for (let i = 1; i <= 600; i++) expect(p.get(`SKU-${i}`)?.price).toBe(`${(i % 90) + 10}.00 USD`);
    // The state knows every product as sent: a normal run of the same feed sends nothing.
    ws.write('feed.csv', ws.read('history.csv'));
    const run = await ws.cli(['run', 'cat.yaml', '--json']);
    expect(summaries(run)[0]).toMatchObject({ status: 'success', created: 0, updated: 0, deleted: 0, unchanged: 600 });
  });
});

describe('adsync backfill of a catalog job, against a service whose answer leaves a product out', () => {
  it('the checkpoint stays before the request of the product left out, and the resumed backfill sends it', async () => {
    const received: string[] = [];
    let leftOut: string | undefined;
    const service = await startScriptedServer((req, res) => {
      const sent = (JSON.parse(req.body.toString('utf8')) as { products: { id: string }[] }).products.map((p) => p.id);
      received.push(...sent);
      // The first request's answer has no result for its last product.
      const answered = leftOut === undefined ? sent.slice(0, -1) : sent;
      leftOut ??= sent.at(-1);
      json(res, 200, { request: { params: {} }, data: { products_response: answered.map((id) => ({ id, product_key: `k-${id}`, status: 'CREATE_SUCCESS', errors: [], warnings: [] })) } });
    });
    try {
      ws.write('cat.yaml', JOB.replace('concurrency: 2', 'concurrency: 1'));
      ws.write('history.csv', feedCsv(60));
      const env = { ADSYNC_ADS_URL: service.url };
      const first = await ws.cli(['backfill', 'cat.yaml', '--source', 'history.csv', '--json'], env);
      expect(first.code, first.stderr).toBe(1);
      expect(summaries(first)[0]).toMatchObject({ status: 'failed', error: "1 products could not be delivered (the service's answer has no result for 1 of the 25 products sent); the next run sends them again" });
      expect(leftOut).toBe('SKU-25');
      expect(received).toHaveLength(60);
      const db = openTestDatabase(ws.statePath, { readonly: true });
      expect(db.prepare('SELECT rows_done FROM checkpoints').get()).toEqual({ rows_done: 0 });
      db.close();

      const resumed = await ws.cli(['backfill', 'cat.yaml', '--source', 'history.csv', '--json'], env);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(summaries(resumed)[0]).toMatchObject({ status: 'success', resumed_from_row: 0, created: 60 });
      expect(received.filter((id) => id === 'SKU-25')).toHaveLength(2);
    } finally {
      await service.close();
    }
  });
});

describe('adsync backfill of a catalog job that stops on a fatal error', () => {
  it('with a repeat of an id whose request was never sent, it still ends: exit 1, one error line, the run recorded failed', async () => {
    // SKU-50 ends the second request and comes again right after it. The first request is
    // refused until the retries are spent (fatal): the second, waiting for its turn, is then
    // not sent, and the repeat waits for it to end.
    ws.write('cat.yaml', `${JOB.replace('concurrency: 2', 'concurrency: 1')}retry: { retries: 1, min_delay_ms: 300, max_delay_ms: 300, budget_ms: 5000 }\n`);
    const repeat = feedCsv(50).split('\n').filter(Boolean).at(-1) ?? '';
    ws.write('history.csv', feedCsv(50, () => '19.99 USD', [repeat]));
    ws.fault({ route: 'PUT /12/product_catalogs/**', kind: 'status', status: 503, times: 2 });
    const r = await ws.cli(['backfill', 'cat.yaml', '--source', 'history.csv', '--json']);
    expect(r.code, r.stderr).toBe(1);
    expect(summaries(r)[0]).toMatchObject({ status: 'failed', created: 0 });
    expect(r.stderr.split('\n').filter((l) => l.startsWith('adsync: '))).toEqual([expect.stringContaining('answered HTTP 503: SERVICE_UNAVAILABLE')]);
    const runs = (await ws.cli(['runs', '--json'])).stdout.split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { status: string }).status);
    expect(runs).toEqual(['failed']);
  });
});
