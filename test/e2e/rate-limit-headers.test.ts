/**
 * The service's rate-limit headers on a successful answer (x-rate-limit-remaining 0 and a
 * x-rate-limit-reset far ahead) hold the next request of that kind until the reset. Within
 * retry.budget_ms adsync waits for it; beyond it, it stops at once, as it does for a 429 whose
 * reset comes after the budget, instead of waiting (an hour, here) with the job's lock held.
 */
import { describe, expect, it } from 'vitest';
import { collect, errorLines, jsonLines, workspacePerTest, type Workspace } from '../helpers/e2e.js';
import type { CliResult } from '../helpers/cli.js';
import { catalogIds, catalogJob, feedItem, ids, productRequests, rssFeed, summaryOf } from '../fixtures/catalog/catalog-e2e.js';

const HOUR_MS = 3_600_000;
const USERS_ROUTE = 'POST /12/accounts/:account_id/custom_audiences/:custom_audience_id/users';

const newWorkspace = workspacePerTest();

/** A workspace whose emulator allows `limit` requests of `family` per hour, with a clock the test moves on. */
async function limitedWorkspace(family: 'write' | 'audience_users', limit: number): Promise<{ ws: Workspace; passHour: () => void }> {
  let offset = 0;
  const ws = await newWorkspace({ rateLimits: { [family]: { limit, windowMs: HOUR_MS } }, now: () => Date.now() + offset, timestampSkewSeconds: 2 * 3600 });
  return { ws, passHour: () => (offset += HOUR_MS) };
}

/** Runs `adsync <args>`, killed after 15 s: a run that waits for the reset would wait an hour. */
async function runAtMost15s(ws: Workspace, args: string[]): Promise<CliResult> {
  const child = ws.spawn(args);
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  try {
    return await collect(child);
  } finally {
    clearTimeout(timer);
  }
}

const NOT_SENT =
  /^was not sent: the service's rate-limit headers \(x-rate-limit-remaining 0\) allow no more of these requests before their reset \(the service asked to wait until (\S+), beyond retry\.budget_ms \(20000 ms\); what was not acknowledged is sent by the next run\)$/;

