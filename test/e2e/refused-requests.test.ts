/**
 * A request the service refuses as a whole with a status no retry can help (413 here; a 400
 * without operation errors, a 405 ...) fails its records only: the run goes on and ends
 * failed. The summary (what cron mails and an alert carries) says why, not only how many, and
 * the next run sends them again. A 403 (the credentials' user may not make the change) stops
 * the run instead, saying what to check (for a catalog, also that the app is approved for X's
 * early-access catalog endpoints).
 */
import { describe, expect, it } from 'vitest';
import { errorLines, workspacePerTest } from '../helpers/e2e.js';
import { catalogIds, catalogJob, feedItem, ids, rssFeed, summaryOf } from '../fixtures/catalog/catalog-e2e.js';

const workspace = workspacePerTest();

describe('a request refused as a whole (HTTP 413)', () => {
  it('audience: the additions fail with the service\'s reason, the removals still go out; the next run adds', { timeout: 60_000 }, async () => {
    const ws = await workspace();
    const emails = (from: number, to: number): string => `Email\n${Array.from({ length: to - from }, (_, i) => `user${from + i}@example.com`).join('\n')}\n`;
    ws.write('crm.yaml', 'name: crm\naccount_id: emu-account\nsource: { path: crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email }\n');
    ws.write('crm.csv', emails(0, 20));
    expect((await ws.cli(['run', 'crm.yaml'])).code).toBe(0);
    ws.write('crm.csv', emails(5, 25));
    ws.fault({ route: 'POST /12/accounts/*/custom_audiences/*/users', kind: 'status', status: 413, times: 1 });

    const run = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(run.code, run.stderr).toBe(1);
    const error =
      '5 user records could not be delivered (POST /12/accounts/emu-account/custom_audiences/emu-audience/users answered HTTP 413: PAYLOAD_TOO_LARGE injected fault: HTTP 413); the next run sends them again';
    expect(summaryOf(run)).toMatchObject({ status: 'failed', added: 0, removed: 5, error });
    expect(errorLines(run.stderr)).toEqual([`adsync: job crm failed: ${error}`]);
    expect(ws.emulator.state().custom_audiences['emu-audience']?.members.email?.length).toBe(15);

    const next = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(next.code, next.stderr).toBe(0);
    expect(summaryOf(next)).toMatchObject({ status: 'success', added: 5, removed: 0 });
    expect(ws.emulator.state().custom_audiences['emu-audience']?.members.email?.length).toBe(20);
  });

  it('catalog: the refused PUT\'s products fail with the service\'s reason, the other PUT goes out; the next run sends them', { timeout: 60_000 }, async () => {
    const ws = await workspace();
    ws.write('shop.yaml', `${catalogJob({ source: 'feed.xml' })}concurrency: 1\n`);
    const all = ids(50);
    ws.write('feed.xml', rssFeed(all.map((id) => feedItem(id))));
    ws.fault({ route: 'PUT /12/product_catalogs/*/products', kind: 'status', status: 413, times: 1 });

    const run = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(run.code, run.stderr).toBe(1);
    const error =
      '25 products could not be delivered (PUT /12/product_catalogs/emu-catalog/products answered HTTP 413: PAYLOAD_TOO_LARGE injected fault: HTTP 413); the next run sends them again';
    expect(summaryOf(run)).toMatchObject({ status: 'failed', created: 25, error });
    expect(errorLines(run.stderr)).toEqual([`adsync: job shop failed: ${error}`]);
    expect(catalogIds(ws)).toEqual(all.slice(25));

    const next = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(next.code, next.stderr).toBe(0);
    expect(summaryOf(next)).toMatchObject({ status: 'success', created: 25, unchanged: 25 });
    expect(catalogIds(ws)).toEqual(all);
  });
});

describe('a request the service forbids (HTTP 403) in the middle of a run', () => {
  const HINT =
    "the credentials' user is not allowed this request: check in X Ads Manager that it has access to this ads account and may edit its audiences and catalogs (an audience shared READ_ONLY cannot be changed); the next run sends what was not acknowledged";

  it('audience: the run stops with what to check in Ads Manager; nothing is added; the next run adds', { timeout: 60_000 }, async () => {
    const ws = await workspace();
    ws.write('crm.yaml', 'name: crm\naccount_id: emu-account\nsource: { path: crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email }\n');
    ws.write('crm.csv', `Email\n${Array.from({ length: 10 }, (_, i) => `user${i}@example.com`).join('\n')}\n`);
    ws.fault({ route: 'POST /12/accounts/*/custom_audiences/*/users', kind: 'status', status: 403, times: 1 });

    const run = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(run.code, run.stderr).toBe(1);
    const error = `POST /12/accounts/emu-account/custom_audiences/emu-audience/users answered HTTP 403: FORBIDDEN injected fault: HTTP 403 (${HINT})`;
    expect(summaryOf(run)).toMatchObject({ status: 'failed', added: 0, error });
    expect(errorLines(run.stderr)).toEqual([`adsync: job crm failed: ${error}`]);

    const next = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(next.code, next.stderr).toBe(0);
    expect(summaryOf(next)).toMatchObject({ status: 'success', added: 10 });
  });

  it('catalog: the run stops at the second PUT with what to check; the first is committed, nothing deleted; the next run ends exact', { timeout: 60_000 }, async () => {
    const ws = await workspace();
    ws.write('shop.yaml', `${catalogJob({ source: 'feed.xml' })}concurrency: 1\n`);
    ws.write('feed.xml', rssFeed(ids(20, 'OLD-').map((id) => feedItem(id))));
    expect((await ws.cli(['run', 'shop.yaml'])).code).toBe(0);
    const all = ids(50);
    ws.write('feed.xml', rssFeed(all.map((id) => feedItem(id))));
    ws.fault({ route: 'PUT /12/product_catalogs/*/products', kind: 'delay', ms: 0, times: 1 });
    ws.fault({ route: 'PUT /12/product_catalogs/*/products', kind: 'status', status: 403, times: 1 });

    const run = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(run.code, run.stderr).toBe(1);
    const catalogHint =
      "the app or the credentials' user is not allowed this request: X's catalog endpoints are early access, so check that the app (its consumer key) is approved for them, and in X Ads Manager that the user may edit this catalog; the next run sends what was not acknowledged";
    const error = `PUT /12/product_catalogs/emu-catalog/products answered HTTP 403: FORBIDDEN injected fault: HTTP 403 (${catalogHint})`;
    expect(summaryOf(run)).toMatchObject({ status: 'failed', created: 25, deleted: 0, exit_code: 1, error });
    expect(errorLines(run.stderr)).toEqual([`adsync: job shop failed: ${error}`]);
    expect(catalogIds(ws)).toEqual([...all.slice(0, 25), ...ids(20, 'OLD-')].sort());

    const next = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(next.code, next.stderr).toBe(0);
    expect(summaryOf(next)).toMatchObject({ status: 'success', created: 25, deleted: 20 });
    expect(catalogIds(ws)).toEqual(all);
  });
});
