/**
 * Crash safety: runs and backfills of audiences and catalogs killed with SIGKILL at random
 * moments, each followed by a rerun. After every kill the state database passes
 * `PRAGMA integrity_check` and has committed nothing the service does not hold; after every
 * rerun the service holds exactly the source and the state lists exactly what the service
 * holds. At the end a plain run of each job sends nothing, and the run history holds no run
 * left "running".
 *
 * The moments are random but replayable: ADSYNC_CRASH_SEED picks them (the seed is in every
 * failure message). A kill lands at a random time after the process starts (startup, lock,
 * reading) or after its "run started" log line (reading, planning, requests in flight,
 * commits). Every write request is slowed down, at random either before the service applies
 * it (a kill then loses the request: nothing may be committed for it) or after (a kill then
 * loses the answer: the rerun sends it again). Only kills that hit a live process count: each
 * job is killed until it has taken KILLS_PER_JOB of them.
 *
 * Default (npm test): 6 kills of each of the five jobs, 30 in all. ADSYNC_LONG_TESTS=1: 30 of
 * each, 150 in all.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, createWorkspace, type Workspace } from '../helpers/e2e.js';
import {
  audienceOf,
  catalogUploadUnfinished,
  committedAudience,
  committedCatalog,
  crmExport,
  csvFeedOf,
  emulatorAudience,
  expectAudienceStateBehindService,
  expectCatalog,
  expectCatalogStateBehindService,
  expectCatalogStateExact,
  expectNoStackTrace,
  feedOf,
  integrity,
  range,
  seededRandom,
  summaryOf,
  type ProductSpec,
} from './support.js';

const LONG = process.env.ADSYNC_LONG_TESTS === '1';
const KILLS_PER_JOB = LONG ? 30 : 6;
const SEED = Number(process.env.ADSYNC_CRASH_SEED ?? 20261122);

/** Each job draws from its own generator, so the jobs can run side by side and still replay. */
interface Rng {
  random: () => number;
  between: (min: number, max: number) => number;
}
function rng(seed: number): Rng {
  const random = seededRandom(seed);
  return { random, between: (min, max) => Math.floor(min + random() * (max - min + 1)) };
}

interface Attempt {
  /** Arguments of the command to kill and to rerun. */
  args: string[];
  /** What a finished rerun must leave; `behind` checks a killed run's committed state. */
  expectExact: () => void;
  expectBehind: () => void;
}

interface CrashJob {
  name: string;
  /** The write requests, slowed down by `delayMs`. */
  route: string;
  delayMs: number;
  rng: Rng;
  /** Kills land up to this long after the "run started" log line (about how long the work takes), in ms; narrowed when runs are faster. */
  windowMs: number;
  setUp: (ws: Workspace) => Promise<void>;
  /** Writes the next source (a change of the target) and says how to check the outcome. */
  next: (ws: Workspace, iteration: number) => Attempt;
  /** A plain run afterwards sends nothing. */
  finalCheck: (ws: Workspace) => Promise<void>;
}

/** Slows down the next write requests, each at random before or after the service applies it. */
function slowWrites(ws: Workspace, job: CrashJob): void {
  ws.emulator.clearFaults();
  for (let i = 0; i < 40; i++) ws.fault({ route: job.route, kind: 'delay', ms: job.delayMs, before: job.rng.random() < 0.5, times: 1 });
}