describe('rate-limit headers holding requests beyond the retry budget', () => {
  it('catalog: the third PUT is not sent; the run stops at once with the reset time, the next run sends it', { timeout: 60_000 }, async () => {
    const { ws, passHour } = await limitedWorkspace('write', 2);
    ws.write('shop.yaml', `${catalogJob({ source: 'feed.xml' })}concurrency: 1\n`);
    const all = ids(60);
    ws.write('feed.xml', rssFeed(all.map((id) => feedItem(id))));

    const started = Date.now();
    const run = await runAtMost15s(ws, ['run', 'shop.yaml', '--json']);
    expect(run.signal, 'still waiting after 15 s').toBeNull();
    expect(run.code, run.stderr).toBe(1);
    const summary = summaryOf(run);
    expect(summary).toMatchObject({ status: 'failed', created: 50, requests: 3, retries: 0 });
    const prefix = 'PUT /12/product_catalogs/emu-catalog/products ';
    const error = String(summary.error);
    expect(error.startsWith(prefix)).toBe(true);
    const until = NOT_SENT.exec(error.slice(prefix.length))?.[1];
    expect(until, error).toBeDefined();
    // The reset the service announced (the end of its hour), plus adsync's margin for clock skew.
    expect(Math.abs(Date.parse(String(until)) - (started + HOUR_MS))).toBeLessThan(10_000);
    expect(errorLines(run.stderr)).toEqual([`adsync: job shop failed: ${error}`]);
    expect(productRequests(ws, 'PUT')).toBe(2);
    expect(catalogIds(ws)).toEqual(all.slice(0, 50));

    passHour();
    const next = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(next.code, next.stderr).toBe(0);
    expect(summaryOf(next)).toMatchObject({ status: 'success', created: 10, unchanged: 50 });
    expect(catalogIds(ws)).toEqual(all);
  });

  it('catalog: the last requests of a window the service allows are sent, not paced half an hour apart', { timeout: 60_000 }, async () => {
    const { ws } = await limitedWorkspace('write', 20);
    ws.write('shop.yaml', `${catalogJob({ source: 'feed.xml' })}concurrency: 1\n`);
    // 20 PUTs of 25 (the window's whole limit): after the 18th, 2 of 20 remain for the hour.
    const all = ids(500);
    ws.write('feed.xml', rssFeed(all.map((id) => feedItem(id))));
    const run = await runAtMost15s(ws, ['run', 'shop.yaml', '--json']);
    expect(run.signal, 'still waiting after 15 s').toBeNull();
    expect(run.code, run.stderr).toBe(0);
    expect(summaryOf(run)).toMatchObject({ status: 'success', created: 500, retries: 0 });
    expect(productRequests(ws, 'PUT')).toBe(20);
    expect(catalogIds(ws)).toEqual(all);
  });

  it('audience: the removals are not sent after the additions; the run stops at once, removes nothing, the next run removes', { timeout: 60_000 }, async () => {
    const { ws, passHour } = await limitedWorkspace('audience_users', 2);
    const emails = (from: number, to: number): string => `Email\n${Array.from({ length: to - from }, (_, i) => `user${from + i}@example.com`).join('\n')}\n`;
    ws.write('crm.yaml', 'name: crm\naccount_id: emu-account\nsource: { path: crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email }\n');
    ws.write('crm.csv', emails(0, 20));
    expect((await ws.cli(['run', 'crm.yaml'])).code).toBe(0);
    // Users 0-4 leave, 20-24 join: an addition request (the window's last), then a removal request.
    ws.write('crm.csv', emails(5, 25));

    const run = await runAtMost15s(ws, ['run', 'crm.yaml', '--json']);
    expect(run.signal, 'still waiting after 15 s').toBeNull();
    expect(run.code, run.stderr).toBe(1);
    const summary = summaryOf(run);
    expect(summary).toMatchObject({ status: 'failed', added: 5, removed: 0, requests: 1, retries: 0 });
    const prefix = 'POST /12/accounts/emu-account/custom_audiences/emu-audience/users ';
    const error = String(summary.error);
    expect(error.startsWith(prefix)).toBe(true);
    expect(NOT_SENT.test(error.slice(prefix.length)), error).toBe(true);
    expect(errorLines(run.stderr)).toEqual([`adsync: job crm failed: ${error}`]);
    expect(ws.emulator.state().requests.by_route[USERS_ROUTE]).toBe(2);
    expect(ws.emulator.state().custom_audiences['emu-audience']?.members.email?.length).toBe(25);

    passHour();
    const next = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(next.code, next.stderr).toBe(0);
    expect(summaryOf(next)).toMatchObject({ status: 'success', added: 0, removed: 5, unchanged: 20 });
    expect(ws.emulator.state().custom_audiences['emu-audience']?.members.email?.length).toBe(20);
  });

  it("reads x-rate-limit-reset on the service's clock (the Date of its answer): this machine's clock a minute fast still waits for the reset instead of sending into 429s", { timeout: 60_000 }, async () => {
    // The service's clock is 60 s behind this machine's (within the OAuth window); it allows 2
    // writes per 4 s. Read on this machine's clock, every reset it sends is a minute old.
    const ws = await newWorkspace({ rateLimits: { write: { limit: 2, windowMs: 4_000 } }, now: () => Date.now() - 60_000 });
    ws.write('shop.yaml', `${catalogJob({ source: 'feed.xml' })}concurrency: 1\n`);
    const all = ids(100);
    ws.write('feed.xml', rssFeed(all.map((id) => feedItem(id))));
    const run = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(run.code, run.stderr).toBe(0);
    // Four PUTs, two windows: the third waits for the first window's reset, and none is refused.
    expect(summaryOf(run)).toMatchObject({ status: 'success', created: 100, requests: 5, retries: 0 });
    expect(ws.emulator.state().requests.by_status['429'] ?? 0).toBe(0);
    expect(catalogIds(ws)).toEqual(all);
  });

  it('a reset or Retry-After too far ahead for a date (a header in the wrong unit): the same clean stop, in seconds, not "Invalid time value"', { timeout: 60_000 }, async () => {
    const ws = await newWorkspace();
    ws.write('crm.csv', `Email\n${Array.from({ length: 20 }, (_, i) => `user${i}@example.com`).join('\n')}\n`);
    ws.write('crm.yaml', 'name: crm\naccount_id: emu-account\nsource: { path: crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email }\n');
    const SECONDS = 10_000_000_000_000;
    // Whole seconds from when the answer came; the reset header is itself rounded up to a second.
    const tail = `\\(the service asked to wait (${SECONDS - 1}|${SECONDS}|${SECONDS + 1}) s, beyond retry\\.budget_ms \\(20000 ms\\); what was not acknowledged is sent by the next run\\)$`;
    for (const [fault, answered] of [
      [{ kind: 'rate_limit', with_reset: true, retry_after: SECONDS }, 'HTTP 429: TOO_MANY_REQUESTS Rate limit exceeded'],
      [{ kind: 'status', status: 503, retry_after: SECONDS }, 'HTTP 503: SERVICE_UNAVAILABLE injected fault: HTTP 503'],
    ] as const) {
      ws.fault({ route: 'POST /12/accounts/*/custom_audiences/*/users', ...fault });
      const run = await ws.cli(['run', 'crm.yaml', '--json']);
      expect(run.code, run.stderr).toBe(1);
      const summary = summaryOf(run);
      expect(summary).toMatchObject({ status: 'failed', added: 0, requests: 1, retries: 0 });
      const error = String(summary.error);
      expect(error).toMatch(new RegExp(`^POST /12/accounts/emu-account/custom_audiences/emu-audience/users answered ${answered} ${tail}`));
      expect(errorLines(run.stderr)).toEqual([`adsync: job crm failed: ${error}`]);
    }
    const next = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(summaryOf(next)).toMatchObject({ status: 'success', added: 20 });
  });
});

