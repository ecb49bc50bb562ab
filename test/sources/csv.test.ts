import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ConfigError, SourceError } from '../../src/errors.js';
import { readCsv } from '../../src/sources/csv.js';
import type { CsvRow, RowReject } from '../../src/sources/types.js';
import { errorOf, fixturePath, readAllCsv, sourceOf, streamOf } from './helpers.js';

const HTML_PAGE = 'is an HTML page, not a CSV, TSV or XML file (a login or error page instead of the export?)';

const HEADER = ['Email', 'Phone', 'Name', 'Notes', 'Customer ID'];

/** The rows of every crm-messy variant; `eol` is the line break inside quoted values. */
function messyRows(eol: string): CsvRow[] {
  return [
    { row: 1, line: 2, values: ['alice@example.com', '+1 415 555 0100', 'Smith, Alice', 'plain', '0001'] },
    { row: 2, line: 3, values: ['bob@example.com', '+44 20 7946 0958', 'Bob "The Builder" Jones', `multi${eol}line${eol}note`, '0002'] },
    { row: 3, line: 7, values: ['carol@example.com', '', `Carol${eol}Ann`, '', '0003'] },
    { row: 6, line: 11, values: ['frank@example.com', '+49 30 123456', 'Frank "Quote"', '', '0006'] },
    { row: 7, line: 13, values: ['grace@example.com', '+1 (212) 555-0199', 'Grace; Hopper | Tab\tIn', 'a,b;c|d', '0007'] },
    { row: 8, line: 14, values: ['heidi@example.com', '', 'Heidi', 'trailing spaces kept  ', ' 0008 '] },
  ];
}

const MESSY_REJECTS: RowReject[] = [
  { row: 4, line: 9, reason: 'row has 6 fields, header has 5' },
  { row: 5, line: 10, reason: 'row has 3 fields, header has 5' },
];

async function readFixture(name: string, chunkBytes = 0, format?: 'csv' | 'tsv') {
  const bytes = await readFile(fixturePath(name));
  const reader = readCsv({ name, stream: streamOf(bytes, chunkBytes), format });
  const result = await readAllCsv(reader);
  return { ...result, delimiter: reader.delimiter() };
}

describe('readCsv on the messy CRM fixture', () => {
  it.each([
    ['crm-messy.csv', ',', '\r\n', 'csv'],
    ['crm-messy-semicolon.csv', ';', '\r\n', 'csv'],
    ['crm-messy-pipe.csv', '|', '\r\n', 'csv'],
    ['crm-messy.tsv', '\t', '\n', 'tsv'],
  ] as const)('reads %s: delimiter %j detected, exact rows, line numbers and rejects', async (name, delimiter, eol, format) => {
    const result = await readFixture(name, 0, format);
    expect(result.delimiter).toBe(delimiter);
    expect(result.header).toEqual(HEADER);
    expect(result.rows).toEqual(messyRows(eol));
    expect(result.rejects).toEqual(MESSY_REJECTS);
  });

  it('gives the same rows whatever the chunk size (BOM, CRLF, quotes and characters split across chunks)', async () => {
    const fixture = await readFile(fixturePath('crm-messy.csv'));
    const body = fixture.subarray(fixture.indexOf('\n') + 1);
    // Long enough for chunk borders to fall everywhere past the first bytes the reader sniffs.
    const bytes = Buffer.concat([fixture, ...Array.from({ length: 8 }, () => [Buffer.from('\r\nzoë@example.com,,Zoë 日本,🎉,0009\r\n'), body]).flat()]);
    const read = (chunkBytes: number) => readAllCsv(readCsv({ name: 'crm.csv', stream: streamOf(bytes, chunkBytes) }));
    const whole = await read(0);
    expect(whole.rows).toHaveLength(6 + 8 * 7);
    expect(whole.rejects).toHaveLength(2 + 8 * 2);
    for (const chunkBytes of [1, 2, 3, 5, 7, 64, 1000]) {
      expect({ chunkBytes, ...(await read(chunkBytes)) }).toEqual({ chunkBytes, ...whole });
    }
  });

  it('yields batches, a header() first, and can be closed early', async () => {
    const bytes = await readFile(fixturePath('crm-messy.csv'));
    const reader = readCsv({ name: 'crm-messy.csv', stream: streamOf(bytes, 16) });
    expect(await reader.header()).toEqual(HEADER);
    expect(await reader.header()).toEqual(HEADER);
    await reader.close();
  });

  it('is iterable without calling header() first', async () => {
    const bytes = await readFile(fixturePath('crm-messy.csv'));
    const reader = readCsv({ name: 'crm-messy.csv', stream: streamOf(bytes) });
    const rows: CsvRow[] = [];
    for await (const batch of reader) rows.push(...batch.rows);
    expect(rows).toEqual(messyRows('\r\n'));
  });

  it('takes a given delimiter instead of detecting one', async () => {
    const reader = readCsv(sourceOf('a;b,c\n1;2,3\n'), { delimiter: ';' });
    expect(await readAllCsv(reader)).toEqual({ header: ['a', 'b,c'], rows: [{ row: 1, line: 2, values: ['1', '2,3'] }], rejects: [] });
    const tab = readCsv(sourceOf('a\tb,c\n1\t2,3\n'), { delimiter: 'tab' });
    expect((await readAllCsv(tab)).header).toEqual(['a', 'b,c']);
  });

  it('refuses a delimiter it cannot use with a ConfigError', () => {
    expect(() => readCsv(sourceOf('a\n'), { delimiter: '"' })).toThrow(ConfigError);
  });
});

