/**
 * Clocks that are not what they should be.
 *
 * This machine's clock a few minutes off the service's (no NTP, a VM restored from a snapshot),
 * within what OAuth still accepts (the emulator's 300 s). The service's x-rate-limit-reset is
 * an epoch time of its own clock: adsync reads it on its own clock through the Date header of
 * the same answer. Without that, a clock 4 minutes behind waited 4 minutes for a reset due in
 * a second (here, past retry.budget_ms: the run failed at once), and a clock 4 minutes ahead
 * took every reset for past and sent again every second, 429 after 429.
 */
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { openTestDatabase } from '../helpers/sqlite.js';
import { describe, expect, it } from 'vitest';
import { collect, errorLines, workspacePerTest, type Workspace } from '../helpers/e2e.js';
import { summaryOf } from '../fixtures/catalog/catalog-e2e.js';
import { committedAudience, crmExport, emulatorAudience, range, waitFor } from '../reliability/support.js';

const MINUTES_4 = 4 * 60_000;
const USERS = 'POST /12/accounts/*/custom_audiences/*/users';
const USERS_ROUTE = 'POST /12/accounts/:account_id/custom_audiences/:custom_audience_id/users';

const newWorkspace = workspacePerTest();

/**
 * A workspace whose emulator's clock is `serviceAheadMs` ahead of this machine's, with a 20-user
 * audience job; `pass(ms)` moves the emulator's clock on (a rate-limit window gone by).
 */
async function skewedWorkspace(serviceAheadMs: number, options: Parameters<typeof newWorkspace>[0] = {}): Promise<Workspace & { pass: (ms: number) => void }> {
  let passed = 0;
  const ws = await newWorkspace({ ...options, now: () => Date.now() + serviceAheadMs + passed });
  ws.write('crm.csv', emails(0, 20));
  ws.write('crm.yaml', 'name: crm\naccount_id: emu-account\nsource: { path: crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email }\n');
  return Object.assign(ws, { pass: (ms: number) => (passed += ms) });
}

function emails(from: number, to: number): string {
  return `Email\n${Array.from({ length: to - from }, (_, i) => `user${from + i}@example.com`).join('\n')}\n`;
}

/** The waits (ms) of the run's `retrying API call` lines. */
function retryWaits(stderr: string): number[] {
  return stderr
    .split('\n')
    .filter((l) => l.includes('"retrying API call"'))
    .map((l) => Number((JSON.parse(l) as { waitMs?: unknown }).waitMs));
}

/** Runs the job once against a 429 whose reset is `resetIn` s ahead (the service's clock); returns the wait before the retry. */
async function waitAfter429(ws: Workspace, resetIn: number): Promise<number | undefined> {
  ws.fault({ route: USERS, kind: 'rate_limit', with_reset: true, retry_after: resetIn, times: 1 });
  const run = await ws.cli(['run', 'crm.yaml', '--json']);
  expect(run.code, run.stderr).toBe(0);
  expect(summaryOf(run)).toMatchObject({ status: 'success', added: 20, requests: 2, retries: 1 });
  const [wait, ...more] = retryWaits(run.stderr);
  expect(more).toEqual([]);
  return wait;
}

describe('a machine clock minutes off the service: rate-limit resets are read on its own clock', () => {
  it('4 minutes behind: a 429 whose reset is 1 s ahead is retried about 1 s later, not refused as 4 minutes beyond the budget', { timeout: 60_000 }, async () => {
    const wait = await waitAfter429(await skewedWorkspace(MINUTES_4), 1);
    // The reset (whole seconds) is 1-2 s ahead; the Date header's own second may add one.
    expect(wait).toBeGreaterThanOrEqual(1000);
    expect(wait).toBeLessThanOrEqual(3500);
  });

  it('4 minutes behind: x-rate-limit-remaining 0 on an answer holds the next request until the reset, a few seconds, not 4 minutes', { timeout: 60_000 }, async () => {
    const ws = await skewedWorkspace(MINUTES_4, { rateLimits: { audience_users: { limit: 1, windowMs: 3000 } } });
    expect((await ws.cli(['run', 'crm.yaml'])).code).toBe(0);
    ws.pass(5000); // the first run's window is over
    // Users 0-4 leave, 20-24 join: an addition request (the window's only one), then a removal request.
    ws.write('crm.csv', emails(5, 25));
    const run = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(summaryOf(run)).toMatchObject({ status: 'success', added: 5, removed: 5, requests: 2, retries: 0 });
    expect(ws.emulator.state().requests.by_route[USERS_ROUTE]).toBe(3);
  });

  it('4 minutes ahead: a 429 whose reset is 3 s ahead is retried 3 s later, not every second as if the reset had passed', { timeout: 60_000 }, async () => {
    const wait = await waitAfter429(await skewedWorkspace(-MINUTES_4), 3);
    expect(wait).toBeGreaterThanOrEqual(2500);
    expect(wait).toBeLessThanOrEqual(5500);
  });
});

