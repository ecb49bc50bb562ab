/**
 * The CSV fast path (src/sources/csv-fast-records.ts, used by CsvRecordEngine) against csv-parse
 * alone: on every generated input, cut into write() calls every way, the engine must hand on
 * the same records, each from the same write() call, with the same `lines` and `emptyLines` at
 * each record, end with the same counters, and return the same error (message, code, every
 * property csv-parse sets on it, from the same write() call) as csv-parse with the engine's
 * options does by itself.
 *
 * Inputs: CSV built from records (quoted and unquoted fields, "" inside quotes, line breaks
 * inside quotes, CRLF and LF, empty lines, with or without a last line break), the same with
 * hostile edits, and token soup (quotes, delimiters, CR, LF, NUL, BOM, multi-byte characters,
 * bytes that are not UTF-8). Chunkings: random cuts, every single cut of the input (inside a
 * CRLF, a "" pair, a multi-byte character), and one byte per write. Record size limits small
 * enough to be hit, and delimiters the fast path reads and ones it leaves to csv-parse.
 *
 * Some 30,000 generated inputs by default, many cut every way (~25 s on the 2-core bench machine);
 * ADSYNC_LONG_TESTS=1 runs twenty times as many.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Parser as CsvParser } from 'csv-parse';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CsvFastRecords, fastPathDelimiterByte } from '../../src/sources/csv-fast-records.js';
import { CsvRecordEngine, csvParseOptions, oneRecordReader, type CsvEngineOptions } from '../../src/sources/csv-parse-engine.js';
import { cutAt, fixturePath } from './helpers.js';

const LONG = process.env.ADSYNC_LONG_TESTS === '1';
const SCALE = LONG ? 20 : 1;
/**
 * The generated tests' time limit, a guard against a hang and not a speed check: the slowest
 * takes ~20 s on the 2-core machine (19 s in a CI run), too close to vitest's 30 s default
 * there, and twenty times as long with ADSYNC_LONG_TESTS=1.
 */
const GENERATED = { timeout: 120_000 * SCALE };

const { Parser } = createRequire(import.meta.url)('csv-parse') as { Parser: typeof CsvParser };

interface PushParser {
  parse(bytes: Buffer | undefined, end: boolean, push: (record: string[]) => void, close: () => void): Error | undefined;
  info: { lines: number; empty_lines: number };
}

interface SeenRecord {
  /** The write() call it came out of (chunks.length: end()). */
  call: number;
  values: string[];
  lines: number;
  emptyLines: number;
}

interface SeenError {
  /** The write() call that returned it (chunks.length: end()). */
  call: number;
  name: string;
  message: string;
  properties: unknown;
}

interface Trace {
  records: SeenRecord[];
  error: SeenError | undefined;
  lines: number;
  emptyLines: number;
}

function seenError(call: number, error: Error): SeenError {
  return { call, name: error.constructor.name, message: error.message, properties: JSON.parse(JSON.stringify({ ...error })) as unknown };
}

const ignoreClose = (): void => undefined;

function csvParseAlone(chunks: readonly Buffer[], options: CsvEngineOptions): Trace {
  const parser = (new Parser(csvParseOptions(options)) as unknown as { api: PushParser }).api;
  const records: SeenRecord[] = [];
  let call = 0;
  const push = (values: string[]): void => {
    records.push({ call, values, lines: parser.info.lines, emptyLines: parser.info.empty_lines });
  };
  let error: SeenError | undefined;
  for (; call <= chunks.length; call++) {
    const result = call < chunks.length ? parser.parse(chunks[call], false, push, ignoreClose) : parser.parse(undefined, true, push, ignoreClose);
    if (result !== undefined) {
      error = seenError(call, result);
      break;
    }
  }
  return { records, error, lines: parser.info.lines, emptyLines: parser.info.empty_lines };
}

