/**
 * The fast way through an XML feed: each item is cut out of the byte stream
 * (xml-item-cutter.ts) and handed over as bytes, with its row, line and context (namespace
 * bindings, depth, encoding); the rest of the feed (header, whatever lies between items,
 * footer: the skeleton) goes through saxes and the FeedItemCollector exactly as in the full
 * reader (xml-feed.ts), which checks it and keeps the namespace bindings. The caller decides
 * what to do with each item's bytes: skip it when they are known (a fingerprint), or read it
 * with CutItemParser (xml-item-parser.ts), here or in a worker thread.
 *
 * The fast way gives up ("doubt") rather than guess: on anything the full reader would report
 * (a fatal error in the skeleton, bytes that are not UTF-8, an encoding that is not UTF-8 or
 * Windows-1252, XML 1.1, a DOCTYPE with an internal subset, an unfinished feed...) and on
 * anything the cutter is not sure of, the last batch carries `doubt`, every item before it
 * is exact, and the caller reads the feed again with the full reader from the row after the
 * last item it has, which gives the authoritative answer. A doubt costs a second read, never
 * a different result.
 *
 * Rows and lines: rows count every item (rejected ones too), as the full reader does; the
 * line of an item is the line of the ">" of its start tag (LF, CR LF and a lone CR each end a
 * line, as in saxes).
 */
import { createHash } from 'node:crypto';
import { SaxesParser } from 'saxes';
import { asBuffer, type ByteSource } from './byte-source.js';
import { describeNonText, SNIFF_BYTES, sniffContent } from './content-sniff.js';
import { Utf8Validator } from './utf8-validator.js';
import { BareAmpersandMarker } from './xml-bare-ampersand.js';
import type { XmlFeedOptions } from './xml-feed.js';
import { DEFAULT_CUTTER_LIMITS, XmlItemCutter, type CutPiece } from './xml-item-cutter.js';
import { FeedItemCollector, xmlFeedLimits, type XmlFeedLimits } from './xml-item-collector.js';
import { decodePiece, SAXES_TEXT_STATE, type ItemContextSpec } from './xml-item-parser.js';
import type { DeclaredLatin1Check } from './declared-latin1-check.js';
import { declaredLatin1CheckFor, xmlTextDecoderFor } from './xml-text-decoder.js';

/** The context of items, with an id (per read) and a fingerprint of it. */
export interface ItemContext extends ItemContextSpec {
  /** 1, 2, ... within one read. */
  id: number;
  /**
   * SHA-256 (hex) of everything outside the item's bytes that decides how it reads: the
   * context, the reader's limits and the caller's salt.
   */
  key: string;
}

export interface CutItem {
  row: number;
  line: number;
  /** The item's bytes, from "<" of its start tag to ">" of its end tag. */
  bytes: Buffer;
  context: ItemContext;
  /** Item-level problems in the skeleton before this item (see MAX_ITEM_PROBLEMS). */
  problemsBefore: number;
}

export interface CutBatch {
  items: CutItem[];
  /** Item-level problems in the skeleton so far. */
  problems: number;
  /** Set on the last batch when the fast way gave up: the reason (for logs). */
  doubt?: string | undefined;
}

export interface CutFeedOptions extends XmlFeedOptions {
  /** Part of every context key (e.g. a fingerprint of what the caller derives from items). */
  salt?: string | undefined;
}

const LF = 0x0a;
const CR = 0x0d;
const CLOSE_BRACKET = 0x5d;
/** Characters of the skeleton accepted without a markup event (the full reader's limit is 16 Mi). */
const MAX_SKELETON_CHARS_WITHOUT_MARKUP = 1024 * 1024;

/** Line ends in bytes[start, end): LF, CR LF and a lone CR. */
function lineEnds(bytes: Buffer, start: number, end: number, crSeen: boolean): number {
  let n = 0;
  if (!crSeen) {
    for (let i = bytes.indexOf(LF, start); i >= 0 && i < end; i = bytes.indexOf(LF, i + 1)) n++;
    return n;
  }
  for (let i = start; i < end; i++) {
    const c = bytes[i];
    if (c === LF) n++;
    else if (c === CR) {
      n++;
      if (bytes[i + 1] === LF && i + 1 < end) i++;
    }
  }
  return n;
}

