/**
 * Keeps overlong lines out of the CSV parser. A line longer than the limit (a 50 MB line of a
 * broken export, a binary blob) is dropped as it streams past, never held in memory, and a
 * short marker line takes its place, so that the parser keeps its line count and the reader can
 * reject that one row and go on with the next.
 *
 * Chunks are passed on as complete lines (zero-copy slices); the partial line at the end of a
 * chunk is held back until its end is seen or it grows past the limit.
 */

/** Stands in for a dropped line. NUL bytes: no real CSV cell holds this. */
export const OVERLONG_LINE_MARKER = '\u0000adsync:overlong-line\u0000';

const LF = 0x0a;
const CR = 0x0d;
const MARKER_LF = Buffer.from(`${OVERLONG_LINE_MARKER}\n`, 'latin1');
const MARKER_CRLF = Buffer.from(`${OVERLONG_LINE_MARKER}\r\n`, 'latin1');
const MARKER_ALONE = Buffer.from(OVERLONG_LINE_MARKER, 'latin1');
/** Held-back pieces are merged when there are more than this many (tiny chunks). */
const MAX_HELD_PIECES = 64;

export type PieceSink = (piece: Buffer) => void;

export class LongLineGuard {
  /** Byte lengths of dropped lines, oldest first; the reader takes one per marker it meets. */
  readonly droppedLineLengths: number[] = [];
  private held: Buffer[] = [];
  private heldBytes = 0;
  private skipping = false;
  private skippedBytes = 0;
  private skippedEndsWithCr = false;

  constructor(private readonly maxLineBytes: number) {}

  push(chunk: Buffer, emit: PieceSink): void {
    let start = 0;
    if (this.skipping) {
      const newline = chunk.indexOf(LF);
      if (newline === -1) {
        this.skip(chunk);
        return;
      }
      const endsWithCr = newline > 0 ? chunk[newline - 1] === CR : this.skippedEndsWithCr;
      this.skippedBytes += newline;
      this.finishSkipping(endsWithCr, true, emit);
      start = newline + 1;
    } else if (this.heldBytes > 0) {
      const newline = chunk.indexOf(LF);
      if (newline === -1) {
        this.hold(chunk);
        return;
      }
      if (this.heldBytes + newline > this.maxLineBytes) {
        const endsWithCr = newline > 0 ? chunk[newline - 1] === CR : this.heldEndsWithCr();
        this.skippedBytes = this.heldBytes + newline;
        this.dropHeld();
        this.finishSkipping(endsWithCr, true, emit);
      } else {
        for (const piece of this.held) emit(piece);
        this.dropHeld();
        emit(chunk.subarray(0, newline + 1));
      }
      start = newline + 1;
    }
    const lastNewline = chunk.lastIndexOf(LF);
    if (lastNewline >= start) {
      if (lastNewline + 1 - start > this.maxLineBytes) this.emitLinesOneByOne(chunk, start, lastNewline, emit);
      else emit(start === 0 && lastNewline === chunk.length - 1 ? chunk : chunk.subarray(start, lastNewline + 1));
      start = lastNewline + 1;
    }
    if (start < chunk.length) this.hold(chunk.subarray(start));
  }

  /** Call at the end of the input: passes on the last line (which has no line break). */
  end(emit: PieceSink): void {
    if (this.skipping) {
      this.finishSkipping(false, false, emit);
      return;
    }
    for (const piece of this.held) emit(piece);
    this.dropHeld();
  }

  /** A region too large to be one line: checks each line of chunk[from..lastNewline]. */
  private emitLinesOneByOne(chunk: Buffer, from: number, lastNewline: number, emit: PieceSink): void {
    let emitFrom = from;
    let lineStart = from;
    while (lineStart <= lastNewline) {
      const newline = chunk.indexOf(LF, lineStart);
      if (newline - lineStart > this.maxLineBytes) {
        if (lineStart > emitFrom) emit(chunk.subarray(emitFrom, lineStart));
        this.skippedBytes = newline - lineStart;
        this.finishSkipping(newline > lineStart && chunk[newline - 1] === CR, true, emit);
        emitFrom = newline + 1;
      }
      lineStart = newline + 1;
    }
    if (emitFrom <= lastNewline) emit(chunk.subarray(emitFrom, lastNewline + 1));
  }

  private hold(piece: Buffer): void {
    if (this.heldBytes + piece.length > this.maxLineBytes) {
      this.skippedBytes = this.heldBytes;
      this.dropHeld();
      this.skip(piece);
      return;
    }
    this.held.push(piece);
    this.heldBytes += piece.length;
    if (this.held.length > MAX_HELD_PIECES) this.held = [Buffer.concat(this.held)];
  }

  private skip(piece: Buffer): void {
    this.skipping = true;
    this.skippedBytes += piece.length;
    if (piece.length > 0) this.skippedEndsWithCr = piece[piece.length - 1] === CR;
  }

  private heldEndsWithCr(): boolean {
    const last = this.held[this.held.length - 1];
    return last !== undefined && last[last.length - 1] === CR;
  }

  private dropHeld(): void {
    this.held = [];
    this.heldBytes = 0;
  }

  private finishSkipping(endsWithCr: boolean, lineBreak: boolean, emit: PieceSink): void {
    this.droppedLineLengths.push(endsWithCr ? this.skippedBytes - 1 : this.skippedBytes);
    emit(!lineBreak ? MARKER_ALONE : endsWithCr ? MARKER_CRLF : MARKER_LF);
    this.skipping = false;
    this.skippedBytes = 0;
    this.skippedEndsWithCr = false;
  }
}