// An audience mirrored from a window of 300 export rows that moves by up to 100 each time:
// every run adds and removes (at most a third: within max_remove_ratio). `commitThread`: every
// acknowledged batch is committed by the commit thread (commit_thread_min: 1), as the large
// batches of a real export are, so kills also land while that thread writes.
function audienceRunJob(seed: number, commitThread = false): CrashJob {
  const { random, between } = rng(seed);
  let from = 1;
  return {
    name: commitThread ? 'audience run, commits on the commit thread' : 'audience run',
    route: 'POST /12/**/users',
    delayMs: 150,
    rng: { random, between },
    windowMs: 350,
    setUp: async (ws) => {
      if (commitThread) ws.write('adsync.yaml', `${ws.read('adsync.yaml')}commit_thread_min: 1\n`);
      ws.write('crm.yaml', 'name: crm\naccount_id: emu-account\nconcurrency: 1\nsource: { path: exports/crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email, partner_user_id: Id }\n');
      ws.write('exports/crm.csv', crmExport(range(1, 300)));
      expect((await ws.cli(['run', 'crm.yaml'])).code).toBe(0);
    },
    next: (ws) => {
      from = Math.max(1, from + between(-100, 100));
      const rows = range(from, from + 299);
      ws.write('exports/crm.csv', crmExport(rows));
      const before = committedAudience(ws.statePath);
      return {
        args: ['run', 'crm.yaml', '--json'],
        expectBehind: () => expectAudienceStateBehindService(before, committedAudience(ws.statePath), emulatorAudience(ws)),
        expectExact: () => {
          expect(emulatorAudience(ws)).toEqual(audienceOf(rows));
          expect(committedAudience(ws.statePath)).toEqual(audienceOf(rows));
        },
      };
    },
    finalCheck: async (ws) => {
      const r = await ws.cli(['run', 'crm.yaml', '--json']);
      expect(summaryOf(r)).toMatchObject({ status: 'success', requests: 0, added: 0, removed: 0 });
    },
  };
}

// A catalog mirrored from a window of 150 products that moves by up to 50 each time, a fifth
// of them with a new price: creates, updates and deletes in PUTs of 25, two at a time.
function catalogRunJob(seed: number): CrashJob {
  const { random, between } = rng(seed);
  let from = 1;
  let products: ProductSpec[] = [];
  return {
    name: 'catalog run',
    route: '* /12/product_catalogs/*/products',
    delayMs: 100,
    rng: { random, between },
    windowMs: 450,
    setUp: async (ws) => {
      products = range(1, 150).map((n) => ({ n, price: '10.00 USD' }));
      ws.write('shop.yaml', 'name: shop\naccount_id: emu-account\nconcurrency: 2\nsource: { path: feed.xml }\ncatalog:\n  product_catalog_id: emu-catalog\n');
      ws.write('feed.xml', feedOf(products));
      expect((await ws.cli(['run', 'shop.yaml'])).code).toBe(0);
    },
    next: (ws) => {
      from = Math.max(1, from + between(-50, 50));
      products = range(from, from + 149).map((n) => ({ n, price: random() < 0.2 ? `${between(1, 99)}.00 USD` : '10.00 USD' }));
      ws.write('feed.xml', feedOf(products));
      const target = products;
      const before = new Set(committedCatalog(ws.statePath).keys());
      return {
        args: ['run', 'shop.yaml', '--json'],
        expectBehind: () => expectCatalogStateBehindService(ws, before),
        expectExact: () => {
          expectCatalog(ws, target);
          expectCatalogStateExact(ws);
        },
      };
    },
    finalCheck: async (ws) => {
      const r = await ws.cli(['run', 'shop.yaml', '--json']);
      expect(summaryOf(r)).toMatchObject({ status: 'success', requests: 0, created: 0, updated: 0, deleted: 0 });
    },
  };
}

// Audience backfills: each a new file of 2,000 rows (some seen before), added to the audience.
function audienceBackfillJob(seed: number): CrashJob {
  const { random, between } = rng(seed);
  const all = new Set<number>();
  return {
    name: 'audience backfill',
    route: 'POST /12/**/users',
    delayMs: 150,
    rng: { random, between },
    windowMs: 330,
    setUp: async (ws) => {
      ws.write('history.yaml', 'name: history\naccount_id: emu-account\nconcurrency: 1\nsource: { path: exports/crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email, partner_user_id: Id }\n');
    },
    next: (ws, i) => {
      const start = i * 1500 + 1;
      const rows = range(start, start + 1999);
      for (const r of rows) all.add(r);
      const file = `history-${i}.csv`;
      ws.write(file, crmExport(rows));
      const before = committedAudience(ws.statePath);
      const everything = [...all];
      return {
        args: ['backfill', 'history.yaml', '--source', file, '--json'],
        expectBehind: () => expectAudienceStateBehindService(before, committedAudience(ws.statePath), emulatorAudience(ws)),
        expectExact: () => {
          expect(emulatorAudience(ws)).toEqual(audienceOf(everything));
          expect(committedAudience(ws.statePath)).toEqual(audienceOf(everything));
        },
      };
    },
    finalCheck: async (ws) => {
      // The state knows every member: a run of the whole history has nothing to send.
      ws.write('exports/crm.csv', crmExport([...all].sort((a, b) => a - b)));
      const r = await ws.cli(['run', 'history.yaml', '--json']);
      expect(summaryOf(r)).toMatchObject({ status: 'success', requests: 0, added: 0, removed: 0 });
    },
  };
}