function isXmlWhitespaceBytes(bytes: Buffer): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (c !== 0x20 && c !== LF && c !== 0x09 && c !== CR) return false;
  }
  return true;
}

class Doubt extends Error {}

/** One read of a feed the fast way; push() the raw chunks, then end(). */
export class XmlCutFeed {
  private readonly parser = new SaxesParser<{ xmlns: false; position: true }>({ xmlns: false, position: true });
  private readonly collector: FeedItemCollector;
  private readonly limits: XmlFeedLimits;
  private readonly validator = new Utf8Validator();
  private readonly ampersands = new BareAmpersandMarker();
  private readonly cutter = new XmlItemCutter(DEFAULT_CUTTER_LIMITS);
  private encoding: 'utf-8' | 'windows-1252' | undefined;
  /** Windows-1252: whether the feed is UTF-8 after all (the full reader then says so). */
  private latin1Check: DeclaredLatin1Check | undefined;
  private head: Buffer[] = [];
  private headBytes = 0;
  private line = 1;
  private crSeen = false;
  private lastSkeletonByte = -1;
  private context: ItemContext | undefined;
  private contextVersion = -1;
  private contextDepth = -1;
  private contexts = 0;
  private items: CutItem[] = [];
  private doubtReason: string | undefined;
  private readonly pieces: CutPiece[] = [];

  constructor(
    private readonly name: string,
    private readonly options: CutFeedOptions,
  ) {
    this.limits = xmlFeedLimits(options.limits);
    this.collector = new FeedItemCollector(name, this.limits, this.parser);
    this.collector.listenTo(this.parser);
  }

  /** The limits items are read with (for CutItemParser). */
  get itemLimits(): XmlFeedLimits {
    return this.limits;
  }

  get stopped(): boolean {
    return this.doubtReason !== undefined;
  }

  /** Cuts what this chunk completes. */
  push(chunk: Buffer): CutBatch {
    if (this.doubtReason === undefined) {
      try {
        if (this.encoding === undefined) {
          this.head.push(chunk);
          this.headBytes += chunk.length;
          if (this.headBytes >= SNIFF_BYTES) this.startDecoding();
        } else {
          this.write(chunk);
        }
      } catch (error) {
        this.stop(error);
      }
    }
    return this.batch();
  }

  /** The end of the input. */
  end(): CutBatch {
    if (this.doubtReason === undefined) {
      try {
        if (this.encoding === undefined) {
          if (this.headBytes === 0) throw new Doubt('the feed is empty');
          this.startDecoding();
        }
        if (this.encoding === 'utf-8' && !this.validator.end()) throw new Doubt('bytes that are not UTF-8');
        this.latin1Check?.end();
        this.cutter.end(this.pieces);
        this.handlePieces();
        const rest = this.ampersands.end();
        if (rest !== '') this.writeSkeleton(rest);
        this.parser.close();
      } catch (error) {
        this.stop(error);
      }
    }
    return this.batch();
  }

  private batch(): CutBatch {
    const items = this.items;
    this.items = [];
    return { items, problems: this.collector.problems, doubt: this.doubtReason };
  }

  private stop(error: unknown): void {
    this.doubtReason = error instanceof Error ? error.message : String(error);
    this.head = [];
  }

  private startDecoding(): void {
    const head = Buffer.concat(this.head);
    this.head = [];
    const kind = sniffContent(head);
    if (kind !== 'text' || describeNonText(kind) !== undefined) throw new Doubt(`content sniffed as ${kind}`);
    const decoder = xmlTextDecoderFor(head, this.options.encoding, this.name);
    if (decoder.encoding !== 'utf-8' && decoder.encoding !== 'windows-1252') throw new Doubt(`encoding ${decoder.encoding}`);
    this.encoding = decoder.encoding;
    if (decoder.encoding === 'windows-1252') this.latin1Check = declaredLatin1CheckFor(head, this.options.encoding, this.name);
    this.write(head);
  }

  private write(bytes: Buffer): void {
    if (this.encoding === 'utf-8' && !this.validator.check(bytes)) throw new Doubt('bytes that are not UTF-8');
    this.latin1Check?.check(bytes);
    if (!this.crSeen && bytes.indexOf(CR) >= 0) this.crSeen = true;
    this.cutter.push(bytes, this.pieces);
    this.handlePieces();
  }

