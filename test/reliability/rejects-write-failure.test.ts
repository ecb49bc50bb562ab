/**
 * A rejects file that cannot be written (rejects_dir under a file, not writable, or on a full
 * disk) fails the run with one clear line, exit 1 and its JSON summary, the run recorded as
 * failed and its lock released. It was "internal error ... this is a bug in adsync", with no
 * summary, the run left `running` in the history, from the `finally` that closed the file.
 *
 * A disk that fills while the rejects file is written: a write that takes only part of its
 * lines (the disk, or the file size limit, reached in the middle) fails the run too. It was
 * taken as written: the file ended in the middle of a line, without the rejects after it, and
 * the run succeeded (exit 0, `rejected` counting rows the file did not hold).
 */
import { openTestDatabase } from '../helpers/sqlite.js';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { collect, createWorkspace, type Workspace } from '../helpers/e2e.js';
import { audienceOf, crmExport, emulatorAudience, expectNoStackTrace, range, summaryOf } from './support.js';

let ws: Workspace;
beforeEach(async () => {
  ws = await createWorkspace();
});
afterEach(async () => {
  await ws.close();
});

const JOB = 'name: crm\naccount_id: emu-account\nsource: { path: crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email, partner_user_id: Id }\nmax_reject_ratio: 1\n';

function history(): { status: string; error: string | null }[] {
  const db = openTestDatabase(ws.statePath, { readonly: true });
  try {
    expect(db.prepare('SELECT COUNT(*) AS n FROM locks').get()).toEqual({ n: 0 });
    return db.prepare('SELECT status, error FROM runs').all() as { status: string; error: string | null }[];
  } finally {
    db.close();
  }
}

describe('a rejects file that cannot be written', () => {
  it.each([
    // Flushed when the file is closed, after the upload: the members are sent.
    ['a few rejects', 1, audienceOf(range(1, 5))],
    // Flushed while the export is read (64 KB of lines): the run stops before sending.
    ['many rejects', 3000, { email: [], partner_user_id: [] }],
  ])('%s: exit 1 with the file named and what to do, a JSON summary, the run failed and unlocked', { timeout: 60_000 }, async (_, bad, sent) => {
    ws.write('not-a-folder', 'a file\n');
    ws.write('adsync.yaml', `${ws.read('adsync.yaml').replace('rejects_dir: rejects', 'rejects_dir: not-a-folder/rejects')}`);
    const badRows = Array.from({ length: bad }, (_, i) => `,not-an-email-${i}`);
    ws.write('crm.csv', `${crmExport(range(1, 5)).trimEnd()}\n${badRows.join('\n')}\n`);
    ws.write('crm.yaml', JOB);

    const r = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(r.code, r.stderr).toBe(1);
    expectNoStackTrace(r);
    expect(r.stderr).not.toContain('internal error');
    const summary = summaryOf(r);
    const message = `cannot write the rejects file ${ws.dir}/not-a-folder/rejects/crm/${String(summary.run_id)}.csv: ENOTDIR: not a directory, mkdir '${ws.dir}/not-a-folder/rejects/crm' (rejects_dir (settings file) must be a folder the user running adsync can write, on a disk with room)`;
    expect(r.stderr).toContain(`adsync: job crm failed: ${message}`);
    expect(summary).toMatchObject({ status: 'failed', exit_code: 1, rejects_file: null, error: message });
    expect(history()).toEqual([{ status: 'failed', error: message }]);
    expect(emulatorAudience(ws)).toEqual(sent);
  });

  it('a disk that fills in the middle of a write of rejects lines: exit 1, the file named, not a success with rejects missing', { timeout: 60_000 }, async () => {
    ws.write('crm.yaml', JOB);
    ws.write('crm.csv', crmExport(range(1, 5)));
    // The state database, made by a first run: it stays well below the limit below.
    expect((await ws.cli(['run', 'crm.yaml'])).code).toBe(0);
    // Rejects flushed 64 KB at a time: the limit falls inside one of these writes.
    const badRows = Array.from({ length: 5000 }, (_, i) => `,not-an-email-${i}`);
    ws.write('crm.csv', `${crmExport(range(1, 5)).trimEnd()}\n${badRows.join('\n')}\n`);

    // The files the CLI writes are limited to 150 KiB (a full disk: EFBIG, Node ignores SIGXFSZ).
    const r = await collect(spawn('bash', ['-c', 'ulimit -f 150 && exec "$0" "$@"', process.execPath, BIN, 'run', 'crm.yaml', '--json'], { env: ws.env, cwd: ws.dir }));
    expect(r.code, r.stderr).toBe(1);
    expectNoStackTrace(r);
    const summary = summaryOf(r);
    const file = `${ws.dir}/rejects/crm/${String(summary.run_id)}.csv`;
    const message = `cannot write the rejects file ${file}: EFBIG: file too large, write (rejects_dir (settings file) must be a folder the user running adsync can write, on a disk with room)`;
    expect(summary).toMatchObject({ status: 'failed', exit_code: 1, rejected: 5000, rejects_file: file, error: message });
    expect(r.stderr).toContain(`adsync: job crm failed: ${message}`);
    expect(history()).toEqual([
      { status: 'success', error: null },
      { status: 'failed', error: message },
    ]);
    // The file holds what fitted, its last line cut: the run says it could not be written.
    expect(readFileSync(file).length).toBe(150 * 1024);
  });
});
