/**
 * The fault matrix: every kind of failure the X Ads API (or the network) produces, injected
 * into the emulator while the real CLI syncs an audience and a catalog. For every cell the
 * outcome is one of two, and nothing else:
 *
 * - retried: the run ends with exit 0, the service holds exactly the source, the state
 *   database lists exactly what the service holds;
 * - a clean failure: exit 1 with one clear error line, the committed state never ahead of
 *   the service (nothing recorded as sent that the service does not hold), and the next run,
 *   without the fault, ends exact.
 *
 * Each run changes the target (additions, changes and removals or deletes), so that faults
 * hit both the Update/PUT and the Delete requests. Requests go one at a time (concurrency 1),
 * so faults are consumed in a known order and retry counts are exact.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createWorkspace, type Workspace } from '../helpers/e2e.js';
import {
  audienceOf,
  committedAudience,
  committedCatalog,
  crmExport,
  emulatorAudience,
  errorLines,
  expectAudienceStateBehindService,
  expectCatalog,
  expectCatalogStateBehindService,
  expectCatalogStateExact,
  expectNoStackTrace,
  feedOf,
  integrity,
  range,
  summaryOf,
  type ProductSpec,
} from './support.js';

type Kind = 'audience' | 'catalog';
type FaultSpec = Record<string, unknown>;

interface Cell {
  name: string;
  faults: FaultSpec[];
  /** Extra lines of the job file for this cell (retry policy, timeout). */
  job?: string;
  /** retried: exit 0 with exactly this many retries; fails: exit 1 matching `error`, then repaired. */
  expect: { retried: number; atLeastMs?: number } | { fails: RegExp };
  kinds?: Kind[];
  /** The run only removes (audience) or deletes (catalog): the faults hit a Delete request. */
  removalsOnly?: boolean;
}

const SHORT_RETRIES = 'retry: { retries: 2, min_delay_ms: 20, max_delay_ms: 50, budget_ms: 5000 }';
const SHORT_TIMEOUT = 'request_timeout_ms: 600';

