/**
 * What sources yield. Every record carries its position in the input so that any message
 * about it can name the file, the row (or item) and the line.
 */

export type SourceFormat = 'csv' | 'tsv' | 'xml';

/** The `source:` block of a job, resolved (path absolute or an http(s) URL). */
export interface SourceSpec {
  /** An absolute file path or an http:// or https:// URL. */
  path: string;
  /** Inferred from the extension (after a .gz) when absent. */
  format?: SourceFormat | undefined;
  /** CSV only: the field delimiter; detected from the header line when absent. */
  delimiter?: string | undefined;
  /** Text encoding of the file; utf8 by default. */
  encoding?: 'utf8' | 'latin1' | undefined;
}

/** A source opened for reading: decompressed bytes plus what progress reporting needs. */
export interface OpenedSource {
  /** File path or URL, for messages. */
  name: string;
  format: SourceFormat;
  /** Decompressed bytes of the input. */
  stream: NodeJS.ReadableStream & AsyncIterable<Buffer>;
  /** Size of the raw input in bytes (compressed size for .gz), when known. */
  sizeBytes: number | undefined;
  /** Raw (compressed, for .gz) bytes consumed so far; with sizeBytes it gives progress. */
  bytesRead(): number;
  /** CSV/TSV: the delimiter of the spec (SourceSpec.delimiter), when one was given. */
  delimiter?: string | undefined;
  /** The text encoding of the spec (SourceSpec.encoding), when one was given. */
  encoding?: 'utf8' | 'latin1' | undefined;
  /** A FIFO or a device: it can be read only once (a second open waits for another writer). */
  readOnce?: boolean | undefined;
}

/** One data row of a CSV/TSV file, values in header order. */
export interface CsvRow {
  /** 1-based number of the data row (the header is not counted). */
  row: number;
  /** 1-based physical line where the row starts (a quoted field may span lines). */
  line: number;
  values: string[];
}

/** A row that could not be read (ragged, bad quoting, invalid text encoding). */
export interface RowReject {
  row: number;
  line: number;
  reason: string;
}

/** CSV rows come in batches to keep per-row overhead off the hot path. */
export interface CsvBatch {
  rows: CsvRow[];
  rejects: RowReject[];
}

/** One product of a feed (XML item/entry or CSV/TSV row), attributes by their bare name. */
export interface FeedItem {
  /** 1-based item (or data row) number. */
  row: number;
  /** 1-based line where the item starts. */
  line: number;
  /**
   * Attribute name (namespace prefix removed: g:price -> price) to value. A repeated element
   * (additional_image_link) is an array. Values are always strings, never numbers.
   */
  fields: Record<string, string | string[]>;
}

export interface FeedBatch {
  items: FeedItem[];
  rejects: RowReject[];
}
