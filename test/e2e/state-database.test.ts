/**
 * A state database adsync cannot use says why and what to do, with exit 1 and no stack trace:
 * a file that is not a database (or is damaged), and, run as an unprivileged user, a file or
 * folder that user cannot write (SQLite would open the file read-only without a word, and the
 * first write, the job's lock, failed as "an internal error"); and a folder for it that cannot
 * be made (a file in the way, a parent the user cannot write), which was "an internal error ...
 * this is a bug in adsync", without a summary or an alert.
 */
import { spawnSync } from 'node:child_process';
import { openTestDatabase } from '../helpers/sqlite.js';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { createWorkspace, type Workspace } from '../helpers/e2e.js';
import { startHook, type Hook } from '../helpers/webhook.js';
import { expectNoStackTrace, summaryOf } from '../reliability/support.js';

let ws: Workspace;
beforeEach(async () => {
  ws = await createWorkspace();
});
afterEach(async () => {
  await ws.close();
});

const JOB = 'name: crm\naccount_id: emu-account\nsource: { path: crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email }\n';

describe('the state database is the owner\'s alone', () => {
  it('a new state file is made mode 0600 in a folder made 0700, and its -wal and -shm files follow (it holds hashed members)', async () => {
    ws.write('crm.csv', 'Email\na@example.com\n');
    ws.write('crm.yaml', JOB);
    expect(existsSync(dirname(ws.statePath))).toBe(false);
    const r = await ws.cli(['run', 'crm.yaml']);
    expect(r.code, r.stderr).toBe(0);
    const mode = (path: string): number => statSync(path).mode & 0o777;
    expect(mode(ws.statePath)).toBe(0o600);
    expect(mode(dirname(ws.statePath))).toBe(0o700);
    // A reader (a later run, a sqlite3 shell) makes the -wal and -shm files again: SQLite gives
    // them the database's mode.
    const db = openTestDatabase(ws.statePath);
    try {
      expect(db.prepare('SELECT COUNT(*) AS n FROM audience_members').get()).toEqual({ n: 1 });
      expect(mode(`${ws.statePath}-wal`)).toBe(0o600);
      expect(mode(`${ws.statePath}-shm`)).toBe(0o600);
    } finally {
      db.close();
    }
  });

  it('an existing state file keeps its mode; one that others can read is warned about on each run', async () => {
    ws.write('crm.csv', 'Email\na@example.com\n');
    ws.write('crm.yaml', JOB);
    mkdirSync(dirname(ws.statePath), { recursive: true });
    openTestDatabase(ws.statePath).close();
    chmodSync(ws.statePath, 0o640);
    const r = await ws.cli(['run', 'crm.yaml']);
    expect(r.code, r.stderr).toBe(0);
    expect(statSync(ws.statePath).mode & 0o777).toBe(0o640);
    expect(r.stderr).toContain(
      `"state":"${ws.statePath}","mode":"0640","msg":"the state database can be read by other users of this machine (it holds the audiences' hashed identifiers): chmod 600 ${ws.statePath}"`,
    );
    chmodSync(ws.statePath, 0o600);
    const quiet = await ws.cli(['run', 'crm.yaml']);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).not.toContain('can be read by other users');
  });
});

/** Two jobs (crm, other) of one export, alerting to a webhook (closed after the test). */
async function twoJobsAlerting(): Promise<Hook> {
  const hook = await startHook();
  onTestFinished(() => hook.close());
  ws.write('adsync.yaml', `${ws.read('adsync.yaml')}alerts:\n  webhook_url: "${hook.url('/hooks/state')}"\n`);
  ws.write('crm.csv', 'Email\na@example.com\n');
  ws.write('crm.yaml', JOB);
  ws.write('other.yaml', JOB.replace('name: crm', 'name: other'));
  return hook;
}

