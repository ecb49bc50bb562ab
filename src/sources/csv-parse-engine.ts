/**
 * csv-parse driven without its stream wrapper. A csv-parse Parser (a Transform stream) delegates
 * to a push parser, `parser.api`: parse(bytes, end, push, close). Calling it directly lets the
 * reader collect records straight into its batch and read the parser's line counters at the
 * moment each record is pushed, at csv-parse's raw array speed. The object-mode stream with
 * `info: true` (one snapshot object per record) ran at half that speed on a 200k-row file, and
 * `on_record` at two thirds.
 *
 * `api` is not in csv-parse's type definitions, so its shape is checked here, and a csv-parse
 * release without it fails loudly (InternalError) on the first file that needs csv-parse, and in
 * test/sources/csv-fast-records.test.ts, not silently.
 *
 * csv-parse is required when an engine first needs it, from its CommonJS build (one bundled
 * file, where its ES module build is ten): a process that reads no CSV (a catalog run of an XML
 * feed, the commands that read no source) or only plain lines does without it, and one that
 * does loads it in ~15 ms instead of ~25.
 *
 * Plain lines (no quote, no stray CR) are split by the fast path (csv-fast-records.ts) with
 * exactly the records and counters csv-parse gives; every other record is csv-parse's, read
 * from its own bytes; at anything else (an error, a quote left open, a delimiter that is not one
 * ASCII byte) a streaming csv-parse is started at that record with its counters set, and reads
 * the rest of the input.
 */
import type { Parser as CsvParser, Options as CsvParserOptions } from 'csv-parse';
import { createRequire } from 'node:module';
import { InternalError } from '../errors.js';
import { CsvFastRecords, type CsvParseCounters, fastPathDelimiterByte, type HandOver, type ReadOneRecord } from './csv-fast-records.js';

let csvParse: { Parser: typeof CsvParser } | undefined;

function csvParser(): typeof CsvParser {
  csvParse ??= createRequire(import.meta.url)('csv-parse') as { Parser: typeof CsvParser };
  return csvParse.Parser;
}

interface PushParser {
  parse(bytes: Buffer | undefined, end: boolean, push: (record: string[]) => void, close: () => void): Error | undefined;
  info: { lines: number; empty_lines: number; records: number; bytes: number; bytes_records: number; invalid_field_length: number };
  state: { bufBytesStart: number; expectedRecordLength: number | undefined };
}

function isPushParser(value: unknown): value is PushParser {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as { parse?: unknown; info?: Record<string, unknown>; state?: Record<string, unknown> };
  const { info, state } = candidate;
  return (
    typeof candidate.parse === 'function' &&
    typeof info === 'object' &&
    ['lines', 'empty_lines', 'records', 'bytes', 'bytes_records', 'invalid_field_length'].every((key) => typeof info[key] === 'number') &&
    typeof state?.bufBytesStart === 'number'
  );
}

export interface CsvEngineOptions {
  delimiter: string;
  /** Largest record csv-parse builds, in characters (its max_record_size). */
  maxRecordChars: number;
}

const ignoreClose = (): void => undefined;

/** csv-parse's options for the engine's: exported for the differential test, which runs csv-parse alone with them. */
export function csvParseOptions(options: CsvEngineOptions): CsvParserOptions {
  return {
    delimiter: options.delimiter,
    // CRLF and LF, also mixed in one file. A bare CR stays part of the value.
    record_delimiter: ['\r\n', '\n'],
    quote: '"',
    escape: '"',
    // A quote inside an unquoted value (12" pizza) is kept as a character.
    relax_quotes: true,
    // Field counts are checked by the reader, which turns a ragged row into a reject.
    relax_column_count: true,
    skip_empty_lines: true,
    max_record_size: options.maxRecordChars,
    encoding: 'utf8',
    bom: false,
  };
}