describe('the ETA of an upload the rate limit paces', () => {
  it("counts the windows its requests left need, not the pace of the first window's burst, and the run ends when it said", { timeout: 60_000 }, async () => {
    // 4 PUTs a window of 6 s: the 10 PUTs of 250 products take three windows, ~12 s.
    const ws = await newWorkspace({ rateLimits: { write: { limit: 4, windowMs: 6_000 } } });
    ws.write('adsync.yaml', `${ws.read('adsync.yaml')}progress_interval_seconds: 1\n`);
    ws.write('shop.yaml', `${catalogJob({ source: 'feed.xml' })}concurrency: 1\n`);
    const all = ids(250);
    ws.write('feed.xml', rssFeed(all.map((id) => feedItem(id))));
    const run = await ws.cli(['run', 'shop.yaml', '--json'], { ADSYNC_LOG_LEVEL: 'info' });
    expect(run.code, run.stderr).toBe(0);
    expect(productRequests(ws, 'PUT')).toBe(10);
    const lines = jsonLines(run.stderr);
    const finished = Number(lines.find((l) => l.msg === 'run finished')?.time);
    const uploading = lines.filter((l) => l.msg === 'progress' && l.phase === 'uploading' && Number(l.sent) > 0 && Number(l.sent) < 250);
    expect(uploading.length, run.stderr).toBeGreaterThanOrEqual(5);
    for (const line of uploading) {
      // The time left it gave, against the time the run then took to end (within a second here;
      // the margin: seconds rounded, the window's length seen from its first answer, the last answer).
      const left = (finished - Number(line.time)) / 1000;
      expect(Number(line.etaSeconds), JSON.stringify(line)).toBeGreaterThanOrEqual(left - 2);
      expect(Number(line.etaSeconds), JSON.stringify(line)).toBeLessThanOrEqual(left + 2);
    }
    // The first window's burst alone (100 products in about a second) said a second or two.
    expect(Number(uploading[0]?.etaSeconds)).toBeGreaterThanOrEqual(8);
  });
});

