/**
 * csv-parse driven without its stream wrapper. A csv-parse Parser (a Transform stream) delegates
 * to a push parser, `parser.api`: parse(bytes, end, push, close). Calling it directly lets the
 * reader collect records straight into its batch and read the parser's line counters at the
 * moment each record is pushed, at csv-parse's raw array speed. The object-mode stream with
 * `info: true` (one snapshot object per record) ran at half that speed on a 200k-row file, and
 * `on_record` at two thirds.
 *
 * `api` is not in csv-parse's type definitions, so its shape is checked here, once, and a
 * csv-parse release without it fails loudly (InternalError) on the first file, not silently.
 *
 * csv-parse is required when the first engine is made, from its CommonJS build (one bundled
 * file, where its ES module build is ten): a process that reads no CSV (a catalog run of an XML
 * feed, the commands that read no source) does without it, and one that does loads it in ~15 ms
 * instead of ~25.
 */
import type { Parser as CsvParser } from 'csv-parse';
import { createRequire } from 'node:module';
import { InternalError } from '../errors.js';

let csvParse: { Parser: typeof CsvParser } | undefined;

function csvParser(): typeof CsvParser {
  csvParse ??= createRequire(import.meta.url)('csv-parse') as { Parser: typeof CsvParser };
  return csvParse.Parser;
}

interface PushParser {
  parse(bytes: Buffer | undefined, end: boolean, push: (record: string[]) => void, close: () => void): Error | undefined;
  info: { lines: number; empty_lines: number };
}

function isPushParser(value: unknown): value is PushParser {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as { parse?: unknown; info?: { lines?: unknown; empty_lines?: unknown } };
  return (
    typeof candidate.parse === 'function' &&
    typeof candidate.info?.lines === 'number' &&
    typeof candidate.info.empty_lines === 'number'
  );
}

export interface CsvEngineOptions {
  delimiter: string;
  /** Largest record csv-parse builds, in characters (its max_record_size). */
  maxRecordChars: number;
}

const ignoreClose = (): void => undefined;

export class CsvRecordEngine {
  private readonly parser: PushParser;

  constructor(
    options: CsvEngineOptions,
    private readonly onRecord: (record: string[]) => void,
  ) {
    const Parser = csvParser();
    const streamParser = new Parser({
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
    });
    const api: unknown = (streamParser as unknown as { api?: unknown }).api;
    if (!isPushParser(api)) {
      throw new InternalError('csv-parse no longer exposes its push parser (Parser.api); adsync needs csv-parse 7');
    }
    this.parser = api;
  }

  /** Lines csv-parse has counted (it counts every CR and LF, one per CRLF record break). */
  get lines(): number {
    return this.parser.info.lines;
  }

  /** Empty lines skipped so far. */
  get emptyLines(): number {
    return this.parser.info.empty_lines;
  }

  /** Parses more bytes; records are handed to onRecord before this returns. */
  write(bytes: Buffer): Error | undefined {
    return this.parser.parse(bytes, false, this.onRecord, ignoreClose);
  }

  /** Parses what is left at the end of the input. */
  end(): Error | undefined {
    return this.parser.parse(undefined, true, this.onRecord, ignoreClose);
  }
}