function engine(chunks: readonly Buffer[], options: CsvEngineOptions): Trace {
  const records: SeenRecord[] = [];
  let call = 0;
  const engine: CsvRecordEngine = new CsvRecordEngine(options, (values) => {
    records.push({ call, values, lines: engine.lines, emptyLines: engine.emptyLines });
  });
  let error: SeenError | undefined;
  for (; call <= chunks.length; call++) {
    const result = call < chunks.length ? engine.write(chunks[call] ?? Buffer.alloc(0)) : engine.end();
    if (result !== undefined) {
      error = seenError(call, result);
      break;
    }
  }
  return { records, error, lines: engine.lines, emptyLines: engine.emptyLines };
}

function oneBytePerWrite(input: Buffer): Buffer[] {
  return Array.from({ length: input.length }, (_, i) => input.subarray(i, i + 1));
}

/** The engine and csv-parse alone on the same chunks; on a difference, an assertion naming the input. */
function expectSame(chunks: readonly Buffer[], options: CsvEngineOptions): void {
  const expected = csvParseAlone(chunks, options);
  const actual = engine(chunks, options);
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    const input = Buffer.concat(chunks);
    expect({ input: input.toString('latin1'), cuts: chunks.map((chunk) => chunk.length), options, ...actual }).toEqual({
      input: input.toString('latin1'),
      cuts: chunks.map((chunk) => chunk.length),
      options,
      ...expected,
    });
  }
}

/** Every way of cutting the input into two writes, and one byte per write. */
function expectSameEveryCut(input: Buffer, options: CsvEngineOptions): void {
  expectSame([input], options);
  for (let cut = 0; cut <= input.length; cut++) expectSame([input.subarray(0, cut), input.subarray(cut)], options);
  expectSame(oneBytePerWrite(input), options);
}

// ---- generators ----

const FAST_DELIMITERS = [',', ';', '\t', '|', ' '];
const OTHER_DELIMITERS = ['§', '||', '\u3000'];

const delimiterArbitrary = fc.oneof({ weight: 9, arbitrary: fc.constantFrom(...FAST_DELIMITERS) }, { weight: 1, arbitrary: fc.constantFrom(...OTHER_DELIMITERS) });
/** Mostly a limit no record reaches, else one that records of a few fields pass. */
const maxRecordArbitrary = fc.oneof({ weight: 3, arbitrary: fc.constant(1 << 20) }, { weight: 2, arbitrary: fc.integer({ min: 1, max: 40 }) }, { weight: 1, arbitrary: fc.constant(0) });

const TEXT_PIECES = ['a', 'bc', 'crm-0001', ' ', '"', 'é', '€', '😀', '\ufeff', '\u0000', '\u3000', ',', ';', '\t', '|', '§'];
const RAW_PIECES = [[0xff], [0xc3], [0x80], [0xe2, 0x82], [0xf0, 0x9f, 0x98]].map((bytes) => Buffer.from(bytes));

/** Bytes of a value: text, now and then a byte that is not UTF-8. */
const valueBytesArbitrary = fc
  .array(fc.oneof({ weight: 12, arbitrary: fc.constantFrom(...TEXT_PIECES).map((text) => Buffer.from(text)) }, { weight: 1, arbitrary: fc.constantFrom(...RAW_PIECES) }), { maxLength: 6 })
  .map((pieces) => Buffer.concat(pieces));

type Field = { quoted: false; bytes: Buffer } | { quoted: true; bytes: Buffer; lineBreaks: Buffer[] };

const fieldArbitrary: fc.Arbitrary<Field> = fc.oneof(
  { weight: 3, arbitrary: valueBytesArbitrary.map((bytes): Field => ({ quoted: false, bytes })) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(valueBytesArbitrary, fc.array(fc.constantFrom('\n', '\r\n', '\r', '""').map((text) => Buffer.from(text)), { maxLength: 2 }))
      .map(([bytes, lineBreaks]): Field => ({ quoted: true, bytes, lineBreaks })),
  },
);