// Catalog backfills: each a new CSV file of 200 products (new ids and new prices for old ones),
// upserted in PUTs of 25, two at a time; never a delete.
function catalogBackfillJob(seed: number): CrashJob {
  const { random, between } = rng(seed);
  const latest = new Map<number, string>();
  return {
    name: 'catalog backfill',
    route: 'PUT /12/product_catalogs/*/products',
    delayMs: 100,
    rng: { random, between },
    windowMs: 480,
    setUp: async (ws) => {
      ws.write('products.yaml', 'name: products\naccount_id: emu-account\nconcurrency: 2\nsource: { path: feed.csv }\ncatalog:\n  product_catalog_id: emu-catalog\n');
    },
    next: (ws, i) => {
      const start = i * 100 + 1;
      const products = range(start, start + 199).map((n) => ({ n, price: `${between(1, 99)}.00 USD` }));
      for (const p of products) latest.set(p.n, p.price);
      const file = `products-${i}.csv`;
      ws.write(file, csvFeedOf(products));
      const before = new Set(committedCatalog(ws.statePath).keys());
      const expected = [...latest].map(([n, price]) => ({ n, price }));
      return {
        args: ['backfill', 'products.yaml', '--source', file, '--json'],
        expectBehind: () => expectCatalogStateBehindService(ws, before),
        expectExact: () => {
          expectCatalog(ws, expected);
          expectCatalogStateExact(ws);
        },
      };
    },
    finalCheck: async (ws) => {
      ws.write('feed.csv', csvFeedOf([...latest].sort((a, b) => a[0] - b[0]).map(([n, price]) => ({ n, price }))));
      // A backfill killed after it began sending leaves the upload marked unfinished: the first
      // run then compares the state with the products the service holds (GETs only: the state
      // is exact). Whether any kill landed there depends on timing (kills before the upload
      // began or after it ended leave no mark; a loaded machine moves them): with no mark, that
      // run already requests nothing. After it, nothing is requested at all.
      const unfinished = catalogUploadUnfinished(ws.statePath);
      const r = await ws.cli(['run', 'products.yaml', '--json']);
      expect(summaryOf(r)).toMatchObject({ status: 'success', created: 0, updated: 0, deleted: 0 });
      if (unfinished) expect(r.stderr).toContain('0 it did not list (sent again while in the feed, deleted once not), 0 no longer there');
      else expect(summaryOf(r)).toMatchObject({ requests: 0 });
      expect(catalogUploadUnfinished(ws.statePath)).toBe(false);
      const again = await ws.cli(['run', 'products.yaml', '--json']);
      expect(summaryOf(again)).toMatchObject({ status: 'success', requests: 0, created: 0, updated: 0, deleted: 0 });
    },
  };
}

/**
 * Kills `child` at a random moment: a quarter of the time up to 600 ms after it was spawned,
 * otherwise up to `windowMs` after its "run started" log line. Says when.
 */
