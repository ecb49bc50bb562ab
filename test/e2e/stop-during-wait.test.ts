/**
 * A stop request (SIGTERM, Ctrl-C) that comes while a request waits to be sent again (a 429's
 * reset, a 503's Retry-After) ends the run at once: the request is not sent, the run ends
 * `interrupted`, and the next run sends what was left. A stop used to wait for the window to
 * pass (up to 15 minutes for a rate limit), longer than systemd gives a service to stop.
 */
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { collect, createWorkspace, type Workspace } from '../helpers/e2e.js';
import { catalogIds, catalogJob, counts, feedItem, ids, productRequests, rssFeed, summaryOf } from '../fixtures/catalog/catalog-e2e.js';

const USERS_ROUTE = 'POST /12/accounts/*/custom_audiences/*/users';
const PUT_ROUTE = 'PUT /12/product_catalogs/*/products';
/** The wait the service asks for: longer than the test may take, within the workspace's 20 s retry budget. */
const WAIT_S = 15;

let workspaces: Workspace[] = [];
afterEach(async () => {
  await Promise.all(workspaces.map((ws) => ws.close()));
  workspaces = [];
});

async function workspace(): Promise<Workspace> {
  const ws = await createWorkspace();
  workspaces.push(ws);
  return ws;
}

function emailMembers(ws: Workspace): number {
  return ws.emulator.state().custom_audiences['emu-audience']?.members.email?.length ?? 0;
}

/** Resolves once the child's stderr holds `text`. */
function stderrShows(child: ChildProcess, text: string): Promise<void> {
  let seen = '';
  return new Promise((resolve) => {
    child.stderr?.on('data', (d: Buffer) => {
      seen += d.toString();
      if (seen.includes(text)) resolve();
    });
  });
}

/** SIGTERM once the run waits to retry; the result and how long the run took to end after the signal. */
async function stopWhileWaiting(child: ChildProcess): Promise<{ result: Awaited<ReturnType<typeof collect>>; endedAfterMs: number }> {
  const done = collect(child);
  await stderrShows(child, '"msg":"retrying API call"');
  const signalled = Date.now();
  child.kill('SIGTERM');
  const result = await done;
  return { result, endedAfterMs: Date.now() - signalled };
}

