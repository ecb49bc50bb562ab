/**
 * One call from a job's `source:` to its records, for the runners: openSource() and the
 * reader of the source's kind, with what progress reporting needs alongside.
 *
 *   const reader = await readCsvSource(job.source, { signal });   // header already read
 *   for await (const batch of reader.batches) { ... reader.bytesRead() / reader.sizeBytes }
 *
 * Both resolve only once the source is open (and, for CSV, its header read), so that a missing
 * file, a refused URL or a broken header fails before any work starts. A caller that stops
 * early calls close() (breaking out of `for await` over batches also releases the input).
 */
import { SourceError } from '../errors.js';
import { readCsv, type CsvReadOptions } from './csv.js';
import { readFeed, type FeedReadOptions } from './read-feed.js';
import { openSource, type OpenSourceOptions } from './open.js';
import type { CsvBatch, FeedBatch, OpenedSource, SourceFormat, SourceSpec } from './types.js';

/** Releases the input of a source that will not be read (or no longer). */
function release(opened: OpenedSource): void {
  const stream: unknown = opened.stream;
  if (typeof stream === 'object' && stream !== null && 'destroy' in stream && typeof stream.destroy === 'function') {
    (stream as { destroy(): void }).destroy();
  }
}

interface SourceProgress {
  /** File path or URL (credentials and query values masked), for messages. */
  readonly name: string;
  readonly format: SourceFormat;
  /** Raw size in bytes (compressed size for gzip), when known. */
  readonly sizeBytes: number | undefined;
  /** Raw bytes consumed so far. */
  bytesRead(): number;
  /** Stops reading and releases the input. */
  close(): Promise<void>;
}

export interface CsvSourceReader extends SourceProgress {
  /** Column names, trimmed. */
  readonly header: string[];
  /** The delimiter in use (given or detected). */
  readonly delimiter: string;
  readonly batches: AsyncIterable<CsvBatch>;
}

export interface FeedSourceReader extends SourceProgress {
  readonly batches: AsyncIterable<FeedBatch>;
}

/** Opens a CSV/TSV source (a CRM export) and reads its header. */
export async function readCsvSource(spec: SourceSpec, options: OpenSourceOptions & CsvReadOptions = {}): Promise<CsvSourceReader> {
  const opened = await openSource(spec, options);
  if (opened.format === 'xml') {
    release(opened);
    throw new SourceError(`${opened.name} is an XML feed; this source must be a CSV or TSV file`, {
      hint: 'set source.format to csv or tsv if the file is one despite its name',
    });
  }
  const reader = readCsv(opened, options);
  let header: string[];
  try {
    header = await reader.header();
  } catch (error) {
    await reader.close();
    throw error;
  }
  return {
    name: opened.name,
    format: opened.format,
    sizeBytes: opened.sizeBytes,
    bytesRead: () => opened.bytesRead(),
    close: () => reader.close(),
    header,
    delimiter: reader.delimiter() ?? ',',
    batches: reader,
  };
}

/** Opens a product feed (XML, CSV or TSV) for reading as FeedItems. */
export async function readFeedSource(spec: SourceSpec, options: OpenSourceOptions & FeedReadOptions = {}): Promise<FeedSourceReader> {
  const opened = await openSource(spec, options);
  const batches = readFeed(opened, options);
  return {
    name: opened.name,
    format: opened.format,
    sizeBytes: opened.sizeBytes,
    bytesRead: () => opened.bytesRead(),
    close: async () => {
      await batches.return(undefined);
      release(opened);
    },
    batches,
  };
}
