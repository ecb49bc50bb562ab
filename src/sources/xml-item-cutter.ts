/**
 * Finds the items (<item> and <entry> elements, any prefix) of an XML feed in its bytes
 * without parsing them: just enough of XML's syntax to know where each item starts and ends,
 * skipping what may hide a "<" or ">" (comments, CDATA sections, processing instructions,
 * quoted attribute values, a DOCTYPE without internal subset).
 *
 * It decides nothing about well-formedness: the skeleton parser (the feed without its items)
 * and the item parser (each item on its own) check every byte, and any disagreement with
 * them ends the cutting. Whatever the cutter does not understand with certainty (any other
 * "<!", a DOCTYPE with an internal subset, an item or a construct larger than the limits, a
 * negative depth) is a "doubt": it stops, and the caller reads the rest of the feed with the
 * full parser (xml-feed.ts).
 *
 * Works on bytes of an ASCII-compatible encoding (UTF-8, Windows-1252): every byte it looks
 * for is ASCII, never part of a multi-byte character, so pieces are cut at character borders.
 *
 * What is an item follows xml-item-collector.ts: an element whose local name (after the
 * first ":") is item or entry, not the root, not inside another item.
 */

export type CutPiece =
  /** Bytes between items (the header and footer included): the feed's skeleton. */
  | { kind: 'gap'; bytes: Buffer }
  /**
   * One item, from "<" of its start tag to ">" of its end tag; tagEnd: offset of the ">" of its
   * start tag; depth: elements open around it.
   */
  | { kind: 'item'; bytes: Buffer; tagEnd: number; depth: number }
  /** The cutter cannot go on: the rest of the feed needs the full parser. */
  | { kind: 'doubt'; reason: string };

export interface CutterLimits {
  /** Largest item, in bytes. */
  maxItemBytes: number;
  /** Largest comment, CDATA section, tag or stretch of text outside items, in bytes. */
  maxPendingBytes: number;
}

/** Bytes of a chunk joined to what the previous one left pending (see push). */
const JOIN_BYTES = 16 * 1024;

export const DEFAULT_CUTTER_LIMITS: CutterLimits = { maxItemBytes: 4 * 1024 * 1024, maxPendingBytes: 1024 * 1024 };

const LT = 0x3c;
const GT = 0x3e;
const SLASH = 0x2f;
const BANG = 0x21;
const QUESTION = 0x3f;
const DQUOTE = 0x22;
const SQUOTE = 0x27;
const COLON = 0x3a;
const LBRACKET = 0x5b;

const COMMENT_START = Buffer.from('<!--');
const COMMENT_END = Buffer.from('-->');
const CDATA_START = Buffer.from('<![CDATA[');
const CDATA_END = Buffer.from(']]>');
const PI_END = Buffer.from('?>');
const DOCTYPE_START = Buffer.from('<!DOCTYPE');
const EMPTY = Buffer.alloc(0);

/** Whether buf[at..] starts with `prefix` (false when buf ends first). */
function startsWithAt(buf: Buffer, at: number, prefix: Buffer): boolean {
  if (buf.length - at < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (buf[at + i] !== prefix[i]) return false;
  return true;
}

/** Whether buf[at..] (which ends before `whole` does) could still grow into `whole`. */
function couldBecome(buf: Buffer, at: number, whole: Buffer): boolean {
  const available = buf.length - at;
  if (available >= whole.length) return false;
  for (let i = 0; i < available; i++) if (buf[at + i] !== whole[i]) return false;
  return true;
}

/**
 * Bytes looked at one by one before a search is handed to Buffer#indexOf. Most of what the
 * cutter searches for is a few bytes away (an item's tags and values are short), and
 * indexOf costs ~50-100 ns a call whatever the distance: a call into native code.
 */
const SHORT_SEARCH_BYTES = 64;

/** Index of the byte `c` in buf from `from` on; -1 when not in buf yet. */
function indexOfByte(buf: Buffer, c: number, from: number): number {
  const n = buf.length;
  const stop = Math.min(n, from + SHORT_SEARCH_BYTES);
  for (let i = from; i < stop; i++) if (buf[i] === c) return i;
  return stop < n ? buf.indexOf(c, stop) : -1;
}

/** Index of the ">" that ends a tag starting before `from`, skipping quoted values; -1 when not in buf yet. */
function tagEnd(buf: Buffer, from: number): number {
  const n = buf.length;
  for (let i = from; i < n; i++) {
    const c = buf[i];
    if (c === GT) return i;
    if (c === DQUOTE || c === SQUOTE) {
      const close = indexOfByte(buf, c, i + 1);
      if (close < 0) return -1;
      i = close;
    }
  }
  return -1;
}

/** Index of the ">" that ends a DOCTYPE; -1 when not in buf yet, -2 when it has an internal subset. */
function doctypeEnd(buf: Buffer, from: number): number {
  for (let i = from; i < buf.length; i++) {
    const c = buf[i];
    if (c === GT) return i;
    if (c === LBRACKET) return -2;
    if (c === DQUOTE || c === SQUOTE) {
      const close = buf.indexOf(c, i + 1);
      if (close < 0) return -1;
      i = close;
    }
  }
  return -1;
}

function isNameEnd(c: number | undefined): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === SLASH || c === GT;
}

