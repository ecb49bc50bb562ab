/**
 * Files as spreadsheets and CRMs save them (Excel's "CSV", "CSV UTF-8" and "Unicode Text",
 * Google Sheets, Numbers), read through the real CLI against the emulator: a catalog feed and
 * an audience export each give exactly the right products and members, or fail with a message
 * naming the file, the line and what to do. Fixtures: test/fixtures/spreadsheet.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { catalogJob, catalogProducts, counts, feedItem, fixture as catalogFixture, rssFeed, summaryOf } from '../fixtures/catalog/catalog-e2e.js';
import type { CliResult } from '../helpers/cli.js';
import { collect, createWorkspace, summaries, type Workspace } from '../helpers/e2e.js';
import { sha } from '../reliability/support.js';

const EXPECTED = JSON.parse(catalogFixture('merchant.expected.json')) as Record<string, unknown>[];

function spreadsheetFixture(name: string): Buffer {
  return readFileSync(join(import.meta.dirname, '..', 'fixtures', 'spreadsheet', name));
}

function audienceJob(path: string, extra = ''): string {
  return `account_id: emu-account\nsource:\n  path: ${path}\n${extra}audience:\n  custom_audience_id: emu-audience\n  mode: add\n  identifiers: { email: E-mail, partner_user_id: Customer ID }\n`;
}

let ws: Workspace;
beforeEach(async () => {
  ws = await createWorkspace();
});
afterEach(async () => {
  await ws.close();
});

function members(): Record<string, string[]> {
  return ws.emulator.state().custom_audiences['emu-audience']?.members ?? {};
}

/** Runs an audience job (`job`: audienceJob of `path` unless given) on `content` saved as `path`. */
async function runAudienceExport(path: string, content: string | Buffer, job = audienceJob(path)): Promise<CliResult> {
  ws.write(path, content);
  ws.write('crm.yaml', job);
  return ws.cli(['run', 'crm.yaml', '--json']);
}

/** Runs a catalog job on the fixture (as `file`): it must give exactly the catalog of merchant.csv. */
async function expectMerchantCatalog(fixtureName: string, file: string): Promise<void> {
  ws.write(file, spreadsheetFixture(fixtureName));
  ws.write('shop.yaml', catalogJob({ source: file }));
  const result = await ws.cli(['run', 'shop.yaml', '--json']);
  expect(result.code, result.stderr).toBe(0);
  expect(counts(summaryOf(result))).toMatchObject({ status: 'success', read: 9, rejected: 0, duplicates: 1, created: 8 });
  expect(catalogProducts(ws)).toEqual(EXPECTED);
}

describe('an Excel "sep=" first line', () => {
  it('a catalog feed saved with sep=; (semicolons, CRLF) gives exactly the catalog of the comma CSV', async () => {
    await expectMerchantCatalog('merchant-excel-sep.csv', 'feeds/products.csv');
  });

  it('an audience export saved with sep=; gives its members; the line numbers count the sep= line', async () => {
    const result = await runAudienceExport('exports/crm.csv', spreadsheetFixture('crm-excel-sep.csv'));
    expect(result.code, result.stderr).toBe(0);
    const summary = summaries(result)[0];
    expect(summary).toMatchObject({ status: 'success', read: 4, valid: 4, rejected: 0, added: 7, invalid_identifiers: { email: 1 } });
    expect(members().email).toEqual([sha('ada@example.com'), sha('grace@example.com'), sha('barbara@example.com')].sort());
    expect(members().partner_user_id).toEqual(['C1', 'C2', 'C3', 'C4']);
    expect(readFileSync(String(summary?.rejects_file), 'utf8')).toBe(
      'row,line,id,field,reason\n3,5,,email,not an email address (dropped; the row is kept for its other identifiers)\n',
    );
  });

  it('a sep= line that contradicts source.delimiter: exit 2, naming the file, the line and both delimiters', async () => {
    const result = await runAudienceExport('exports/crm.csv', spreadsheetFixture('crm-excel-sep.csv'), audienceJob('exports/crm.csv', '  delimiter: ","\n'));
    expect(result.code).toBe(2);
    expect(summaries(result)[0]?.error).toBe(
      `${ws.dir}/exports/crm.csv line 1: the file says its delimiter is ";" (sep=;), but source.delimiter is "," ` +
        '(remove source.delimiter from the job file (or set it to ";") if the file is right)',
    );
    expect(members().email).toEqual([]);
  });
});

