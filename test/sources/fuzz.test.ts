/**
 * Property tests of the readers on hostile input: random bytes, and random edits of the valid
 * fixtures (bytes inserted from an alphabet of the characters that matter, ranges deleted or
 * repeated, the end cut off), fed in random chunks. Whatever the input: the reader ends, fast;
 * it throws nothing but SourceError; every value it emits is a string; row numbers run 1..n.
 * And on valid input the chunking never changes the output.
 */
import { readFile } from 'node:fs/promises';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { SourceError } from '../../src/errors.js';
import { readCsv } from '../../src/sources/csv.js';
import { readCsvFeed } from '../../src/sources/csv-feed.js';
import type { RowReject } from '../../src/sources/types.js';
import { readXmlFeed } from '../../src/sources/xml-feed.js';
import { applyEdits, cutsArbitrary, editArbitrary, fixturePath, plainItems, readAllFeed, streamCutAt } from './helpers.js';

const RUNS = 400;
/** Far above what one small input takes; a loop that never ends fails here or on the test timeout. */
const MAX_MS_PER_INPUT = 2000;

const CSV_FIXTURES = ['crm-messy.csv', 'crm-messy-semicolon.csv', 'crm-messy-pipe.csv', 'crm-messy.tsv', 'latin1.csv', 'invalid-utf8.csv', 'merchant-products.tsv'];
const XML_FIXTURES = ['merchant-rss.xml', 'merchant-atom.xml', 'not-well-formed.xml', 'billion-laughs.xml', 'external-entity.xml'];

const CSV_TOKENS = ['"', '""', ',', ';', '\t', '|', '\r', '\n', '\r\n', ' ', 'a', '\ufeff', '\u0000', '\u00e9'].map((token) => Buffer.from(token));
const XML_TOKENS = [
  '<', '>', '&', ';', '/', '"', "'", '=', ' ', '\n', '<item>', '</item>', '<entry>', '</entry>', '<g:price>', '</g:price>', '<![CDATA[', ']]>',
  '&amp;', '&nbsp;', '&#0;', '&#x1F600;', '<!--', '-->', '<?xml version="1.0"?>', '<!DOCTYPE x [<!ENTITY a "b">]>', '<!DOCTYPE x>', 'xmlns:g="x"', '\u000b',
].map((token) => Buffer.from(token));

/**
 * The fixture made longer, so that chunk borders fall well past the first bytes the readers
 * sniff as one piece: CSV rows after the header, or XML items, repeated `times` more times.
 */
function enlarged(bytes: Buffer, times: number): Buffer {
  if (times === 0) return bytes;
  const text = bytes.toString('latin1');
  const firstItem = text.search(/<(item|entry)>/);
  const lastItemEnd = Math.max(text.lastIndexOf('</item>') + 7, text.lastIndexOf('</entry>') + 8);
  if (firstItem !== -1 && lastItemEnd > firstItem) {
    const items = bytes.subarray(firstItem, lastItemEnd);
    return Buffer.concat([bytes.subarray(0, lastItemEnd), ...Array.from({ length: times }, () => items), bytes.subarray(lastItemEnd)]);
  }
  const bodyStart = bytes.indexOf(0x0a) + 1;
  const body = bytes.subarray(bodyStart);
  const separator = body[body.length - 1] === 0x0a ? [] : [Buffer.from('\r\n')];
  return Buffer.concat([bytes, ...Array.from({ length: times }, () => [...separator, body]).flat()]);
}

const timesArbitrary = fc.integer({ min: 0, max: 12 });

function expectRowsNumberedOneToN(numbers: number[]): void {
  const sorted = [...numbers].sort((a, b) => a - b);
  expect(sorted).toEqual(sorted.map((_, index) => index + 1));
}

function expectWellFormedRejects(rejects: readonly RowReject[]): void {
  for (const reject of rejects) {
    expect(Number.isInteger(reject.row) && Number.isInteger(reject.line)).toBe(true);
    expect(typeof reject.reason).toBe('string');
  }
}

/** Reads `bytes` as CSV and checks the invariants; returns what was read, for comparisons. */
async function checkCsv(bytes: Buffer, cuts: readonly number[], maxRowBytes?: number): Promise<unknown> {
  const started = performance.now();
  const reader = readCsv({ name: 'fuzz.csv', stream: streamCutAt(bytes, cuts) }, { maxRowBytes });
  const seen: { header: string[] | undefined; rows: unknown[]; rejects: RowReject[]; error: string | undefined } = {
    header: undefined,
    rows: [],
    rejects: [],
    error: undefined,
  };
  const numbers: number[] = [];
  try {
    seen.header = await reader.header();
    for (const name of seen.header) expect(typeof name).toBe('string');
    for await (const batch of reader) {
      for (const row of batch.rows) {
        expect(row.values.every((value) => typeof value === 'string')).toBe(true);
        expect(row.values.length).toBe(seen.header.length);
        numbers.push(row.row);
        seen.rows.push(row);
      }
      expectWellFormedRejects(batch.rejects);
      numbers.push(...batch.rejects.map((reject) => reject.row));
      seen.rejects.push(...batch.rejects);
    }
  } catch (error) {
    if (!(error instanceof SourceError)) throw error;
    seen.error = error.message;
  }
  expectRowsNumberedOneToN(numbers);
  expect(performance.now() - started).toBeLessThan(MAX_MS_PER_INPUT);
  return seen;
}