describe('readCsv edge cases', () => {
  it('reads mixed CRLF and LF line breaks, and a last row without a line break', async () => {
    const result = await readAllCsv(readCsv(sourceOf('a,b\r\n1,2\n3,4\r\n5,6')));
    expect(result.rows).toEqual([
      { row: 1, line: 2, values: ['1', '2'] },
      { row: 2, line: 3, values: ['3', '4'] },
      { row: 3, line: 4, values: ['5', '6'] },
    ]);
  });

  it('trims header names, skips blank lines before the header', async () => {
    const result = await readAllCsv(readCsv(sourceOf('\n\r\n  Email , Phone\t\n x@y.z ,1\n')));
    expect(result.header).toEqual(['Email', 'Phone']);
    expect(result.rows).toEqual([{ row: 1, line: 4, values: [' x@y.z ', '1'] }]);
  });

  it("skips a spreadsheet's empty rows (delimiters only, or empty quoted cells) like blank lines", async () => {
    const result = await readAllCsv(readCsv(sourceOf('id,title,price\r\n1,A,2\r\n,,\r\n"", ,""\r\n2,B,3\r\n,,\r\n,,\r\n')));
    expect(result.rows).toEqual([
      { row: 1, line: 2, values: ['1', 'A', '2'] },
      { row: 2, line: 5, values: ['2', 'B', '3'] },
    ]);
    expect(result.rejects).toEqual([]);
  });

  it('keeps a quote inside an unquoted value', async () => {
    const result = await readAllCsv(readCsv(sourceOf('name,size\n12" pizza,large\n')));
    expect(result.rows).toEqual([{ row: 1, line: 2, values: ['12" pizza', 'large'] }]);
  });

  it('reads a header-only file as zero rows, without error', async () => {
    expect(await readAllCsv(readCsv(sourceOf('Email,Phone\r\n')))).toEqual({ header: ['Email', 'Phone'], rows: [], rejects: [] });
    expect(await readAllCsv(readCsv(sourceOf('Email,Phone')))).toEqual({ header: ['Email', 'Phone'], rows: [], rejects: [] });
  });

  it.each([
    ['an empty file', ''],
    ['a BOM only', '\ufeff'],
    ['blank lines only', '\r\n\n   \n'],
  ])('refuses %s: "is empty (no header row)"', async (_what, text) => {
    const error = await errorOf(() => readAllCsv(readCsv(sourceOf(text, 'empty.csv'))));
    expect(error).toBeInstanceOf(SourceError);
    expect(error.message).toBe('empty.csv is empty (no header row)');
  });

  it('refuses unnamed and repeated header columns, naming them', async () => {
    const unnamed = await errorOf(() => readAllCsv(readCsv(sourceOf('Email,,Phone, \n', 'h.csv'))));
    expect(unnamed).toBeInstanceOf(SourceError);
    expect(unnamed.message).toBe('h.csv line 1: the header row has no name for columns 2, 4');
    const repeated = await errorOf(() => readAllCsv(readCsv(sourceOf('Email,Phone,Email,Phone,Name\n', 'h.csv'))));
    expect(repeated).toBeInstanceOf(SourceError);
    expect(repeated.message).toBe('h.csv line 1: the header row names a column more than once: "Email" (columns 1, 3), "Phone" (columns 2, 4)');
  });

  it('accepts repeated header columns when asked to (feeds)', async () => {
    const result = await readAllCsv(readCsv(sourceOf('a,a\n1,2\n'), { allowRepeatedColumns: true }));
    expect(result).toEqual({ header: ['a', 'a'], rows: [{ row: 1, line: 2, values: ['1', '2'] }], rejects: [] });
  });

  it('ends with a SourceError naming the line where an unclosed quote opened, after the rows before it', async () => {
    const text = 'email,name\na@x.io,Ann\nb@x.io,"Bob\nc@x.io,Cid\nd@x.io,Dee\n';
    const reader = readCsv(sourceOf(text, 'quote.csv'));
    const rows: CsvRow[] = [];
    const error = await errorOf(async () => {
      for await (const batch of reader) rows.push(...batch.rows);
    });
    expect(rows).toEqual([{ row: 1, line: 2, values: ['a@x.io', 'Ann'] }]);
    expect(error).toBeInstanceOf(SourceError);
    expect(error.message).toBe('quote.csv line 3: a quote opened in row 2 is never closed (the file ends inside the quoted value)');
  });

  it('stops an unclosed quote at maxRowBytes instead of reading the whole file into one value', async () => {
    const lines = Array.from({ length: 2000 }, (_, i) => `u${i}@x.io,Name ${i}`);
    const text = `email,name\na@x.io,"never closed\n${lines.join('\n')}\n`;
    const error = await errorOf(() => readAllCsv(readCsv(sourceOf(text, 'runaway.csv', 1000), { maxRowBytes: 4096 })));
    expect(error).toBeInstanceOf(SourceError);
    expect(error.message).toBe('runaway.csv line 2: row 1 runs past 4096 bytes inside a quoted value; is a quote never closed?');
  });

  it('rejects an overlong line and reads on (LF and CRLF, any chunking)', async () => {
    for (const eol of ['\n', '\r\n']) {
      const text = ['a,b', '1,2', 'x'.repeat(300), '3,4', `"${'y'.repeat(300)}",5`, '6,7'].join(eol) + eol;
      for (const chunkBytes of [0, 1, 7, 100, 1000]) {
        const result = await readAllCsv(readCsv(sourceOf(text, 'long.csv', chunkBytes), { maxRowBytes: 100 }));
        expect({ eol, chunkBytes, ...result }).toEqual({
          eol,
          chunkBytes,
          header: ['a', 'b'],
          rows: [
            { row: 1, line: 2, values: ['1', '2'] },
            { row: 3, line: 4, values: ['3', '4'] },
            { row: 5, line: 6, values: ['6', '7'] },
          ],
          rejects: [
            { row: 2, line: 3, reason: 'row is longer than 100 bytes (a line of 300 bytes); skipped' },
            { row: 4, line: 5, reason: 'row is longer than 100 bytes (a line of 304 bytes); skipped' },
          ],
        });
      }
    }
  });

  it('refuses a header line longer than maxRowBytes', async () => {
    const error = await errorOf(() => readAllCsv(readCsv(sourceOf(`${'h,'.repeat(100)}z\n1\n`, 'wide.csv'), { maxRowBytes: 50 })));
    expect(error).toBeInstanceOf(SourceError);
    expect(error.message).toBe('wide.csv line 1: the header line is longer than 50 bytes; is this a CSV file?');
  });

  it('refuses old Mac (CR-only) line breaks', async () => {
    const error = await errorOf(() => readAllCsv(readCsv(sourceOf('a,b\r1,2\r3,4\r', 'mac.csv'))));
    expect(error).toBeInstanceOf(SourceError);
    expect(error.message).toBe('mac.csv uses old Mac line breaks (CR only)');
  });

  it.each([
    ['detected', undefined],
    ['given', ','],
  ])('refuses old Mac (CR-only) line breaks after a header longer than the first bytes it looks at (delimiter %s)', async (_how, delimiter) => {
    const header = ['Email', 'Id', ...Array.from({ length: 80 }, (_, i) => `Extra column ${i}`)];
    const rows = Array.from({ length: 50 }, (_, i) => [`u${i}@example.com`, String(i), ...header.slice(2).map(() => 'x')].join(','));
    const error = await errorOf(() => readAllCsv(readCsv(sourceOf(`${[header.join(','), ...rows].join('\r')}\r`, 'mac.csv'), { delimiter, allowRepeatedColumns: true })));
    expect(error).toBeInstanceOf(SourceError);
    expect(error.message).toBe('mac.csv uses old Mac line breaks (CR only)');
  });

  it('reads a CRLF export whose header has a quoted cell with a line break in it (not old Mac line breaks)', async () => {
    const { header, rows, rejects } = await readFixture('crm-multiline-header.csv');
    expect(header).toEqual(['Email', 'Notes\r\n(internal)', 'Customer ID']);
    expect(rows.map((r) => r.values)).toEqual([
      ['user1@example.com', 'first\r\nnote', 'C1'],
      ['user2@example.com', '', 'C2'],
    ]);
    expect(rejects).toEqual([]);
  });

  it.each([
    ['an .xlsx workbook', Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x06, 0x00]), 'is a ZIP archive (an .xlsx workbook?); export the sheet as CSV'],
    ['an .xls workbook', Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), 'is an Excel .xls workbook; export the sheet as CSV'],
    ['gzip data', Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00]), 'is gzip-compressed; give it a .gz extension or open it with openSource()'],
    ['binary data', Buffer.from([0x41, 0x2c, 0x42, 0x0a, 0x00, 0x01, 0x02, 0xff, 0x0a]), 'is not a text file (it contains NUL bytes near the start)'],
    ['an HTML page (a login or error page saved, or served, instead of the export)', '\ufeff\r\n  <!DOCTYPE html>\n<html><body>Session expired</body></html>\n', HTML_PAGE],
    ['an HTML page without a DOCTYPE', '<HTML lang="en"><head><title>502 Bad Gateway</title></head></HTML>', HTML_PAGE],
  ])('refuses %s with a SourceError that says what it is', async (_what, bytes, problem) => {
    const error = await errorOf(() => readAllCsv(readCsv(sourceOf(bytes, 'in.csv'))));
    expect(error).toBeInstanceOf(SourceError);
    expect(error.message).toBe(`in.csv ${problem}`);
  });
});