describe('a stop request during a wait to retry', () => {
  it('audience: a batch waiting out a 429 is not sent, the run ends interrupted at once, the next run sends it', { timeout: 60_000 }, async () => {
    const ws = await workspace();
    ws.write('crm.csv', `Email\n${Array.from({ length: 20 }, (_, i) => `user${i}@example.com`).join('\n')}\n`);
    ws.write('crm.yaml', 'name: crm\naccount_id: emu-account\nsource: { path: crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email }\n');
    ws.fault({ route: USERS_ROUTE, kind: 'rate_limit', with_reset: true, retry_after: WAIT_S, times: 1 });
    const { result, endedAfterMs } = await stopWhileWaiting(ws.spawn(['run', 'crm.yaml', '--json']));
    expect(endedAfterMs).toBeLessThan(5_000);
    expect(result.code, result.stderr).toBe(1);
    expect(summaryOf(result)).toMatchObject({
      status: 'interrupted',
      added: 0,
      requests: 1,
      error: 'stopped by a signal after committing the work in flight: 0 of the 20 identifiers to send acknowledged; the next run sends the rest',
    });
    expect(result.stderr).not.toMatch(/could not be delivered|internal error|\n\s+at /);
    expect(emailMembers(ws)).toBe(0);

    const next = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(next.code, next.stderr).toBe(0);
    expect(summaryOf(next)).toMatchObject({ status: 'success', added: 20 });
    expect(emailMembers(ws)).toBe(20);
  });

  it('catalog: a PUT waiting out a 503 is not sent again; the upload stays marked, so the next mirror run compares with the service first', { timeout: 60_000 }, async () => {
    const ws = await workspace();
    ws.write('shop.yaml', `${catalogJob({ source: 'feed.xml' })}concurrency: 1\n`);
    const known = ids(20, 'A-');
    ws.write('feed.xml', rssFeed(known.map((id) => feedItem(id))));
    expect((await ws.cli(['run', 'shop.yaml'])).code).toBe(0);
    const added = ids(50, 'B-');
    ws.write('feed.xml', rssFeed([...known, ...added].map((id) => feedItem(id))));
    ws.fault({ route: PUT_ROUTE, kind: 'status', status: 503, retry_after: WAIT_S, times: 1 });
    const { result, endedAfterMs } = await stopWhileWaiting(ws.spawn(['run', 'shop.yaml', '--json']));
    expect(endedAfterMs).toBeLessThan(5_000);
    expect(result.code, result.stderr).toBe(1);
    expect(counts(summaryOf(result))).toMatchObject({ status: 'interrupted', created: 0, unchanged: 20, deleted: 0 });
    expect(summaryOf(result).error).toBe('stopped by a signal after committing the work in flight: 0 of the 50 products to send acknowledged; the next run sends the rest');
    expect(result.stderr).not.toMatch(/could not be delivered|internal error|\n\s+at /);
    expect(catalogIds(ws)).toEqual(known);

    // The first PUT went out (its answer a 503): the service could have applied it, so the
    // catalog is still marked as being uploaded to, and the next run reconciles before sending.
    const next = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(next.code, next.stderr).toBe(0);
    const summary = summaryOf(next);
    expect(counts(summary)).toMatchObject({ status: 'success', created: 50, unchanged: 20 });
    expect(summary.notes).toEqual([
      'the last upload to catalog emu-catalog did not finish (killed, or answers lost): compared the saved state with the products the service holds; 0 it did not list (sent again while in the feed, deleted once not), 0 no longer there',
    ]);
    expect(catalogIds(ws)).toEqual([...known, ...added]);
  });

  it('catalog: a stop during the listing that rebuilds an empty state ends it before its next page; the next run rebuilds', { timeout: 60_000 }, async () => {
    const ws = await workspace();
    ws.write('shop.yaml', catalogJob({ source: 'feed.xml' }));
    const known = ids(2000, 'A-');
    ws.write('feed.xml', rssFeed(known.map((id) => feedItem(id))));
    expect((await ws.cli(['run', 'shop.yaml'])).code).toBe(0);
    // A lost state: the next mirror run lists the catalog (20 pages of 100) before anything else.
    rmSync(ws.statePath);
    ws.fault({ route: 'GET /12/product_catalogs/*/products', kind: 'delay', ms: 1_000, times: 100 });
    const listedBefore = productRequests(ws, 'GET');
    const child = ws.spawn(['run', 'shop.yaml', '--json']);
    const done = collect(child);
    // The first page answered, the second on the wire.
    while (productRequests(ws, 'GET') < listedBefore + 1) await new Promise((resolve) => setTimeout(resolve, 20));
    const signalled = Date.now();
    child.kill('SIGTERM');
    const result = await done;
    expect(Date.now() - signalled).toBeLessThan(5_000);
    expect(result.code, result.stderr).toBe(1);
    expect(productRequests(ws, 'GET') - listedBefore).toBe(2);
    // The page on the wire when the signal came was answered: two pages listed, and no more.
    expect(summaryOf(result)).toMatchObject({
      status: 'interrupted',
      created: 0,
      deleted: 0,
      error: 'stopped by a signal while listing the products the service holds (200 listed); nothing was sent, and the next run lists them again',
    });
    expect(result.stderr).not.toMatch(/internal error|\n\s+at /);

    ws.emulator.clearFaults();
    const next = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(next.code, next.stderr).toBe(0);
    const summary = summaryOf(next);
    expect(counts(summary)).toMatchObject({ status: 'success', created: 0, updated: 0, deleted: 0 });
    expect(summary.notes).toEqual(['the saved state of catalog emu-catalog was empty: rebuilt it from the 2000 products the service holds']);
    expect(catalogIds(ws)).toEqual(known);
  });

  it('many requests in flight, each listening for the stop request: no listener-leak warning', { timeout: 60_000 }, async () => {
    const ws = await workspace();
    ws.write('shop.yaml', `${catalogJob({ source: 'feed.xml' })}concurrency: 16\n`);
    ws.write('feed.xml', rssFeed(ids(1000, 'A-').map((id) => feedItem(id))));
    const result = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(counts(summaryOf(result))).toMatchObject({ status: 'success', created: 1000 });
    // Node warned "MaxListenersExceededWarning: Possible EventTarget memory leak detected. 11
    // abort listeners added to [AbortSignal]" past 10 requests in flight.
    expect(result.stderr).toBe('');
  });
});

describe('a stop request during `adsync run` of several jobs', () => {
  it('the jobs not started get their --json summary (interrupted, no run) and a line, and the exit code is 1', { timeout: 60_000 }, async () => {
    const ws = await workspace();
    ws.write('crm.csv', `Email\n${Array.from({ length: 20 }, (_, i) => `user${i}@example.com`).join('\n')}\n`);
    ws.write('a.yaml', 'name: a\naccount_id: emu-account\nsource: { path: crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email }\n');
    ws.write('b.yaml', 'name: b\naccount_id: emu-account\nsource: { path: crm.csv }\naudience:\n  do_not_reach_list_id: emu-dnr\n  identifiers: { email: Email }\n');
    // Job a's upload is answered 1.5 s later: the stop comes while it is on the wire.
    ws.fault({ route: USERS_ROUTE, kind: 'delay', ms: 1500, times: 1 });
    const child = ws.spawn(['--log-level', 'info', 'run', 'a.yaml', 'b.yaml', '--json']);
    const done = collect(child);
    await stderrShows(child, '"msg":"plan"');
    child.kill('SIGTERM');
    const result = await done;
    expect(result.code, result.stderr).toBe(1);
    const lines = result.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.job)).toEqual(['a', 'b']);
    expect(lines[1]).toEqual({
      job: 'b',
      kind: 'do_not_reach',
      run_id: null,
      status: 'interrupted',
      dry_run: false,
      read: 0,
      valid: 0,
      rejected: 0,
      duplicates: 0,
      unchanged: 0,
      created: 0,
      updated: 0,
      deleted: 0,
      added: 0,
      removed: 0,
      requests: 0,
      retries: 0,
      duration_ms: 0,
      rejects_file: null,
      error: 'not run: stopped by a signal before it started',
      exit_code: 1,
      job_file: 'b.yaml',
    });
    expect(result.stderr).toContain('adsync: job b not run: stopped by a signal before it started\n');
    // Nothing of job b reached the service.
    expect(ws.emulator.state().do_not_reach_lists['emu-dnr']?.members.email ?? []).toEqual([]);
  });
});