/** The fault matrix. Each fault applies to the next `times` requests of the sync's write route. */
export const CELLS: Cell[] = [
  { name: 'HTTP 500 three times in a row', faults: [{ kind: 'status', status: 500, times: 3 }], expect: { retried: 3 } },
  {
    name: 'HTTP 502, 504, 408 and 423, three of each in a row (12 retries of one request)',
    faults: [502, 504, 408, 423].map((status) => ({ kind: 'status', status, times: 3 })),
    job: 'retry: { retries: 12, min_delay_ms: 20, max_delay_ms: 100, budget_ms: 20000 }',
    expect: { retried: 12 },
  },
  { name: 'HTTP 503 with Retry-After: 1, twice', faults: [{ kind: 'status', status: 503, retry_after: 1, times: 2 }], expect: { retried: 2, atLeastMs: 2000 } },
  {
    name: 'a burst of 500, 502, 503, 504, 408, 423 on one request (all 6 retries used)',
    faults: [500, 502, 503, 504, 408, 423].map((status) => ({ kind: 'status', status, times: 1 })),
    expect: { retried: 6 },
  },
  { name: '429 with x-rate-limit-reset', faults: [{ kind: 'rate_limit', with_reset: true, retry_after: 1, times: 1 }], expect: { retried: 1, atLeastMs: 1000 } },
  { name: '429 without any rate-limit header, three times', faults: [{ kind: 'rate_limit', with_reset: false, times: 3 }], expect: { retried: 3 } },
  { name: 'count mismatch on three consecutive attempts', faults: [{ kind: 'count_mismatch', times: 3 }], expect: { retried: 3 }, kinds: ['audience'] },
  { name: 'connection dropped in the middle of the request body, twice', faults: [{ kind: 'drop', times: 2 }], expect: { retried: 2 } },
  { name: 'removals only: HTTP 503 and 500 on the Delete request', faults: [{ kind: 'status', status: 503, times: 1 }, { kind: 'status', status: 500, times: 1 }], expect: { retried: 2 }, removalsOnly: true },
  {
    name: 'answers slower than the timeout (applied by the service), twice',
    faults: [{ kind: 'delay', ms: 1000, times: 2 }],
    job: SHORT_TIMEOUT,
    expect: { retried: 2 },
  },
  {
    name: 'requests held by the service past the timeout before being applied (never applied), twice',
    faults: [{ kind: 'delay', ms: 1000, before: true, times: 2 }],
    job: SHORT_TIMEOUT,
    expect: { retried: 2 },
  },
  { name: 'removals only: the Delete request dropped mid-body', faults: [{ kind: 'drop', times: 1 }], expect: { retried: 1 }, removalsOnly: true },
  {
    name: 'removals only: the Delete answered slower than the timeout (applied by the service)',
    faults: [{ kind: 'delay', ms: 1000, times: 1 }],
    job: SHORT_TIMEOUT,
    expect: { retried: 1 },
    removalsOnly: true,
  },
  {
    name: 'HTTP 400 refusing a request as a whole',
    faults: [{ kind: 'status', status: 400, code: 'INVALID_PARAMETER', times: 1 }],
    expect: { fails: /could not be delivered \((POST|PUT) \S+ answered HTTP 400: INVALID_PARAMETER injected fault: HTTP 400\); the next run sends them again/ },
  },
  {
    name: 'HTTP 503 outliving the retries',
    faults: [{ kind: 'status', status: 503, times: 50 }],
    job: SHORT_RETRIES,
    expect: { fails: /answered HTTP 503: SERVICE_UNAVAILABLE.* \(gave up after 3 attempts in \d+\.\d s \(retry\.retries: 2\); what was not acknowledged is sent by the next run\)/ },
  },
  {
    name: 'count mismatch on every attempt (each applied by the service)',
    faults: [{ kind: 'count_mismatch', times: 50 }],
    job: SHORT_RETRIES,
    expect: { fails: /the service counted success_count=\d+ total_count=\d+ for \d+ user records sent/ },
    kinds: ['audience'],
  },
  {
    name: 'every answer slower than the timeout (each applied by the service)',
    faults: [{ kind: 'delay', ms: 1000, times: 50 }],
    job: `${SHORT_RETRIES}\n${SHORT_TIMEOUT}`,
    expect: { fails: /no complete answer within 600 ms/ },
  },
  {
    name: 'every connection dropped mid-body',
    faults: [{ kind: 'drop', times: 50 }],
    job: SHORT_RETRIES,
    expect: { fails: /failed: .*(ECONNRESET|socket hang up|closed)/ },
  },
  {
    name: '429 whose reset comes after the retry budget',
    faults: [{ kind: 'rate_limit', with_reset: true, retry_after: 60, times: 50 }],
    job: SHORT_RETRIES,
    expect: { fails: /answered HTTP 429: TOO_MANY_REQUESTS.* \(the service asked to wait until \d{4}-\d\d-\d\dT[\d:.]+Z, beyond retry\.budget_ms \(5000 ms\); what was not acknowledged is sent by the next run\)/ },
  },
  {
    name: 'removals only: HTTP 503 on the Delete outliving the retries',
    faults: [{ kind: 'status', status: 503, times: 50 }],
    job: SHORT_RETRIES,
    expect: { fails: /answered HTTP 503: SERVICE_UNAVAILABLE/ },
    removalsOnly: true,
  },
  {
    name: 'removals only: every Delete answered slower than the timeout (each applied by the service)',
    faults: [{ kind: 'delay', ms: 1000, times: 50 }],
    job: `${SHORT_RETRIES}\n${SHORT_TIMEOUT}`,
    expect: { fails: /no complete answer within 600 ms/ },
    removalsOnly: true,
  },
];

// ---------------------------------------------------------------------------------------
// The two syncs. Each flips between two sources X and Y that differ by additions, changes
// and removals (so a run sends an Update/PUT request first, then a Delete); a cell marked
// `removalsOnly` shrinks the current source instead, so its faults hit a Delete request.

