/**
 * `--json` prints one JSON summary object per job, a job file that fails to load included
 * (invalid, missing, not YAML, a --source that tells no format): scripts that append the output to a .jsonl lose no job.
 * Its object has the fields of a failed run's summary (no run: run_id null; the kind when the
 * file says it, else absent; the job from `name:` or the file name), and the exit code stays 2.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace, summaries, type Workspace } from '../helpers/e2e.js';
import { crmExport, range } from '../reliability/support.js';

const GOOD = 'account_id: emu-account\nsource: { path: crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email, partner_user_id: Id }\n';

let ws: Workspace;
beforeAll(async () => {
  ws = await createWorkspace();
  ws.write('crm.csv', crmExport(range(1, 3)));
  ws.write('a.yaml', GOOD);
  ws.write('broken.yaml', GOOD.replace('identifiers:', 'mode: mirorr\n  identifiers:'));
  ws.write('named.yaml', `name: shop-feed\naccount_id: emu-account\nsource: { path: feed.dat }\ncatalog:\n  product_catalog_id: emu-catalog\n`);
  ws.write('notyaml.yaml', 'account_id: [unclosed\n');
});
afterAll(async () => {
  await ws.close();
});

const ZERO = { dry_run: false, read: 0, valid: 0, rejected: 0, duplicates: 0, unchanged: 0, created: 0, updated: 0, deleted: 0, added: 0, removed: 0, requests: 0, retries: 0, duration_ms: 0, rejects_file: null };

describe('--json with job files that fail to load', () => {
  it('adsync run: one object per job file, the failed ones (printed as they fail to load, before the runs) included; exit 2', async () => {
    const r = await ws.cli(['run', 'a.yaml', 'broken.yaml', 'missing.yaml', 'named.yaml', 'notyaml.yaml', '--json']);
    expect(r.code).toBe(2);
    const out = summaries(r);
    // Every stdout line is one JSON object.
    expect(r.stdout.split('\n').filter(Boolean)).toHaveLength(out.length);
    expect(out.map((s) => s.job)).toEqual(['broken', 'missing', 'shop-feed', 'notyaml', 'a']);
    expect(out[0]).toEqual({
      job: 'broken',
      kind: 'custom_audience',
      run_id: null,
      status: 'failed',
      ...ZERO,
      error: 'broken.yaml is not valid: audience.mode: expected one of "mirror", "add", "remove", got "mirorr"',
      exit_code: 2,
      job_file: 'broken.yaml',
    });
    expect(out[1]).toEqual({ job: 'missing', run_id: null, status: 'failed', ...ZERO, error: 'missing.yaml does not exist', exit_code: 2, job_file: 'missing.yaml' });
    expect(out[2]).toMatchObject({ job: 'shop-feed', kind: 'catalog', run_id: null, status: 'failed', exit_code: 2, job_file: 'named.yaml' });
    expect(out[2]?.error).toContain('cannot tell the format of "feed.dat"');
    expect(out[3]).toMatchObject({ job: 'notyaml', run_id: null, status: 'failed', exit_code: 2 });
    expect(out[3]).not.toHaveProperty('kind');
    expect(out[3]?.error).toMatch(/^notyaml\.yaml line \d+, column \d+: not valid YAML/);
    expect(out[4]).toMatchObject({ job: 'a', status: 'success', added: 6, exit_code: 0 });
    // stderr still says it, one line per file (plus the indented problems).
    expect(r.stderr).toContain('adsync: broken.yaml is not valid:');
    expect(r.stderr).toContain('adsync: missing.yaml does not exist');
  });

  it('adsync validate --json: the same, dry_run true', async () => {
    const r = await ws.cli(['validate', 'broken.yaml', 'a.yaml', '--json']);
    expect(r.code).toBe(2);
    const out = summaries(r);
    expect(out.map((s) => [s.job, s.status, s.dry_run, s.exit_code])).toEqual([
      ['broken', 'failed', true, 2],
      ['a', 'success', true, 0],
    ]);
  });

  it('adsync backfill --json: a --source that tells no format gets its object', async () => {
    ws.write('big2.dat', crmExport(range(1, 3)));
    const r = await ws.cli(['backfill', 'a.yaml', '--source', 'big2.dat', '--json']);
    expect(r.code).toBe(2);
    expect(summaries(r)).toEqual([expect.objectContaining({ job: 'a', kind: 'custom_audience', run_id: null, status: 'failed', exit_code: 2, job_file: 'a.yaml' })]);
  });
});
