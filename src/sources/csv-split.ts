/**
 * Where to cut a CSV file so that several threads can each read a part: at record
 * boundaries, never inside a quoted value. The bytes before each cut are scanned once with
 * the quoting rules the reader uses (csv-parse with relax_quotes: a field that starts with a
 * quote is quoted; "" inside it is a quote; a quote followed by the delimiter, a line break or
 * the end closes it; a closing quote followed by anything else turns the field into an
 * unquoted one after all, its quotes characters ("a"b is the value "a"b); a quote inside an
 * unquoted field is a character), so the cut is where the reader itself would see a record end.
 *
 * Only for local, uncompressed files large enough to be worth it. The reader of each part
 * also checks that its part ends cleanly at the cut (no quote left open); the caller reads
 * sequentially when it does not.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { sniffContent } from './content-sniff.js';
import { detectDelimiter } from './csv-delimiter.js';
import { isBlankLine, sepLineDelimiter } from './csv-preamble.js';

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;
const BLOCK = 1 << 20;

export interface CsvPart {
  /** Byte range [start, end) of the file. */
  start: number;
  end: number;
  /** Line breaks before `start`: the part's first line is linesBefore + 1. */
  linesBefore: number;
}

export interface CsvSplit {
  /** The header record's bytes, terminator included (BOM too, when the file has one). */
  headerBytes: Buffer;
  delimiter: string;
  parts: CsvPart[];
}

type State = 'fieldStart' | 'unquoted' | 'quoted' | 'quoteInQuoted';

/**
 * Where the header line starts, past the blank lines and a `sep=` line before it (the rules of
 * the reader: csv-preamble.ts), with the LFs before it and the delimiter the `sep=` line names;
 * undefined when the first block does not hold the whole preamble and the header line.
 */
function headerLineAfterPreamble(head: Buffer, from: number): { start: number; headerLine: Buffer; lineBreaks: number; sep: string | undefined } | undefined {
  let sep: string | undefined;
  let start = from;
  let lineBreaks = 0;
  let first = true;
  for (;;) {
    const lf = head.indexOf(LF, start);
    if (lf < 0) return undefined;
    const line = head.subarray(start, head[lf - 1] === CR ? lf - 1 : lf);
    if (!isBlankLine(line)) {
      const named = first ? sepLineDelimiter(line) : undefined;
      if (named === undefined) return { start, headerLine: line, lineBreaks, sep };
      sep = named;
      first = false;
    }
    start = lf + 1;
    lineBreaks++;
  }
}

/** A record (its bytes) whose cells are all blank: what the reader skips. */
function isEmptyRecord(record: Buffer, delimiter: string): boolean {
  return record.toString('utf8').split(delimiter).join('').replaceAll('"', '').trim() === '';
}

/** Feeds bytes through the quoting rules; reports each record end outside quotes. */
class QuoteScanner {
  private state: State = 'fieldStart';
  lineBreaks = 0;

  constructor(private readonly delimiter: number) {}

  /**
   * Scans `bytes` (which start at file offset `offset`); calls `onRecordEnd(offset just after
   * the line feed)` at every line feed that ends a record. Returns early when it returns true.
   */
  scan(bytes: Buffer, offset: number, onRecordEnd: (after: number) => boolean): boolean {
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i];
      if (b === LF) this.lineBreaks++;
      switch (this.state) {
        case 'quoted':
          if (b === QUOTE) this.state = 'quoteInQuoted';
          break;
        case 'quoteInQuoted':
          // After a quote inside quotes: "" is an escaped quote; delimiter / line end closes.
          if (b === QUOTE) this.state = 'quoted';
          else if (b === this.delimiter) this.state = 'fieldStart';
          else if (b === LF) {
            this.state = 'fieldStart';
            if (onRecordEnd(offset + i + 1)) return true;
          } else if (b === CR) {
            // CRLF: the LF that follows ends the record.
            this.state = 'unquoted';
          } else this.state = 'unquoted'; // relax_quotes: the field was not a quoted one after all
          break;
        default:
          if (b === LF) {
            this.state = 'fieldStart';
            if (onRecordEnd(offset + i + 1)) return true;
          } else if (b === this.delimiter) this.state = 'fieldStart';
          else if (b === QUOTE && this.state === 'fieldStart') this.state = 'quoted';
          else if (b !== CR) this.state = 'unquoted';
      }
    }
    return false;
  }
}