interface Line {
  fields: Field[];
  lineBreak: string;
}

const lineArbitrary: fc.Arbitrary<Line> = fc.record({
  fields: fc.array(fieldArbitrary, { minLength: 0, maxLength: 5 }),
  lineBreak: fc.constantFrom('\n', '\r\n', '\n', '\r\n', '\n\n', '\r\n\r\n', '\n\r\n'),
});

/** A value as a CSV writer writes it: unquoted text without the delimiter, quotes or line breaks, or quoted with "" for ". */
function fieldBytes(field: Field, delimiter: Buffer): Buffer {
  if (!field.quoted) {
    let bytes = field.bytes;
    for (const special of [delimiter, Buffer.from('\r'), Buffer.from('\n')]) {
      for (let at = bytes.indexOf(special); at !== -1; at = bytes.indexOf(special)) bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + special.length)]);
    }
    // A value that starts with a quote would be a quoted one.
    return bytes[0] === 0x22 ? Buffer.concat([Buffer.from('x'), bytes]) : bytes;
  }
  const inside = Buffer.concat([field.bytes, ...field.lineBreaks]).toString('latin1').replaceAll('"', '""');
  return Buffer.concat([Buffer.from('"'), Buffer.from(inside, 'latin1'), Buffer.from('"')]);
}

function csvOf(lines: readonly Line[], delimiter: string, lastLineBreak: boolean): Buffer {
  const delimiterBytes = Buffer.from(delimiter);
  const parts: Buffer[] = [];
  lines.forEach((line, index) => {
    line.fields.forEach((field, column) => {
      if (column > 0) parts.push(delimiterBytes);
      parts.push(fieldBytes(field, delimiterBytes));
    });
    if (index < lines.length - 1 || lastLineBreak) parts.push(Buffer.from(line.lineBreak));
  });
  return Buffer.concat(parts);
}

const wellFormedArbitrary = fc
  .tuple(fc.array(lineArbitrary, { maxLength: 8 }), fc.boolean(), delimiterArbitrary)
  .map(([lines, lastLineBreak, delimiter]) => ({ input: csvOf(lines, delimiter, lastLineBreak), delimiter }));

const HOSTILE_TOKENS = ['"', '""', '","', ',', ';', '\t', '|', '\r', '\n', '\r\n', ' ', 'a', '\ufeff', '\u0000', 'é', '€', '😀', '§']
  .map((text) => Buffer.from(text))
  .concat(RAW_PIECES);

/** Token soup. */
const soupArbitrary = fc
  .tuple(fc.array(fc.constantFrom(...HOSTILE_TOKENS), { maxLength: 40 }), delimiterArbitrary)
  .map(([tokens, delimiter]) => ({ input: Buffer.concat(tokens), delimiter }));

/** Well-formed CSV with tokens inserted and ranges deleted. */
const editedArbitrary = fc
  .tuple(wellFormedArbitrary, fc.array(fc.tuple(fc.nat(), fc.oneof(fc.constantFrom(...HOSTILE_TOKENS), fc.nat({ max: 6 }))), { minLength: 1, maxLength: 4 }))
  .map(([{ input, delimiter }, edits]) => {
    let bytes = input;
    for (const [position, edit] of edits) {
      const at = bytes.length === 0 ? 0 : position % (bytes.length + 1);
      bytes = typeof edit === 'number' ? Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + edit)]) : Buffer.concat([bytes.subarray(0, at), edit, bytes.subarray(at)]);
    }
    return { input: bytes, delimiter };
  });

const inputArbitrary = fc.oneof({ weight: 3, arbitrary: wellFormedArbitrary }, { weight: 3, arbitrary: editedArbitrary }, { weight: 2, arbitrary: soupArbitrary });

const cutsArbitrary = fc.array(fc.nat(), { maxLength: 8 });