describe('a state database adsync cannot use', () => {
  it('not a database: exit 1, the file named, and what to do', async () => {
    ws.write('crm.csv', 'Email\na@example.com\n');
    ws.write('crm.yaml', JOB);
    mkdirSync(dirname(ws.statePath), { recursive: true });
    writeFileSync(ws.statePath, 'this is not a database, it only has the name of one\n');
    const r = await ws.cli(['run', 'crm.yaml']);
    expect(r.code).toBe(1);
    expectNoStackTrace(r);
    expect(r.stderr).toContain(`cannot open the state database ${ws.statePath}: file is not a database`);
    expect(r.stderr).toContain('hint: the file is not an adsync state database, or it is damaged: move it aside (keep it to look at) and run again');
  });

  it('better-sqlite3 built for another Node.js version (Node upgraded to 22 or 24 under it): exit 1, and the hint is to rebuild it, not the file\'s permissions', async () => {
    ws.write('crm.csv', 'Email\na@example.com\n');
    ws.write('crm.yaml', JOB);
    // Node's own loader refuses the module, as it does a module of another NODE_MODULE_VERSION
    // (ERR_DLOPEN_FAILED): here it is handed a file that is no shared library.
    const junk = ws.write('junk.node', 'not a shared library\n');
    const preload = ws.write(
      'load-junk.cjs',
      `const dlopen = process.dlopen;\nprocess.dlopen = (m, file, ...rest) => dlopen(m, file.endsWith('better_sqlite3.node') ? ${JSON.stringify(junk)} : file, ...rest);\n`,
    );
    const r = await ws.cli(['run', 'crm.yaml'], { NODE_OPTIONS: `--require ${preload}` });
    expect(r.code).toBe(1);
    expectNoStackTrace(r);
    expect(r.stderr).toContain(`cannot open the state database ${ws.statePath}: `);
    expect(r.stderr).toContain(`hint: better-sqlite3 (the state database's driver) cannot be loaded: it was built for another Node.js version (this is ${process.version}), or not built: run \`npm rebuild better-sqlite3\` in adsync's folder`);
    expect(r.stderr).not.toContain('permissions');
  });

  it('not a database, from cron: each job of `adsync run --json` gets its failed summary and alerts, as a run that could not start', async () => {
    const hook = await twoJobsAlerting();
    mkdirSync(dirname(ws.statePath), { recursive: true });
    writeFileSync(ws.statePath, 'this is not a database, it only has the name of one\n');
    const r = await ws.cli(['run', 'crm.yaml', 'other.yaml', '--json']);
    expect(r.code).toBe(1);
    expectNoStackTrace(r);
    const error = `cannot open the state database ${ws.statePath}: file is not a database (the file is not an adsync state database, or it is damaged: move it aside (keep it to look at) and run again;`;
    const summaries = r.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(summaries.map((s) => [s.job, s.kind, s.status, s.exit_code, s.dry_run, s.read, s.added])).toEqual([
      ['crm', 'custom_audience', 'failed', 1, false, 0, 0],
      ['other', 'custom_audience', 'failed', 1, false, 0, 0],
    ]);
    for (const s of summaries) expect(String(s.error)).toContain(error);
    expect(hook.calls.map((c) => [c.url, c.body])).toEqual(summaries.map((summary) => ['/hooks/state', JSON.stringify({ event: 'adsync.run', reason: `run failed: ${String(summary.error)}`, summary })]));
    // The command's own error line, once.
    expect(r.stderr.split(`adsync: cannot open the state database ${ws.statePath}: file is not a database`).length).toBe(2);

    // A dry run says the same on stdout and alerts nobody.
    const dry = await ws.cli(['run', 'crm.yaml', '--json', '--dry-run']);
    expect(dry.code).toBe(1);
    expect(summaryOf(dry)).toMatchObject({ job: 'crm', status: 'failed', dry_run: true, exit_code: 1 });
    expect(hook.calls).toHaveLength(2);
  });

  it('a folder for it that cannot be made (a file is in the way): each job gets its failed summary and alert, not an internal error', async () => {
    const hook = await twoJobsAlerting();
    ws.write('state-here', 'a file where the state folder should be\n');
    const state = join(ws.dir, 'state-here', 'state.sqlite');
    const r = await ws.cli(['run', 'crm.yaml', 'other.yaml', '--json'], { ADSYNC_STATE: state });
    expect(r.code, r.stderr).toBe(1);
    expectNoStackTrace(r);
    expect(r.stderr).not.toContain('internal error');
    const message = `cannot open the state database ${state}: EEXIST: file already exists, mkdir '${join(ws.dir, 'state-here')}'`;
    expect(r.stderr).toContain(`adsync: ${message}\n  hint: check the path (ADSYNC_STATE or \`state:\` in config/adsync.yaml) and its permissions\n`);
    const summaries = r.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(summaries.map((s) => [s.job, s.status, s.exit_code, s.error])).toEqual(
      ['crm', 'other'].map((job) => [job, 'failed', 1, `${message} (check the path (ADSYNC_STATE or \`state:\` in config/adsync.yaml) and its permissions)`]),
    );
    expect(hook.calls.map((c) => c.body)).toEqual(summaries.map((summary) => JSON.stringify({ event: 'adsync.run', reason: `run failed: ${String(summary.error)}`, summary })));
  });

  it('held by another process for longer than the busy timeout: the run is refused with the file named and the lock left free, not an internal error, and alerts as a failed run', { timeout: 40_000 }, async () => {
    const hook = await startHook();
    onTestFinished(() => hook.close());
    ws.write('adsync.yaml', `${ws.read('adsync.yaml')}alerts:\n  webhook_url: "${hook.url('/hooks/state')}"\n`);
    ws.write('crm.csv', 'Email\na@example.com\n');
    ws.write('crm.yaml', JOB);
    expect((await ws.cli(['run', 'crm.yaml'])).code).toBe(0);
    // Another process (a sqlite3 shell, a backup tool) holds a write transaction open.
    const other = openTestDatabase(ws.statePath);
    other.exec('BEGIN IMMEDIATE');
    let r;
    try {
      r = await ws.cli(['run', 'crm.yaml', '--json']);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect(r.code, r.stderr).toBe(1);
    expectNoStackTrace(r);
    expect(r.stderr).not.toContain('internal error');
    const error = `cannot write to the state database ${ws.statePath}: database is locked (another process kept it locked for more than 10 s`;
    expect(r.stderr).toContain(`adsync: job crm failed: ${error}`);
    const summary = summaryOf(r);
    expect(summary).toMatchObject({ job: 'crm', status: 'failed', exit_code: 1, error: expect.stringContaining(error) as string });
    const db = openTestDatabase(ws.statePath, { readonly: true });
    expect(db.prepare('SELECT COUNT(*) AS n FROM locks').get()).toEqual({ n: 0 });
    expect(db.prepare('SELECT status FROM runs').all()).toEqual([{ status: 'success' }]);
    db.close();
    // A run that could not start is a failed run: it alerts (the first run, a success, did not).
    expect(hook.calls.map((c) => [c.url, c.body])).toEqual([['/hooks/state', JSON.stringify({ event: 'adsync.run', reason: `run failed: ${String(summary.error)}`, summary })]]);
  });

  const asNobody = process.getuid?.() === 0 && existsSync('/usr/bin/setpriv');
  it.runIf(asNobody)('not writable by the user running adsync (a file, a folder, a folder to make): exit 1, the file named, and what to do', () => {
    // A folder every user can read, holding a job and its export.
    const dir = mkdtempSync(join(tmpdir(), 'adsync-ro-'));
    chmodSync(dir, 0o755);
    writeFileSync(join(dir, 'crm.csv'), 'Email\na@example.com\n');
    writeFileSync(join(dir, 'crm.yaml'), JOB);
    writeFileSync(join(dir, 'adsync.yaml'), 'rejects_dir: rejects\n');
    const run = (state: string) =>
      spawnSync('/usr/bin/setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, BIN, 'run', join(dir, 'crm.yaml')], {
        encoding: 'utf8',
        env: { ...ws.env, HOME: dir, XDG_CONFIG_HOME: join(dir, '.config'), ADSYNC_STATE: state, ADSYNC_CONFIG: join(dir, 'adsync.yaml') },
        cwd: dir,
      });
    const hint = 'hint: give the user running adsync write access to the file and its folder, or point ADSYNC_STATE';

    // A state file made by another user (root), mode 0644, in a folder the user may write.
    const shared = join(dir, 'shared');
    mkdirSync(shared, { mode: 0o777 });
    chmodSync(shared, 0o777);
    writeFileSync(join(shared, 'state.sqlite'), '');
    chmodSync(join(shared, 'state.sqlite'), 0o644);
    const file = run(join(shared, 'state.sqlite'));
    expect(file.status, file.stderr).toBe(1);
    expect(file.stderr).toContain(`adsync: cannot open the state database ${join(shared, 'state.sqlite')}: its file is not writable by this user`);
    expect(file.stderr).toContain(hint);
    expect(file.stderr).not.toContain('internal error');

    // A folder the user cannot write: SQLite could not make its -wal file there.
    const locked = join(dir, 'locked');
    mkdirSync(locked, { mode: 0o755 });
    writeFileSync(join(locked, 'state.sqlite'), '');
    chmodSync(join(locked, 'state.sqlite'), 0o666);
    const folder = run(join(locked, 'state.sqlite'));
    expect(folder.status, folder.stderr).toBe(1);
    expect(folder.stderr).toContain(`its folder (SQLite writes its -wal and -shm files next to the database) is not writable by this user`);
    expect(folder.stderr).not.toContain('internal error');

    // A folder to make for it, in one the user cannot write (/var/lib/adsync, not made yet).
    const unmade = run(join(locked, 'state', 'state.sqlite'));
    expect(unmade.status, unmade.stderr).toBe(1);
    expect(unmade.stderr).toContain(`adsync: cannot open the state database ${join(locked, 'state', 'state.sqlite')}: EACCES: permission denied, mkdir '${join(locked, 'state')}'`);
    expect(unmade.stderr).not.toContain('internal error');
  });
});
