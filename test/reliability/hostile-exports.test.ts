/**
 * Hostile and broken CRM exports through the real CLI: each gives a clear one-line error or
 * per-row rejects, a non-zero exit where the run cannot proceed, never a stack trace, and
 * never a destructive mirror (the audience's members are still there afterwards).
 */
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace, summaries, type Workspace } from '../helpers/e2e.js';

const JOB = `account_id: emu-account
max_reject_ratio: 1
source: { path: exports/crm.csv }
audience:
  custom_audience_id: emu-audience
  identifiers: { email: Email, partner_user_id: Id }
`;
const GOOD = 'Id,Email\nA1,a1@example.com\nA2,a2@example.com\nA3,a3@example.com\n';

let ws: Workspace;
beforeAll(async () => {
  ws = await createWorkspace();
  ws.write('crm.yaml', JOB);
  ws.write('exports/crm.csv', GOOD);
  const seeded = await ws.cli(['run', 'crm.yaml']);
  expect(seeded.code, seeded.stderr).toBe(0);
});
afterAll(async () => {
  await ws.close();
});

const sha = (s: string): string => createHash('sha256').update(s).digest('hex');
const ORIGINAL = { email: ['a1@example.com', 'a2@example.com', 'a3@example.com'].map(sha), partner_user_id: ['A1', 'A2', 'A3'] };

/** Never a destructive mirror: the members the good export put there are all still there. */
function expectOriginalMembers(): void {
  const m = ws.emulator.state().custom_audiences['emu-audience']?.members ?? {};
  expect(m.email).toEqual(expect.arrayContaining(ORIGINAL.email));
  expect(m.partner_user_id).toEqual(expect.arrayContaining(ORIGINAL.partner_user_id));
}

/** Runs the job on `content` as its export; checks the universal promises; returns the result. */
async function runOn(content: string | Buffer, file = 'exports/crm.csv', job = 'crm.yaml') {
  ws.write(file, content);
  const result = await ws.cli(['run', job, '--json']);
  expect(result.stderr).not.toMatch(/^\s+at /m); // never a stack trace
  expectOriginalMembers();
  return result;
}

function errorLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l.startsWith('adsync: '));
}

