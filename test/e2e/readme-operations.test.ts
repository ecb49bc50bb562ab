/**
 * README's "Running it for real" examples, taken from README.md as written: the systemd unit
 * must mean to systemd what its comments say, and the cron line must run the job with the
 * credentials of the environment file it names (the file the unit reads, `KEY=value` lines).
 * And the statement of "Run history" that keeps 90 days of it must delete just what it says.
 */
import { openTestDatabase } from '../helpers/sqlite.js';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, collect, ROOT } from '../helpers/cli.js';
import { createWorkspace, type Workspace } from '../helpers/e2e.js';

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The body of the first fenced block of `lang` after the line starting with `after`. */
function fencedBlock(after: string, lang: string): string {
  const start = README.indexOf(after);
  expect(start, `README has "${after}"`).toBeGreaterThanOrEqual(0);
  const open = README.indexOf('```' + lang + '\n', start);
  const body = open + lang.length + 4;
  return README.slice(body, README.indexOf('\n```', body));
}

describe('README: running it for real', () => {
  let ws: Workspace | undefined;
  afterEach(async () => {
    await ws?.close();
    ws = undefined;
  });

  it('the systemd unit has no text after a value: systemd reads a "#" there as part of the value', () => {
    const unit = fencedBlock('A systemd unit for the scheduler', 'ini');
    const settings = unit.split('\n').filter((line) => /^[A-Za-z]+=/.test(line));
    expect(settings.length).toBeGreaterThan(5);
    // systemd has comments only on lines of their own: `TimeoutStopSec=300   # ...` is not
    // 300 s (it is ignored: the default 90 s), and `EnvironmentFile=/etc/adsync/env   # ...`
    // names a file that does not exist.
    expect(settings.filter((line) => /\s[#;]/.test(line))).toEqual([]);
    expect(unit).toMatch(/^TimeoutStopSec=\d+$/m);
    expect(unit).toMatch(/^EnvironmentFile=\/etc\/adsync\/env$/m);
  });

  it('the cron line runs the job with the variables of the environment file', { timeout: 60_000 }, async () => {
    ws = await createWorkspace();
    const cron = fencedBlock('Or plain cron, one line per job', 'cron').split('\n')[0] ?? '';
    const command = cron.split(/\s+/).slice(5).join(' ');
    expect(command).toContain('/etc/adsync/env');
    ws.write(
      'jobs/acme-crm.yaml',
      'account_id: emu-account\nsource:\n  path: crm.csv\naudience:\n  custom_audience_id: emu-audience\n  identifiers:\n    email: Email\n',
    );
    ws.write('jobs/crm.csv', 'Email\nada@example.com\nbob@example.com\n');
    // The file systemd's EnvironmentFile= reads: KEY=value lines, no `export`.
    const envFile = ws.write(
      'etc/env',
      Object.entries(ws.env)
        .filter(([key]) => key.startsWith('ADSYNC_'))
        .map(([key, value]) => `${key}=${value ?? ''}\n`)
        .join(''),
    );
    const logs = join(ws.dir, 'log');
    mkdirSync(logs);
    const local = command
      .replaceAll('/etc/adsync/env', envFile)
      .replaceAll('/var/log/adsync', logs)
      .replaceAll('node bin/adsync.js', `"${process.execPath}" "${BIN}"`)
      .replaceAll('cd /srv/adsync', `cd "${ws.dir}"`);
    // cron's environment: none of the ADSYNC_* variables.
    const cronEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: ws.env.HOME ?? ws.dir, SHELL: '/bin/sh' };
    const r = await collect(spawn('/bin/sh', ['-c', local], { env: cronEnv, stdio: ['ignore', 'pipe', 'pipe'] }));
    const errors = readFileSync(join(logs, 'acme-crm.log'), 'utf8');
    expect(r.code, errors).toBe(0);
    const summary = JSON.parse(readFileSync(join(logs, 'acme-crm.jsonl'), 'utf8')) as Record<string, unknown>;
    expect([summary.job, summary.status, summary.added]).toEqual(['acme-crm', 'success', 2]);
  });

  it('the statement that keeps 90 days of run history deletes the finished runs older than that, and only those', { timeout: 60_000 }, async () => {
    ws = await createWorkspace();
    ws.write('jobs/crm.yaml', 'account_id: emu-account\nsource: { path: crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email }\n');
    ws.write('jobs/crm.csv', 'Email\nada@example.com\n');
    expect((await ws.cli(['run', 'jobs/crm.yaml'])).code).toBe(0);
    const command = fencedBlock('To keep the history to the last 90 days', 'sh');
    const sql = /^sqlite3 \.adsync\/state\.sqlite "(.+)"$/.exec(command)?.[1];
    expect(sql, command).toBeDefined();
    const day = 86_400_000;
    const db = openTestDatabase(ws.statePath);
    const insert = db.prepare("INSERT INTO runs (run_id, job, kind, command, status, dry_run, started_at) VALUES (?, 'crm', 'custom_audience', 'run', ?, 0, ?)");
    insert.run('old-failed', 'failed', Date.now() - 200 * day);
    insert.run('old-success', 'success', Date.now() - 91 * day);
    insert.run('old-running', 'running', Date.now() - 100 * day);
    insert.run('recent', 'success', Date.now() - 89 * day);
    db.exec(sql ?? '');
    const left = (db.prepare('SELECT run_id FROM runs ORDER BY started_at').all() as { run_id: string }[]).map((r) => r.run_id);
    db.close();
    expect(left.slice(0, 2)).toEqual(['old-running', 'recent']);
    expect(left).toHaveLength(3); // and the run made above
    const runs = await ws.cli(['runs', '--json']);
    expect(runs.code, runs.stderr).toBe(0);
    expect(runs.stdout.trim().split('\n')).toHaveLength(3);
  });
});