// ---- tests ----

describe('CsvRecordEngine (fast path, csv-parse after a hand-over) against csv-parse alone', () => {
  it('gives the same records, counters and errors on generated input cut at random', GENERATED, () => {
    fc.assert(
      fc.property(inputArbitrary, maxRecordArbitrary, cutsArbitrary, ({ input, delimiter }, maxRecordChars, cuts) => {
        const positions = cuts.map((cut) => (input.length === 0 ? 0 : cut % (input.length + 1)));
        expectSame(cutAt(input, positions), { delimiter, maxRecordChars });
      }),
      { numRuns: 30_000 * SCALE },
    );
  });

  it('gives the same on every cut of the input into two writes, and on one byte per write', GENERATED, () => {
    fc.assert(
      fc.property(inputArbitrary, maxRecordArbitrary, ({ input, delimiter }, maxRecordChars) => {
        expectSameEveryCut(input, { delimiter, maxRecordChars });
      }),
      { numRuns: 800 * SCALE },
    );
  });

  it('gives the same on the hand-written hard cases, every cut', () => {
    const cases = [
      '',
      '\n',
      '\r\n',
      '\n\n\r\n',
      'a',
      'a\n',
      'a\r\n',
      'a\r',
      'a\rb\n',
      '\ra\n',
      'a,b\r\r\n',
      '"a"',
      '"a"\n',
      '"a"\r\n',
      '"a"\r',
      '"a"\rb\n',
      '"a"b,c\n',
      '"a""b",c\n',
      '"a"""\n',
      '""""\n',
      '"",""\n',
      '""\n\n',
      '"a\nb"\n',
      '"a\r\nb",c\r\n',
      '"a\rb"\n',
      '"a',
      '"a""',
      '"a\n',
      '"a"\u0000b\n',
      'a"b",c\n',
      '12" pizza,x\n',
      'a,\n',
      ',\n',
      ',,\n,\n',
      'a,b\n"c\n',
      ' "a",b\n',
      '"a" ,b\n',
      'a,"b"\n"c",d',
      '\ufeffa,b\n',
      'x\n"a\u00e9""\u20ac",b\r\n',
      '"\u00ff"\n',
      'a,b\nc,d\ne,f,g\nh\n',
    ].map((text) => Buffer.from(text));
    cases.push(Buffer.from([0x22, 0xe2, 0x82, 0x22, 0x2c, 0xff, 0x0a]), Buffer.from([0x61, 0xf0, 0x9f, 0x2c, 0x98, 0x0a]));
    for (const input of cases) {
      for (const delimiter of [',', ';', '§']) {
        for (const maxRecordChars of [0, 1, 2, 3, 4, 5, 8, 1 << 20]) expectSameEveryCut(input, { delimiter, maxRecordChars });
      }
    }
  });

  it('gives the same on the CSV fixtures, every cut and one byte per write', () => {
    for (const [name, delimiter] of [
      ['crm-messy.csv', ','],
      ['crm-messy-semicolon.csv', ';'],
      ['crm-messy-pipe.csv', '|'],
      ['crm-messy.tsv', '\t'],
      ['crm-multiline-header.csv', ','],
      ['invalid-utf8.csv', ','],
      ['latin1.csv', ','],
      ['merchant-products.tsv', '\t'],
    ] as const) {
      const input = readFileSync(fixturePath(name));
      for (const maxRecordChars of [1 << 20, 30]) expectSameEveryCut(input, { delimiter, maxRecordChars });
    }
  });
});