interface Sync<T> {
  kind: Kind;
  route: string;
  job: (extra: string) => string;
  X: T;
  Y: T;
  /** The current source without some of its members or products: a run of it only removes. */
  shrink: (current: T) => T;
  write: (ws: Workspace, source: T) => void;
  /** The service holds exactly the source, and the state lists exactly what the service holds. */
  expectExact: (ws: Workspace, source: T) => void;
  /** Snapshot of the committed state before a run, and the check after a failed one. */
  before: (ws: Workspace) => unknown;
  expectBehind: (ws: Workspace, before: unknown) => void;
}

const audienceSync: Sync<number[]> = {
  kind: 'audience',
  route: 'POST /12/accounts/*/custom_audiences/*/users',
  job: (extra) =>
    `name: crm\naccount_id: emu-account\nconcurrency: 1\n${extra}\nsource: { path: exports/crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email, partner_user_id: Id }\n`,
  X: range(1, 40),
  Y: range(11, 50),
  shrink: (rows) => rows.slice(5),
  write: (ws, rows) => ws.write('exports/crm.csv', crmExport(rows)),
  expectExact: (ws, rows) => {
    const expected = audienceOf(rows);
    expect(emulatorAudience(ws)).toEqual(expected);
    expect(committedAudience(ws.statePath)).toEqual(expected);
  },
  before: (ws) => committedAudience(ws.statePath),
  expectBehind: (ws, before) => expectAudienceStateBehindService(before as ReturnType<typeof committedAudience>, committedAudience(ws.statePath), emulatorAudience(ws)),
};

// X: P-001..P-060 at 10.00 USD. Y: P-011..P-075, P-021..P-040 at 12.00 USD. X -> Y: 15 creates,
// 20 updates (two PUTs), 10 deletes; Y -> X: 10 creates, 20 updates, 15 deletes.
const catalogSync: Sync<ProductSpec[]> = {
  kind: 'catalog',
  route: '* /12/product_catalogs/*/products',
  job: (extra) => `name: shop\naccount_id: emu-account\nconcurrency: 1\n${extra}\nsource: { path: feed.xml }\ncatalog:\n  product_catalog_id: emu-catalog\n`,
  X: range(1, 60).map((n) => ({ n, price: '10.00 USD' })),
  Y: range(11, 75).map((n) => ({ n, price: n >= 21 && n <= 40 ? '12.00 USD' : '10.00 USD' })),
  shrink: (products) => products.slice(5),
  write: (ws, products) => ws.write('feed.xml', feedOf(products)),
  expectExact: (ws, products) => {
    expectCatalog(ws, products);
    expectCatalogStateExact(ws);
  },
  before: (ws) => new Set(committedCatalog(ws.statePath).keys()),
  expectBehind: (ws, before) => expectCatalogStateBehindService(ws, before as Set<string>),
};

async function armedFaults(ws: Workspace): Promise<unknown[]> {
  return ((await (await fetch(`${ws.emulator.url}/_emulator/faults`)).json()) as { faults: unknown[] }).faults;
}

/**
 * The cells of one sync, in order, on one workspace. Each cell waits for the one before it
 * (they share the workspace); the two syncs' cells run side by side.
 */
