/**
 * The CSV fast path: a plain line (no quote, no CR but the one of its CRLF) split at the
 * delimiter, with exactly the record, line counters and byte counters csv-parse gives for it.
 * Every other record is csv-parse's: its bytes, up to the line break that ends it, are parsed by
 * csv-parse as a whole input (a record always ends at a line break outside quotes, and what
 * csv-parse makes of bytes does not depend on what comes after that line break); and at
 * anything csv-parse does not read as exactly one record there (a quote still open after a few
 * lines, an error, a record over the size limit) the rest of the input is handed to a
 * streaming csv-parse (CsvRecordEngine), started at that record with its counters set, so that
 * every count and every error is the one csv-parse alone gives.
 *
 * Why: csv-parse walks the input one byte at a time through method calls and a growable field
 * buffer; the 1M-row, 75 MB bench export took it 2.3 s of one thread, and this 0.9 s.
 *
 * The options it mirrors are the ones CsvRecordEngine gives csv-parse: a delimiter of one ASCII
 * byte (other delimiters go to csv-parse whole), record_delimiter CRLF and LF, quote and escape
 * `"`, relax_quotes, relax_column_count, skip_empty_lines, max_record_size, utf8, bom false.
 * What it reads itself:
 * - a line of at most max_record_size bytes without a quote or a CR, ended by an LF, a CRLF or
 *   the end of the input: its fields are what is between the delimiters (csv-parse's record
 *   size is never more than the record's bytes, so such a line never raises
 *   CSV_MAX_RECORD_SIZE). The line is decoded once and then split: the delimiter is an ASCII
 *   byte, which a UTF-8 decoder never takes into a character or into the replacement of a
 *   broken one, so the pieces are what decoding each field gives (csv-parse decodes each field);
 * - empty lines (an LF or a CRLF alone): skipped, counted as csv-parse counts them, including
 *   the one it counts at the end of an input that ends with a line break.
 *
 * test/sources/csv-fast-records.test.ts compares the engine with csv-parse alone on generated
 * and hostile inputs, cut into chunks every way.
 */

const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;

/** The byte of a delimiter the fast path can read; undefined for one left to csv-parse. */
export function fastPathDelimiterByte(delimiter: string): number | undefined {
  if (delimiter.length !== 1) return undefined;
  const code = delimiter.charCodeAt(0);
  if (code >= 0x80 || code === LF || code === CR || code === QUOTE) return undefined;
  return code;
}

/** What csv-parse's counters (its `info`, and the offset of its next byte) are at a record's start. */
export interface CsvParseCounters {
  lines: number;
  emptyLines: number;
  records: number;
  /** info.bytes: where the last record ended (after its line break). */
  bytes: number;
  /** info.bytes_records: the sum of info.bytes at each record. */
  bytesRecords: number;
  invalidFieldLength: number;
  /** The first record's field count (csv-parse compares the others with it). */
  expectedRecordLength: number | undefined;
}

/** The input from the first byte of the record in progress on, for csv-parse to go on with. */
export interface HandOver {
  bytes: Buffer;
  /** Offset of bytes[0] in the whole input. */
  offset: number;
}

/** What csv-parse made of one record's bytes given as a whole input (CsvRecordEngine reads them). */
export interface OneRecord {
  values: string[];
  /** Lines csv-parse counted before it pushed the record (line breaks inside quotes, bare CRs). */
  linesInside: number;
  /** Lines it counted after (the record's line break, or a bare CR that ends the input). */
  linesAfter: number;
}

/**
 * csv-parse on `bytes` as a whole input: the record when they are exactly one, 'quote open'
 * when they end inside a quoted value, undefined for anything else (an error, no record, more).
 */
export type ReadOneRecord = (bytes: Buffer) => OneRecord | 'quote open' | undefined;

/**
 * Whether csv-parse, given input up to `length` (not its end), reads a line break that starts at
 * `at`. It reads a byte only with three more after it (the longest of its look-aheads: a
 * whitespace character it could trim is up to three bytes in UTF-8, a closing quote and CRLF
 * three) and holds back the rest until more comes. The fast path holds back the same, so that
 * each record comes out of the same write() as from csv-parse alone (a reader that waits on a
 * stalled source has handed on exactly the records csv-parse would have); the differential test
 * pins this.
 */
function csvParseTakesLineBreakAt(at: number, length: number): boolean {
  return at + 3 < length;
}

/** How many line breaks inside quotes a record csv-parse reads for the fast path may have (each one more is one more parse of it). */
const MAX_LINES_PER_RECORD = 16;

/** A record scan that stopped without a record: more bytes are needed, or csv-parse must take over. */
const INCOMPLETE = -1;
const TO_CSV_PARSE = -2;

export class CsvFastRecords implements CsvParseCounters {
  lines = 1;
  emptyLines = 0;
  records = 0;
  bytes = 0;
  bytesRecords = 0;
  invalidFieldLength = 0;
  expectedRecordLength: number | undefined;

  /** The record in progress at the end of the last write (a copy), and its offset in the input. */
  private held: Buffer | undefined;
  private heldOffset = 0;
  /** Offset in the input of the buffer being scanned. */
  private bufferOffset = 0;
  /** The last bytes taken were a line break (csv-parse counts one more empty line at the end). */
  private endedWithLineBreak = false;
  private readonly delimiterChar: string;
  private readonly maxRecordBytes: number;

