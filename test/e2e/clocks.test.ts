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
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { workspacePerTest, type Workspace } from '../helpers/e2e.js';
import { summaryOf } from '../fixtures/catalog/catalog-e2e.js';

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

/** Steps the CLI's wall clock (Date) back by CLOCK_STEP_BACK_MS at its first HTTP request, as NTP does to a clock that ran fast. */
const STEP_BACK = `--import ${join(import.meta.dirname, '..', 'fixtures', 'clock', 'step-back-at-first-request.js')}`;

describe('the wall clock stepped back an hour by NTP during a run', () => {
  it('a run\'s duration (summary, run history, `adsync runs`) is measured on the monotonic clock: not -3600 s', { timeout: 60_000 }, async () => {
    const ws = await skewedWorkspace(0);
    const run = await ws.cli(['run', 'crm.yaml', '--json'], { NODE_OPTIONS: STEP_BACK, CLOCK_STEP_BACK_MS: '3600000', ADSYNC_LOG_LEVEL: 'info' });
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
