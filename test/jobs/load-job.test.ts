import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config/settings.js';
import { ConfigError } from '../../src/errors.js';
import { loadJob } from '../../src/jobs/load-job.js';

const dir = mkdtempSync(join(tmpdir(), 'adsync-jobs-'));
const settings = loadSettings({ env: {}, cwd: dir });

function load(name: string, yaml: string) {
  writeFileSync(join(dir, name), yaml);
  return loadJob(name, settings, { cwd: dir });
}

function problem(name: string, yaml: string): string {
  try {
    load(name, yaml);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).exitCode).toBe(2);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigError');
}

const audience = 'audience:\n  custom_audience_id: aud\n  identifiers: { email: Email }\n';

describe('job files', () => {
  it('resolves a full audience job: defaults, relative paths, country codes', () => {
    const job = load('acme-crm.yml', `account_id: 18ce54d4x5t\nsource: { path: exports/crm.csv }\naudience:\n  custom_audience_id: 1nmth\n  identifiers: { email: Email, phone_number: Phone }\n  country_column: Country\n  default_country: us\n`);
    expect(job).toMatchObject({
      name: 'acme-crm',
      kind: 'custom_audience',
      accountId: '18ce54d4x5t',
      customAudienceId: '1nmth',
      credentials: undefined,
      timezone: 'UTC',
      concurrency: 4,
      maxRejectRatio: 0.2,
      source: { path: join(dir, 'exports', 'crm.csv') },
      audience: { mode: 'mirror', identifiers: { email: 'Email', phone_number: 'Phone' }, countryColumn: 'Country', defaultCountry: 'US', refreshAfterDays: 330, maxRemoveRatio: 0.5 },
    });
  });

  it('resolves a catalog job with product sets and a field mapping', () => {
    const job = load(
      'cat.yaml',
      'name: acme-catalog\naccount_id: a\nsource: { path: "https://shop.example.com/feed" }\ncatalog:\n  product_catalog_id: 1234567890\n  mode: upsert\n  fields: { id: sku }\n  product_sets:\n    - { name: Sale, filters: [{ attribute: price, operator: LESS_THAN, value: 20 }] }\n    - { name: Top, product_ids: [A1, 42] }\n',
    );
    expect(job).toMatchObject({
      name: 'acme-catalog',
      kind: 'catalog',
      source: { path: 'https://shop.example.com/feed' },
      catalog: {
        catalogId: '1234567890',
        mode: 'upsert',
        maxDeleteRatio: 0.5,
        fields: { id: 'sku' },
        productSets: [
          { type: 'FILTERED', name: 'Sale', filters: [{ attribute: 'price', operator: 'LESS_THAN', value: '20' }] },
          { type: 'MANUAL', name: 'Top', productIds: ['A1', '42'] },
        ],
      },
    });
  });

  it('keeps the zeros of a product id written with leading zeros (SKU 00042), as the feed does', () => {
    // YAML reads a plain 00042 as the number 42: the set would be made without the product 00042.
    const job = load('zeros.yaml', 'account_id: a\nsource: { path: feed.csv }\ncatalog:\n  product_catalog_id: 0042\n  product_sets:\n    - { name: Top, product_ids: [00042, 42, "007"] }\n');
    expect(job).toMatchObject({ catalog: { catalogId: '0042', productSets: [{ type: 'MANUAL', name: 'Top', productIds: ['00042', '42', '007'] }] } });
  });

  it('refuses a number written with a leading zero where a number is expected, instead of reading it some way', () => {
    expect(problem('zero-concurrency.yaml', `account_id: a\nsource: { path: feed.csv }\nconcurrency: 04\n${audience}`)).toMatch(/^zero-concurrency\.yaml is not valid:\n {2}concurrency: /);
  });

  it('refuses product set filters the service would refuse (every run would fail), naming the set', () => {
    const yaml = (filters: string): string =>
      `account_id: a\nsource: { path: feed.csv }\ncatalog:\n  product_catalog_id: c\n  product_sets:\n    - { name: Sale, filters: [${filters}] }\n`;
    expect(problem('sets-a.yaml', yaml('{ attribute: product_type, operator: GREATER_THAN, value: 5 }'))).toBe(
      'sets-a.yaml is not valid:\n  catalog.product_sets "Sale" filters[0]: GREATER_THAN compares numbers: it applies to price, sale_price, inventory only, not product_type',
    );
    expect(problem('sets-b.yaml', yaml('{ attribute: price, operator: LESS_THAN, value: 20 }, { attribute: price, operator: LESS_THAN, value: "20 USD" }, { attribute: custom_label_0, operator: EQUAL_TO, value: "" }'))).toBe(
      'sets-b.yaml is not valid:\n  catalog.product_sets "Sale" filters[1]: LESS_THAN needs a number (e.g. 20), not "20 USD"\n  catalog.product_sets "Sale" filters[2]: value must not be empty',
    );
    expect(load('sets-c.yaml', yaml('{ attribute: inventory, operator: GREATER_THAN, value: "0" }, { attribute: product_type, operator: CONTAINS, value: Tents }')).kind).toBe('catalog');
  });

  it('names an unknown key and suggests the right one', () => {
    expect(problem('typo.yaml', `account_id: a\nsource: { path: x.csv }\n${audience.replace('identifiers', 'identifers')}`)).toBe(
      'typo.yaml is not valid:\n  audience.identifiers: is required (object)\n  audience.identifers: unknown key (did you mean "identifiers"?)',
    );
  });

  it('names a wrong type, a missing field and a bad enum value', () => {
    expect(problem('types.yaml', `account_id: [1]\n${audience.replace('aud\n', 'aud\n  mode: mirorr\n')}`)).toBe(
      'types.yaml is not valid:\n  account_id: expected string or number, got a list\n  source: is required (object)\n  audience.mode: expected one of "mirror", "add", "remove", got "mirorr"',
    );
  });

  it('does not repeat a URL given where something else was expected: it may hold a password, a token or a webhook\'s secret path', () => {
    expect(
      problem(
        'urls.yaml',
        `account_id: a\nalerts: "https://hooks.slack.example/services/T000/B000/xoxSecretHookPath"\nsource: " https://user:pa55word@example.com/x.csv"\n${audience.replace('aud\n', 'aud\n  mode: "ftp://user:pa55word@example.com/"\n')}`,
      ),
    ).toBe(
      'urls.yaml is not valid:\n  source: expected object, got a URL (not repeated here: it may hold a password or a token)\n  audience.mode: expected one of "mirror", "add", "remove", got a URL (not repeated here: it may hold a password or a token)\n  alerts: expected object, got a URL (not repeated here: it may hold a password or a token)',
    );
  });

  it('refuses a job with both or neither of audience and catalog', () => {
    expect(problem('neither.yaml', 'account_id: a\nsource: { path: x.csv }\n')).toBe(
      'neither.yaml is not valid:\n  a job has exactly one of an `audience:` block and a `catalog:` block',
    );
  });

  it('checks the cron expression, the time zone, the country and the file format', () => {
    expect(
      problem('checks.yaml', `account_id: a\nschedule: "61 * * * *"\ntimezone: Mars/Olympus\nsource: { path: export.dat }\n${audience}  default_country: Amerika\n`),
    ).toMatch(
      /^checks\.yaml is not valid:\n {2}schedule: "61 \* \* \* \*" is not a valid cron expression \(.+\)\n {2}timezone: unknown time zone "Mars\/Olympus" \(use an IANA name such as Europe\/Berlin\)\n {2}audience\.default_country: "Amerika" is not an ISO 3166-1 alpha-2 country code \(e\.g\. US, GB, DE\)\n {2}source\.format: cannot tell the format of "export\.dat" from its name; set format: csv, tsv or xml$/,
    );
  });

  it('refuses a valid cron expression that never fires (the scheduler could not start with it)', () => {
    for (const schedule of ['0 0 1-7 2 1#5', '0 0 L * 1#1']) {
      expect(problem('never.yaml', `account_id: a\nschedule: "${schedule}"\ntimezone: Europe/Berlin\nsource: { path: x.csv }\n${audience}`)).toBe(
        `never.yaml is not valid:\n  schedule: "${schedule}" never fires: no time in the next 100 years matches all of its fields (the day of the month and the week day must both match)`,
      );
    }
    // Rare is not never: the 29th of February on a Monday, February's fifth Monday.
    for (const schedule of ['0 0 29 2 1', '0 0 * 2 1#5']) {
      expect(load('rare.yaml', `account_id: a\nschedule: "${schedule}"\nsource: { path: x.csv }\n${audience}`).schedule).toBe(schedule);
    }
  });

  it('asks to quote an id too long to be read exactly', () => {
    expect(problem('big.yaml', 'account_id: a\nsource: { path: x.csv }\ncatalog:\n  product_catalog_id: 12345678901234567890\n')).toBe(
      'big.yaml is not valid:\n  catalog.product_catalog_id: this number is too long to be read exactly: put it in quotes',
    );
  });

  it('refuses a refresh_after_days that would let memberships expire before they are sent again', () => {
    // The service drops a member 13 months (393 days at least) after it was sent: a longer
    // refresh would leave members expired while the state lists them as present.
    const job = (days: number) => `account_id: a\nsource: { path: x.csv }\naudience:\n  do_not_reach_list_id: dnr\n  refresh_after_days: ${days}\n  identifiers: { email: Email }\n`;
    expect(problem('refresh.yaml', job(400))).toBe(
      'refresh.yaml is not valid:\n  audience.refresh_after_days: at most 365: memberships expire 13 months after they are sent, so members must be sent again before then',
    );
    expect(load('refresh.yaml', job(365))).toMatchObject({ audience: { refreshAfterDays: 365 } });
  });

  it('names the line and column of a YAML syntax error', () => {
    expect(problem('syntax.yaml', 'account_id: a\nsource: { path: x.csv\naudience: {}\n')).toMatch(/^syntax\.yaml line \d+, column \d+: not valid YAML: /);
  });

  it('reads a tab delimiter written as tab, as an unquoted \\t or as "\\t", and names the choices otherwise ("\\t" as YAML writes a tab in double quotes)', () => {
    const job = (delimiter: string) => `account_id: a\nsource: { path: x.txt, delimiter: ${delimiter} }\n${audience}`;
    for (const written of ['tab', '\\t', '"\\t"']) expect(load('tab.yaml', job(written))).toMatchObject({ source: { delimiter: '\t' } });
    expect(load('tab.yaml', job('";"'))).toMatchObject({ source: { delimiter: ';' } });
    expect(problem('tab.yaml', job('TAB'))).toBe('tab.yaml is not valid:\n  source.delimiter: expected one of ",", ";", "\\t", "|", got "TAB"');
  });

  it('says when the job file does not exist', () => {
    expect(() => loadJob('nope.yaml', settings, { cwd: dir })).toThrow('nope.yaml does not exist');
  });
});
