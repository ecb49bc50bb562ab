/**
 * `adsync backfill <job> --source <file>`: the path is relative to the current directory (not
 * to the job file's folder, as a job's source.path is). A --source whose format its name does
 * not tell, or that is a folder, is reported as a problem of --source (exit 2), not as an
 * invalid job file.
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace, summaries, type Workspace } from '../helpers/e2e.js';
import { crmExport, errorLines, expectNoStackTrace, range } from '../reliability/support.js';

const JOB = 'account_id: emu-account\nsource: { path: exports/daily.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email, partner_user_id: Id }\n';

let ws: Workspace;
beforeAll(async () => {
  ws = await createWorkspace();
  ws.write('jobs/daily.yaml', JOB);
  ws.write('jobs/typed.yaml', JOB.replace('path: exports/daily.csv', 'path: exports/daily.csv, format: csv'));
  ws.write('data/big2.dat', crmExport(range(1, 5)));
  ws.write('data/history.csv', crmExport(range(1, 5)));
  // The same name beside the job file: --source must not be read from there.
  ws.write('jobs/data/history.csv', crmExport(range(100, 101)));
});
afterAll(async () => {
  await ws.close();
});

describe('adsync backfill --source', () => {
  it('a name that does not tell the format: the problem is --source, not the job file (exit 2)', async () => {
    const r = await ws.cli(['backfill', 'jobs/daily.yaml', '--source', 'data/big2.dat', '--json']);
    expect(r.code).toBe(2);
    expectNoStackTrace(r);
    expect(r.stderr).not.toContain('is not valid');
    expect(errorLines(r.stderr)).toEqual(['adsync: --source data/big2.dat: cannot tell its format from the name (".dat" is not a known extension)']);
    expect(r.stderr).toContain('hint: give the file the extension of its format (.csv, .tsv, .tab, .txt, .xml, .rss, .atom, or .gz of them;');
    expect(r.stderr).toContain('set source.format: csv, tsv or xml in jobs/daily.yaml');
    expect(ws.emulator.stateSummary().requests.total).toBe(0);
  });

  it('a folder: the problem is --source (exit 2)', async () => {
    const r = await ws.cli(['backfill', 'jobs/daily.yaml', '--source', 'data']);
    expect(r.code).toBe(2);
    expect(r.stderr).not.toContain('is not valid');
    expect(errorLines(r.stderr)).toEqual(['adsync: --source data: is a folder, not a file']);
    expect(r.stderr).toContain('--source is relative to the current directory');
  });

  it('is relative to the current directory; a job that sets source.format takes any name', async () => {
    const r = await ws.cli(['backfill', 'jobs/daily.yaml', '--source', 'data/history.csv', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(summaries(r)[0]).toMatchObject({ status: 'success', read: 5, added: 10 });
    const typed = await ws.cli(['backfill', 'jobs/typed.yaml', '--source', 'data/big2.dat', '--json']);
    expect(typed.code, typed.stderr).toBe(0);
    expect(summaries(typed)[0]).toMatchObject({ status: 'success', read: 5 });
  });

  it('a URL is refused (exit 2), named without its password or query values, in the message, the summary and the run history', async () => {
    const url = 'https://feeds:BackfillPassword0x7Q@127.0.0.1:1/history.csv?token=BackfillToken0x9Z';
    const r = await ws.cli(['backfill', 'jobs/daily.yaml', '--source', url, '--json']);
    expect(r.code).toBe(2);
    expectNoStackTrace(r);
    expect(errorLines(r.stderr)).toEqual([
      'adsync: job daily failed: backfill reads a local file, not https://***:***@127.0.0.1:1/history.csv?token=*** (download the file first, then run `adsync backfill <job> --source <file>`)',
    ]);
    expect(summaries(r)[0]?.error).toBe('backfill reads a local file, not https://***:***@127.0.0.1:1/history.csv?token=*** (download the file first, then run `adsync backfill <job> --source <file>`)');
    const runs = await ws.cli(['runs', '--json']);
    const stateFiles = [ws.statePath, `${ws.statePath}-wal`].filter((file) => existsSync(file)).map((file) => readFileSync(file).toString('latin1'));
    expect(stateFiles.length).toBeGreaterThan(0);
    for (const where of [r.stdout, r.stderr, runs.stdout, ...stateFiles]) {
      expect(where).not.toMatch(/BackfillPassword0x7Q|BackfillToken0x9Z/);
    }
    expect(runs.stdout).toContain('backfill reads a local file, not https://***:***@127.0.0.1:1/history.csv?token=***');
  });
});