  /**
   * @param delimiter a byte from fastPathDelimiterByte
   * @param maxRecordSize csv-parse's max_record_size (0: no limit)
   * @param readOneRecord csv-parse with the same options, for the records that are not plain lines
   */
  constructor(
    delimiter: number,
    maxRecordSize: number,
    private readonly readOneRecord: ReadOneRecord,
    private readonly onRecord: (record: string[]) => void,
  ) {
    this.delimiterChar = String.fromCharCode(delimiter);
    this.maxRecordBytes = maxRecordSize === 0 ? Number.POSITIVE_INFINITY : maxRecordSize;
  }

  /** Reads the records `chunk` completes; a HandOver when csv-parse must read on from there. */
  write(chunk: Buffer): HandOver | undefined {
    return this.scan(chunk, false);
  }

  /** Reads what is left at the end of the input. */
  end(): HandOver | undefined {
    const handOver = this.scan(undefined, true);
    if (handOver === undefined && this.endedWithLineBreak) this.emptyLines++;
    return handOver;
  }

  private scan(chunk: Buffer | undefined, atEnd: boolean): HandOver | undefined {
    let buf: Buffer;
    if (this.held === undefined) {
      if (chunk === undefined) return undefined;
      buf = chunk;
    } else {
      buf = chunk === undefined ? this.held : Buffer.concat([this.held, chunk]);
      this.bufferOffset = this.heldOffset;
      this.held = undefined;
    }
    const length = buf.length;
    let start = 0;
    while (start < length) {
      const next = this.scanRecord(buf, start, atEnd);
      if (next >= 0) {
        start = next;
        continue;
      }
      const offset = this.bufferOffset + start;
      if (next === TO_CSV_PARSE) return { bytes: buf.subarray(start), offset };
      this.held = Buffer.from(buf.subarray(start));
      this.heldOffset = offset;
      return undefined;
    }
    this.bufferOffset += length;
    return undefined;
  }

  /** One record (or empty line) from `start`: where the next one starts, INCOMPLETE or TO_CSV_PARSE. */
  private scanRecord(buf: Buffer, start: number, atEnd: boolean): number {
    const length = buf.length;
    const lf = buf.indexOf(LF, start);
    if (lf === -1 && !atEnd) return length - start > this.maxRecordBytes ? TO_CSV_PARSE : INCOMPLETE;
    let end = lf === -1 ? length : lf;
    let lineBreak = lf === -1 ? 0 : 1;
    if (lf !== -1 && end > start && buf[end - 1] === CR) {
      end--;
      lineBreak = 2;
    }
    if (!atEnd && !csvParseTakesLineBreakAt(end, length)) return length - start > this.maxRecordBytes ? TO_CSV_PARSE : INCOMPLETE;
    if (end === start) {
      // An empty line (start < length, so there is a line break).
      this.emptyLines++;
      this.lines++;
      this.endedWithLineBreak = true;
      return start + lineBreak;
    }
    if (end - start > this.maxRecordBytes) return TO_CSV_PARSE;
    const line = buf.toString('utf8', start, end);
    if (line.indexOf('"') === -1 && line.indexOf('\r') === -1) {
      this.takeRecord(line.split(this.delimiterChar), end + lineBreak, lineBreak === 0 ? 0 : 1, lineBreak !== 0);
      return end + lineBreak;
    }
    return this.recordByCsvParse(buf, start, end + lineBreak, atEnd);
  }

  /** A record that is not a plain line, read by csv-parse from `start` to the line break that ends it (first tried: the one at `stop`). */
  private recordByCsvParse(buf: Buffer, start: number, stop: number, atEnd: boolean): number {
    const length = buf.length;
    for (let attempt = 1; attempt <= MAX_LINES_PER_RECORD; attempt++) {
      const read = this.readOneRecord(buf.subarray(start, stop));
      if (read === undefined) return TO_CSV_PARSE;
      if (read !== 'quote open') {
        this.lines += read.linesInside;
        this.takeRecord(read.values, stop, read.linesAfter, buf[stop - 1] === LF);
        return stop;
      }
      // The record goes on after this line break, inside a quoted value.
      if (stop === length) return atEnd || stop - start > this.maxRecordBytes ? TO_CSV_PARSE : INCOMPLETE;
      const lf = buf.indexOf(LF, stop);
      if (!atEnd && (lf === -1 || !csvParseTakesLineBreakAt(buf[lf - 1] === CR ? lf - 1 : lf, length))) {
        return length - start > this.maxRecordBytes ? TO_CSV_PARSE : INCOMPLETE;
      }
      stop = lf === -1 ? length : lf + 1;
    }
    return TO_CSV_PARSE;
  }

  /** Counts as csv-parse's __onRecord and __push do, hands the record on, then counts what follows it. */
  private takeRecord(record: string[], next: number, linesAfter: number, endedWithLineBreak: boolean): void {
    if (this.records === 0) this.expectedRecordLength = record.length;
    if (record.length !== this.expectedRecordLength) this.invalidFieldLength++;
    this.records++;
    this.bytes = this.bufferOffset + next;
    this.bytesRecords += this.bytes;
    this.onRecord(record);
    this.lines += linesAfter;
    this.endedWithLineBreak = endedWithLineBreak;
  }
}
