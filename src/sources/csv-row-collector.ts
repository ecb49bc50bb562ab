/**
 * The synchronous core of the CSV reader: bytes in, header and batches of rows and rejects out.
 *
 * Per chunk: the first bytes are sniffed (a workbook or gzip data is refused, a UTF-8 BOM is
 * dropped), the chunk is checked for UTF-8 (or decoded from Windows-1252 for encoding latin1),
 * overlong lines are cut out (LongLineGuard), the delimiter is detected from the header line,
 * and csv-parse turns the bytes into records. Each record gets its row number and the line it
 * starts on, and is checked: field count against the header, an overlong line, invalid UTF-8.
 *
 * Line numbers: csv-parse's own line counter counts CRLF twice inside quoted values, so the
 * collector keeps its own count. A record whose csv-parse count shows no line break inside it
 * (nearly all of them) costs nothing more; for the others the LFs in the values are counted.
 */
import { ConfigError, SourceError } from '../errors.js';
import { detectDelimiter } from './csv-delimiter.js';
import { CsvRecordEngine } from './csv-parse-engine.js';
import { isBlankLine, sepLineDelimiter } from './csv-preamble.js';
import { describeNonText, SNIFF_BYTES, sniffContent } from './content-sniff.js';
import { DeclaredLatin1Check } from './declared-latin1-check.js';
import { LongLineGuard, OVERLONG_LINE_MARKER } from './long-line-guard.js';
import type { CsvBatch, CsvRow, RowReject } from './types.js';
import { Utf16Transcoder } from './utf16-transcoder.js';
import { Utf8Validator } from './utf8-validator.js';
import { decodeWindows1252 } from './windows-1252.js';

export interface CsvCollectorSettings {
  name: string;
  /** The delimiter to use; detected from the header line when undefined. */
  delimiter: string | undefined;
  /** Detection prefers the tab (TSV sources). */
  preferTab: boolean;
  encoding: 'utf8' | 'latin1';
  allowRepeatedColumns: boolean;
  allowUnnamedColumns: boolean;
  maxRowBytes: number;
}

const LF = 0x0a;
const CR = 0x0d;
const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const REPLACEMENT_CHARACTER = '\ufffd';
const LATIN1_HINT = 'is the file Latin-1? set source.encoding: latin1';

/** Every value blank: a line of spaces, or a spreadsheet's empty row (",,,,"), which holds nothing. */
function isBlankRecord(values: readonly string[]): boolean {
  for (const value of values) if (value !== '' && value.trim() !== '') return false;
  return true;
}

function countLineFeeds(values: readonly string[]): number {
  let count = 0;
  for (const value of values) {
    let at = value.indexOf('\n');
    while (at !== -1) {
      count++;
      at = value.indexOf('\n', at + 1);
    }
  }
  return count;
}

function includesInAny(values: readonly string[], text: string): boolean {
  for (const value of values) if (value.includes(text)) return true;
  return false;
}

function describeColumns(positions: readonly number[]): string {
  return `${positions.length === 1 ? 'column' : 'columns'} ${positions.join(', ')}`;
}