export interface SplitOptions {
  parts: number;
  /** Share of the file for each part but the last (the default splits evenly). */
  shares?: readonly number[] | undefined;
  delimiter?: string | undefined;
  preferTab: boolean;
  /** Smallest file worth splitting. */
  minBytes: number;
  /** The file already open (left open): the parts are then read from it, whatever the path names by then. */
  fd?: number | undefined;
}

/** Cuts a local uncompressed CSV file into parts; undefined when it should be read as one. */
export function splitCsvFile(path: string, options: SplitOptions): CsvSplit | undefined {
  const fd = options.fd ?? openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    if (options.parts < 2 || size < options.minBytes) return undefined;
    const block = Buffer.allocUnsafe(BLOCK);
    const firstRead = readSync(fd, block, 0, BLOCK, 0);
    const head = block.subarray(0, firstRead);
    const kind = sniffContent(head);
    if (kind === 'gzip' || kind === 'utf16') return undefined; // decompressed or transcoded as one stream
    const bom = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
    const preamble = headerLineAfterPreamble(head, bom);
    if (preamble === undefined) return undefined;
    if (options.delimiter !== undefined && preamble.sep !== undefined && options.delimiter !== preamble.sep) return undefined; // the reader says so
    const delimiter = options.delimiter ?? preamble.sep ?? detectDelimiter(preamble.headerLine, options.preferTab);
    if (delimiter.length !== 1) return undefined;
    const scanner = new QuoteScanner(delimiter.charCodeAt(0));
    scanner.lineBreaks = preamble.lineBreaks;

    let acc = 0;
    const targets = Array.from({ length: options.parts - 1 }, (_, k) => {
      acc += options.shares?.[k] ?? 1 / options.parts;
      return Math.floor(acc * size);
    });
    const cuts: { at: number; linesBefore: number }[] = [];
    let headerEnd = -1;
    let recordStart = preamble.start;
    let offset = preamble.start;
    let buffer = head.subarray(preamble.start);
    for (;;) {
      const done = scanner.scan(buffer, offset, (after) => {
        if (headerEnd < 0) {
          // A record of empty cells (",,,,") before the header is skipped by the reader too.
          if (recordStart >= offset && isEmptyRecord(buffer.subarray(recordStart - offset, after - offset), delimiter)) recordStart = after;
          else headerEnd = after;
          return false;
        }
        const target = targets[cuts.length];
        if (target !== undefined && after >= target) cuts.push({ at: after, linesBefore: scanner.lineBreaks });
        return cuts.length === targets.length;
      });
      offset += buffer.length;
      if (done || offset >= size) break;
      const n = readSync(fd, block, 0, BLOCK, offset);
      if (n === 0) break;
      buffer = block.subarray(0, n);
    }
    if (headerEnd < 0 || cuts.length !== targets.length) return undefined;
    const headerBytes = Buffer.alloc(headerEnd);
    readSync(fd, headerBytes, 0, headerEnd, 0);
    const parts: CsvPart[] = [];
    let start = 0;
    let linesBefore = 0;
    for (const cut of cuts) {
      if (cut.at >= size) break;
      parts.push({ start, end: cut.at, linesBefore });
      start = cut.at;
      linesBefore = cut.linesBefore;
    }
    parts.push({ start, end: size, linesBefore });
    return parts.length < 2 ? undefined : { headerBytes, delimiter, parts };
  } finally {
    if (options.fd === undefined) closeSync(fd);
  }
}
