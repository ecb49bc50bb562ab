/**
 * What the CLI does with the job files it is given, as README's command reference says:
 * `adsync validate` (exit 0 / 1 / 2, the rejects file, no API call, no state), column names
 * matched exactly and then ignoring case, a missing column named with the export's columns,
 * and `adsync run` of several files of which one is broken (the others still run; the worst
 * exit code wins), and a job file that is a symbolic link (its paths relative to the link's
 * folder; a dangling one named as such).
 */
import { existsSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWorkspace, summaries, type Workspace } from '../helpers/e2e.js';

let ws: Workspace;
beforeEach(async () => {
  ws = await createWorkspace();
});
afterEach(async () => {
  await ws.close();
});

const job = (identifiers: string, source = 'crm.csv'): string =>
  `account_id: emu-account\nsource: { path: ${source} }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: ${identifiers}\n`;

const requests = (): number => ws.emulator.state().requests.total;

describe('adsync validate', () => {
  it('exit 0 for a valid job (columns matched ignoring case), without calling the API or creating the state', async () => {
    ws.write('crm.csv', 'Customer ID,e-mail,Phone\nC1,a@example.com,+14155552671\n');
    ws.write('crm.yaml', job('{ email: E-MAIL, phone_number: phone, partner_user_id: Customer ID }'));
    const r = await ws.cli(['validate', 'crm.yaml']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`${ws.dir}/crm.yaml: valid; 1 of 1 rows usable`);
    expect(requests()).toBe(0);
    expect(existsSync(ws.statePath)).toBe(false);
  });

  it("prints a validation report (no sending counts) and, at the default log level, no run's info lines", async () => {
    ws.write('crm.csv', 'Customer ID,E-mail,Phone\nC1,a@example.com,+14155552671\nC2,A@example.com,12\nC3,c@example.com,\nC4,,\n');
    // One of the two phone numbers is invalid: within max_reject_ratio 0.5 (a mirror job refuses
    // a column with a larger share of invalid values, whatever the state holds).
    ws.write('crm.yaml', `max_reject_ratio: 0.5\n${job('{ email: E-mail, phone_number: Phone, partner_user_id: Customer ID }').replace('identifiers:', 'max_remove_ratio: 1\n  identifiers:')}`);
    const quiet = await ws.cli(['validate', 'crm.yaml'], { ADSYNC_LOG_LEVEL: undefined });
    expect(quiet.code, quiet.stderr).toBe(0);
    const table = quiet.stdout.replace(/(duration +)\d+\.\d s/, '$1N s').replace(/(rejects file +)\S+/, '$1FILE');
    expect(table).toBe(
      [
        'crm (custom audience) validated: nothing was sent',
        '  status          valid',
        '  read            4',
        '  valid           4',
        '  rejected        0',
        '  duplicates      1',
        '  invalid values  phone_number 1',
        '  duration        N s',
        // The phone number dropped from row 2 (the row is kept for its email and id).
        '  rejects file    FILE',
        '',
      ].join('\n'),
    );
    expect(quiet.stderr).toBe(`${ws.dir}/crm.yaml: valid; 4 of 4 rows usable\n`);
    // Asked for, the info lines are there.
    const verbose = await ws.cli(['--log-level', 'info', 'validate', 'crm.yaml'], { ADSYNC_LOG_LEVEL: undefined });
    expect(verbose.stderr).toContain('"msg":"run started"');
  });

  it('exit 2 for a column the export does not have, naming the export columns', async () => {
    ws.write('crm.csv', 'Customer ID,e-mail,Phone\nC1,a@example.com,+14155552671\n');
    ws.write('crm.yaml', job('{ email: E-mail, phone_number: Mobile }'));
    const r = await ws.cli(['validate', 'crm.yaml']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `adsync: job crm failed: ${ws.dir}/crm.csv has no column for phone_number -> "Mobile"; its columns are: "Customer ID", "e-mail", "Phone" (fix audience.identifiers (or country_column) in the job file to name columns of the export)`,
    );
    expect(r.stderr).not.toMatch(/^\s+at /m);
    expect(requests()).toBe(0);
  });

  it('exit 1 for too many rejects, with the rejects file written (mode 0600) and still no API call or state', async () => {
    ws.write('crm.csv', 'Customer ID,E-mail\nC1,a@example.com\n,not-an-email\n');
    ws.write('crm.yaml', job('{ email: E-mail, partner_user_id: Customer ID }'));
    const r = await ws.cli(['validate', 'crm.yaml']);
    expect(r.code).toBe(1);
    const file = /see (\S+\.csv)/.exec(r.stderr)?.[1] ?? '';
    expect(r.stderr).toContain('1 of 2 rows rejected (50.0%, more than max_reject_ratio 0.2)');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // The folders adsync makes for it are the owner's alone too (rejects may hold values).
    expect(statSync(dirname(file)).mode & 0o777).toBe(0o700);
    expect(statSync(dirname(dirname(file))).mode & 0o777).toBe(0o700);
    expect(readFileSync(file, 'utf8')).toBe('row,line,id,field,reason\n2,3,,email,not an email address\n');
    expect(requests()).toBe(0);
    expect(existsSync(ws.statePath)).toBe(false);
  });

  it('exit 1 where a mirror run would fail whatever the state holds: an export without a valid identifier, a feed without a valid product', async () => {
    ws.write('crm.csv', 'Customer ID,E-mail\n');
    ws.write('crm.yaml', job('{ email: E-mail }'));
    const header = await ws.cli(['validate', 'crm.yaml']);
    expect(header.code, header.stderr).toBe(1);
    expect(header.stderr).toContain('adsync: job crm failed: the export has no valid identifier; nothing was sent');
    ws.write('feed.xml', '<?xml version="1.0"?>\n<rss version="2.0" xmlns:g="http://base.google.com/ns/1.0"><channel><title>t</title></channel></rss>\n');
    ws.write('shop.yaml', 'account_id: emu-account\nsource: { path: feed.xml }\ncatalog:\n  product_catalog_id: emu-catalog\n');
    const empty = await ws.cli(['validate', 'shop.yaml']);
    expect(empty.code, empty.stderr).toBe(1);
    expect(empty.stderr).toContain('adsync: job shop failed: the feed has no valid products; nothing was deleted');
    // Not in add or upsert mode: such a run succeeds, sending nothing.
    ws.write('add.yaml', job('{ email: E-mail }').replace('audience:\n', 'audience:\n  mode: add\n'));
    expect((await ws.cli(['validate', 'add.yaml'])).code).toBe(0);
    expect(requests()).toBe(0);
  });

  it('exit 0 with a warning for rows that could not be read: a mirror run with removals to make would refuse them', async () => {
    ws.write('crm.csv', 'Customer ID,E-mail\nC1,a@example.com\nC2,b@example.com,extra\nC3,c@example.com\nC4,d@example.com\nC5,e@example.com\n');
    ws.write('crm.yaml', job('{ email: E-mail, partner_user_id: Customer ID }'));
    const r = await ws.cli(['validate', 'crm.yaml']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      '1 row of the source could not be read (first: row 2, line 3: row has 3 fields, header has 2); such a row may hold one that is still current: a mirror run that has removals to make will make none and fail. Fix those rows (see the rejects file)',
    );
    expect(r.stderr).toContain(`${ws.dir}/crm.yaml: valid; 4 of 5 rows usable`);
  });

  it("exit 2 with every problem of a job file at once: the schema's and the value checks (cron, time zone, country)", async () => {
    ws.write('acme.yaml', 'account_id: emu-account\nschedule: "61 * * * *"\ntimezone: Mars/Base\nsource: { path: crm.csv }\naudience:\n  custom_audience_id: x\n  mode: mirorr\n  default_country: XX\n  identifiers: { email: Email }\n');
    const r = await ws.cli(['validate', 'acme.yaml']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      [
        'adsync: acme.yaml is not valid:',
        '  audience.mode: expected one of "mirror", "add", "remove", got "mirorr"',
        '  schedule: "61 * * * *" is not a valid cron expression (61 is a invalid expression for minute)',
        '  timezone: unknown time zone "Mars/Base" (use an IANA name such as Europe/Berlin)',
        '  audience.default_country: "XX" is not an ISO 3166-1 alpha-2 country code (e.g. US, GB, DE)',
        '',
      ].join('\n'),
    );
  });

  it('exit 2 for a source.path URL that cannot be parsed, without repeating it (it may hold a password or a token)', async () => {
    ws.write('feed.yaml', 'account_id: emu-account\nsource: { path: "https://shop:pa/ss-SECRET@feeds.example:99999/feed.xml?token=TOKEN-SECRET" }\ncatalog:\n  product_catalog_id: emu-catalog\n');
    const r = await ws.cli(['validate', 'feed.yaml']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'adsync: feed.yaml is not valid:\n  source.path: not a valid URL (not repeated here: it may hold a password or a token); check its host and port, and in a user:password@ part write / @ : # ? as %2F %40 %3A %23 %3F\n',
    );
    expect(r.stdout).not.toContain('SECRET');
  });

  it('exit 2 without repeating a URL held inside a value or a key, or a source URL adsync does not read (a password, a token, a webhook path)', async () => {
    // `path:https://...` (no space after the colon) makes the block one string; `{ https://... }`
    // makes the URL a key; sftp:// is no scheme adsync reads (it was taken for a local path).
    ws.write(
      'typos.yaml',
      'account_id: emu-account\nsource:\n  path:https://user:pa55word@example.com/export.csv\nalerts: { https://hooks.slack.example/services/T000/B000/xoxSecretHookPath }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email }\n',
    );
    ws.write('sftp.yaml', job('{ email: Email }', '"sftp://user:pa55word@example.com/export.csv"'));
    const typos = await ws.cli(['validate', 'typos.yaml', '--json']);
    expect(typos.code).toBe(2);
    expect(typos.stderr).toBe(
      'adsync: typos.yaml is not valid:\n' +
        '  source: expected object, got text holding a URL (not repeated here: it may hold a password or a token)\n' +
        '  alerts.<a URL, not repeated here: it may hold a password or a token>: unknown key (allowed: webhook_url, reject_ratio)\n',
    );
    const sftp = await ws.cli(['validate', 'sftp.yaml', '--json']);
    expect(sftp.code).toBe(2);
    expect(sftp.stderr).toBe(
      'adsync: sftp.yaml is not valid:\n  source.path: a URL adsync cannot read: only http:// and https:// are (not repeated here: it may hold a password or a token)\n',
    );
    for (const r of [typos, sftp]) for (const secret of ['pa55word', 'xoxSecretHookPath', 'T000/B000']) expect(r.stdout + r.stderr).not.toContain(secret);
  });

  it('exit 2 for a job file that is not valid YAML, with its line and column', async () => {
    ws.write('broken.yaml', 'account_id: [\n');
    const r = await ws.cli(['validate', 'broken.yaml']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^adsync: broken\.yaml line 2, column 1: not valid YAML: /m);
  });

  it('several unknown keys in one block: one indented line each, "did you mean" only for a close key, else the allowed keys', async () => {
    ws.write('crm.csv', 'E-mail\na@example.com\n');
    ws.write(
      'keys.yaml',
      'nme: crm\naccount_id: emu-account\nsource: { path: crm.csv, foo: 1, bar: 2, pth: 3 }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: E-mail, emial: E-mail, phone: E-mail }\n',
    );
    const r = await ws.cli(['validate', 'keys.yaml']);
    expect(r.code, r.stderr).toBe(2);
    const SOURCE_KEYS = 'path, format, delimiter, encoding';
    expect(r.stderr).toBe(
      [
        'adsync: keys.yaml is not valid:',
        `  source.foo: unknown key (allowed: ${SOURCE_KEYS})`,
        `  source.bar: unknown key (allowed: ${SOURCE_KEYS})`,
        '  source.pth: unknown key (did you mean "path"?)',
        '  audience.identifiers.emial: unknown key (did you mean "email"?)',
        '  audience.identifiers.phone: unknown key (allowed: email, phone_number, handle, twitter_id, device_id, partner_user_id)',
        '  nme: unknown key (did you mean "name"?)',
        '',
      ].join('\n'),
    );
    // The closest alternative of a union (a product set) is listed the same way.
    ws.write('feed.xml', '<rss version="2.0" xmlns:g="http://base.google.com/ns/1.0"><channel></channel></rss>');
    ws.write('shop.yaml', 'account_id: emu-account\nsource: { path: feed.xml }\ncatalog:\n  product_catalog_id: emu-catalog\n  product_sets: [{ name: s, product_ids: [p1], foo: 1, bar: 2 }]\n  Mode: upsert\n');
    const union = await ws.cli(['validate', 'shop.yaml']);
    expect(union.code, union.stderr).toBe(2);
    expect(union.stderr).toBe(
      'adsync: shop.yaml is not valid:\n  catalog.product_sets.0.foo: unknown key\n  catalog.product_sets.0.bar: unknown key\n  catalog.Mode: unknown key (did you mean "mode"?)\n',
    );
    expect(requests()).toBe(0);
  });

  it('exit 2 for an alias to an anchor that is not set (with its line) and for an alias bomb, like any YAML error', async () => {
    ws.write('crm.csv', 'E-mail\na@example.com\n');
    ws.write('alias.yaml', `schedule: *every15\n${job('{ email: E-mail }')}`);
    const alias = await ws.cli(['validate', 'alias.yaml']);
    expect(alias.code, alias.stderr).toBe(2);
    expect(alias.stderr).toBe('adsync: alias.yaml line 1, column 11: not valid YAML: Unresolved alias (the anchor must be set before the alias): every15\n');
    ws.write('bomb.yaml', ALIAS_BOMB);
    const bomb = await ws.cli(['validate', 'bomb.yaml']);
    expect(bomb.code, bomb.stderr).toBe(2);
    expect(bomb.stderr).toBe('adsync: bomb.yaml: not valid YAML: Excessive alias count indicates a resource exhaustion attack\n');
    for (const r of [alias, bomb]) {
      expect(r.stderr).not.toMatch(/^\s+at /m);
      expect(r.stderr).not.toContain('internal error');
      expect(r.stdout).toBe('');
    }
    expect(requests()).toBe(0);
  });
});

