/**
 * Cutting a CSV file for parallel reading: parsing the first part, then the header followed
 * by the second part, must give exactly the records of the whole file, whatever the quoting.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitCsvFile } from '../../src/sources/csv-split.js';

const dir = mkdtempSync(join(tmpdir(), 'adsync-split-'));

function records(text: string | Buffer, delimiter: string): string[][] {
  return parse(text, {
    delimiter,
    record_delimiter: ['\r\n', '\n'],
    quote: '"',
    escape: '"',
    relax_quotes: true,
    relax_column_count: true,
    skip_empty_lines: true,
    bom: true,
  });
}

/** A field: plain, quoted with delimiters/quotes/line breaks inside, or with a stray quote. */
const field = fc.oneof(
  fc.string({ unit: fc.constantFrom('a', 'b', ' ', '1'), maxLength: 6 }),
  fc.string({ unit: fc.constantFrom('a', ',', ';', '\n', '\r\n', '""', ' '), maxLength: 8 }).map((s) => `"${s}"`),
  fc.string({ unit: fc.constantFrom('a', '"', ' '), maxLength: 5 }).map((s) => `x${s}`),
  // A quoted field whose closing quote is followed by text: with relax_quotes the field is read
  // as unquoted after all ("a"b is the value "a"b), so a line break after it ends the record.
  fc
    .tuple(fc.string({ unit: fc.constantFrom('a', '\n', ','), maxLength: 4 }), fc.string({ unit: fc.constantFrom('b', '\n', ',', ' '), maxLength: 4 }))
    .map(([a, b]) => `"${a}"x${b}"`),
);

describe('splitCsvFile', () => {
  it('cuts only where a record ends, as the parser sees it', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(',', ';', '\t', '|'),
        fc.array(fc.array(field, { minLength: 1, maxLength: 5 }), { minLength: 2, maxLength: 60 }),
        fc.constantFrom('\n', '\r\n'),
        fc.boolean(),
        fc.double({ min: 0.05, max: 0.95, noNaN: true }),
        (delimiter, rows, eol, bom, share) => {
          const header = ['id', 'name', 'email'].join(delimiter);
          const text = `${bom ? '\ufeff' : ''}${header}${eol}${rows.map((r) => r.join(delimiter)).join(eol)}${eol}`;
          const path = join(dir, 'f.csv');
          writeFileSync(path, text);
          const split = splitCsvFile(path, { parts: 2, shares: [share], delimiter, preferTab: false, minBytes: 0 });
          if (!split) return; // nowhere to cut: read as one part
          const bytes = Buffer.from(text);
          let whole: string[][];
          try {
            whole = records(bytes, delimiter);
          } catch {
            return; // the parser refuses the whole file (a quote never closed): so would the reader
          }
          const [first, second] = split.parts;
          expect(first?.start).toBe(0);
          expect(second?.start).toBe(first?.end);
          expect(second?.end).toBe(bytes.length);
          const a = records(bytes.subarray(0, first?.end), delimiter);
          const b = records(Buffer.concat([split.headerBytes, bytes.subarray(second?.start)]), delimiter).slice(1);
          expect([...a, ...b]).toEqual(whole);
          // Lines before the cut are counted for the second part's line numbers.
          expect(second?.linesBefore).toBe(bytes.subarray(0, second?.start).filter((c) => c === 0x0a).length);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('leaves small, gzip and single-record files whole', () => {
    const path = join(dir, 'small.csv');
    writeFileSync(path, 'a,b\n1,2\n3,4\n');
    expect(splitCsvFile(path, { parts: 2, preferTab: false, minBytes: 1024 })).toBeUndefined();
    writeFileSync(path, Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0]));
    expect(splitCsvFile(path, { parts: 2, preferTab: false, minBytes: 0 })).toBeUndefined();
    writeFileSync(path, 'a,b\n"1\n2\n3",x\n');
    expect(splitCsvFile(path, { parts: 2, preferTab: false, minBytes: 0 })).toBeUndefined();
  });
});