/** csv-parse's push parser for the engine's options, its counters set to `from` (where a record starts). */
function newPushParser(options: CsvEngineOptions, from?: CsvParseCounters, offset = 0): PushParser {
  const Parser = csvParser();
  const streamParser = new Parser(csvParseOptions(options));
  const api: unknown = (streamParser as unknown as { api?: unknown }).api;
  if (!isPushParser(api)) {
    throw new InternalError('csv-parse no longer exposes its push parser (Parser.api) and its counters; adsync needs csv-parse 7');
  }
  if (from !== undefined) {
    const { info, state } = api;
    info.lines = from.lines;
    info.empty_lines = from.emptyLines;
    info.records = from.records;
    info.bytes = from.bytes;
    info.bytes_records = from.bytesRecords;
    info.invalid_field_length = from.invalidFieldLength;
    state.bufBytesStart = offset;
    state.expectedRecordLength = from.expectedRecordLength;
  }
  return api;
}

/**
 * csv-parse on one record's bytes as a whole input, for the fast path's records that are not
 * plain lines (CsvFastRecords' ReadOneRecord). One push parser serves them all: after a whole
 * input that was one record it is between records again; after anything else it is made anew.
 */
export function oneRecordReader(options: CsvEngineOptions): ReadOneRecord {
  let parser: PushParser | undefined;
  return (bytes) => {
    const reader = (parser ??= newPushParser(options));
    const linesBefore = reader.info.lines;
    let values: string[] | undefined;
    let linesAtRecord = 0;
    let records = 0;
    const push = (record: string[]): void => {
      values = record;
      linesAtRecord = reader.info.lines;
      records++;
    };
    const error = reader.parse(bytes, true, push, ignoreClose);
    if (error === undefined && records === 1 && values !== undefined) {
      return { values, linesInside: linesAtRecord - linesBefore, linesAfter: reader.info.lines - linesAtRecord };
    }
    parser = undefined;
    return (error as { code?: unknown } | undefined)?.code === 'CSV_QUOTE_NOT_CLOSED' ? 'quote open' : undefined;
  };
}

export class CsvRecordEngine {
  /** The fast path, while it reads; undefined for a delimiter it cannot read. */
  private readonly fast: CsvFastRecords | undefined;
  /** csv-parse, from the start or from where the fast path handed over. */
  private parser: PushParser | undefined;

  constructor(
    private readonly options: CsvEngineOptions,
    private readonly onRecord: (record: string[]) => void,
  ) {
    const delimiterByte = fastPathDelimiterByte(options.delimiter);
    if (delimiterByte === undefined) this.parser = newPushParser(options);
    else this.fast = new CsvFastRecords(delimiterByte, options.maxRecordChars, oneRecordReader(options), onRecord);
  }

  /** Lines csv-parse has counted (it counts every CR and LF, one per CRLF record break). */
  get lines(): number {
    return this.parser === undefined ? (this.fast?.lines ?? 1) : this.parser.info.lines;
  }

  /** Empty lines skipped so far. */
  get emptyLines(): number {
    return this.parser === undefined ? (this.fast?.emptyLines ?? 0) : this.parser.info.empty_lines;
  }

  /** Parses more bytes; records are handed to onRecord before this returns. */
  write(bytes: Buffer): Error | undefined {
    if (this.parser !== undefined || this.fast === undefined) return this.parse(bytes, false);
    const handOver = this.fast.write(bytes);
    return handOver === undefined ? undefined : this.handOver(this.fast, handOver, false);
  }

  /** Parses what is left at the end of the input. */
  end(): Error | undefined {
    if (this.parser !== undefined || this.fast === undefined) return this.parse(undefined, true);
    const handOver = this.fast.end();
    return handOver === undefined ? undefined : this.handOver(this.fast, handOver, true);
  }

  private handOver(fast: CsvFastRecords, handOver: HandOver, end: boolean): Error | undefined {
    this.parser = newPushParser(this.options, fast, handOver.offset);
    return this.parse(handOver.bytes, end);
  }

  private parse(bytes: Buffer | undefined, end: boolean): Error | undefined {
    this.parser ??= newPushParser(this.options);
    return this.parser.parse(bytes, end, this.onRecord, ignoreClose);
  }
}