describe('a file said to be Latin-1 that is UTF-8 (Excel "CSV UTF-8"; an XML feed declaring ISO-8859-1)', () => {
  const utf8Declared = (file: string, line: number): string =>
    `${ws.dir}/${file} line ${line}: source.encoding is latin1, but the file is UTF-8: read as Latin-1, its accented letters would be sent garbled ("é" as "Ã©") ` +
    '(remove encoding: latin1 from the source block of the job file (UTF-8 is the default) and run again; nothing garbled was sent)';

  it('a catalog feed: read right without the setting; with it, exit 1 naming the file and line, and nothing sent', async () => {
    ws.write('feeds/products.csv', spreadsheetFixture('merchant-utf8-accents.csv'));
    ws.write('shop.yaml', catalogJob({ source: 'feeds/products.csv' }));
    ws.write('latin.yaml', catalogJob({ name: 'latin', source: 'feeds/products.csv' }).replace('  path: feeds/products.csv\n', '  path: feeds/products.csv\n  encoding: latin1\n'));

    const latin = await ws.cli(['run', 'latin.yaml', '--json']);
    expect(latin.code).toBe(1);
    expect(summaryOf(latin)).toMatchObject({ status: 'failed', created: 0, error: utf8Declared('feeds/products.csv', 2) });
    expect(ws.emulator.state().requests.by_route).toEqual({});

    const right = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(right.code, right.stderr).toBe(0);
    expect(catalogProducts(ws).map((p) => [p.id, p.title, p.description, p.brand])).toEqual([
      ['MUG-1', 'Café Crème Mug', 'Grès émaillé.', 'Maison Löwe'],
      ['MUG-2', 'Tea Mug', 'Plain.', 'Maison Löwe'],
    ]);
  });

  it('an XML feed, set to latin1 by the job or declaring encoding="ISO-8859-1" itself: exit 1 naming the file, the line and who said Latin-1', async () => {
    const feed = rssFeed([feedItem('P-1'), feedItem('P-2', { title: 'Café Crème Mug' })]);
    ws.write('feeds/set.xml', feed);
    ws.write('feeds/declared.xml', feed.replace('encoding="UTF-8"', 'encoding="ISO-8859-1"'));
    ws.write('set.yaml', catalogJob({ name: 'set', source: 'feeds/set.xml' }).replace('  path: feeds/set.xml\n', '  path: feeds/set.xml\n  encoding: latin1\n'));
    ws.write('declared.yaml', catalogJob({ name: 'declared', source: 'feeds/declared.xml' }));
    const line = feed.split('\n').findIndex((l) => l.includes('Café')) + 1;

    const set = await ws.cli(['run', 'set.yaml', '--json']);
    expect(set.code).toBe(1);
    expect(summaryOf(set)).toMatchObject({ status: 'failed', created: 0, error: utf8Declared('feeds/set.xml', line) });
    const declared = await ws.cli(['run', 'declared.yaml', '--json']);
    expect(declared.code).toBe(1);
    expect(summaryOf(declared)).toMatchObject({
      status: 'failed',
      created: 0,
      error:
        `${ws.dir}/feeds/declared.xml line ${line}: the feed declares encoding="ISO-8859-1", but it is UTF-8: read as Latin-1, its accented letters would be sent garbled ("é" as "Ã©") ` +
        '(have its exporter declare encoding="UTF-8", or set source.encoding: utf8 in the job file; nothing garbled was sent)',
    });
    expect(ws.emulator.state().requests.by_route).toEqual({});
  });

  it('an audience export: exit 1 naming the file and line, and no member added (not the hash of "zoÃ«@exÃ¤mple.com")', async () => {
    const result = await runAudienceExport('exports/crm.csv', spreadsheetFixture('crm-utf8-accents.csv'), audienceJob('exports/crm.csv', '  encoding: latin1\n'));
    expect(result.code).toBe(1);
    expect(summaries(result)[0]).toMatchObject({ status: 'failed', added: 0, error: utf8Declared('exports/crm.csv', 3) });
    expect(members().email).toEqual([]);
  });
});

describe('a FIFO (named pipe) as source.path', () => {
  /** Runs `job` while the exporter writes `content` into the FIFO `file` (killed after 20 s: a hang fails the test). */
  async function runOnFifo(file: string, content: Buffer | string, job: string): Promise<CliResult> {
    const path = join(ws.dir, file);
    ws.write(`${file}.keep`, '');
    execFileSync('mkfifo', [path]);
    ws.write('shop.yaml', job);
    const child = ws.spawn(['run', 'shop.yaml', '--json']);
    const kill = setTimeout(() => child.kill('SIGKILL'), 20_000);
    try {
      await writeFile(path, content);
      return await collect(child);
    } finally {
      clearTimeout(kill);
      rmSync(path, { force: true });
    }
  }

  it('a catalog feed written into a FIFO gives exactly the catalog of the file (not "ESPIPE: invalid seek")', { timeout: 60_000 }, async () => {
    const result = await runOnFifo('feeds/pipe.csv', catalogFixture('merchant.csv'), catalogJob({ source: 'feeds/pipe.csv' }));
    expect(result.code, result.stderr).toBe(0);
    expect(counts(summaryOf(result))).toMatchObject({ status: 'success', read: 9, duplicates: 1, created: 8 });
    expect(catalogProducts(ws)).toEqual(EXPECTED);
  });

  it('an XML feed in a FIFO that the fast reader would read twice (an item not UTF-8) is read once, not waited on for good', { timeout: 60_000 }, async () => {
    const feed = Buffer.from(rssFeed([feedItem('P-1'), feedItem('P-2', { title: 'Caf\u00e9' }), feedItem('P-3')]), 'latin1');
    const result = await runOnFifo('feeds/pipe.xml', feed, catalogJob({ source: 'feeds/pipe.xml', mode: 'upsert', maxRejectRatio: 0.5 }));
    expect(result.signal, result.stderr).toBeNull();
    expect(result.code, result.stderr).toBe(0);
    expect(counts(summaryOf(result))).toMatchObject({ status: 'success', read: 3, valid: 2, rejected: 1, created: 2 });
    expect(catalogProducts(ws).map((p) => p.id)).toEqual(['P-1', 'P-3']);
  });
});