async function killAtRandom(child: ChildProcess, windowMs: number, { random, between }: Rng): Promise<{ when: string; afterStartMs?: number }> {
  let started: () => void = () => undefined;
  const runStarted = new Promise<void>((resolve) => (started = resolve));
  let seen = '';
  child.stderr?.on('data', (d: Buffer) => {
    seen += d.toString();
    if (seen.includes('"msg":"run started"')) started();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  if (random() < 0.25) {
    const ms = between(0, 600);
    await Promise.race([new Promise((r) => setTimeout(r, ms)), exited]);
    child.kill('SIGKILL');
    return { when: `${ms} ms after spawn` };
  }
  const ms = between(0, windowMs);
  await Promise.race([runStarted.then(() => new Promise((r) => setTimeout(r, ms))), exited]);
  child.kill('SIGKILL');
  return { when: `${ms} ms after "run started"`, afterStartMs: ms };
}

const JOBS = [audienceRunJob(SEED), catalogRunJob(SEED + 1), audienceBackfillJob(SEED + 2), catalogBackfillJob(SEED + 3), audienceRunJob(SEED + 4, true)];

describe(`SIGKILL at random moments (ADSYNC_CRASH_SEED=${SEED}, ${KILLS_PER_JOB} kills per job)`, () => {
  const workspaces = new Map<string, Workspace>();
  beforeAll(async () => {
    for (const job of JOBS) workspaces.set(job.name, await createWorkspace());
  });
  afterAll(async () => {
    await Promise.all([...workspaces.values()].map((ws) => ws.close()));
  });

  for (const job of JOBS) {
    // The five jobs run side by side (each with its own emulator and state): the test process
    // mostly waits for its children, and the kill moments are random anyway.
    it.concurrent(`${job.name}: every kill leaves an intact state, every rerun ends exact`, { timeout: (LONG ? 900 : 180) * 1000 }, async () => {
      const ws = workspaces.get(job.name)!;
      await job.setUp(ws);
      let kills = 0;
      const moments: string[] = [];
      // Narrowed to the run's real length when a kill comes after the run has ended.
      let windowMs = job.windowMs;
      for (let i = 0; kills < KILLS_PER_JOB; i++) {
        expect(i, `only ${kills} of ${i} attempts hit a live process`).toBeLessThan(KILLS_PER_JOB * 4);
        const attempt = job.next(ws, i);
        const context = `${job.name} #${i} (ADSYNC_CRASH_SEED=${SEED})`;
        try {
          slowWrites(ws, job);
          const child = ws.spawn([...attempt.args, '--log-level', 'info']);
          const done = collect(child);
          const { when, afterStartMs } = await killAtRandom(child, windowMs, job.rng);
          const killed = await done;
          const lastMessage = [...killed.stderr.matchAll(/"msg":"([^"]+)"/g)].pop()?.[1] ?? '(none)';
          if (process.env.ADSYNC_CRASH_VERBOSE === '1') console.log(`${job.name} #${i}: kill ${when}: ${killed.signal ?? `exit ${killed.code}`} (last log: ${lastMessage})`);
          if (killed.signal === 'SIGKILL') {
            kills += 1;
            moments.push(`${when} (last log: ${lastMessage})`);
            expect(integrity(ws.statePath)).toBe('ok');
            attempt.expectBehind();
          } else {
            // It finished before the kill: then it must have succeeded.
            expect(killed.code, killed.stderr).toBe(0);
            if (afterStartMs !== undefined) windowMs = Math.max(50, Math.floor(afterStartMs * 0.9));
          }
          ws.emulator.clearFaults();
          const rerun = await ws.cli(attempt.args);
          expect(rerun.code, rerun.stderr).toBe(0);
          expectNoStackTrace(rerun);
          expect(integrity(ws.statePath)).toBe('ok');
          attempt.expectExact();
        } catch (error) {
          if (error instanceof Error) error.message = `${context}, kill moments so far: ${moments.join('; ')}\n${error.message}`;
          throw error;
        }
      }
      ws.emulator.clearFaults();
      try {
        await job.finalCheck(ws);
      } catch (error) {
        if (error instanceof Error) error.message = `${job.name}, the plain run afterwards (ADSYNC_CRASH_SEED=${SEED}), kill moments: ${moments.join('; ')}\n${error.message}`;
        throw error;
      }
      // Every killed run was marked failed by the next run of its job; none is left running.
      const runs = (await ws.cli(['runs', '--json', '--limit', '1000'])).stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { status: string });
      expect(runs.filter((r) => r.status !== 'success' && r.status !== 'failed')).toEqual([]);
    });
  }
});