/** Whether the start tag whose name begins at `from` is an item (local name item or entry). */
function isItemTag(buf: Buffer, from: number): boolean {
  let local = from;
  let end = from;
  for (; end < buf.length && !isNameEnd(buf[end]); end++) {
    if (buf[end] === COLON && local === from) local = end + 1;
  }
  const length = end - local;
  if (length === 4) return buf[local] === 0x69 && buf[local + 1] === 0x74 && buf[local + 2] === 0x65 && buf[local + 3] === 0x6d; // item
  if (length === 5) return buf[local] === 0x65 && buf[local + 1] === 0x6e && buf[local + 2] === 0x74 && buf[local + 3] === 0x72 && buf[local + 4] === 0x79; // entry
  return false;
}

export class XmlItemCutter {
  /** Unconsumed bytes: from `start` (start of the pending gap or item) on. */
  private buf: Buffer = EMPTY;
  /** Next byte of buf to look at. */
  private pos = 0;
  private start = 0;
  /** End of the last complete construct of the pending gap (a safe place to flush it). */
  private gapSafe = 0;
  private depth = 0;
  private inItem = false;
  private itemDepth = 0;
  private itemTagEnd = 0;
  private stopped = false;

  constructor(private readonly limits: CutterLimits = DEFAULT_CUTTER_LIMITS) {}

  get hasStopped(): boolean {
    return this.stopped;
  }

  /** Cuts what `chunk` completes; pieces are appended to `out` in feed order. */
  push(chunk: Buffer, out: CutPiece[]): void {
    if (this.stopped) return;
    if (this.start < this.buf.length) {
      // What is pending (an item or a tag cut by the chunk's border) is joined to the chunk's
      // first bytes and cut there; once nothing pending starts before the chunk, cutting goes
      // on in the chunk itself. Joining the whole chunk copied every byte of the feed once.
      const held = this.buf.length - this.start;
      this.join(chunk.length <= JOIN_BYTES ? chunk : chunk.subarray(0, JOIN_BYTES));
      this.scan(out);
      if (this.stopped) return;
      if (chunk.length > JOIN_BYTES) {
        if (this.start >= held) this.rebase(chunk, held);
        else this.join(chunk.subarray(JOIN_BYTES));
        this.scan(out);
      }
    } else {
      this.buf = chunk;
      this.pos = 0;
      this.start = 0;
      this.gapSafe = 0;
      this.scan(out);
    }
    if (this.stopped) return;
    const pending = this.buf.length - this.start;
    if (this.inItem) {
      if (pending > this.limits.maxItemBytes) this.doubt(out, `an item larger than ${this.limits.maxItemBytes} bytes`);
      return;
    }
    // Outside items: hand over the gap up to its last complete construct.
    if (this.gapSafe > this.start) {
      out.push({ kind: 'gap', bytes: this.buf.subarray(this.start, this.gapSafe) });
      this.start = this.gapSafe;
    }
    if (this.buf.length - this.start > this.limits.maxPendingBytes) this.doubt(out, `more than ${this.limits.maxPendingBytes} bytes without an end of markup`);
  }

  /** buf becomes its pending bytes (from `start` on) followed by `bytes`. */
  private join(bytes: Buffer): void {
    const start = this.start;
    this.rebase(Buffer.concat([start === 0 ? this.buf : this.buf.subarray(start), bytes]), start);
  }