/** The delimiter of a setting, or a ConfigError for one the parser cannot use. */
export function checkedDelimiter(delimiter: string | undefined): string | undefined {
  if (delimiter === undefined) return undefined;
  if (delimiter === 'tab' || delimiter === '\\t') return '\t';
  if (delimiter === '' || /["\r\n]/.test(delimiter)) {
    throw new ConfigError(`source.delimiter ${JSON.stringify(delimiter)} cannot be used: it must be non-empty and hold no double quote or line break`);
  }
  return delimiter;
}

export class CsvRowCollector {
  rows: CsvRow[] = [];
  rejects: RowReject[] = [];
  /** Column names (trimmed), once the header row has been read. */
  header: string[] | undefined;
  /** The delimiter in use, once known. */
  delimiter: string | undefined;

  private readonly name: string;
  private readonly guard: LongLineGuard;
  private readonly validator = new Utf8Validator();
  /** encoding latin1: whether the file is UTF-8 after all. */
  private readonly latin1Check: DeclaredLatin1Check | undefined;
  /** A file that starts with a UTF-16 byte order mark (whatever source.encoding says). */
  private utf16: Utf16Transcoder | undefined;
  private engine: CsvRecordEngine | undefined;
  private sniffed = false;
  private sniffHead: Buffer[] = [];
  private sniffHeadBytes = 0;
  private headerPieces: Buffer[] | undefined = [];
  /** The delimiter a `sep=` line before the header named. */
  private sepDelimiter: string | undefined;
  /** Set once a chunk was not UTF-8: from then on values are searched for U+FFFD. */
  private checkValuesForBadBytes = false;
  private columnCount = 0;
  /** The header record's first cell as read (untrimmed), and the line the header starts on. */
  private headerFirstCell: string | undefined;
  private headerLine = 0;
  private rowNumber = 0;
  private lastEndLine = 0;
  private lastEngineLines = 0;
  private lastEmptyLines = 0;

  constructor(private readonly settings: CsvCollectorSettings) {
    this.name = settings.name;
    this.guard = new LongLineGuard(settings.maxRowBytes);
    this.delimiter = settings.delimiter;
    this.latin1Check = settings.encoding === 'latin1' ? new DeclaredLatin1Check(settings.name) : undefined;
  }

  /** Where reading has got to, for messages about a read that failed. */
  position(): string {
    return this.lastEndLine === 0 ? 'at the start' : `after line ${this.lastEndLine}`;
  }

  /** Rows and rejects collected since the last call. */
  takeBatch(): CsvBatch {
    const batch = { rows: this.rows, rejects: this.rejects };
    this.rows = [];
    this.rejects = [];
    return batch;
  }

  /** Feeds the next chunk of the input. Throws SourceError when the file cannot be read on. */
  push(chunk: Buffer): void {
    if (!this.sniffed) {
      this.sniffHead.push(chunk);
      this.sniffHeadBytes += chunk.length;
      if (this.sniffHeadBytes < SNIFF_BYTES) return;
      const head = Buffer.concat(this.sniffHead);
      this.sniffHead = [];
      this.pushText(this.afterSniff(head));
      return;
    }
    this.pushText(chunk);
  }

  /** Call at the end of the input. Throws SourceError for an empty file or an unclosed quote. */
  finish(): void {
    if (!this.sniffed) this.pushText(this.afterSniff(Buffer.concat(this.sniffHead)));
    if (this.utf16 !== undefined) {
      const rest = this.utf16.end();
      if (this.utf16.sawInvalid) this.checkValuesForBadBytes = true;
      this.guard.push(rest, this.acceptPiece);
    } else if (this.settings.encoding === 'utf8' && !this.validator.end()) this.checkValuesForBadBytes = true;
    this.latin1Check?.end();
    this.guard.end(this.acceptPiece);
    if (this.engine === undefined) this.startEngineFromHeldLines(true);
    if (this.engine !== undefined) {
      const error = this.engine.end();
      if (error !== undefined) throw this.parseFailure(error);
    }
    if (this.header === undefined) {
      throw new SourceError(`${this.name} is empty (no header row)`, { hint: 'the first line of a CSV file must name its columns' });
    }
  }

  private afterSniff(head: Buffer): Buffer {
    this.sniffed = true;
    const kind = sniffContent(head);
    if (kind === 'utf16') {
      // Excel's "Unicode Text": read through a transcoder to UTF-8 (pushText), BOM and all.
      this.utf16 = new Utf16Transcoder(head[0] === 0xfe);
      return head;
    }
    const problem = describeNonText(kind);
    if (problem !== undefined) throw new SourceError(`${this.name} ${problem}`);
    this.refuseOldMacLineBreaks(head.subarray(0, SNIFF_BYTES));
    return head.subarray(0, 3).equals(UTF8_BOM) ? head.subarray(3) : head;
  }

  /**
   * CR-only line breaks (old Mac): every row would run into the next. Told from the first bytes,
   * and from the header record (takeHeader) when it is longer than they are.
   */
  private refuseOldMacLineBreaks(window: Buffer): void {
    if (window.indexOf(LF) !== -1) return;
    const cr = window.indexOf(CR);
    if (cr !== -1 && cr < window.length - 1) throw this.oldMacLineBreaks();
  }

  private oldMacLineBreaks(): SourceError {
    return new SourceError(`${this.name} uses old Mac line breaks (CR only)`, { hint: 'save it with Windows (CRLF) or Unix (LF) line breaks' });
  }

  private pushText(chunk: Buffer): void {
    let bytes = chunk;
    if (this.utf16 !== undefined) {
      bytes = this.utf16.push(chunk);
      if (this.utf16.sawInvalid) this.checkValuesForBadBytes = true;
    } else if (this.latin1Check !== undefined) {
      this.latin1Check.check(chunk);
      bytes = Buffer.from(decodeWindows1252(chunk), 'utf8');
    } else if (!this.checkValuesForBadBytes && !this.validator.check(chunk)) this.checkValuesForBadBytes = true;
    this.guard.push(bytes, this.acceptPiece);
  }

  private readonly acceptPiece = (piece: Buffer): void => {
    if (this.engine === undefined) {
      this.headerPieces?.push(piece);
      this.startEngineFromHeldLines(false);
      return;
    }
    const error = this.engine.write(piece);
    if (error !== undefined) throw this.parseFailure(error);
  };

  /**
   * Starts the parser once the first non-blank line is complete (or the input ended): with the
   * delimiter of a `sep=` line (the line itself is then read as an empty one), else the one
   * given, else the one detected from that line, the header line.
   */
  private startEngineFromHeldLines(atEnd: boolean): void {
    const pieces = this.headerPieces ?? [];
    let held = pieces.length === 1 ? (pieces[0] ?? Buffer.alloc(0)) : Buffer.concat(pieces);
    const firstLine = this.firstNonBlankLine(held, atEnd);
    if (firstLine === undefined) {
      this.headerPieces = [held];
      return;
    }
    if (firstLine === 'none') return; // only blank lines: finish() reports the empty file
    const sep = sepLineDelimiter(held.subarray(firstLine.start, firstLine.end));
    let delimiter = this.sepDelimiter ?? this.settings.delimiter;
    if (sep !== undefined) {
      if (delimiter !== undefined && delimiter !== sep) {
        throw new ConfigError(
          `${this.name} line ${firstLine.number}: the file says its delimiter is ${JSON.stringify(sep)} (sep=${sep}), but source.delimiter is ${JSON.stringify(delimiter)}`,
          { hint: `remove source.delimiter from the job file (or set it to ${JSON.stringify(sep)}) if the file is right` },
        );
      }
      delimiter = this.sepDelimiter = sep;
      // Its bytes go, its line break stays: the parser skips it as an empty line and counts it.
      const lineBreak = held[firstLine.end - 1] === CR ? firstLine.end - 1 : firstLine.end;
      held = Buffer.concat([held.subarray(0, firstLine.start), held.subarray(lineBreak)]);
    }
    delimiter ??= detectDelimiter(held.subarray(firstLine.start, firstLine.end), this.settings.preferTab);
    this.delimiter = delimiter;
    this.startEngine(delimiter);
    this.acceptPiece(held);
  }

  /**
   * The first line of `held` that is not blank (start, end without its LF, and its 1-based
   * number in the file); undefined when it is not complete yet, 'none' at the end of the input
   * without one.
   */
  private firstNonBlankLine(held: Buffer, atEnd: boolean): { start: number; end: number; number: number } | 'none' | undefined {
    let lineStart = 0;
    for (let number = 1; ; number++) {
      const newline = held.indexOf(LF, lineStart);
      if (newline === -1 && !atEnd) return undefined;
      const end = newline === -1 ? held.length : newline;
      if (!isBlankLine(held.subarray(lineStart, end))) return { start: lineStart, end, number };
      if (newline === -1) return 'none';
      lineStart = newline + 1;
    }
  }

  private startEngine(delimiter: string): void {
    this.headerPieces = undefined;
    this.engine = new CsvRecordEngine({ delimiter, maxRecordChars: this.settings.maxRowBytes }, this.acceptRecord);
  }

  /** The line the record being parsed now started on (for errors raised inside it). */
  private pendingRecordLine(): number {
    const emptyLines = this.engine?.emptyLines ?? 0;
    return this.lastEndLine + 1 + (emptyLines - this.lastEmptyLines);
  }

  private parseFailure(error: Error): SourceError {
    if (error instanceof SourceError) return error;
    const line = this.pendingRecordLine();
    const what = this.header === undefined ? 'the header row' : `row ${this.rowNumber + 1}`;
    const code = (error as { code?: unknown }).code;
    if (code === 'CSV_QUOTE_NOT_CLOSED') {
      return new SourceError(`${this.name} line ${line}: a quote opened in ${what} is never closed (the file ends inside the quoted value)`, {
        cause: error,
        hint: 'a value that starts with a double quote must end with one; write a quote inside a quoted value as ""',
      });
    }
    if (code === 'CSV_MAX_RECORD_SIZE') {
      return new SourceError(
        `${this.name} line ${line}: ${what} runs past ${this.settings.maxRowBytes} bytes inside a quoted value; is a quote never closed?`,
        { cause: error, hint: 'a value that starts with a double quote must end with one; write a quote inside a quoted value as ""' },
      );
    }
    return new SourceError(`${this.name} line ${line}: cannot parse ${what}: ${error.message}`, { cause: error });
  }

  /** Called by csv-parse for every record, synchronously. */
  private readonly acceptRecord = (values: string[]): void => {
    const engine = this.engine;
    if (engine === undefined) return;
    const engineLines = engine.lines;
    const emptyLines = engine.emptyLines;
    const skippedEmpty = emptyLines - this.lastEmptyLines;
    const line = this.lastEndLine + 1 + skippedEmpty;
    // csv-parse's count moved by one per line: no line break inside this record.
    const plain = engineLines - this.lastEngineLines - skippedEmpty === 1;
    this.lastEndLine = plain ? line : line + countLineFeeds(values);
    this.lastEngineLines = engineLines;
    this.lastEmptyLines = emptyLines;

    if (isBlankRecord(values)) return; // a line of spaces, or of delimiters only (a spreadsheet's empty row)
    if (this.header === undefined) {
      this.takeHeader(values, line);
      return;
    }
    const row = ++this.rowNumber;
    if (this.guard.droppedLineLengths.length > 0 && includesInAny(values, OVERLONG_LINE_MARKER)) {
      const length = this.guard.droppedLineLengths.shift() ?? 0;
      this.rejects.push({ row, line, reason: `row is longer than ${this.settings.maxRowBytes} bytes (a line of ${length} bytes); skipped` });
      return;
    }
    if (values.length !== this.columnCount) {
      this.rejects.push({ row, line, reason: `row has ${values.length} ${values.length === 1 ? 'field' : 'fields'}, header has ${this.columnCount}` });
      return;
    }
    if (this.checkValuesForBadBytes && includesInAny(values, REPLACEMENT_CHARACTER)) {
      this.rejects.push({ row, line, reason: this.utf16 === undefined ? `row contains bytes that are not UTF-8 (${LATIN1_HINT})` : 'row contains bytes that are not UTF-16 (a broken character)' });
      return;
    }
    // One comparison per row; the whole row only when its first cell is the header's.
    if (values[0] === this.headerFirstCell && this.repeatsHeader(values)) {
      this.rejects.push({
        row,
        line,
        reason: `row repeats the header row (line ${this.headerLine}): two exports joined into one file? Remove the repeated header (and any rows that should not be there)`,
      });
      return;
    }
    this.rows.push({ row, line, values });
  };

  /** Every cell of the row is the header's name of its column. */
  private repeatsHeader(values: readonly string[]): boolean {
    const header = this.header ?? [];
    for (let i = 0; i < values.length; i++) if ((values[i] ?? '').trim() !== header[i]) return false;
    return true;
  }

  private takeHeader(values: string[], line: number): void {
    const at = `${this.name} line ${line}`;
    if (includesInAny(values, OVERLONG_LINE_MARKER)) {
      throw new SourceError(`${at}: the header line is longer than ${this.settings.maxRowBytes} bytes; is this a CSV file?`);
    }
    // A CR inside a header record without LF: the rows that follow it are in it too (a wide
    // header of an old Mac file, past the first bytes looked at). It read as a header of every
    // cell and no row. A quoted header cell with a CRLF line break in it is not that.
    if (includesInAny(values, '\r') && !includesInAny(values, '\n')) throw this.oldMacLineBreaks();
    if (this.checkValuesForBadBytes && includesInAny(values, REPLACEMENT_CHARACTER)) {
      throw new SourceError(`${at}: the header row contains bytes that are not UTF-8`, { hint: LATIN1_HINT });
    }
    const names = values.map((value) => value.trim());
    const unnamed: number[] = [];
    const positions = new Map<string, number[]>();
    names.forEach((name, index) => {
      if (name === '') {
        unnamed.push(index + 1);
        return;
      }
      const seen = positions.get(name);
      if (seen === undefined) positions.set(name, [index + 1]);
      else seen.push(index + 1);
    });
    if (unnamed.length > 0 && !this.settings.allowUnnamedColumns) {
      throw new SourceError(`${at}: the header row has no name for ${describeColumns(unnamed)}`, {
        hint: 'name every column, or delete the unnamed ones',
      });
    }
    if (!this.settings.allowRepeatedColumns) {
      const repeated = [...positions].filter(([, where]) => where.length > 1);
      if (repeated.length > 0) {
        const list = repeated.map(([name, where]) => `${JSON.stringify(name)} (${describeColumns(where)})`).join(', ');
        throw new SourceError(`${at}: the header row names a column more than once: ${list}`, { hint: 'give every column its own name' });
      }
    }
    this.header = names;
    this.headerFirstCell = values[0];
    this.headerLine = line;
    this.columnCount = names.length;
  }
}