/** A CsvFastRecords over csv-parse's one-record reader, which counts what it is given. */
function fastRecords(delimiter: string, maxRecordChars: number): { fast: CsvFastRecords; records: string[][]; readByCsvParse: string[] } {
  const delimiterByte = fastPathDelimiterByte(delimiter);
  if (delimiterByte === undefined) throw new Error(`${JSON.stringify(delimiter)} should be a fast-path delimiter`);
  const records: string[][] = [];
  const readByCsvParse: string[] = [];
  const readOne = oneRecordReader({ delimiter, maxRecordChars });
  const fast = new CsvFastRecords(
    delimiterByte,
    maxRecordChars,
    (bytes) => {
      readByCsvParse.push(bytes.toString());
      return readOne(bytes);
    },
    (record) => records.push(record),
  );
  return { fast, records, readByCsvParse };
}

describe('CsvFastRecords: plain lines split, other records read by csv-parse one at a time', () => {
  it('never hands the rest of a well-formed file to csv-parse (quotes, "", line breaks and CRs in quotes, CRLF, LF, empty lines)', GENERATED, () => {
    fc.assert(
      fc.property(fc.array(lineArbitrary, { maxLength: 8 }), fc.boolean(), fc.constantFrom(...FAST_DELIMITERS), cutsArbitrary, (lines, lastLineBreak, delimiter, cuts) => {
        const input = csvOf(lines, delimiter, lastLineBreak);
        const chunks = cutAt(input, cuts.map((cut) => cut % (input.length + 1)));
        const { fast, records } = fastRecords(delimiter, 1 << 20);
        for (const chunk of chunks) expect(fast.write(chunk)).toBeUndefined();
        expect(fast.end()).toBeUndefined();
        expect(records).toEqual(csvParseAlone(chunks, { delimiter, maxRecordChars: 1 << 20 }).records.map((record) => record.values));
      }),
      { numRuns: 5_000 * SCALE },
    );
  });

  it('splits plain lines itself and gives csv-parse only the records with a quote or a stray CR, each from its first byte to its line break', () => {
    const { fast, records, readByCsvParse } = fastRecords(',', 1 << 20);
    expect(fast.write(Buffer.from('id,name\r\n1,Ann\n\n2,"Lee, Bo"\r\n3,12" pizza\n4,"a\nb"\n5,x\ry\n6,é'))).toBeUndefined();
    expect(fast.end()).toBeUndefined();
    expect(records).toEqual([['id', 'name'], ['1', 'Ann'], ['2', 'Lee, Bo'], ['3', '12" pizza'], ['4', 'a\nb'], ['5', 'x\ry'], ['6', 'é']]);
    expect(readByCsvParse).toEqual(['2,"Lee, Bo"\r\n', '3,12" pizza\n', '4,"a\n', '4,"a\nb"\n', '5,x\ry\n']);
  });

  it('hands the rest to csv-parse at a quote left open or a record over the size limit, after the records before it', () => {
    const handedOver = (text: string, maxRecordSize = 1 << 20): { records: string[][]; rest: string | undefined; offset: number | undefined } => {
      const { fast, records } = fastRecords(',', maxRecordSize);
      const handOver = fast.write(Buffer.from(text)) ?? fast.end();
      return { records, rest: handOver?.bytes.toString(), offset: handOver?.offset };
    };
    expect(handedOver('a,b\n"open\nc,d\n')).toEqual({ records: [['a', 'b']], rest: '"open\nc,d\n', offset: 4 });
    expect(handedOver('a,b\nlonger,one\n', 8)).toEqual({ records: [['a', 'b']], rest: 'longer,one\n', offset: 4 });
    expect(handedOver('a,b\n"lo,ng"\n', 6)).toEqual({ records: [['a', 'b']], rest: '"lo,ng"\n', offset: 4 });
    expect(handedOver(`a,b\n"${'\n'.repeat(20)}"\n`)).toEqual({ records: [['a', 'b']], rest: `"${'\n'.repeat(20)}"\n`, offset: 4 });
    expect(handedOver('a,b\n"x"y,z\nc,d\n')).toEqual({ records: [['a', 'b'], ['"x"y', 'z'], ['c', 'd']], rest: undefined, offset: undefined });
  });
});
