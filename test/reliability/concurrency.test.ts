/**
 * One run of a job at a time. Two `adsync run` of the same job started together: one runs,
 * the other reports that the job is running (naming the lock's holder) and exits 1 without
 * touching the state: no run recorded, no lock, no member or product changed, every table
 * of the state database as it was. The run that holds the lock ends exact. A run that lasts
 * far longer than lock.ttl_seconds keeps its lock by its heartbeat. And two processes
 * opening a new state database at once: the second waits for the schema the first creates.
 */
import { chmodSync, mkdirSync } from 'node:fs';
import http, { type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { openTestDatabase } from '../helpers/sqlite.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/state/sqlite/schema.js';
import { collect, createWorkspace, summaries, type Workspace } from '../helpers/e2e.js';
import type { CliResult } from '../helpers/cli.js';
import {
  audienceOf,
  committedAudience,
  crmExport,
  dumpState,
  emulatorAudience,
  errorLines,
  expectCatalog,
  expectCatalogStateExact,
  expectNoStackTrace,
  sleep,
  feedOf,
  range,
  waitFor,
} from './support.js';

/**
 * Serves the job's source over HTTP and holds every answer until released: the run that got
 * the lock cannot finish while the other one starts, however slow the machine.
 */
interface HeldSource {
  url: (name: string) => string;
  content: string;
  /** Requests waiting for an answer. */
  waiting: number;
  /** Holds the answers from now on. */
  hold: () => void;
  /** Answers the waiting requests, and the next ones at once, until hold(). */
  release: () => void;
  close: () => Promise<void>;
}

async function heldSource(): Promise<HeldSource> {
  const pending: ServerResponse[] = [];
  let holding = true;
  const answer = (res: ServerResponse): void => {
    res.writeHead(200, { 'content-type': 'text/plain' }).end(held.content);
  };
  const held: HeldSource = {
    url: () => '',
    content: '',
    get waiting() {
      return pending.length;
    },
    hold: () => {
      holding = true;
    },
    release: () => {
      holding = false;
      for (const res of pending.splice(0)) answer(res);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server = http.createServer((_req, res) => (holding ? pending.push(res) : answer(res)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  held.url = (name) => `http://127.0.0.1:${port}/${name}`;
  return held;
}

let ws: Workspace;
let source: HeldSource;
beforeAll(async () => {
  ws = await createWorkspace();
  source = await heldSource();
  // The state database exists before the races below (a fresh one is the last test's subject).
  expect((await ws.cli(['runs'])).code).toBe(0);
  ws.write('crm.yaml', `name: crm\naccount_id: emu-account\nsource: { path: "${source.url('crm.csv')}" }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email, partner_user_id: Id }\n`);
  ws.write('shop.yaml', `name: shop\naccount_id: emu-account\nsource: { path: "${source.url('feed.xml')}" }\ncatalog:\n  product_catalog_id: emu-catalog\n`);
});
afterAll(async () => {
  source.release();
  await source.close();
  await ws.close();
});

const LOCKED = /^adsync: job (crm|shop) failed: job \1 is already running \(lock held by ([^:\s]+):(\d+):[0-9a-f]+ since \S+, last heartbeat \S+\); nothing was done \(if that process is gone, the lock expires at \S+; or remove it with `adsync unlock \1`\)$/;

/**
 * Starts two runs of `job` at the same instant. The one that takes the lock waits for its
 * source; the other must give up on its own, before the source is released.
 */
async function runTwoAtOnce(job: string): Promise<{ winner: CliResult; loser: CliResult; loserPid: number | undefined }> {
  source.hold();
  const a = ws.spawn(['run', job, '--json']);
  const b = ws.spawn(['run', job, '--json']);
  const [doneA, doneB] = [collect(a), collect(b)];
  let timer: NodeJS.Timeout | undefined;
  const neither = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('neither run gave up within 10 s: both are running the job')), 10_000);
  });
  const first = await Promise.race([doneA.then((r) => ({ r, loser: a, winner: doneB })), doneB.then((r) => ({ r, loser: b, winner: doneA })), neither]).finally(() => {
    clearTimeout(timer);
    source.release();
  });
  expect(first.r.code, first.r.stderr).toBe(1);
  const winner = await first.winner;
  expect(winner.code, winner.stderr).toBe(0);
  return { winner, loser: first.r, loserPid: first.loser.pid };
}

function expectRefused(loser: CliResult, winnerRunId: unknown, loserPid: number | undefined): void {
  expectNoStackTrace(loser);
  const lines = errorLines(loser.stderr);
  expect(lines, loser.stderr).toHaveLength(1);
  const match = LOCKED.exec(lines[0] ?? '');
  expect(match, lines[0]).not.toBeNull();
  // The holder named is the other process, on this machine.
  expect(match?.[2]).toBe(hostname());
  expect(Number(match?.[3])).not.toBe(loserPid);
  const [summary] = summaries(loser);
  expect(summary).toMatchObject({ status: 'failed', exit_code: 1, requests: 0, added: 0, removed: 0, created: 0, deleted: 0 });
  expect(summary?.run_id).not.toBe(winnerRunId);
}

async function history(job: string): Promise<string[]> {
  const r = await ws.cli(['runs', '--json', '--job', job, '--limit', '100']);
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { runId: string }).runId);
}