function matrix<T>(sync: Sync<T>): { name: string; run: () => Promise<void> }[] {
  let ws: Workspace;
  let current = sync.X;
  const jobFile = `${sync.kind}.yaml`;
  let queue: Promise<void> = (async () => {
    ws = await createWorkspace();
    workspaces.push(ws);
    ws.write(jobFile, sync.job(''));
    sync.write(ws, sync.X);
    const seeded = await ws.cli(['run', jobFile]);
    expect(seeded.code, seeded.stderr).toBe(0);
    sync.expectExact(ws, sync.X);
  })();
  const inTurn = (test: () => Promise<void>) => (): Promise<void> => {
    const turn = queue.then(test);
    queue = turn.catch(() => undefined);
    return turn;
  };

  const cells = CELLS.filter((c) => (c.kinds ?? ['audience', 'catalog']).includes(sync.kind)).map((cell) => ({
    name: `${sync.kind}: ${cell.name}`,
    run: inTurn(async () => {
      ws.emulator.clearFaults();
      const target = cell.removalsOnly ? sync.shrink(current) : current === sync.X ? sync.Y : sync.X;
      ws.write(jobFile, sync.job(cell.job ?? ''));
      sync.write(ws, target);
      current = target;
      for (const fault of cell.faults) ws.fault({ route: sync.route, ...fault });
      const before = sync.before(ws);

      const result = await ws.cli(['run', jobFile, '--json']);
      expectNoStackTrace(result);
      expect(integrity(ws.statePath)).toBe('ok');
      const summary = summaryOf(result);

      if ('retried' in cell.expect) {
        expect(result.code, result.stderr).toBe(0);
        expect(summary).toMatchObject({ status: 'success', retries: cell.expect.retried });
        if (cell.expect.atLeastMs !== undefined) expect(Number(summary.duration_ms)).toBeGreaterThanOrEqual(cell.expect.atLeastMs);
        expect(await armedFaults(ws)).toEqual([]);
        sync.expectExact(ws, target);
        return;
      }

      // A clean failure: exit 1, one error line naming the cause, nothing committed that the
      // service does not hold; then the next run (the fault gone) repairs everything.
      expect(result.code, result.stderr).toBe(1);
      expect(summary.status).toBe('failed');
      const lines = errorLines(result.stderr);
      expect(lines, result.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(cell.expect.fails);
      sync.expectBehind(ws, before);

      ws.emulator.clearFaults();
      const repair = await ws.cli(['run', jobFile, '--json']);
      expect(repair.code, repair.stderr).toBe(0);
      expectNoStackTrace(repair);
      sync.expectExact(ws, target);
    }),
  }));
  cells.push({
    name: `${sync.kind}: after the whole matrix, the state and the service agree: a run sends nothing`,
    run: inTurn(async () => {
      ws.write(jobFile, sync.job(''));
      const result = await ws.cli(['run', jobFile, '--json']);
      expect(result.code, result.stderr).toBe(0);
      expect(summaryOf(result)).toMatchObject({ status: 'success', requests: 0, added: 0, removed: 0, created: 0, updated: 0, deleted: 0 });
      sync.expectExact(ws, current);
    }),
  });
  return cells;
}

const workspaces: Workspace[] = [];

describe('fault matrix (the audience and the catalog sync side by side)', () => {
  afterAll(async () => {
    await Promise.all(workspaces.map((w) => w.close()));
  });
  const audience = matrix(audienceSync);
  const catalog = matrix(catalogSync);
  // Interleaved, so that vitest starts them in an order where each sync always has its next cell going.
  for (let i = 0; i < Math.max(audience.length, catalog.length); i++) {
    for (const cell of [audience[i], catalog[i]]) if (cell) it.concurrent(cell.name, { timeout: 120_000 }, cell.run);
  }
});

describe('fault matrix: a delete applied but answered after the timeout', () => {
  it('is retried, and the run reports the products as deleted by it (not "deleted outside adsync")', { timeout: 120_000 }, async () => {
    const ws = await createWorkspace();
    try {
      ws.write('shop.yaml', catalogSync.job(SHORT_TIMEOUT));
      catalogSync.write(ws, catalogSync.X.slice(0, 10));
      expect((await ws.cli(['run', 'shop.yaml'])).code).toBe(0);
      catalogSync.write(ws, catalogSync.X.slice(0, 5));
      ws.fault({ route: 'DELETE /12/product_catalogs/*/products', kind: 'delay', ms: 1000, times: 1 });
      const result = await ws.cli(['run', 'shop.yaml', '--json']);
      expect(result.code, result.stderr).toBe(0);
      catalogSync.expectExact(ws, catalogSync.X.slice(0, 5));
      // The first attempt was applied; the retry found the products gone: this run deleted them.
      const summary = summaryOf(result);
      expect(summary.retries).toBe(1);
      expect(summary.deleted).toBe(5);
      expect(summary.notes).toBeUndefined();
    } finally {
      await ws.close();
    }
  });
});