describe('readCsv of text that merely looks like HTML', () => {
  it('reads a header that starts with "<" as a header', async () => {
    const result = await readAllCsv(readCsv(sourceOf('<email>,html\na@x.io,1\n', 'in.csv')));
    expect(result.header).toEqual(['<email>', 'html']);
  });
});

describe('readCsv text encodings', () => {
  it('reads UTF-16 with a byte order mark (Excel\'s "Unicode Text"), LE and BE, whatever the chunking', async () => {
    const text = '\ufeffEmail\tName\r\nzoë@exämple.com\t"Zoë\r\n🧶"\r\nbad\tB\r\n';
    const be = Buffer.from(text, 'utf16le').swap16();
    for (const bytes of [Buffer.from(text, 'utf16le'), be]) {
      for (const chunk of [0, 1, 3, 7]) {
        const result = await readAllCsv(readCsv(sourceOf(bytes, 'u.txt', chunk)));
        expect(result.header).toEqual(['Email', 'Name']);
        expect(result.rows).toEqual([
          { row: 1, line: 2, values: ['zoë@exämple.com', 'Zoë\r\n🧶'] },
          { row: 2, line: 4, values: ['bad', 'B'] },
        ]);
        expect(result.rejects).toEqual([]);
      }
    }
  });

  it('rejects a UTF-16 row with a broken character (an unpaired surrogate), naming UTF-16', async () => {
    const bytes = Buffer.concat([Buffer.from('\ufeffa,b\r\n1,2\r\n3,', 'utf16le'), Buffer.from([0x00, 0xd8]), Buffer.from('\r\n', 'utf16le')]);
    const result = await readAllCsv(readCsv(sourceOf(bytes, 'u.csv')));
    expect(result.rows.map((r) => r.values)).toEqual([['1', '2']]);
    expect(result.rejects).toEqual([{ row: 2, line: 3, reason: 'row contains bytes that are not UTF-16 (a broken character)' }]);
  });

  it('rejects the rows of a UTF-8 file that hold bytes that are not UTF-8, and reads the others', async () => {
    const result = await readFixture('invalid-utf8.csv');
    expect(result.rows).toEqual([
      { row: 1, line: 2, values: ['a@example.com', 'Zoë'] },
      { row: 3, line: 4, values: ['c@example.com', 'Chloé'] },
    ]);
    expect(result.rejects).toEqual([
      { row: 2, line: 3, reason: 'row contains bytes that are not UTF-8 (is the file Latin-1? set source.encoding: latin1)' },
    ]);
  });

  it('does not mistake a UTF-8 character split across chunks for bad bytes', async () => {
    // Past the first bytes the reader sniffs as one piece, so that chunk borders cut characters.
    const clean = Buffer.from(`Email,Name\n${'f@example.com,filler\n'.repeat(40)}a@example.com,Zoë 日本 🎉\n`);
    for (let chunkBytes = 1; chunkBytes <= 40; chunkBytes++) {
      const result = await readAllCsv(readCsv({ name: 'split.csv', stream: streamOf(clean, chunkBytes) }));
      expect(result.rejects).toEqual([]);
      expect(result.rows[40]?.values[1]).toBe('Zoë 日本 🎉');
    }
  });

  it('reads a Latin-1 (Windows-1252) file with encoding latin1', async () => {
    const bytes = await readFile(fixturePath('latin1.csv'));
    const result = await readAllCsv(readCsv({ name: 'latin1.csv', stream: streamOf(bytes) }, { encoding: 'latin1' }));
    expect(result).toEqual({
      header: ['Email', 'Name', 'City'],
      rows: [
        { row: 1, line: 2, values: ['jose@example.com', 'José Müller', 'Zürich'] },
        { row: 2, line: 3, values: ['anne@example.com', '“Anne” – 5€', 'Orléans'] },
        { row: 3, line: 4, values: ['plain@example.com', 'Plain', 'Paris'] },
      ],
      rejects: [],
    });
  });

  it('takes the encoding from the source (OpenedSource.encoding)', async () => {
    const bytes = await readFile(fixturePath('latin1.csv'));
    const result = await readAllCsv(readCsv({ name: 'latin1.csv', stream: streamOf(bytes), encoding: 'latin1' }));
    expect(result.rows[0]?.values[1]).toBe('José Müller');
  });

  it('rejects the non-ASCII rows of a Latin-1 file read without encoding latin1, with the hint', async () => {
    const result = await readFixture('latin1.csv');
    const reason = 'row contains bytes that are not UTF-8 (is the file Latin-1? set source.encoding: latin1)';
    expect(result.rows).toEqual([{ row: 3, line: 4, values: ['plain@example.com', 'Plain', 'Paris'] }]);
    expect(result.rejects).toEqual([
      { row: 1, line: 2, reason },
      { row: 2, line: 3, reason },
    ]);
  });

  it('refuses a header that is not UTF-8', async () => {
    const error = await errorOf(() => readAllCsv(readCsv(sourceOf(Buffer.from('Prénom,Nom\nA,B\n', 'latin1'), 'fr.csv'))));
    expect(error).toBeInstanceOf(SourceError);
    expect(error.message).toBe('fr.csv line 1: the header row contains bytes that are not UTF-8');
    expect((error as SourceError).hint).toBe('is the file Latin-1? set source.encoding: latin1');
  });
});