/** Shifts the CLI's wall clock (Date) by CLOCK_SHIFT_MS, at once or (CLOCK_SHIFT_AT=first-request) at its first HTTP request, as NTP steps a clock. */
const SHIFT_CLOCK = `--import ${join(import.meta.dirname, '..', 'fixtures', 'clock', 'shift-clock.js')}`;

describe('the wall clock stepped by NTP during a run', () => {
  it('forward an hour while a 429 is answered: its 1 s reset is waited for, not refused as beyond retry.budget_ms', { timeout: 60_000 }, async () => {
    const ws = await skewedWorkspace(0, { timestampSkewSeconds: 7200 });
    ws.fault({ route: USERS, kind: 'rate_limit', with_reset: true, retry_after: 1, times: 1 });
    const run = await ws.cli(['run', 'crm.yaml', '--json'], { NODE_OPTIONS: SHIFT_CLOCK, CLOCK_SHIFT_MS: '3600000', CLOCK_SHIFT_AT: 'first-request' });
    expect(run.code, run.stderr).toBe(0);
    expect(summaryOf(run)).toMatchObject({ status: 'success', added: 20, retries: 1 });
    expect(retryWaits(run.stderr)[0]).toBeLessThanOrEqual(3500);
  });

  it('back an hour after the first request: a rate_limits window of 2 s holds the next request 2 s, not an hour', { timeout: 60_000 }, async () => {
    const ws = await skewedWorkspace(0, { timestampSkewSeconds: 7200 });
    ws.write('adsync.yaml', `${ws.read('adsync.yaml')}rate_limits: { audience_users: { requests: 1, window_seconds: 2 } }\n`);
    expect((await ws.cli(['run', 'crm.yaml'])).code).toBe(0);
    // Users 0-4 leave, 20-24 join: an addition request, then a removal request, 2 s apart.
    ws.write('crm.csv', emails(5, 25));
    const child = ws.spawn(['run', 'crm.yaml', '--json'], { NODE_OPTIONS: SHIFT_CLOCK, CLOCK_SHIFT_MS: '-3600000', CLOCK_SHIFT_AT: 'first-request' });
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const run = await collect(child).finally(() => clearTimeout(timer));
    expect(run.signal, 'still waiting after 20 s').toBeNull();
    expect(run.code, run.stderr).toBe(0);
    expect(summaryOf(run)).toMatchObject({ status: 'success', added: 5, removed: 5, requests: 2, retries: 0 });
  });

  it('back an hour: a run\'s duration (summary, run history, `adsync runs`) is measured on the monotonic clock, not -3600 s', { timeout: 60_000 }, async () => {
    const ws = await skewedWorkspace(0);
    const run = await ws.cli(['run', 'crm.yaml', '--json'], { NODE_OPTIONS: SHIFT_CLOCK, CLOCK_SHIFT_MS: '-3600000', CLOCK_SHIFT_AT: 'first-request', ADSYNC_LOG_LEVEL: 'info' });
    expect(run.code, run.stderr).toBe(0);
    const summary = summaryOf(run);
    expect(summary).toMatchObject({ status: 'success', added: 20, requests: 1 });
    // The step did happen: the log's own times (pino's, from Date) went back an hour.
    const times = run.stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => Number((JSON.parse(l) as { time: unknown }).time));
    expect(Math.min(...times)).toBeLessThan(Math.max(...times) - 3_000_000);
    const duration = Number(summary.duration_ms);
    expect(duration).toBeGreaterThanOrEqual(0);
    expect(duration).toBeLessThan(30_000);

    const history = await ws.cli(['runs', '--json']);
    const [record] = history.stdout.trim().split('\n').map((l) => JSON.parse(l) as { startedAt: string; finishedAt: string });
    expect(Date.parse(String(record?.finishedAt)) - Date.parse(String(record?.startedAt))).toBe(duration);
    const table = await ws.cli(['runs']);
    expect(table.stdout).toContain(`  ${(duration / 1000).toFixed(1)}s  `);
  });
});