describe('columns without a name (an Excel CSV with stray trailing commas)', () => {
  it('a catalog feed reads as the same feed without them; a value in one is not sent, with a warning naming its column', async () => {
    ws.write('feeds/products.csv', spreadsheetFixture('merchant-excel-trailing.csv'));
    ws.write('shop.yaml', catalogJob({ source: 'feeds/products.csv' }));
    const result = await ws.cli(['run', 'shop.yaml', '--json', '--log-level', 'info']);
    expect(result.code, result.stderr).toBe(0);
    expect(counts(summaryOf(result))).toMatchObject({ status: 'success', read: 9, rejected: 0, duplicates: 1, created: 8 });
    expect(catalogProducts(ws)).toEqual(EXPECTED);
    expect(result.stderr).toContain('"warnings":["unknown attribute \\"shipping\\" is not sent","unknown attribute \\"column 27 (unnamed)\\" is not sent"]');
  });

  it('an audience export with them reads as before (columns the job does not read may be unnamed)', async () => {
    const result = await runAudienceExport('exports/crm.csv', 'Customer ID,E-mail,,\r\nC1,ada@example.com,,\r\nC2,grace@example.com,,x\r\n');
    expect(result.code, result.stderr).toBe(0);
    expect(summaries(result)[0]).toMatchObject({ status: 'success', read: 2, valid: 2, added: 4 });
    expect(members().partner_user_id).toEqual(['C1', 'C2']);
  });
});

describe('a header repeated in the middle (two exports joined into one file)', () => {
  const REPEATED = 'row repeats the header row (line 1): two exports joined into one file? Remove the repeated header (and any rows that should not be there)';

  it('a catalog feed: the repeated header is one reject saying so, not a product "id" with a page of reasons', async () => {
    const merchant = catalogFixture('merchant.csv');
    ws.write('feeds/products.csv', merchant + merchant);
    ws.write('shop.yaml', catalogJob({ source: 'feeds/products.csv', mode: 'upsert' }));
    const result = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(result.code, result.stderr).toBe(0);
    const summary = summaryOf(result);
    expect(counts(summary)).toMatchObject({ status: 'success', read: 19, valid: 18, rejected: 1, duplicates: 10, created: 8 });
    expect(catalogProducts(ws)).toEqual(EXPECTED);
    expect(readFileSync(String(summary.rejects_file), 'utf8')).toBe(`row,line,id,field,reason\n10,11,,,${REPEATED}\n`);
  });

  it('an audience export: the repeated header is one reject saying so, not an invalid email', async () => {
    const result = await runAudienceExport('exports/crm.csv', 'Customer ID,E-mail\r\nC1,ada@example.com\r\nCustomer ID,E-mail\r\nC2,grace@example.com\r\n', audienceJob('exports/crm.csv').replace('account_id', 'max_reject_ratio: 0.5\naccount_id'));
    expect(result.code, result.stderr).toBe(0);
    const summary = summaries(result)[0];
    expect(summary).toMatchObject({ status: 'success', read: 3, valid: 2, rejected: 1, added: 4 });
    expect(summary?.invalid_identifiers).toBeUndefined();
    expect(readFileSync(String(summary?.rejects_file), 'utf8')).toBe(`row,line,id,field,reason\n2,3,,,${REPEATED}\n`);
    expect(members().partner_user_id).toEqual(['C1', 'C2']);
  });
});

describe('Excel "Unicode Text" (UTF-16LE with a byte order mark, tab separated, .txt)', () => {
  it('a catalog feed gives exactly the catalog of the UTF-8 CSV', async () => {
    await expectMerchantCatalog('merchant-unicode-text.txt', 'feeds/products.txt');
  });

  it('an audience export gives its members, accents and a multi-line cell included, with the lines of its rows', async () => {
    const result = await runAudienceExport('exports/crm.txt', spreadsheetFixture('crm-unicode-text.txt'));
    expect(result.code, result.stderr).toBe(0);
    const summary = summaries(result)[0];
    expect(summary).toMatchObject({ status: 'success', read: 3, valid: 3, rejected: 0, added: 5 });
    expect(members().email).toEqual([sha('zoë@exämple.com'), sha('ada@example.com')].sort());
    expect(members().partner_user_id).toEqual(['C1', 'C2', 'C3']);
    expect(readFileSync(String(summary?.rejects_file), 'utf8')).toBe(
      'row,line,id,field,reason\n3,5,,email,not an email address (dropped; the row is kept for its other identifiers)\n',
    );
  });
});
