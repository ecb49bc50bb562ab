/**
 * Jobs that write to one target (a catalog, a custom audience, a do-not-reach list) take turns,
 * through the real CLI against the emulator. A run that finds another job's run writing to its
 * target waits for it (the log line and the summary's note name that job and run) and never
 * interleaves: a catalog run does not take the other's upload under way for an interrupted one,
 * an audience's state never lists a member the service no longer holds. A lock whose holder is
 * a dead process of this machine is taken over; a signal stops the wait with nothing done; a dry
 * run does not wait; `adsync unlock catalog:<id>` names the holder and removes its lock.
 */
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { openTestDatabase } from '../helpers/sqlite.js';
import { describe, expect, it } from 'vitest';
import { collect, jsonLines, summaries, workspacePerTest, type Workspace } from '../helpers/e2e.js';
import { startHook, type Hook } from '../helpers/webhook.js';
import { catalogIds, catalogJob, feedItem, ids, productRequests, requestCounts, rssFeed, summaryOf } from '../fixtures/catalog/catalog-e2e.js';
import { committedAudience, crmExport, deadPid, dumpState, emulatorAudience, errorLines, putLock, range, waitFor } from '../reliability/support.js';

const workspace = workspacePerTest();

const A = ids(60, 'A-');
const B = ids(4, 'B-');
const CATALOG_KEY = 'catalog:emu-catalog';
const WAITED = /^waited \d+\.\d s for catalog emu-catalog: job a \(run (\S+)\) was writing to it \(jobs on one target take turns\)$/;

async function twoCatalogJobs(): Promise<Workspace> {
  const ws = await workspace();
  ws.write('a.yaml', catalogJob({ name: 'a', source: 'a.xml', mode: 'mirror' }));
  ws.write('b.yaml', catalogJob({ name: 'b', source: 'b.xml', mode: 'mirror' }));
  ws.write('a.xml', rssFeed(A.map((id) => feedItem(id))));
  ws.write('b.xml', rssFeed(B.map((id) => feedItem(id))));
  return ws;
}

/**
 * A mirror job on the audience whose lock expires 2 s after its last heartbeat, alerting to a
 * webhook, after a first run that made members 1-4: the next run has additions and removals.
 */
async function lockLossWorkspace(): Promise<{ ws: Workspace; hook: Hook }> {
  const ws = await workspace();
  const hook = await startHook();
  ws.write('adsync.yaml', `${ws.read('adsync.yaml')}lock: { ttl_seconds: 2, heartbeat_seconds: 1 }\nalerts: { webhook_url: "${hook.url('/hook')}" }\n`);
  ws.write('crm.yaml', 'name: crm\naccount_id: emu-account\nrequest_timeout_ms: 30000\nsource: { path: crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  max_remove_ratio: 1\n  identifiers: { email: Email, partner_user_id: Id }\n');
  ws.write('crm.csv', crmExport(range(1, 4)));
  expect((await ws.cli(['run', 'crm.yaml'])).code).toBe(0);
  return { ws, hook };
}

function locks(ws: Workspace): { job: string; owner: string }[] {
  return (dumpState(ws.statePath).locks ?? []).map((row) => JSON.parse(row) as { job: string; owner: string });
}

function uploadMark(ws: Workspace): unknown {
  if (!existsSync(ws.statePath)) return undefined;
  const db = openTestDatabase(ws.statePath, { readonly: true });
  try {
    return (db.prepare("SELECT upload_started_at FROM catalogs WHERE catalog_id = 'emu-catalog'").get() as { upload_started_at: unknown } | undefined)?.upload_started_at;
  } catch {
    // The run is still creating the database.
    return undefined;
  } finally {
    db.close();
  }
}