  /**
   * buf becomes `next`, whose first bytes are those of buf from `offset` on (nothing pending
   * starts before `offset`): the offsets into buf move with them.
   */
  private rebase(next: Buffer, offset: number): void {
    this.buf = next;
    this.pos -= offset;
    this.start -= offset;
    this.gapSafe -= offset;
    this.itemTagEnd -= offset;
  }

  /** The end of the input: the rest of the skeleton, or a doubt when something is left open. */
  end(out: CutPiece[]): void {
    if (this.stopped) return;
    if (this.inItem) {
      this.doubt(out, 'the feed ends inside an item');
      return;
    }
    if (this.pos < this.buf.length) {
      // A construct started and never ended.
      this.doubt(out, 'the feed ends inside markup');
      return;
    }
    if (this.buf.length > this.start) out.push({ kind: 'gap', bytes: this.buf.subarray(this.start) });
    this.buf = EMPTY;
    this.start = 0;
    this.pos = 0;
    this.gapSafe = 0;
  }

  private doubt(out: CutPiece[], reason: string): void {
    this.stopped = true;
    this.buf = EMPTY;
    out.push({ kind: 'doubt', reason });
  }

  private scan(out: CutPiece[]): void {
    const buf = this.buf;
    const n = buf.length;
    let pos = this.pos;
    for (;;) {
      const lt = indexOfByte(buf, LT, pos);
      if (lt < 0) {
        pos = n;
        break;
      }
      if (lt + 1 >= n) {
        pos = lt;
        break;
      }
      const c = buf[lt + 1];
      let end: number;
      if (c === SLASH) {
        const gt = indexOfByte(buf, GT, lt + 2);
        if (gt < 0) {
          pos = lt;
          break;
        }
        end = gt + 1;
        if (this.inItem) {
          if (--this.itemDepth === 0) {
            out.push({ kind: 'item', bytes: buf.subarray(this.start, end), tagEnd: this.itemTagEnd - this.start, depth: this.depth });
            this.inItem = false;
            this.start = end;
          }
        } else if (--this.depth < 0) {
          this.doubt(out, 'an end tag without a start tag');
          return;
        }
      } else if (c === BANG) {
        let close: number;
        if (startsWithAt(buf, lt, COMMENT_START)) {
          close = buf.indexOf(COMMENT_END, lt + 4);
          end = close + 3;
        } else if (startsWithAt(buf, lt, CDATA_START)) {
          close = buf.indexOf(CDATA_END, lt + 9);
          end = close + 3;
        } else if (!this.inItem && startsWithAt(buf, lt, DOCTYPE_START)) {
          close = doctypeEnd(buf, lt + 9);
          if (close === -2) {
            this.doubt(out, 'a DOCTYPE with an internal subset');
            return;
          }
          end = close + 1;
        } else if (couldBecome(buf, lt, COMMENT_START) || couldBecome(buf, lt, CDATA_START) || (!this.inItem && couldBecome(buf, lt, DOCTYPE_START))) {
          pos = lt;
          break;
        } else {
          this.doubt(out, 'a markup declaration');
          return;
        }
        if (close < 0) {
          pos = lt;
          break;
        }
      } else if (c === QUESTION) {
        const close = buf.indexOf(PI_END, lt + 2);
        if (close < 0) {
          pos = lt;
          break;
        }
        end = close + 2;
      } else {
        const gt = tagEnd(buf, lt + 1);
        if (gt < 0) {
          pos = lt;
          break;
        }
        end = gt + 1;
        const empty = buf[gt - 1] === SLASH;
        if (this.inItem) {
          if (!empty) this.itemDepth++;
        } else if (this.depth > 0 && isItemTag(buf, lt + 1)) {
          if (lt > this.start) out.push({ kind: 'gap', bytes: buf.subarray(this.start, lt) });
          this.start = lt;
          if (empty) {
            out.push({ kind: 'item', bytes: buf.subarray(lt, end), tagEnd: gt - lt, depth: this.depth });
            this.start = end;
          } else {
            this.inItem = true;
            this.itemDepth = 1;
            this.itemTagEnd = gt;
          }
        } else if (!empty) {
          this.depth++;
        }
      }
      pos = end;
      if (!this.inItem) this.gapSafe = end;
    }
    this.pos = pos;
    if (!this.inItem && this.gapSafe < this.start) this.gapSafe = this.start;
  }
}