/** An alias bomb: nine levels of ten aliases to the level below (10^9 values if expanded). */
const ALIAS_BOMB = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]', ...Array.from({ length: 8 }, (_, i) => `a${i + 1}: &a${i + 1} [${Array(10).fill(`*a${i}`).join(', ')}]`)].join('\n') + '\n';

describe('adsync run of several job files', () => {
  it('reports the broken one (exit 2), still runs the others, and exits with the worst code', async () => {
    ws.write('a.csv', 'E-mail\na@example.com\n');
    ws.write('b.csv', 'E-mail\nb@example.com\n');
    ws.write('a.yaml', job('{ email: E-mail }', 'a.csv').replace('audience:\n', 'audience:\n  mode: add\n'));
    ws.write('broken.yaml', 'account_id: emu-account\nsource: { path: b.csv }\naudience: { identifiers: { email: E-mail } }\n');
    ws.write('b.yaml', job('{ email: E-mail }', 'b.csv').replace('audience:\n', 'audience:\n  mode: add\n'));
    const r = await ws.cli(['run', 'a.yaml', 'broken.yaml', 'b.yaml', '--json']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^adsync: broken\.yaml is not valid:\n/m);
    // The broken one gets its JSON object too (printed when it fails to load), no job is lost.
    expect(summaries(r).map((s) => [s.job, s.status, s.added, s.exit_code])).toEqual([
      ['broken', 'failed', 0, 2],
      ['a', 'success', 1, 0],
      ['b', 'success', 1, 0],
    ]);
    expect(ws.emulator.state().custom_audiences['emu-audience']?.members.email).toHaveLength(2);
  });

  it('a directory given as a job file is named as such (exit 2, no EISDIR), and the other job files still run', async () => {
    const DIR = 'adsync: jobs is a directory, not a job file (adsync schedule --jobs <dir> runs every job file of a folder)\n';
    ws.write('a.csv', 'E-mail\na@example.com\n');
    ws.write('jobs/a.yaml', job('{ email: E-mail }', '../a.csv').replace('audience:\n', 'audience:\n  mode: add\n'));
    const validate = await ws.cli(['validate', 'jobs']);
    expect(validate.code, validate.stderr).toBe(2);
    expect(validate.stderr).toBe(DIR);
    const run = await ws.cli(['run', 'jobs/', 'jobs/a.yaml', '--json']);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toBe(DIR);
    expect(summaries(run).map((s) => [s.job, s.status, s.added])).toEqual([
      ['jobs', 'failed', 0],
      ['a', 'success', 1],
    ]);
    // The settings file too.
    const settings = await ws.cli(['--config', 'jobs', 'runs']);
    expect(settings.code, settings.stderr).toBe(2);
    expect(settings.stderr).toBe('adsync: jobs is a directory, not a settings file\n');
    for (const r of [validate, run, settings]) {
      expect(r.stderr).not.toContain('EISDIR');
      expect(r.stderr).not.toMatch(/^\s+at /m);
    }
  });

  it('a job file with an unresolved alias or an alias bomb is reported (exit 2) and the others still run', async () => {
    ws.write('a.csv', 'E-mail\na@example.com\n');
    ws.write('b.csv', 'E-mail\nb@example.com\n');
    ws.write('a.yaml', job('{ email: E-mail }', 'a.csv').replace('audience:\n', 'audience:\n  mode: add\n'));
    ws.write('alias.yaml', `schedule: *every15\n${job('{ email: E-mail }', 'b.csv')}`);
    ws.write('bomb.yaml', ALIAS_BOMB);
    ws.write('b.yaml', job('{ email: E-mail }', 'b.csv').replace('audience:\n', 'audience:\n  mode: add\n'));
    const r = await ws.cli(['run', 'a.yaml', 'alias.yaml', 'bomb.yaml', 'b.yaml', '--json']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('adsync: alias.yaml line 1, column 11: not valid YAML: Unresolved alias (the anchor must be set before the alias): every15\n');
    expect(r.stderr).toContain('adsync: bomb.yaml: not valid YAML: Excessive alias count indicates a resource exhaustion attack\n');
    expect(r.stderr).not.toMatch(/^\s+at /m);
    expect(r.stderr).not.toContain('internal error');
    // The broken files' failed summary objects come as they fail to load, before the runs.
    expect(summaries(r).map((s) => [s.job, s.status, s.added])).toEqual([
      ['alias', 'failed', 0],
      ['bomb', 'failed', 0],
      ['a', 'success', 1],
      ['b', 'success', 1],
    ]);
    expect(ws.emulator.state().custom_audiences['emu-audience']?.members.email).toHaveLength(2);
  });
});

describe('a job file that is a symbolic link', () => {
  it("is run with its relative paths resolved against the link's folder and its name from the link; a dangling one is exit 2, naming the missing target", async () => {
    ws.write('library/template.yaml', job('{ email: E-mail }', 'crm.csv'));
    ws.write('library/crm.csv', 'E-mail\nlib1@example.com\nlib2@example.com\n');
    ws.write('acme/crm.csv', 'E-mail\nacme@example.com\n');
    symlinkSync(join(ws.dir, 'library', 'template.yaml'), join(ws.dir, 'acme', 'acme-crm.yaml'));
    const r = await ws.cli(['run', 'acme/acme-crm.yaml', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(summaries(r).map((s) => [s.job, s.status, s.read])).toEqual([['acme-crm', 'success', 1]]);

    symlinkSync('../library/missing.yaml', join(ws.dir, 'acme', 'gone.yaml'));
    const gone = await ws.cli(['run', 'acme/gone.yaml']);
    expect(gone.code).toBe(2);
    expect(gone.stderr).toMatch(/^adsync: acme\/gone\.yaml is a symbolic link to \.\.\/library\/missing\.yaml, which does not exist/m);
  });
});

describe('adsync runs', () => {
  it('lists the runs newest first as a table (started, job, kind, status, duration, counts, run id, rejects file); --job and --limit narrow it', async () => {
    ws.write('crm.csv', 'E-mail\na@example.com\nb@example.com\nx,y\nnot-an-email\n');
    ws.write('crm.yaml', job('{ email: E-mail }').replace('audience:\n', 'max_reject_ratio: 1\naudience:\n'));
    ws.write('shop.yaml', 'account_id: emu-account\nsource: { path: feed.xml }\ncatalog: { product_catalog_id: emu-catalog }\n');
    ws.write('feed.xml', '<rss version="2.0" xmlns:g="http://base.google.com/ns/1.0"><channel></channel></rss>');
    const first = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(first.code, first.stderr).toBe(0);
    const failed = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(failed.code).toBe(1);
    const [crm] = summaries(first);
    const [shop] = summaries(failed);

    const table = await ws.cli(['runs']);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^started \(UTC\) +job +kind +status +duration +read +rejected +sent +run id +rejects file +error$/);
    const cells = (line: string | undefined): string[] => (line ?? '').split(/ {2,}/);
    const date = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/;
    // Newest first: the catalog run (failed: an empty feed), then the audience run.
    const [shopRow, crmRow] = [cells(lines[1]), cells(lines[2])];
    expect(shopRow[0]).toMatch(date);
    expect(shopRow.slice(1, 4)).toEqual(['shop', 'catalog', 'failed']);
    expect(shopRow[4]).toMatch(/^\d+\.\ds$/);
    // Why it failed, on its row: what to do without a second command.
    expect(shopRow.slice(5)).toEqual(['0', '0', '+0 ~0 -0', String(shop?.run_id), String(shop?.error)]);
    expect(crmRow.slice(1, 4)).toEqual(['crm', 'custom_audience', 'success']);
    expect(crmRow.slice(5)).toEqual(['4', '2', '+2 -0', String(crm?.run_id), String(crm?.rejects_file)]);
    expect(lines).toHaveLength(3);

    expect((await ws.cli(['runs', '--job', 'crm'])).stdout.trimEnd().split('\n').slice(1).map((l) => cells(l)[1])).toEqual(['crm']);
    expect((await ws.cli(['runs', '--limit', '1'])).stdout.trimEnd().split('\n').slice(1).map((l) => cells(l)[1])).toEqual(['shop']);
  });

  it('--limit takes a whole number of runs, 1 or more: anything else is a usage error (exit 2)', async () => {
    const usage = (value: string): string =>
      `error: option '--limit <n>' argument '${value}' is invalid. expected a whole number of runs, 1 or more, got "${value}"\n(run \`adsync --help\` for usage)\n`;
    ws.write('crm.csv', 'E-mail\na@example.com\n');
    ws.write('crm.yaml', job('{ email: E-mail }'));
    expect((await ws.cli(['run', 'crm.yaml', '--json'])).code).toBe(0);
    const bad: [string, string[]][] = [
      ['abc', ['--limit', 'abc']],
      ['-1', ['--limit', '-1']],
      ['0', ['--limit', '0', '--json']],
      ['1.5', ['--limit=1.5']],
      ['', ['--limit=']],
      ['1e3', ['--limit=1e3']],
    ];
    for (const [value, args] of bad) {
      const r = await ws.cli(['runs', ...args]);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toBe(usage(value));
      expect(r.stdout).toBe('');
    }
    const one = await ws.cli(['runs', '--limit', '1', '--json']);
    expect(one.code, one.stderr).toBe(0);
    expect(summaries(one)).toHaveLength(1);
  });
});
