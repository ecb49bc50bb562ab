/**
 * The guards of a mirror run per identifier type, end to end (the real CLI against the
 * emulator): an export whose every row is still valid by its email, but whose phone column
 * came back broken (Excel's scientific notation) or empty, must not remove the phone members.
 * A run (and a dry run, and `adsync validate` where the state does not matter) fails with a
 * message naming the type, the column and the counts; the audience keeps every member; the
 * additions still go. A sparse column (most cells empty) is judged by the values it has.
 */
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CliResult } from '../helpers/cli.js';
import { createWorkspace, summaries, type Workspace } from '../helpers/e2e.js';

const sha = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');
const ROWS = 200;
const email = (i: number): string => `user${i}@example.com`;
/** `(201) 555-1000` ... `(201) 555-1199`: valid US numbers. */
const phone = (i: number): string => `(201) 555-1${String(i).padStart(3, '0')}`;
const e164 = (i: number): string => `12015551${String(i).padStart(3, '0')}`;
const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

function job(kind: 'custom_audience_id: emu-audience' | 'do_not_reach_list_id: emu-dnr' = 'custom_audience_id: emu-audience', extra = ''): string {
  return `account_id: emu-account\nmax_reject_ratio: 0.05\nsource: { path: exports/crm.csv }\naudience:\n  ${kind}\n  identifiers: { email: Email, phone_number: Phone }\n  default_country: US\n${extra}`;
}

function csv(rows: readonly (readonly [string, string])[]): string {
  return `Email,Phone\n${rows.map(([e, p]) => `${e},${p}`).join('\n')}\n`;
}

let ws: Workspace;
beforeEach(async () => {
  ws = await createWorkspace();
});
afterEach(async () => {
  await ws.close();
});

function members(): Record<string, string[]> {
  const m = ws.emulator.state().custom_audiences['emu-audience']?.members ?? {};
  return { email: [...(m.email ?? [])].sort(), phone_number: [...(m.phone_number ?? [])].sort() };
}

const allEmails = (): string[] => range(ROWS).map((i) => sha(email(i))).sort();
const allPhones = (): string[] => range(ROWS).map((i) => sha(e164(i))).sort();

async function run(...args: string[]): Promise<{ r: CliResult; summary: Record<string, unknown> }> {
  const r = await ws.cli(['run', 'crm.yaml', '--json', ...args]);
  return { r, summary: summaries(r)[0] ?? {} };
}

/** The first run: 200 rows, 400 members. */
async function firstRun(): Promise<void> {
  ws.write('exports/crm.csv', csv(range(ROWS).map((i) => [email(i), phone(i)])));
  const { r, summary } = await run();
  expect(r.code, r.stderr).toBe(0);
  expect(summary).toMatchObject({ status: 'success', added: 400, removed: 0 });
  expect(members()).toEqual({ email: allEmails(), phone_number: allPhones() });
}

const brokenPhones = (file: string, n: number): string =>
  `${n} of ${n} phone_number values (column Phone, 100.0%) are invalid, more than max_reject_ratio 0.05: the export is not trusted and nothing was removed. ` +
  `Fix that column of the export (the rejects file lists the invalid values) and run again; if such values are expected, raise max_reject_ratio in ${file}`;

const emptiedPhones = (file: string): string =>
  'the export would remove 200 of 200 phone_number members (column Phone, 100.0%), more than max_remove_ratio 0.5 of the members of that type; nothing was removed. ' +
  `If this is intended, raise audience.max_remove_ratio in ${file} or run once with --max-delete-ratio 1`;

