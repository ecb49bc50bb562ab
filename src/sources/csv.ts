/**
 * Streaming CSV/TSV reader: rows as arrays of strings in header order, in batches (one batch per
 * input chunk, ~64 KB), each row with its row number and the line it starts on. The caller maps
 * columns by index, from header().
 *
 *   const reader = readCsv(opened);
 *   const header = await reader.header();      // reads up to the header row only
 *   for await (const batch of reader) { ... }  // batch.rows, batch.rejects
 *
 * What is read: UTF-8 (a BOM is dropped), UTF-16 with a BOM (Excel's "Unicode Text",
 * utf16-transcoder.ts) or, with encoding latin1, Windows-1252; CRLF and LF;
 * quoted values with delimiters, "" and line breaks; the delimiter given, or detected from the
 * header line (comma, semicolon, tab, pipe; TSV sources prefer the tab) or named by an Excel
 * `sep=;` line before it (csv-preamble.ts). Empty lines, lines
 * of spaces and rows of empty cells only (a spreadsheet's empty row: ",,,,") are skipped. Header names are trimmed; values are not.
 *
 * What becomes a RowReject (the file reads on): a row with a different number of fields than
 * the header; a row with bytes that are not UTF-8; a row longer than maxRowBytes (it is skipped
 * without being held in memory); a row that repeats the header (two exports joined into one).
 *
 * What ends the file with a SourceError (after the rows before it were yielded): an empty file
 * (no header row); a header with unnamed or repeated columns; a quote that is never closed;
 * a workbook, gzip or binary data instead of text; a read or gzip failure.
 */
import { SourceError } from '../errors.js';
import { asBuffer, type ByteSource } from './byte-source.js';
import { CsvRowCollector, checkedDelimiter } from './csv-row-collector.js';
import { asError, readFailure } from './read-error.js';
import type { CsvBatch } from './types.js';

export interface CsvReadOptions {
  /** Overrides the source's delimiter; detected from the header line when neither is set. */
  delimiter?: string | undefined;
  /** Overrides the source's encoding; utf8 by default. latin1 is read as Windows-1252. */
  encoding?: 'utf8' | 'latin1' | undefined;
  /** Accept a column name that appears more than once (product feeds). Default: SourceError. */
  allowRepeatedColumns?: boolean | undefined;
  /** Accept header cells without a name (a trailing delimiter, a blank spreadsheet column). Default: SourceError. */
  allowUnnamedColumns?: boolean | undefined;
  /** Longest row accepted, in bytes (default 1 MiB): a longer line is rejected and skipped. */
  maxRowBytes?: number | undefined;
}

export const DEFAULT_MAX_ROW_BYTES = 1024 * 1024;

export interface CsvReader extends AsyncIterable<CsvBatch> {
  readonly name: string;
  /** The column names (trimmed). Reads the input up to the header row; SourceError if there is none. */
  header(): Promise<string[]>;
  /** The delimiter in use; known once header() has resolved. */
  delimiter(): string | undefined;
  /** The batches of rows, in order; empty batches are not yielded. Iterate once. */
  batches(): AsyncGenerator<CsvBatch, void, undefined>;
  /** Stops reading and releases the input (for a caller that stops early, e.g. after header()). */
  close(): Promise<void>;
}

function hasContent(batch: CsvBatch): boolean {
  return batch.rows.length > 0 || batch.rejects.length > 0;
}

class StreamingCsvReader implements CsvReader {
  readonly name: string;
  private readonly collector: CsvRowCollector;
  private readonly run: AsyncGenerator<CsvBatch, void, undefined>;
  /** A batch read by header() and not yet handed out by batches(). */
  private pending: CsvBatch | undefined;

  constructor(
    private readonly source: ByteSource,
    options: CsvReadOptions,
  ) {
    this.name = source.name;
    this.collector = new CsvRowCollector({
      name: source.name,
      delimiter: checkedDelimiter(options.delimiter ?? source.delimiter),
      preferTab: source.format === 'tsv',
      encoding: options.encoding ?? source.encoding ?? 'utf8',
      allowRepeatedColumns: options.allowRepeatedColumns ?? false,
      allowUnnamedColumns: options.allowUnnamedColumns ?? false,
      maxRowBytes: options.maxRowBytes ?? DEFAULT_MAX_ROW_BYTES,
    });
    this.run = this.readAll();
  }

  async header(): Promise<string[]> {
    if (this.collector.header !== undefined) return this.collector.header;
    const first = await this.run.next();
    if (!first.done) this.pending = first.value;
    if (this.collector.header === undefined) throw new SourceError(`${this.name} is empty (no header row)`);
    return this.collector.header;
  }

  delimiter(): string | undefined {
    return this.collector.delimiter;
  }

  async *batches(): AsyncGenerator<CsvBatch, void, undefined> {
    try {
      const pending = this.pending;
      this.pending = undefined;
      if (pending !== undefined && hasContent(pending)) yield pending;
      for (;;) {
        const next = await this.run.next();
        if (next.done) return;
        if (hasContent(next.value)) yield next.value;
      }
    } finally {
      await this.run.return(undefined);
    }
  }

  [Symbol.asyncIterator](): AsyncGenerator<CsvBatch, void, undefined> {
    return this.batches();
  }

  async close(): Promise<void> {
    await this.run.return(undefined);
  }

  /**
   * Yields a batch per chunk once the header is known (the first one even when it is empty, so
   * that header() can stop there). A SourceError raised inside a chunk is thrown after the
   * rows parsed before it were yielded.
   */
  private async *readAll(): AsyncGenerator<CsvBatch, void, undefined> {
    const collector = this.collector;
    let headerAnnounced = false;
    let failure: Error | undefined;
    try {
      for await (const chunk of this.source.stream) {
        try {
          collector.push(asBuffer(chunk));
        } catch (error) {
          failure = asError(error);
        }
        if (collector.header !== undefined) {
          const batch = collector.takeBatch();
          if (!headerAnnounced || hasContent(batch)) {
            headerAnnounced = true;
            yield batch;
          }
        }
        if (failure !== undefined) throw failure;
      }
    } catch (error) {
      if (error === failure) throw error;
      throw readFailure(error, this.name, collector.position());
    }
    try {
      collector.finish();
    } catch (error) {
      failure = asError(error);
    }
    if (collector.header !== undefined) {
      const batch = collector.takeBatch();
      if (!headerAnnounced || hasContent(batch)) yield batch;
    }
    if (failure !== undefined) throw failure;
  }
}

/** Opens a streaming reader over a CSV or TSV source; nothing is read until it is used. */
export function readCsv(source: ByteSource, options: CsvReadOptions = {}): CsvReader {
  return new StreamingCsvReader(source, options);
}
