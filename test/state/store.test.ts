import { openTestDatabase } from '../helpers/sqlite.js';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StateError } from '../../src/errors.js';
import { openStateStore, type StateStore } from '../../src/state/index.js';
import { openDatabase, writeState } from '../../src/state/sqlite/database.js';
import { MARK_ABANDONED } from '../../src/state/sqlite/run-history.js';
import { MIGRATIONS } from '../../src/state/sqlite/schema.js';

let store: StateStore | undefined;
const dir = () => mkdtempSync(join(tmpdir(), 'adsync-state-'));
afterEach(async () => {
  await store?.close();
  store = undefined;
});

describe('locks', () => {
  it('lets one owner hold a job, refuses another, and hands over an expired lock', async () => {
    store = openStateStore(join(dir(), 's.sqlite'));
    expect(await store.locks.acquire('job', 'A', 1000, 0)).toEqual({ acquired: true });
    const refused = await store.locks.acquire('job', 'B', 1000, 500);
    expect(refused).toEqual({ acquired: false, holder: { job: 'job', owner: 'A', acquiredAt: 0, heartbeatAt: 0, expiresAt: 1000 } });
    expect(await store.locks.heartbeat('job', 'A', 1000, 900)).toBe(true);
    expect((await store.locks.acquire('job', 'B', 1000, 1500)).acquired).toBe(false);
    expect((await store.locks.acquire('job', 'B', 1000, 1901)).acquired).toBe(true);
    expect(await store.locks.heartbeat('job', 'A', 1000, 1950)).toBe(false);
    await store.locks.release('job', 'A');
    expect((await store.locks.get('job'))?.owner).toBe('B');
    expect(await store.locks.forceRelease('job')).toBe(true);
    expect(await store.locks.get('job')).toBeUndefined();
  });

  it('is shared by two connections to the same file', async () => {
    const path = join(dir(), 's.sqlite');
    store = openStateStore(path);
    const other = openStateStore(path);
    try {
      expect((await store.locks.acquire('job', 'A', 60_000, Date.now())).acquired).toBe(true);
      expect((await other.locks.acquire('job', 'B', 60_000, Date.now())).acquired).toBe(false);
    } finally {
      await other.close();
    }
  });
});