describe('a mirror run guards each identifier type', () => {
  it('a phone column Excel turned into 2.01555E+09: exit 1 and nothing removed, from a run, a dry run and validate; --max-delete-ratio 1 does not change that, and additions still go', async () => {
    const file = ws.write('crm.yaml', job());
    await firstRun();
    // The same export as Excel saves it: every row still valid by its email.
    ws.write('exports/crm.csv', csv(range(ROWS).map((i) => [email(i), '2.01555E+09'])));
    const message = brokenPhones(file, ROWS);

    const dry = await run('--dry-run');
    expect(dry.r.code).toBe(1);
    expect(dry.summary).toMatchObject({ status: 'failed', dry_run: true, added: 0, removed: 0, error: message });
    const validate = await ws.cli(['validate', 'crm.yaml', '--json']);
    expect(validate.code).toBe(1);
    expect(summaries(validate)[0]).toMatchObject({ status: 'failed', error: message });

    const { r, summary } = await run();
    expect(r.code).toBe(1);
    expect(summary).toMatchObject({
      status: 'failed',
      read: 200,
      valid: 200,
      rejected: 0,
      added: 0,
      removed: 0,
      unchanged: 200,
      invalid_identifiers: { phone_number: 200 },
      error: message,
    });
    expect(r.stderr).toContain(`adsync: job crm failed: ${message}`);
    expect(members()).toEqual({ email: allEmails(), phone_number: allPhones() });

    // A new customer in the next export: added. --max-delete-ratio overrides how much may go,
    // not whether the export is trusted: the phones stay.
    ws.write('exports/crm.csv', csv([...range(ROWS).map((i) => [email(i), '2.01555E+09'] as const), ['new@example.com', '2.01555E+09']]));
    const forced = await run('--max-delete-ratio', '1');
    expect(forced.r.code).toBe(1);
    expect(forced.summary).toMatchObject({ status: 'failed', added: 1, removed: 0, error: brokenPhones(file, ROWS + 1) });
    expect(members()).toEqual({ email: [...allEmails(), sha('new@example.com')].sort(), phone_number: allPhones() });
  });

  it('a phone column that arrived empty: exit 1, nothing removed (the dry run says the same); --max-delete-ratio 1 removes them', async () => {
    const file = ws.write('crm.yaml', job());
    await firstRun();
    // 200 of 400 members go: within max_remove_ratio 0.5 of the audience, but all of the phones.
    ws.write('exports/crm.csv', csv(range(ROWS).map((i) => [email(i), ''])));

    const dry = await run('--dry-run');
    expect(dry.r.code).toBe(1);
    expect(dry.summary).toMatchObject({ status: 'failed', dry_run: true, removed: 0, error: emptiedPhones(file) });
    // Without the state the column looks like any sparse one: validate has nothing to say.
    const validate = await ws.cli(['validate', 'crm.yaml', '--json']);
    expect(validate.code, validate.stderr).toBe(0);

    const { r, summary } = await run();
    expect(r.code).toBe(1);
    expect(summary).toMatchObject({ status: 'failed', read: 200, valid: 200, rejected: 0, added: 0, removed: 0, unchanged: 200, error: emptiedPhones(file) });
    expect(summary.invalid_identifiers).toBeUndefined();
    expect(members()).toEqual({ email: allEmails(), phone_number: allPhones() });

    const forced = await run('--max-delete-ratio', '1');
    expect(forced.r.code, forced.r.stderr).toBe(0);
    expect(forced.summary).toMatchObject({ status: 'success', removed: 200 });
    expect(members()).toEqual({ email: allEmails(), phone_number: [] });
  });

  it('a type the job no longer maps (its column taken out of audience.identifiers): the message says so, not that a column of that name is empty', async () => {
    const file = ws.write('crm.yaml', job());
    await firstRun();
    ws.write('crm.yaml', job().replace('{ email: Email, phone_number: Phone }', '{ email: Email }'));
    const { r, summary } = await run();
    expect(r.code).toBe(1);
    expect(summary).toMatchObject({
      status: 'failed',
      removed: 0,
      error:
        'the export would remove 200 of 200 phone_number members (not in audience.identifiers any more, 100.0%), more than max_remove_ratio 0.5 of the members of that type; nothing was removed. ' +
        `If this is intended, raise audience.max_remove_ratio in ${file} or run once with --max-delete-ratio 1`,
    });
    expect(members()).toEqual({ email: allEmails(), phone_number: allPhones() });
  });

  it('a sparse column (phones on 45% of rows, the rest empty) mirrors as usual', async () => {
    ws.write('crm.yaml', job());
    const sparse = (i: number): string => (i % 20 < 9 ? phone(i) : '');
    ws.write('exports/crm.csv', csv(range(ROWS).map((i) => [email(i), sparse(i)])));
    const first = await run();
    expect(first.r.code, first.r.stderr).toBe(0);
    expect(first.summary).toMatchObject({ status: 'success', added: 290 });
    // Ten customers leave (rows 180-189): their 10 emails and 9 phones (9 of the 90 phone
    // members, 10%) are removed.
    const kept = range(ROWS).filter((i) => i < 180 || i >= 190);
    ws.write('exports/crm.csv', csv(kept.map((i) => [email(i), sparse(i)])));
    const { r, summary } = await run();
    expect(r.code, r.stderr).toBe(0);
    expect(summary).toMatchObject({ status: 'success', added: 0, removed: 19, unchanged: 271 });
    expect(members()).toEqual({
      email: kept.map((i) => sha(email(i))).sort(),
      phone_number: kept
        .filter((i) => i % 20 < 9)
        .map((i) => sha(e164(i)))
        .sort(),
    });
  });

  it('a do-not-reach list in mirror mode is guarded the same way; mode add is not', async () => {
    const file = ws.write('crm.yaml', job('do_not_reach_list_id: emu-dnr'));
    ws.write('exports/crm.csv', csv(range(ROWS).map((i) => [email(i), phone(i)])));
    expect((await run()).r.code).toBe(0);
    ws.write('exports/crm.csv', csv(range(ROWS).map((i) => [email(i), ''])));
    const { r, summary } = await run();
    expect(r.code).toBe(1);
    expect(summary).toMatchObject({ kind: 'do_not_reach', status: 'failed', removed: 0, error: emptiedPhones(file) });
    expect(ws.emulator.state().do_not_reach_lists['emu-dnr']?.members.phone_number).toHaveLength(ROWS);

    // An add job sends what is valid and never removes: broken phones are dropped values only.
    ws.write('crm.yaml', job('custom_audience_id: emu-audience', '  mode: add\n'));
    ws.write('exports/crm.csv', csv(range(ROWS).map((i) => [email(i), '2.01555E+09'])));
    const add = await run();
    expect(add.r.code, add.r.stderr).toBe(0);
    expect(add.summary).toMatchObject({ status: 'success', added: 200, invalid_identifiers: { phone_number: 200 } });
  });
});