describe('jobs on one target take turns', () => {
  it("a second job on the catalog waits for the first one's upload, then runs: it does not reconcile the upload under way nor clear its mark", { timeout: 30_000 }, async () => {
    const ws = await twoCatalogJobs();
    // a's first upload: three PUTs of 25, applied at once and answered 1.5 s later.
    ws.fault({ route: 'PUT /12/product_catalogs/*/products', kind: 'delay', ms: 1500, times: 3 });
    const a = ws.spawn(['run', 'a.yaml', '--json']);
    const aDone = collect(a);
    await waitFor(() => uploadMark(ws) !== undefined && uploadMark(ws) !== null, 15_000, "a's upload to begin");

    // a listed the catalog (its state was empty) before it began to upload.
    const listings = productRequests(ws, 'GET');
    const b = await ws.cli(['run', 'b.yaml', '--json'], { ADSYNC_LOG_LEVEL: 'info' });
    const aResult = await aDone;
    expect(aResult.code, aResult.stderr).toBe(0);
    expect(summaryOf(aResult)).toMatchObject({ created: 60, retries: 0 });
    expect(b.code, b.stderr).toBe(0);
    const aRun = String(summaryOf(aResult).run_id);
    const notes = summaryOf(b).notes as string[];
    // b waited for a, and found no interrupted upload to reconcile: the one it waited for ended.
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(WAITED);
    expect(WAITED.exec(notes[0] ?? '')?.[1]).toBe(aRun);
    expect(b.stderr).toContain(`waiting for catalog emu-catalog: job a (run ${aRun}) is writing to it (lock held by `);
    expect(b.stderr).toContain(`this run starts when that one ends (jobs on one target take turns). If that run is gone, its lock expires at `);
    expect(b.stderr).toContain('or remove it with `adsync unlock catalog:emu-catalog`');
    expect(summaryOf(b)).toMatchObject({ status: 'success', created: 4, deleted: 0 });
    // No listing of the catalog: b never took a's upload for an interrupted one.
    expect(productRequests(ws, 'GET')).toBe(listings);
    expect(catalogIds(ws)).toEqual([...A, ...B].sort());
    expect(uploadMark(ws)).toBeNull();
    expect(locks(ws)).toEqual([]);
  });

  it('an add job and a remove job on one audience: the second waits, so the state never lists a member the service lost', { timeout: 30_000 }, async () => {
    const ws = await workspace();
    const audience = (name: string, mode: string): string =>
      `name: ${name}\naccount_id: emu-account\nsource: { path: crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  mode: ${mode}\n  identifiers: { email: Email, partner_user_id: Id }\n`;
    ws.write('add.yaml', audience('add', 'add'));
    ws.write('rm.yaml', audience('rm', 'remove'));
    ws.write('crm.csv', crmExport(range(1, 3)));
    const usersRoute = 'POST /12/accounts/:account_id/custom_audiences/:custom_audience_id/users';
    // add's batch is applied by the service, its answer held back 1.5 s.
    ws.fault({ route: 'POST /12/accounts/*/custom_audiences/*/users', kind: 'delay', ms: 1500, times: 1 });
    const add = ws.spawn(['run', 'add.yaml', '--json']);
    const addDone = collect(add);
    await waitFor(() => ws.emulator.state().custom_audiences['emu-audience']?.members.email?.length === 3, 15_000, "add's batch to be applied");
    expect(requestCounts(ws)[usersRoute] ?? 0).toBe(0);

    const rm = await ws.cli(['run', 'rm.yaml', '--json']);
    expect(requestCounts(ws)[usersRoute]).toBe(2);
    const addResult = await addDone;
    expect(addResult.code, addResult.stderr).toBe(0);
    expect(rm.code, rm.stderr).toBe(0);
    expect(summaryOf(rm)).toMatchObject({ removed: 6 });
    expect(summaryOf(rm).notes).toEqual([
      `waited ${(summaryOf(rm).notes as string[])[0]?.match(/^waited (\d+\.\d) s/)?.[1] ?? '?'} s for custom audience emu-audience of account emu-account: job add (run ${String(summaryOf(addResult).run_id)}) was writing to it (jobs on one target take turns)`,
    ]);
    // rm removed what add had added: the service and the state agree that the audience is empty.
    expect(emulatorAudience(ws)).toEqual({ email: [], partner_user_id: [] });
    expect(committedAudience(ws.statePath)).toEqual({ email: [], partner_user_id: [] });
    expect(locks(ws)).toEqual([]);
  });

  it('in one scheduler, two jobs on one audience on the same tick take turns', { timeout: 40_000 }, async () => {
    const ws = await workspace();
    const job = (path: string): string =>
      `account_id: emu-account\nschedule: "* * * * * *"\nsource: { path: ${path} }\naudience:\n  custom_audience_id: emu-audience\n  mode: add\n  identifiers: { email: Email, partner_user_id: Id }\n`;
    ws.write('jobs/one.yaml', job('one.csv'));
    ws.write('jobs/two.yaml', job('two.csv'));
    ws.write('jobs/one.csv', crmExport(range(1, 3)));
    ws.write('jobs/two.csv', crmExport(range(4, 6)));
    // Each job's first batch is answered after 800 ms: the runs of one tick would overlap.
    ws.fault({ route: 'POST /12/accounts/*/custom_audiences/*/users', kind: 'delay', ms: 800, times: 2 });
    const scheduler = ws.spawn(['schedule', '--jobs', 'jobs'], { ADSYNC_LOG_LEVEL: 'info' });
    let stderr = '';
    scheduler.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const done = collect(scheduler);
    const finished = (name: string): boolean => new RegExp(`"job":"${name}"[^\n]*"msg":"run finished"`).test(stderr);
    await waitFor(() => finished('one') && finished('two') && stderr.includes('"msg":"waited '), 20_000, 'a run of each job, one of them after waiting');
    scheduler.kill('SIGTERM');
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/"msg":"waiting for custom audience emu-audience of account emu-account: job (one|two) \(run \S+\) is writing to it \(lock held by /);
    // The two runs of one process have their own owners: the second did not take the lock as its own.
    expect(emulatorAudience(ws)).toEqual(committedAudience(ws.statePath));
    expect(emulatorAudience(ws).email).toHaveLength(6);
    expect(locks(ws)).toEqual([]);
  });

  it('releases the target lock on every end: a failed run, a lost job lock; a lost target lock is reported and the job lock released', { timeout: 60_000 }, async () => {
    const ws = await workspace();
    ws.write('adsync.yaml', `${ws.read('adsync.yaml')}lock: { ttl_seconds: 2, heartbeat_seconds: 1 }\n`);
    const audienceJob = (id: string): string =>
      `name: crm\naccount_id: emu-account\nrequest_timeout_ms: 30000\nsource: { path: crm.csv }\naudience:\n  custom_audience_id: ${id}\n  mode: add\n  identifiers: { email: Email, partner_user_id: Id }\n`;
    ws.write('crm.csv', crmExport(range(1, 3)));
    const key = 'custom_audience:emu-account:emu-audience';

    // A failed run (the audience does not exist): no lock left.
    ws.write('crm.yaml', audienceJob('no-such-audience'));
    const failed = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(failed.code).toBe(1);
    expect(locks(ws)).toEqual([]);

    ws.write('crm.yaml', audienceJob('emu-audience'));
    const takeOver = async (lockKey: string, expected: string, rows: number[]): Promise<void> => {
      ws.write('crm.csv', crmExport(rows));
      ws.fault({ route: 'POST /12/accounts/*/custom_audiences/*/users', kind: 'delay', ms: 3000, times: 1 });
      const child = ws.spawn(['run', 'crm.yaml', '--json']);
      const done = collect(child);
      await waitFor(() => locks(ws).some((l) => l.job === key), 15_000, 'the run to take the audience lock');
      // Another process takes the lock over, as after an expiry.
      putLock(ws.statePath, lockKey, 'other-host.example:1234:abcdef:20261122T000000Z-abcdef');
      const r = await done;
      // The run's one batch was in flight: it is committed, and the run ends (nothing was left to stop).
      expect(r.stderr).toContain(`"msg":"${expected} (another process took it over after it expired): stopping after the requests in flight"`);
      // Only the row put there is left: the run released the lock it still held.
      expect(locks(ws).map((l) => [l.job, l.owner])).toEqual([[lockKey, 'other-host.example:1234:abcdef:20261122T000000Z-abcdef']]);
      putLock(ws.statePath, lockKey, 'gone');
      expect((await ws.cli(['unlock', '--force', lockKey])).code).toBe(0);
    };
    await takeOver('crm', 'lost the job lock', range(1, 3));
    await takeOver(key, 'lost the lock of custom audience emu-audience of account emu-account', range(4, 6));
    expect(emulatorAudience(ws)).toEqual(committedAudience(ws.statePath));
  });

  it('a run interrupted by a lost lock alerts once: the job lock (no run marked it abandoned), and the target lock', { timeout: 60_000 }, async () => {
    const { ws, hook } = await lockLossWorkspace();
    try {
      const key = 'custom_audience:emu-account:emu-audience';
      const other = 'other-host.example:1234:abcdef:20261122T000000Z-abcdef';
      let alerts = 0;
      for (const [lockKey, lost] of [
        ['crm', 'the job lock was lost'],
        [key, 'the lock of custom audience emu-audience of account emu-account was lost'],
      ] as const) {
        // Rows come and go: the additions are in flight when the lock is taken, the removals are left.
        const rows = lockKey === 'crm' ? [...range(3, 4), ...range(5, 6)] : [...range(5, 6), ...range(7, 8)];
        ws.write('crm.csv', crmExport(rows));
        ws.fault({ route: 'POST /12/accounts/*/custom_audiences/*/users', kind: 'delay', ms: 3000, times: 1 });
        const done = collect(ws.spawn(['run', 'crm.yaml', '--json']));
        await waitFor(() => locks(ws).some((l) => l.job === key), 15_000, 'the run to take the audience lock');
        putLock(ws.statePath, lockKey, other);
        const r = await done;
        expect(r.code, r.stderr).toBe(1);
        const [summary] = summaries(r);
        expect(summary).toMatchObject({ status: 'interrupted', error: lost });
        alerts += 1;
        await hook.waitForCalls(alerts);
        const alert = JSON.parse(hook.calls[alerts - 1]?.body ?? '{}') as { event: string; reason: string; summary: { run_id: string } };
        expect(alert).toMatchObject({ event: 'adsync.run', reason: `run interrupted: ${lost} (another process took it over after lock.ttl_seconds without a heartbeat); what was not sent is sent by the next run`, summary: { run_id: summary?.run_id } });
        putLock(ws.statePath, lockKey, 'gone');
        expect((await ws.cli(['unlock', '--force', lockKey])).code).toBe(0);
      }
      // Once each: no other alert came meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(hook.calls).toHaveLength(alerts);
    } finally {
      await hook.close();
    }
  });

  it('a run whose expired job lock another run took over (and marked abandoned) is alerted once, by itself, not again by the taker', { timeout: 60_000 }, async () => {
    const { ws, hook } = await lockLossWorkspace();
    try {
      ws.write('crm.csv', crmExport([...range(3, 4), ...range(5, 6)]));
      ws.fault({ route: 'POST /12/accounts/*/custom_audiences/*/users', kind: 'delay', ms: 3000, times: 1 });
      const child = ws.spawn(['run', 'crm.yaml', '--json']);
      const first = collect(child);
      await waitFor(() => locks(ws).some((l) => l.job === 'custom_audience:emu-account:emu-audience'), 15_000, 'the run to take the audience lock');
      // The first run stalls (stopped) long past lock.ttl_seconds: its locks expire (its job
      // lock's expiry is put 16 minutes back: a live holder of this machine keeps an expired
      // job lock for 15 minutes, job-lock.ts), and the next run takes them over, marking it
      // abandoned. Then it goes on, and finds its lock lost.
      const owner = locks(ws).find((l) => l.job === 'crm')?.owner;
      child.kill('SIGSTOP');
      await new Promise((resolve) => setTimeout(resolve, 2500));
      const db = openTestDatabase(ws.statePath);
      db.prepare("UPDATE locks SET heartbeat_at = heartbeat_at - 960000, expires_at = expires_at - 960000 WHERE job = 'crm'").run();
      db.close();
      const taker = collect(ws.spawn(['run', 'crm.yaml', '--json']));
      try {
        await waitFor(() => locks(ws).some((l) => l.job === 'crm' && l.owner !== owner), 15_000, 'the next run to take the job lock over');
      } finally {
        child.kill('SIGCONT');
      }
      const r = await first;
      expect(summaries(r)[0]).toMatchObject({ status: 'interrupted', error: 'the job lock was lost' });
      const t = await taker;
      expect(t.code, t.stderr).toBe(0);
      // The audience lock of the stopped run (alive, of this machine) is waited for until its
      // heartbeat has stood still for lock.ttl_seconds by the taker's clock.
      expect(summaries(t)[0]?.notes).toEqual([expect.stringMatching(/^an earlier run of job crm stopped before it finished/), expect.stringMatching(/^waited \d+\.\d s for custom audience emu-audience/)]);
      await hook.waitForCalls(1);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(hook.calls.map((c) => (JSON.parse(c.body) as { event: string; reason: string }).reason)).toEqual([
        'run interrupted: the job lock was lost (another process took it over after lock.ttl_seconds without a heartbeat); what was not sent is sent by the next run',
      ]);
      // The history has the run as it ended itself.
      const runs = await ws.cli(['runs', '--json']);
      const firstRun = String(summaries(r)[0]?.run_id);
      expect(summaries(runs).find((run) => run.runId === firstRun)).toMatchObject({ status: 'interrupted', error: 'the job lock was lost' });
    } finally {
      await hook.close();
    }
  });

  it("off a terminal, a waiting run's progress lines say `waiting`; its rows/s then counts from the wait's end, not from the run's start", { timeout: 30_000 }, async () => {
    const ws = await workspace();
    ws.write('adsync.yaml', `${ws.read('adsync.yaml')}progress_interval_seconds: 1\n`);
    ws.write('crm.yaml', 'name: crm\naccount_id: emu-account\nrequest_timeout_ms: 30000\nsource: { path: crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  mode: add\n  identifiers: { email: Email, partner_user_id: Id }\n');
    ws.write('crm.csv', crmExport(range(1, 200)));
    // A dry run makes the state database (and does not wait).
    expect((await ws.cli(['run', 'crm.yaml', '--dry-run'])).code).toBe(0);
    // The run's batch is answered 2.5 s late: progress lines come while it uploads all it read.
    ws.fault({ route: 'POST /12/accounts/*/custom_audiences/*/users', kind: 'delay', ms: 2500, times: 1 });
    const key = 'custom_audience:emu-account:emu-audience';
    putLock(ws.statePath, key, `${hostname()}:${process.pid}:abcdef:20261122T000000Z-abcdef`);
    const child = ws.spawn(['run', 'crm.yaml', '--json'], { ADSYNC_LOG_LEVEL: 'info' });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const done = collect(child);
    await waitFor(() => (stderr.match(/"phase":"waiting"/g) ?? []).length >= 3, 15_000, 'three progress lines of the wait');
    putLock(ws.statePath, key, `${hostname()}:${deadPid()}:abcdef:20261122T000000Z-abcdef`);
    const r = await done;
    expect(r.code, r.stderr).toBe(0);

    const lines = jsonLines(r.stderr);
    const progress = lines.filter((l) => l.msg === 'progress');
    const waited = lines.find((l) => typeof l.msg === 'string' && l.msg.startsWith('waited '));
    expect(waited).toBeDefined();
    const waitEnd = Number(waited?.time);
    for (const line of progress.filter((l) => Number(l.time) < waitEnd)) expect(line).toMatchObject({ phase: 'waiting', rowsRead: 0, rowsPerSecond: 0 });
    // The last line of the upload: all 200 rows were read since the wait ended, at least 1 s before.
    const last = progress.filter((l) => l.phase === 'uploading').at(-1);
    expect(last, r.stderr).toMatchObject({ rowsRead: 200 });
    const sinceWait = (Number(last?.time) - waitEnd) / 1000;
    expect(sinceWait).toBeGreaterThan(0.9);
    // Counted over the whole run (3 s and more of waiting) it was under a half of that.
    expect(Number(last?.rowsPerSecond)).toBeGreaterThanOrEqual(Math.floor((0.9 * 200) / sinceWait));
  });

  it('adsync unlock refuses a mistyped target key (exit 2, the shapes named), and leaves the lock it may have meant', { timeout: 30_000 }, async () => {
    const ws = await twoCatalogJobs();
    expect((await ws.cli(['run', 'a.yaml'])).code).toBe(0);
    const dead = `${hostname()}:${deadPid()}:abcdef:20261122T000000Z-abcdef`;
    putLock(ws.statePath, 'custom_audience:emu-account:emu-audience', dead);
    for (const key of ['catalogue:emu-catalog', 'custom_audience:emu-audience']) {
      const r = await ws.cli(['unlock', key]);
      expect(r.code, r.stderr).toBe(2);
      expect(errorLines(r.stderr)).toEqual([
        `adsync: ${key} names no lock: a job's lock is the job's name (it holds no ':'), a target's is catalog:<id>, custom_audience:<account>:<id> or do_not_reach:<account>:<id>`,
      ]);
      expect(r.stderr).toContain('hint: `adsync locks` lists every lock held, by the name `adsync unlock` takes');
    }
    expect(locks(ws).map((l) => l.job)).toEqual(['custom_audience:emu-account:emu-audience']);
    const right = await ws.cli(['unlock', 'custom_audience:emu-account:emu-audience']);
    expect(right.code, right.stderr).toBe(0);
    expect(right.stderr).toMatch(/^removed the lock of custom audience emu-audience of account emu-account \(a run not in the run history, held by /);
    expect(locks(ws)).toEqual([]);
  });

  it('the lock of a catalog held by a dead process of this machine is taken over at once, and released; adsync locks does not call a dead run waiting', { timeout: 30_000 }, async () => {
    const ws = await twoCatalogJobs();
    expect((await ws.cli(['run', 'a.yaml'])).code).toBe(0);
    const dead = `${hostname()}:${deadPid()}:abcdef:20261122T000000Z-abcdef`;
    putLock(ws.statePath, CATALOG_KEY, dead);

    const started = Date.now();
    const b = await ws.cli(['run', 'b.yaml', '--json']);
    expect(b.code, b.stderr).toBe(0);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(b.stderr).toContain('the process holding the lock of catalog emu-catalog is gone (killed or crashed): taking the lock over');
    expect(b.stderr).toContain(`"deadOwner":"${dead}"`);
    expect(summaryOf(b).notes).toBeUndefined();
    expect(locks(ws)).toEqual([]);

    // The job lock of a dead run that held no target: `adsync locks` does not call it waiting.
    putLock(ws.statePath, 'a', `${hostname()}:${deadPid()}:abcdef`);
    const table = (await ws.cli(['locks'])).stdout.split('\n');
    expect(table[1]).toMatch(/^a +job a +\S+ gone \(taken over by the next run\) +[-0-9: ]+ -$/);
  });

  it('a run waiting for its catalog polls without writing: the state database locked by another process for longer than the busy timeout does not fail it', { timeout: 45_000 }, async () => {
    const ws = await twoCatalogJobs();
    expect((await ws.cli(['run', 'a.yaml'])).code).toBe(0);
    const live = `${hostname()}:${process.pid}:abcdef:20261122T000000Z-abcdef`;
    putLock(ws.statePath, CATALOG_KEY, live);

    const b = ws.spawn(['run', 'b.yaml', '--json'], { ADSYNC_LOG_LEVEL: 'info' });
    let stderr = '';
    b.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const bDone = collect(b);
    await waitFor(() => stderr.includes('waiting for catalog emu-catalog'), 15_000, 'b to wait');
    // Another tool (a backup, sqlite3) holds the write lock well past the 10 s busy timeout while b
    // waits: a poll that took the write lock would wait those 10 s in SQLite, then fail the run.
    const other = openTestDatabase(ws.statePath);
    other.exec('BEGIN IMMEDIATE');
    const heldUntil = Date.now() + 13_000;
    await waitFor(() => Date.now() > heldUntil, 14_000, 'the hold to end');
    other.exec('COMMIT');
    other.close();
    expect(b.exitCode, stderr).toBeNull();
    // The holder ends; b takes the catalog and runs.
    putLock(ws.statePath, CATALOG_KEY, `${hostname()}:${deadPid()}:abcdef:20261122T000000Z-abcdef`);
    const r = await bDone;
    expect(r.code, r.stderr).toBe(0);
    expect(summaryOf(r)).toMatchObject({ status: 'success', created: 4 });
    expect(errorLines(r.stderr)).toEqual([]);
    expect(locks(ws)).toEqual([]);
  });

  it('a signal stops a run waiting for its catalog with nothing done; a dry run does not wait; unlock names the holder', { timeout: 30_000 }, async () => {
    const ws = await twoCatalogJobs();
    expect((await ws.cli(['run', 'a.yaml'])).code).toBe(0);
    // A live holder: this test's own process, as a run that is not in the history.
    const live = `${hostname()}:${process.pid}:abcdef:20261122T000000Z-abcdef`;
    putLock(ws.statePath, CATALOG_KEY, live);
    const before = { ...requestCounts(ws) };

    const b = ws.spawn(['run', 'b.yaml', '--json'], { ADSYNC_LOG_LEVEL: 'info' });
    let stderr = '';
    b.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const bDone = collect(b);
    await waitFor(() => stderr.includes('waiting for catalog emu-catalog'), 15_000, 'b to wait');
    expect(stderr).toContain(`waiting for catalog emu-catalog: a run not in the run history is writing to it (lock held by ${live} since `);
    expect(locks(ws).map((l) => l.job).sort()).toEqual(['b', CATALOG_KEY]);

    // A dry run writes nothing: it plans at once, whoever holds the catalog.
    const dry = await ws.cli(['run', 'b.yaml', '--dry-run', '--json']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(summaries(dry)[0]).toMatchObject({ status: 'success', dry_run: true, created: 4 });

    // `adsync locks` shows both: b's run (not the dry run since) holds its job's lock and waits; the catalog's holder.
    const listed = await ws.cli(['locks', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const bRun = (dumpState(ws.statePath).runs ?? []).map((r) => JSON.parse(r) as { run_id: string; job: string; status: string }).find((r) => r.job === 'b' && r.status === 'running')?.run_id;
    expect(bRun).toBeDefined();
    expect(summaries(listed)).toEqual([
      { lock: 'b', what: 'job b', job: 'b', run_id: bRun, owner: expect.stringMatching(new RegExp(`:${String(b.pid)}:[0-9a-f]+$`)) as string, process: 'alive', acquired_at: expect.any(String) as string, heartbeat_at: expect.any(String) as string, expires_at: expect.any(String) as string, writing_to: null },
      { lock: CATALOG_KEY, what: 'catalog emu-catalog', job: null, run_id: null, owner: live, process: 'alive', acquired_at: expect.any(String) as string, heartbeat_at: expect.any(String) as string, expires_at: expect.any(String) as string },
    ]);
    const table = (await ws.cli(['locks'])).stdout.split('\n');
    expect(table[0]).toMatch(/^lock \(adsync unlock <lock>\) +held by +process +since \(UTC\) +last heartbeat +expires +writing to$/);
    expect(table[1]).toMatch(new RegExp(`^b +job b \\(run ${String(bRun)}\\) +\\S+:${String(b.pid)} alive on this host .* - \\(waiting for its catalog or audience, or starting\\)$`));
    expect(table[2]).toMatch(new RegExp(`^catalog:emu-catalog +a run not in the run history +\\S+:${process.pid} alive on this host +[-0-9: ]+$`));
    b.kill('SIGTERM');
    const stopped = await bDone;
    expect(stopped.code).toBe(1);
    expect(summaryOf(stopped)).toMatchObject({
      status: 'interrupted',
      error: 'stopped by a signal while waiting for catalog emu-catalog (a run not in the run history was writing to it); nothing was read or sent',
      read: 0,
      requests: 0,
    });
    expect(errorLines(stopped.stderr)).toEqual([
      'adsync: job b interrupted: stopped by a signal while waiting for catalog emu-catalog (a run not in the run history was writing to it); nothing was read or sent',
    ]);
    expect(requestCounts(ws)).toEqual(before);
    expect(locks(ws)).toEqual([{ job: CATALOG_KEY, owner: live, acquired_at: expect.any(Number) as number, heartbeat_at: expect.any(Number) as number, expires_at: expect.any(Number) as number }]);

    const refused = await ws.cli(['unlock', CATALOG_KEY]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `adsync: catalog emu-catalog is locked by a run that is still alive: process ${process.pid} on this host (a run not in the run history, lock held by ${live} since `,
    );
    expect(refused.stderr).toContain(`\`adsync unlock --force ${CATALOG_KEY}\` removes the lock`);

    const dead = `${hostname()}:${deadPid()}:abcdef:20261122T000000Z-abcdef`;
    putLock(ws.statePath, CATALOG_KEY, dead);
    const removed = await ws.cli(['unlock', CATALOG_KEY]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stderr).toMatch(
      new RegExp(`^removed the lock of catalog emu-catalog \\(a run not in the run history, held by ${dead} since \\S+, last heartbeat \\S+\\): its process \\d+ on this host is gone\\n$`),
    );
    expect(locks(ws)).toEqual([]);
  });
});