describe('run history and checkpoints', () => {
  it('records runs newest first and marks abandoned ones', async () => {
    store = openStateStore(join(dir(), 's.sqlite'));
    await store.runs.start({ runId: 'r1', job: 'j', kind: 'catalog', command: 'run', dryRun: false, startedAt: 1 });
    await store.runs.finish('r1', { status: 'success', finishedAt: 2, summary: { created: 3 }, rejectsFile: '/tmp/x.csv' });
    await store.runs.start({ runId: 'r2', job: 'j', kind: 'catalog', command: 'run', dryRun: true, startedAt: 3 });
    expect(await store.runs.markAbandoned('j', 4)).toEqual(['r2']);
    const runs = await store.runs.list({ job: 'j' });
    expect(runs.map((r) => [r.runId, r.status, r.dryRun])).toEqual([
      ['r2', 'failed', true],
      ['r1', 'success', false],
    ]);
    expect(runs[1]).toMatchObject({ summary: { created: 3 }, rejectsFile: '/tmp/x.csv', finishedAt: 2 });
  });

  it('reports a run marked abandoned once: by the run that marked it, or by itself when it is alive and ends first', async () => {
    store = openStateStore(join(dir(), 's.sqlite'));
    for (const runId of ['dead', 'alive', 'late']) await store.runs.start({ runId, job: 'j', kind: 'custom_audience', command: 'run', dryRun: false, startedAt: 1 });
    expect((await store.runs.markAbandoned('j', 2)).sort()).toEqual(['alive', 'dead', 'late']);
    // 'alive' lost its lock and ends before the taker: it reports itself, the taker does not.
    expect(await store.runs.reportsItself('alive')).toBe(true);
    expect(await store.runs.reportAbandoned('alive', 'taker')).toBe(false);
    // 'dead' never ends: the taker reports it. 'late' ends after the taker reported it: not again.
    expect(await store.runs.reportAbandoned('dead', 'taker')).toBe(true);
    expect(await store.runs.reportAbandoned('late', 'taker')).toBe(true);
    expect(await store.runs.reportsItself('late')).toBe(false);
    // A run never marked reports itself.
    await store.runs.start({ runId: 'own', job: 'j', kind: 'custom_audience', command: 'run', dryRun: false, startedAt: 3 });
    expect(await store.runs.reportsItself('own')).toBe(true);
    expect((await store.runs.get('dead'))?.error).toBe('the process running it stopped before it finished (reported by run taker, which took its lock over)');
    expect((await store.runs.get('alive'))?.status).toBe('running');
  });

  it("looks for a job's dead runs among the runs in progress only, not through every run the job made (the history grows for months)", async () => {
    const path = join(dir(), 's.sqlite');
    store = openStateStore(path);
    for (let i = 0; i < 50; i++) {
      await store.runs.start({ runId: `r${i}`, job: 'j', kind: 'catalog', command: 'run', dryRun: false, startedAt: i });
      await store.runs.finish(`r${i}`, { status: 'success', finishedAt: i, summary: {} });
    }
    await store.runs.start({ runId: 'dead', job: 'j', kind: 'catalog', command: 'run', dryRun: false, startedAt: 60 });
    const raw = openTestDatabase(path, { readonly: true });
    const plan = raw.prepare(`EXPLAIN QUERY PLAN ${MARK_ABANDONED}`).all(70, 'gone', 'j') as { detail: string }[];
    raw.close();
    expect(plan.map((step) => step.detail)).toEqual([expect.stringMatching(/^SEARCH runs USING (?:COVERING )?INDEX runs_running \(job=\?\)$/)]);
    expect(await store.runs.markAbandoned('j', 70)).toEqual(['dead']);
    expect((await store.runs.get('dead'))?.status).toBe('failed');
    expect(await store.runs.markAbandoned('j', 80)).toEqual([]);
  });

  it('gives the runs of list() one at a time (adsync runs --json), and frees the connection when left early', async () => {
    store = openStateStore(join(dir(), 's.sqlite'));
    for (const [runId, job, startedAt] of [['r1', 'j', 1], ['r2', 'k', 2], ['r3', 'j', 3], ['r4', 'j', 4]] as const) {
      await store.runs.start({ runId, job, kind: 'custom_audience', command: 'run', dryRun: false, startedAt });
      await store.runs.finish(runId, { status: 'success', finishedAt: startedAt + 1, summary: { added: startedAt } });
    }
    const each = async (filter: { job?: string; limit?: number }) => {
      const out = [];
      for await (const r of store!.runs.each(filter)) out.push(r);
      return out;
    };
    expect(await each({ job: 'j', limit: 2 })).toEqual(await store.runs.list({ job: 'j', limit: 2 }));
    expect((await each({ limit: 10 })).map((r) => r.runId)).toEqual(['r4', 'r3', 'r2', 'r1']);
    expect((await each({ job: 'j', limit: 2 }))[0]).toMatchObject({ runId: 'r4', summary: { added: 4 }, finishedAt: 5 });
    for await (const r of store.runs.each({ limit: 10 })) {
      expect(r.runId).toBe('r4');
      break;
    }
    // A statement still iterating would make this write fail (the connection is busy).
    await store.runs.start({ runId: 'r5', job: 'j', kind: 'catalog', command: 'run', dryRun: false, startedAt: 5 });
    expect((await store.runs.list({ limit: 1 }))[0]?.runId).toBe('r5');
  });

  it('saves, reads and clears a checkpoint', async () => {
    store = openStateStore(join(dir(), 's.sqlite'));
    await store.checkpoints.save({ job: 'j', sourceKey: 'f:1:2', rowsDone: 5000, updatedAt: 9, counts: { added: 4 } });
    expect(await store.checkpoints.get('j')).toEqual({ job: 'j', sourceKey: 'f:1:2', rowsDone: 5000, updatedAt: 9, counts: { added: 4 } });
    await store.checkpoints.save({ job: 'j', sourceKey: 'f:1:2', rowsDone: 6000, updatedAt: 10, counts: {}, upload: '{"account_id":"a"}' });
    expect(await store.checkpoints.get('j')).toMatchObject({ rowsDone: 6000, upload: '{"account_id":"a"}' });
    await store.checkpoints.clear('j');
    expect(await store.checkpoints.get('j')).toBeUndefined();
  });

  it('reads a checkpoint saved before schema 4 without the settings it was sent with', async () => {
    const path = join(dir(), 's.sqlite');
    const raw = openTestDatabase(path);
    for (const migration of MIGRATIONS.slice(0, 3)) raw.exec(migration);
    raw.pragma('user_version = 3');
    raw.prepare("INSERT INTO checkpoints (job, source_key, rows_done, updated_at, counts) VALUES ('j', 'f|1|2', 700, 9, '{}')").run();
    raw.close();
    store = openStateStore(path);
    expect(await store.checkpoints.get('j')).toEqual({ job: 'j', sourceKey: 'f|1|2', rowsDone: 700, updatedAt: 9, counts: {} });
  });
});