describe('hostile and broken CRM exports', () => {
  it('an empty file: a clear error, exit 1', async () => {
    const r = await runOn('');
    expect(r.code).toBe(1);
    expect(errorLines(r.stderr)).toEqual([expect.stringMatching(/^adsync: job crm failed: .*exports\/crm\.csv is empty/)]);
  });

  it('a header without rows: exit 1, nothing removed', async () => {
    const r = await runOn('Id,Email\n');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('the export has no valid identifier: a mirror run would remove all 6 members; nothing was removed');
  });

  it('columns the job does not read may be unnamed or repeated (a trailing comma, two Name columns); one it reads must be unique', async () => {
    const loose = await runOn('Id,Name,Email,Name,\nA1,Ann,a1@example.com,Lee,\nA2,Bo,a2@example.com,Ray,\nA3,Cy,a3@example.com,Kim,\n');
    expect(loose.code, loose.stderr).toBe(0);
    expect(summaries(loose)[0]).toMatchObject({ status: 'success', read: 3, valid: 3, rejected: 0, added: 0, removed: 0 });

    const twice = await runOn('Id,Email,Email\nA1,a1@example.com,x1@example.com\n');
    expect(twice.code).toBe(1);
    expect(errorLines(twice.stderr)).toEqual([
      expect.stringMatching(/^adsync: job crm failed: \S*exports\/crm\.csv has more than one column for email -> "Email" \(columns 2, 3\): adsync cannot tell which one to read \(give those columns their own names in the export\)$/),
    ]);
    expect(summaries(twice)[0]).toMatchObject({ status: 'failed', added: 0, removed: 0, requests: 0 });
  });

  it('an unclosed quote: an error naming the line, exit 1, nothing sent', async () => {
    const r = await runOn('Id,Email\nA1,a1@example.com\nA2,"a2@example.com\nA3,a3@example.com\n');
    expect(r.code).toBe(1);
    expect(errorLines(r.stderr)[0]).toMatch(/line 3/);
    expect(summaries(r)[0]).toMatchObject({ status: 'failed', added: 0, removed: 0 });
  });

  it('ragged rows: rejects with row and line; a member an unreadable row may hold is not removed', async () => {
    const r = await runOn('Id,Email\nA1,a1@example.com\nA2,a2@example.com,extra\nA3\nA3,a3@example.com\n');
    expect(r.code).toBe(1);
    const s = summaries(r)[0];
    expect(s).toMatchObject({ status: 'failed', read: 4, valid: 2, rejected: 2, removed: 0 });
    expect(r.stderr).toContain('2 rows of the source could not be read (first: row 2, line 3: row has 3 fields, header has 2); such a row may hold one that is still current, so no removals were made');
    expect(readFileSync(String(s?.rejects_file), 'utf8')).toBe(
      'row,line,id,field,reason\n2,3,,,"row has 3 fields, header has 2"\n3,4,,,"row has 1 field, header has 2"\n',
    );
  });

  it('a 50 MB single line: a reject, not a crash', async () => {
    const huge = Buffer.alloc(50 * 1024 * 1024, 'x');
    const r = await runOn(Buffer.concat([Buffer.from(GOOD), Buffer.from('A9,'), huge, Buffer.from('\n')]));
    expect(r.code).toBe(0);
    const s = summaries(r)[0];
    expect(s).toMatchObject({ read: 4, valid: 3, rejected: 1 });
    expect(readFileSync(String(s?.rejects_file), 'utf8')).toMatch(/^row,line,id,field,reason\n4,5,,,.*(long|bytes|MiB)/);
  });

  it('binary garbage: a clear error, exit 1', async () => {
    const garbage = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256));
    const r = await runOn(garbage);
    expect(r.code).toBe(1);
    expect(errorLines(r.stderr)).toHaveLength(1);
  });

  it('invalid UTF-8 and a Latin-1 file: rejects with the hint; read right with encoding latin1', async () => {
    const latin1 = Buffer.from('Id,Email\nA1,a1@example.com\nA2,a2@example.com\nA3,a3@example.com\nZ1,zoë@exämple.com\n', 'latin1');
    const r = await runOn(latin1);
    expect(r.code).toBe(0);
    const s = summaries(r)[0];
    expect(s).toMatchObject({ read: 4, valid: 3, rejected: 1 });
    expect(readFileSync(String(s?.rejects_file), 'utf8')).toContain('source.encoding: latin1');

    ws.write('latin.yaml', JOB.replace('source: { path: exports/crm.csv }', 'source: { path: exports/crm.csv, encoding: latin1 }').replace('account_id', 'name: crm\naccount_id'));
    const fixed = await runOn(latin1, 'exports/crm.csv', 'latin.yaml');
    expect(fixed.code, fixed.stderr).toBe(0);
    // zoë@exämple.com is a valid address once decoded right (lowercased, hashed).
    expect(summaries(fixed)[0]).toMatchObject({ read: 4, valid: 4, rejected: 0 });
  });

  it('a gzip file cut short: a clear error, exit 1, nothing removed', async () => {
    const gz = gzipSync(Buffer.from(GOOD.repeat(2000)));
    ws.write('gz.yaml', JOB.replace('exports/crm.csv', 'exports/crm.csv.gz').replace('account_id', 'name: crm\naccount_id'));
    const r = await runOn(gz.subarray(0, Math.floor(gz.length / 2)), 'exports/crm.csv.gz', 'gz.yaml');
    expect(r.code).toBe(1);
    expect(errorLines(r.stderr)[0]).toMatch(/cut short/);
  });

  it('job files with wrong types, unknown keys or a missing source: exit 2, one message each', async () => {
    ws.write('bad1.yaml', 'account_id: emu-account\nsource: { path: 42, format: excel }\naudience: { custom_audience_id: x, identifiers: { email: Email } }\n');
    ws.write('bad2.yaml', 'account_id: emu-account\nsource: { path: x.csv }\naudience: { custom_audience_id: x, identifiers: { email: Email }, moed: add }\n');
    ws.write('bad3.yaml', 'account_id: emu-account\naudience: { custom_audience_id: x, identifiers: { email: Email } }\n');
    ws.write('bad4.yaml', 'account_id: emu-account\nsource: { path: exports/missing.csv }\naudience: { custom_audience_id: emu-audience, identifiers: { email: Email } }\n');
    for (const [file, message] of [
      ['bad1.yaml', 'source.format: expected one of "csv", "tsv", "xml", got "excel"'],
      ['bad2.yaml', 'audience.moed: unknown key (did you mean "mode"?)'],
      ['bad3.yaml', 'source: is required (object)'],
    ] as const) {
      const r = await ws.cli(['run', file]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(message);
      expect(r.stderr).not.toMatch(/^\s+at /m);
    }
    const missing = await ws.cli(['run', 'bad4.yaml']);
    expect(missing.code).toBe(1);
    expect(errorLines(missing.stderr)[0]).toMatch(/missing\.csv does not exist/);
    expectOriginalMembers();
  });
});