describe('two runs of the same job at once', () => {
  it('audience: one runs, the other says the job is running and records nothing', async () => {
    for (const rows of [range(1, 40), range(11, 50)]) {
      source.content = crmExport(rows);
      const { winner, loser, loserPid } = await runTwoAtOnce('crm.yaml');
      const winnerRunId = summaries(winner)[0]?.run_id;
      expectRefused(loser, winnerRunId, loserPid);
      expect(emulatorAudience(ws)).toEqual(audienceOf(rows));
      expect(committedAudience(ws.statePath)).toEqual(audienceOf(rows));
      const runs = await history('crm');
      expect(runs).toContain(winnerRunId);
      expect(runs).not.toContain(summaries(loser)[0]?.run_id);
    }
  });

  it('catalog: the same', async () => {
    for (const n of [30, 45]) {
      const products = range(1, n).map((i) => ({ n: i, price: `${n}.00 USD` }));
      source.content = feedOf(products);
      const { winner, loser, loserPid } = await runTwoAtOnce('shop.yaml');
      expectRefused(loser, summaries(winner)[0]?.run_id, loserPid);
      expectCatalog(ws, products);
      expectCatalogStateExact(ws);
      expect(await history('shop')).not.toContain(summaries(loser)[0]?.run_id);
    }
  });

  it('a run started while another holds the lock leaves every table of the state database as it was', async () => {
    source.content = crmExport(range(20, 60));
    source.hold();
    const first = ws.spawn(['run', 'crm.yaml', '--json', '--log-level', 'info']);
    const firstDone = collect(first);
    await waitFor(() => source.waiting === 1, 20_000, 'the first run to ask for its source');
    const before = dumpState(ws.statePath);
    // The job's lock and its audience's (jobs on one audience take turns).
    expect(before.locks?.map((row) => (JSON.parse(row) as { job: string }).job)).toEqual(['crm', 'custom_audience:emu-account:emu-audience']);

    let timer: NodeJS.Timeout | undefined;
    const second = await Promise.race([
      ws.cli(['run', 'crm.yaml', '--json']),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          source.release();
          reject(new Error('the second run did not give up within 10 s: it is running the job too'));
        }, 10_000);
      }),
    ]).finally(() => clearTimeout(timer));
    expect(second.code).toBe(1);
    expectRefused(second, undefined, undefined);
    expect(dumpState(ws.statePath)).toEqual(before);

    source.release();
    const done = await firstDone;
    expect(done.code, done.stderr).toBe(0);
    expect(emulatorAudience(ws)).toEqual(audienceOf(range(20, 60)));
    expect(dumpState(ws.statePath).locks).toEqual([]);
  });

  it('a run lasting well past lock.ttl_seconds keeps its lock by heartbeats: a run started after the ttl is refused', { timeout: 40_000 }, async () => {
    const TTL_MS = 2000;
    const slow = await createWorkspace();
    try {
      slow.write(
        'adsync.yaml',
        'rejects_dir: rejects\nrequest_timeout_ms: 30000\nretry: { retries: 0 }\nlock: { ttl_seconds: 2, heartbeat_seconds: 1 }\n',
      );
      slow.write('exports/crm.csv', crmExport(range(1, 20)));
      slow.write('crm.yaml', 'name: crm\naccount_id: emu-account\nsource: { path: exports/crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email, partner_user_id: Id }\n');
      // The run's one user batch is answered after 10 s: the run lasts five times the ttl.
      slow.fault({ route: 'POST /12/**/users', kind: 'delay', ms: 10_000, times: 1 });
      const first = slow.spawn(['run', 'crm.yaml', '--json']);
      const firstDone = collect(first);
      let lock: { owner: string; acquired_at: number } | undefined;
      await waitFor(
        () => {
          try {
            const row = dumpState(slow.statePath).locks?.[0];
            lock = row === undefined ? undefined : (JSON.parse(row) as { owner: string; acquired_at: number });
          } catch {
            // The state database is being created: not yet.
          }
          return lock !== undefined;
        },
        20_000,
        'the first run to take the lock',
      );
      const acquiredAt = lock?.acquired_at ?? 0;
      // Well after the lock would have expired without heartbeats.
      await sleep(acquiredAt + TTL_MS + 1500 - Date.now());
      const secondStarted = Date.now();
      const second = await slow.cli(['run', 'crm.yaml', '--json']);
      expect(first.exitCode, 'the first run ended before the second one was refused').toBeNull();
      expect(second.code, second.stderr).toBe(1);
      expectRefused(second, undefined, undefined);
      expect(errorLines(second.stderr)[0]).toContain(`lock held by ${lock?.owner ?? '?'} since `);
      // The lock was taken more than a ttl before the second run started, and is alive only
      // because its holder kept pushing its expiry forward.
      const [, since = '', heartbeat = '', expires = ''] = /since (\S+), last heartbeat (\S+)\);.* the lock expires at (\S+);/.exec(errorLines(second.stderr)[0] ?? '') ?? [];
      expect(Date.parse(since)).toBe(acquiredAt);
      expect(Date.parse(since) + TTL_MS).toBeLessThan(secondStarted);
      expect(Date.parse(heartbeat)).toBeGreaterThan(Date.parse(since) + TTL_MS);
      expect(Date.parse(expires)).toBeGreaterThan(secondStarted);
      expect(Date.parse(expires) - Date.parse(heartbeat)).toBe(TTL_MS);

      const done = await firstDone;
      expect(done.code, done.stderr).toBe(0);
      expect(summaries(done)[0]).toMatchObject({ status: 'success', exit_code: 0, added: 40, removed: 0 });
      expect(emulatorAudience(slow)).toEqual(audienceOf(range(1, 20)));
      expect(dumpState(slow.statePath).locks).toEqual([]);
      const runs = (await slow.cli(['runs', '--json', '--job', 'crm'])).stdout.split('\n').filter(Boolean);
      expect(runs).toHaveLength(1);
    } finally {
      await slow.close();
    }
  });

  // Found by this suite: the second process failed with "internal error: table runs already
  // exists" (fixed in 3fdd354: the schema version is read again under the write lock).
  it('a process opening a new state database while another is creating it waits and finds the schema', async () => {
    // Process A (here) is half-way through creating the schema of a new state database when
    // process B (adsync) opens it: B must wait for A and then find the schema there.
    const fresh = await createWorkspace();
    try {
      mkdirSync(dirname(fresh.statePath), { recursive: true });
      const db = openTestDatabase(fresh.statePath);
      // As adsync makes it (else B warns that others can read it).
      chmodSync(fresh.statePath, 0o600);
      db.pragma('journal_mode = WAL');
      db.exec('BEGIN IMMEDIATE');
      for (const migration of MIGRATIONS) db.exec(migration);
      db.pragma(`user_version = ${MIGRATIONS.length}`);
      const b = collect(fresh.spawn(['runs']));
      await sleep(800);
      db.exec('COMMIT');
      db.close();
      const result = await b;
      expectNoStackTrace(result);
      expect(result.stderr).not.toContain('adsync: ');
      expect(result.code).toBe(0);
      expect(result.stderr).toMatch(/^no runs recorded in /);
    } finally {
      await fresh.close();
    }
  });
});