async function checkXml(bytes: Buffer, cuts: readonly number[]): Promise<unknown> {
  const started = performance.now();
  const result = await readAllFeed(readXmlFeed({ name: 'fuzz.xml', stream: streamCutAt(bytes, cuts) }, { limits: { maxItemChars: 4096 } }));
  expect(result.error === undefined || result.error instanceof SourceError, String(result.error)).toBe(true);
  for (const item of result.items) {
    for (const value of Object.values(item.fields)) {
      expect(typeof value === 'string' || (Array.isArray(value) && value.every((text) => typeof text === 'string'))).toBe(true);
    }
  }
  expectWellFormedRejects(result.rejects);
  expectRowsNumberedOneToN([...result.items.map((item) => item.row), ...result.rejects.map((reject) => reject.row)]);
  expect(performance.now() - started).toBeLessThan(MAX_MS_PER_INPUT);
  return { items: plainItems(result.items), rejects: result.rejects, error: result.error instanceof Error ? result.error.message : undefined };
}

const fixtures = new Map<string, Buffer>();

beforeAll(async () => {
  for (const name of [...CSV_FIXTURES, ...XML_FIXTURES]) fixtures.set(name, await readFile(fixturePath(name)));
});

function fixture(name: string): Buffer {
  const bytes = fixtures.get(name);
  if (bytes === undefined) throw new Error(`fixture ${name} not loaded`);
  return bytes;
}

describe('CSV reader properties', () => {
  it('survives random bytes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 3000 }), cutsArbitrary, async (bytes, cuts) => {
        await checkCsv(Buffer.from(bytes), cuts);
      }),
      { numRuns: RUNS },
    );
  });

  it('survives random edits of the valid fixtures (with a small row limit too)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...CSV_FIXTURES),
        timesArbitrary,
        fc.array(editArbitrary(CSV_TOKENS), { minLength: 1, maxLength: 8 }),
        cutsArbitrary,
        fc.constantFrom(undefined, 64),
        async (name, times, edits, cuts, maxRowBytes) => {
          await checkCsv(applyEdits(enlarged(fixture(name), times), edits), cuts, maxRowBytes);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('gives the same output whatever the chunking, on valid and edited input', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...CSV_FIXTURES), timesArbitrary, fc.array(editArbitrary(CSV_TOKENS), { maxLength: 3 }), cutsArbitrary, async (name, times, edits, cuts) => {
        const bytes = applyEdits(enlarged(fixture(name), times), edits);
        expect(await checkCsv(bytes, cuts)).toEqual(await checkCsv(bytes, []));
      }),
      { numRuns: RUNS },
    );
  });

  it('feed reading survives random edits too', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(editArbitrary(CSV_TOKENS), { minLength: 1, maxLength: 8 }), cutsArbitrary, async (edits, cuts) => {
        const bytes = applyEdits(fixture('merchant-products.tsv'), edits);
        const result = await readAllFeed(readCsvFeed({ name: 'fuzz.tsv', stream: streamCutAt(bytes, cuts), format: 'tsv' }));
        expect(result.error === undefined || result.error instanceof SourceError, String(result.error)).toBe(true);
        for (const item of result.items) {
          for (const value of Object.values(item.fields)) {
            expect(typeof value === 'string' || (Array.isArray(value) && value.every((text) => typeof text === 'string'))).toBe(true);
          }
        }
      }),
      { numRuns: RUNS },
    );
  });
});

describe('XML reader properties', () => {
  it('survives random bytes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 3000 }), cutsArbitrary, async (bytes, cuts) => {
        await checkXml(Buffer.from(bytes), cuts);
      }),
      { numRuns: RUNS },
    );
  });

  it('survives random edits of the fixtures', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...XML_FIXTURES),
        timesArbitrary,
        fc.array(editArbitrary(XML_TOKENS), { minLength: 1, maxLength: 8 }),
        cutsArbitrary,
        async (name, times, edits, cuts) => {
          await checkXml(applyEdits(enlarged(fixture(name), times), edits), cuts);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('gives the same output whatever the chunking, on valid and edited input', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...XML_FIXTURES), timesArbitrary, fc.array(editArbitrary(XML_TOKENS), { maxLength: 3 }), cutsArbitrary, async (name, times, edits, cuts) => {
        const bytes = applyEdits(enlarged(fixture(name), times), edits);
        expect(await checkXml(bytes, cuts)).toEqual(await checkXml(bytes, []));
      }),
      { numRuns: RUNS },
    );
  });
});