/**
 * The wall clock stepped forward past a live run's lock expiry (lock.ttl_seconds, 120 s) between
 * two of its heartbeats: NTP correcting a clock that lagged, a VM resumed after a pause (its
 * timers, and so the heartbeats, run on the monotonic clock). The second process here sees the
 * clock 5 minutes on; both are on this machine, and the first is alive. Its lock was taken over:
 * two runs of one job, or two writers on one audience, at once.
 */
describe('a lock of a live run of this machine, expired by a wall clock stepped forward', () => {
  const FIVE_MINUTES_ON = { NODE_OPTIONS: SHIFT_CLOCK, CLOCK_SHIFT_MS: String(5 * 60_000) };

  it('is not taken over by a second run of the job: it is refused, naming the holder', { timeout: 60_000 }, async () => {
    const ws = await skewedWorkspace(0, { timestampSkewSeconds: 3600 });
    // The first run's batch is applied, its answer held back 4 s.
    ws.fault({ route: USERS, kind: 'delay', ms: 4000, times: 1 });
    const first = collect(ws.spawn(['run', 'crm.yaml', '--json']));
    await waitFor(() => ws.emulator.state().custom_audiences['emu-audience']?.members.email?.length === 20, 15_000, "the first run's batch to be applied");

    const second = await ws.cli(['run', 'crm.yaml', '--json'], FIVE_MINUTES_ON);
    expect(second.code, second.stderr).toBe(1);
    const error = String(summaryOf(second).error);
    expect(error).toMatch(
      /^job crm is already running \(lock held by \S+ since \S+, last heartbeat \S+\); nothing was done \(its lock's expiry, \S+, has passed, but that process is still running on this host: the clock was stepped forward since its last heartbeat, or it is stuck; let it end, or stop it\)$/,
    );
    expect(errorLines(second.stderr)).toEqual([`adsync: job crm failed: ${error}`]);
    const done = await first;
    expect(done.code, done.stderr).toBe(0);
    expect(summaryOf(done)).toMatchObject({ status: 'success', added: 20 });
    expect(ws.emulator.state().requests.by_route[USERS_ROUTE]).toBe(1);
  });

  it("is waited for by another job on the audience, which then removes what the first added", { timeout: 60_000 }, async () => {
    const ws = await skewedWorkspace(0, { timestampSkewSeconds: 3600 });
    const audience = (name: string, mode: string): string =>
      `name: ${name}\naccount_id: emu-account\nsource: { path: ids.csv }\naudience:\n  custom_audience_id: emu-audience\n  mode: ${mode}\n  identifiers: { email: Email, partner_user_id: Id }\n`;
    ws.write('add.yaml', audience('add', 'add'));
    ws.write('rm.yaml', audience('rm', 'remove'));
    ws.write('ids.csv', crmExport(range(1, 3)));
    ws.fault({ route: USERS, kind: 'delay', ms: 4000, times: 1 });
    const add = collect(ws.spawn(['run', 'add.yaml', '--json']));
    await waitFor(() => ws.emulator.state().custom_audiences['emu-audience']?.members.email?.length === 3, 15_000, "add's batch to be applied");

    const rm = await ws.cli(['run', 'rm.yaml', '--json'], FIVE_MINUTES_ON);
    const added = await add;
    expect(added.code, added.stderr).toBe(0);
    expect(rm.code, rm.stderr).toBe(0);
    expect(summaryOf(rm)).toMatchObject({ status: 'success', removed: 6 });
    expect(summaryOf(rm).notes).toEqual([expect.stringMatching(/^waited \d+\.\d s for custom audience emu-audience of account emu-account: job add \(run \S+\) was writing to it/)]);
    expect(emulatorAudience(ws)).toEqual({ email: [], partner_user_id: [] });
    expect(committedAudience(ws.statePath)).toEqual({ email: [], partner_user_id: [] });
  });

  it('of a live adsync process, expired for more than 15 minutes (a hung holder, or its pid now another adsync process), is taken over by the next run of the job', { timeout: 60_000 }, async () => {
    const ws = await skewedWorkspace(0);
    ws.write('adsync.yaml', `${ws.read('adsync.yaml')}lock: { ttl_seconds: 2, heartbeat_seconds: 1 }\n`);
    ws.write('empty-jobs/.keep', '');
    const other = ws.spawn(['schedule', '--jobs', 'empty-jobs']);
    const otherEnded = collect(other);
    try {
      await waitFor(() => existsSync(`/proc/${String(other.pid)}/cmdline`), 5000, 'the scheduler to start');
      const lockOf = (expiresAt: number): void => {
        const db = openTestDatabase(ws.statePath);
        db.prepare('DELETE FROM locks').run();
        db.prepare('INSERT INTO locks (job, owner, acquired_at, heartbeat_at, expires_at) VALUES (?, ?, ?, ?, ?)').run('crm', `${hostname()}:${String(other.pid)}:abcdef`, expiresAt - 2000, expiresAt - 2000, expiresAt);
        db.close();
      };
      expect((await ws.cli(['run', 'crm.yaml'])).code).toBe(0);
      // Expired 1 s ago: within the 15 minutes a stepped clock is given, refused.
      lockOf(Date.now() - 1000);
      const refused = await ws.cli(['run', 'crm.yaml', '--json']);
      expect(refused.code, refused.stderr).toBe(1);
      expect(String(summaryOf(refused).error)).toContain('is already running');
      // Expired 16 minutes ago: taken over.
      lockOf(Date.now() - 16 * 60_000);
      const run = await ws.cli(['run', 'crm.yaml', '--json']);
      expect(run.code, run.stderr).toBe(0);
      expect(summaryOf(run)).toMatchObject({ status: 'success' });
    } finally {
      other.kill('SIGTERM');
      await otherEnded;
    }
  });

  it('of a live adsync process whose heartbeat stands still (its run ended without releasing it) is taken over after lock.ttl_seconds of waiting', { timeout: 60_000 }, async () => {
    const ws = await skewedWorkspace(0);
    ws.write('adsync.yaml', `${ws.read('adsync.yaml')}lock: { ttl_seconds: 2, heartbeat_seconds: 1 }\n`);
    expect((await ws.cli(['run', 'crm.yaml'])).code).toBe(0);
    ws.write('empty-jobs/.keep', '');
    const holder = ws.spawn(['schedule', '--jobs', 'empty-jobs']);
    const holderEnded = collect(holder);
    try {
      await waitFor(() => existsSync(`/proc/${String(holder.pid)}/cmdline`), 5000, 'the scheduler to start');
      const db = openTestDatabase(ws.statePath);
      const beat = Date.now() - 600_000;
      db.prepare('INSERT INTO locks (job, owner, acquired_at, heartbeat_at, expires_at) VALUES (?, ?, ?, ?, ?)').run('custom_audience:emu-account:emu-audience', `${hostname()}:${String(holder.pid)}:abcdef:20261122T000000Z-abcdef`, beat, beat, beat + 2000);
      db.close();
      ws.write('crm.csv', emails(0, 25));
      const child = ws.spawn(['run', 'crm.yaml', '--json']);
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const run = await collect(child).finally(() => clearTimeout(timer));
      expect(run.signal, 'still waiting after 20 s').toBeNull();
      expect(run.code, run.stderr).toBe(0);
      expect(summaryOf(run)).toMatchObject({ status: 'success', added: 5 });
      const waited = Number(/^waited (\d+\.\d) s for custom audience emu-audience/.exec(String((summaryOf(run).notes as string[] | undefined)?.[0]))?.[1]);
      expect(waited).toBeGreaterThanOrEqual(2);
    } finally {
      holder.kill('SIGTERM');
      await holderEnded;
    }
  });
});