/**
 * Another process runs `before`, then holds a write transaction on path (in which it runs
 * `during`) for ms, then runs `then` and commits.
 */
async function holdWriteLock(path: string, ms: number, { before = '', during = '', then = '' } = {}): Promise<{ exited: Promise<unknown> }> {
  const holder = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import Database from 'better-sqlite3';
       const db = new Database(${JSON.stringify(path)});
       db.exec(${JSON.stringify(before)});
       db.exec('BEGIN IMMEDIATE');
       db.exec(${JSON.stringify(during)});
       process.stdout.write('locked\\n');
       setTimeout(() => { db.exec(${JSON.stringify(then)}); db.exec('COMMIT'); db.close(); }, ${ms});`,
    ],
    { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise((resolve) => holder.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    holder.stdout.once('data', () => resolve());
    holder.once('exit', (code) => reject(new Error(`the lock holder exited (${String(code)}) before locking`)));
  });
  return { exited };
}

describe('database', () => {
  it('uses WAL and passes an integrity check', async () => {
    const path = join(dir(), 's.sqlite');
    store = openStateStore(path);
    expect(await store.integrityCheck()).toBe('ok');
    const raw = openTestDatabase(path, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    raw.close();
  });

  it('opens a database of the previous schema, keeps its catalog state and adds raw fingerprints', async () => {
    const path = join(dir(), 's.sqlite');
    const raw = openTestDatabase(path);
    raw.exec(MIGRATIONS[0] ?? '');
    raw.pragma('user_version = 1');
    raw.prepare("INSERT INTO catalogs (id, catalog_id) VALUES (1, 'c1')").run();
    raw.prepare("INSERT INTO catalog_products (catalog, id, content_hash, product_key, sent_at) VALUES (1, 'a', 'h1', 'k-a', 5)").run();
    raw.close();
    store = openStateStore(path);
    const catalog = store.catalog('c1', null);
    expect(await catalog.productCount()).toBe(1);
    expect(await catalog.productKeys(['a'])).toEqual(new Map([['a', 'k-a']]));
    expect(await catalog.hasFingerprints()).toBe(false);
    const scan = await catalog.scan();
    await scan.add([{ id: 'a', row: 1, contentHash: 'h1', payload: '{}', fingerprint: Buffer.alloc(32, 7) }]);
    expect(await scan.counts({ mirror: true, full: false })).toMatchObject({ products: 1, unchanged: 1 });
    expect(await scan.saveFingerprints()).toBe(1);
    await scan.close();
    expect(await catalog.productsByFingerprint([Buffer.alloc(32, 7)])).toEqual([{ id: 'a', warnings: [] }]);
    expect(await store.integrityCheck()).toBe('ok');
    await store.close();
    store = undefined;
    const check = openTestDatabase(path, { readonly: true });
    expect(check.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    check.close();
  });

  it('waits for another process writing the new file while it switches it to WAL, instead of failing the open', async () => {
    // PRAGMA journal_mode = WAL on a file that another connection is writing in rollback mode
    // (as the first of two processes opening a new state file is, while it converts it) fails
    // at once with SQLITE_BUSY: SQLite does not run the busy handler there. Two schedulers
    // started together failed so ("database is locked"). Here another process holds a write
    // transaction on a new file for 600 ms.
    const path = join(dir(), 's.sqlite');
    const { exited } = await holdWriteLock(path, 600, { before: 'CREATE TABLE held (x)', during: 'INSERT INTO held VALUES (1)' });
    const started = Date.now();
    store = openStateStore(path);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(await store.integrityCheck()).toBe('ok');
    await exited;
    const raw = openTestDatabase(path, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(raw.prepare('SELECT COUNT(*) AS n FROM held').get()).toEqual({ n: 1 });
    raw.close();
  });

  it('refuses a database written by a newer adsync', () => {
    const path = join(dir(), 's.sqlite');
    const raw = openTestDatabase(path);
    raw.pragma('user_version = 99');
    raw.close();
    expect(() => openStateStore(path)).toThrow(StateError);
    expect(() => openStateStore(path)).toThrow(/written by a newer adsync \(schema 99\)/);
  });
});

describe('opening a new database from several processes at once', () => {
  it('migrates it exactly once', async () => {
    const { spawn } = await import('node:child_process');
    const path = join(dir(), 'race.sqlite');
    const script = `import('${join(import.meta.dirname, '..', '..', 'dist', 'state', 'index.js').replace(/\\/g, '/')}').then(async (m) => { const s = m.openStateStore(process.argv[1]); await s.close(); });`;
    const runs = Array.from({ length: 6 }, () =>
      new Promise<number | null>((resolve) => {
        const child = spawn(process.execPath, ['-e', script, path], { stdio: ['ignore', 'ignore', 'pipe'] });
        let err = '';
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        child.on('close', (code) => {
          if (code !== 0) console.error(err);
          resolve(code);
        });
      }),
    );
    expect(await Promise.all(runs)).toEqual([0, 0, 0, 0, 0, 0]);
    store = openStateStore(path);
    expect(await store.integrityCheck()).toBe('ok');
  });
});

/** A database of schema 4 (before catalog_products.job), in WAL mode as adsync leaves it. */
function schema4(path: string): void {
  const raw = openTestDatabase(path);
  raw.pragma('journal_mode = WAL');
  for (const migration of MIGRATIONS.slice(0, 4)) raw.exec(migration);
  raw.pragma('user_version = 4');
  raw.close();
}

describe('upgrading a database another process is writing', () => {
  it('refuses one that a newer adsync upgraded while this one waited to upgrade it, and leaves its version', async () => {
    // A newer adsync (schema 6) opens the same old database at the same moment and upgrades it
    // first. This one read version 4 before it waited for the write lock: it set the version
    // back to 5 over the newer schema, which the newer adsync then tried to migrate again
    // (duplicate columns) and this one misread.
    const path = join(dir(), 's.sqlite');
    schema4(path);
    const { exited } = await holdWriteLock(path, 600, { then: `PRAGMA user_version = ${MIGRATIONS.length + 1}` });
    expect(() => openStateStore(path)).toThrow(new RegExp(`written by a newer adsync \\(schema ${MIGRATIONS.length + 1}\\)`));
    await exited;
    const raw = openTestDatabase(path, { readonly: true });
    expect(raw.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length + 1);
    raw.close();
  });

  it('held by another process for longer than the busy timeout: a StateError naming the file and what to do, the database left at its version', { timeout: 30_000 }, async () => {
    // The same for every failure of the upgrade (a full disk: SQLITE_FULL), which was an
    // "internal error ... this is a bug in adsync", with no failed summary or alert for the run.
    const path = join(dir(), 's.sqlite');
    schema4(path);
    const { exited } = await holdWriteLock(path, 11_000);
    let failure: unknown;
    try {
      openStateStore(path);
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(StateError);
    expect((failure as StateError).message).toBe(`cannot open the state database ${path}: database is locked`);
    expect((failure as StateError).hint).toContain('another process kept it locked for more than 10 s');
    await exited;
    const raw = openTestDatabase(path, { readonly: true });
    expect(raw.pragma('user_version', { simple: true })).toBe(4);
    raw.close();
  });
});

describe('a state database on a full disk', () => {
  it('a write refused for want of room says so and what to do, not "check its permissions"', async () => {
    const path = join(dir(), 's.sqlite');
    const db = openDatabase(path);
    try {
      // The file may not grow: SQLite answers SQLITE_FULL, as on a full disk.
      const pages = db.pragma('page_count', { simple: true }) as number;
      db.pragma(`max_page_count = ${pages}`);
      const insert = db.prepare('INSERT INTO runs (run_id, job, kind, command, status, dry_run, started_at, summary) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
      const failure = await writeState(db, () => insert.run('r1', 'job', 'catalog', 'run', 'running', 0, 0, 'x'.repeat(100_000))).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(StateError);
      expect((failure as StateError).message).toBe(`cannot write to the state database ${path}: database or disk is full`);
      expect((failure as StateError).hint).toBe('the disk holding it (or its -wal file) is full: make room there, or move it to a disk with room, then run again');
    } finally {
      db.close();
    }
  });
});