  private handlePieces(): void {
    const pieces = this.pieces;
    try {
      for (const piece of pieces) {
        if (piece.kind === 'gap') this.gap(piece.bytes);
        else if (piece.kind === 'item') this.item(piece.bytes, piece.tagEnd, piece.depth);
        else throw new Doubt(piece.reason);
      }
    } finally {
      pieces.length = 0;
    }
  }

  private gap(bytes: Buffer): void {
    this.line += lineEnds(bytes, 0, bytes.length, this.crSeen);
    // Whitespace between items changes nothing the skeleton parser decides.
    if (this.context !== undefined && isXmlWhitespaceBytes(bytes)) return;
    this.lastSkeletonByte = bytes[bytes.length - 1] ?? -1;
    this.writeSkeleton(this.ampersands.push(decodePiece(bytes, this.encoding ?? 'utf-8')));
  }

  private writeSkeleton(text: string): void {
    if (text === '') return;
    this.parser.write(text);
    if ((this.parser.xmlDecl.version ?? '1.0') !== '1.0') throw new Doubt(`XML version ${this.parser.xmlDecl.version}`);
    if (this.collector.charsWithoutMarkup(text.length) > MAX_SKELETON_CHARS_WITHOUT_MARKUP) throw new Doubt('a long stretch without markup');
  }

  private item(bytes: Buffer, tagEnd: number, depth: number): void {
    // The skeleton parser must be between markup, as deep as the cutter thinks, outside items,
    // and the text before the item must not join the text after it into something else
    // ("]]" + ">", CR + LF).
    const held = this.ampersands.beforeMarkup();
    if (held === undefined) throw new Doubt('an item inside a CDATA section, comment or processing instruction');
    if (held !== '') this.writeSkeleton(held);
    const parser = this.parser as unknown as { state: number; tags: unknown[] };
    const collector = this.collector;
    if (parser.state !== SAXES_TEXT_STATE || parser.tags.length !== depth || collector.insideItem || collector.openElements !== depth) {
      throw new Doubt('the skeleton parser disagrees with the cutter');
    }
    if (this.lastSkeletonByte === CLOSE_BRACKET || this.lastSkeletonByte === CR) throw new Doubt('text before an item that would join the text after it');
    // The ">" of the start tag is not a line end: counting on from it counts each line end once.
    const line = this.line + lineEnds(bytes, 0, tagEnd, this.crSeen);
    this.line = line + lineEnds(bytes, tagEnd, bytes.length, this.crSeen);
    collector.countCutItem();
    this.items.push({ row: collector.itemCount, line, bytes, context: this.contextNow(), problemsBefore: collector.problems });
  }

  private contextNow(): ItemContext {
    const version = this.collector.bindingsVersion;
    const depth = this.collector.openElements;
    if (this.context !== undefined && version === this.contextVersion && depth === this.contextDepth) return this.context;
    const bindings = this.collector.namespaceBindings().sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    const encoding = this.encoding ?? 'utf-8';
    const key = createHash('sha256')
      .update(JSON.stringify({ v: 1, encoding, depth, bindings, limits: this.limits, salt: this.options.salt ?? '' }))
      .digest('hex');
    // A context equal to the current one keeps its id (bindings undone and declared again).
    if (this.context === undefined || this.context.key !== key) this.context = { id: ++this.contexts, depth, bindings, encoding, limits: this.limits, key };
    this.contextVersion = version;
    this.contextDepth = depth;
    return this.context;
  }
}

/**
 * Cuts the items of an XML feed; see the module comment. The last batch has `doubt` set when
 * the fast way gave up (reading stops there).
 */
export async function* cutXmlFeed(source: ByteSource, options: CutFeedOptions = {}): AsyncGenerator<CutBatch, void, undefined> {
  const feed = new XmlCutFeed(source.name, { ...options, encoding: options.encoding ?? source.encoding });
  try {
    for await (const chunk of source.stream) {
      const batch = feed.push(asBuffer(chunk));
      if (batch.items.length > 0 || batch.doubt !== undefined) yield batch;
      if (feed.stopped) return;
    }
  } catch (error) {
    // A read error: the full reader reads again and reports it.
    yield { items: [], problems: 0, doubt: `reading failed: ${(error as Error).message}` };
    return;
  }
  yield feed.end();
}
