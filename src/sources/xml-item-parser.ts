/**
 * Reads one item cut out of a feed (xml-item-cutter.ts) on its own, as the full reader
 * (xml-feed.ts) would read it in place: the same saxes parser (in fragment mode) and the same
 * FeedItemCollector, started with the namespace bindings and the depth the item has in the
 * feed. The result is the item's FeedItem or RowReject and the item-level problems it had
 * (the feed-wide limit on those is the caller's to apply), or a "doubt": anything that is not
 * a complete item read without a fatal error. The caller then reads the feed from that item
 * on with the full reader, which gives the authoritative answer (and the error message with
 * its position). Nothing here throws.
 *
 * Cheap enough to run once per item: one parser and one collector are reused while items
 * read cleanly. Safe to run in a worker thread (no I/O).
 */
import { SaxesParser } from 'saxes';
import type { FeedItem, RowReject } from './types.js';
import { decodeWindows1252 } from './windows-1252.js';
import { BareAmpersandMarker } from './xml-bare-ampersand.js';
import { NameResolver, readItemFast } from './xml-fast-item.js';
import { FeedItemCollector, type ParserPosition, type XmlFeedLimits } from './xml-item-collector.js';

/** Where an item sits in its feed: what reading it depends on besides its own bytes. */
export interface ItemContextSpec {
  /** Elements open around the item (its parent's depth). */
  depth: number;
  /** Namespace bindings in scope at the item (prefix -> URI, '' the default namespace). */
  bindings: [string, string][];
  encoding: 'utf-8' | 'windows-1252';
  /** The limits of the read (the same for every item of a feed). */
  limits: XmlFeedLimits;
}

export type ParsedCutItem =
  | { kind: 'item'; item: FeedItem; problems: number }
  | { kind: 'reject'; reject: RowReject; problems: number }
  | { kind: 'doubt'; reason: string };

type ParserInternals = { state: number; tags: unknown[] };

/** The state saxes is in between markup (a fragment parser starts in it). */
export const SAXES_TEXT_STATE = (new SaxesParser({ fragment: true }) as unknown as ParserInternals).state;

/** Decodes the bytes of a piece of a feed cut at character borders. */
export function decodePiece(bytes: Buffer, encoding: 'utf-8' | 'windows-1252'): string {
  return encoding === 'utf-8' ? bytes.toString('utf8') : decodeWindows1252(bytes);
}

export class CutItemParser {
  private parser!: SaxesParser<{ xmlns: false; fragment: true; position: false }>;
  private readonly position: { line: number; column: number } & ParserPosition = { line: 0, column: 0 };
  private readonly collector: FeedItemCollector;
  private names = new NameResolver([]);
  private namesFor: readonly (readonly [string, string])[] | undefined;

  /** fast: try readItemFast (xml-fast-item.ts) first; false reads every item with saxes (tests). */
  constructor(
    name: string,
    limits: XmlFeedLimits,
    private readonly fast = true,
  ) {
    this.collector = new FeedItemCollector(name, limits, this.position);
    this.newParser();
  }

  parse(bytes: Buffer, context: ItemContextSpec, row: number, line: number): ParsedCutItem {
    const decoded = decodePiece(bytes, context.encoding);
    if (context.bindings !== this.namesFor) {
      this.names = new NameResolver(context.bindings);
      this.namesFor = context.bindings;
    }
    const fast = this.fast ? readItemFast(decoded, this.names, context.depth, context.limits, row, line) : undefined;
    if (fast !== undefined) return { kind: 'item', item: fast, problems: 0 };
    const collector = this.collector;
    const marker = new BareAmpersandMarker();
    const text = marker.push(decoded) + marker.end();
    if (!marker.inMarkup) return { kind: 'doubt', reason: 'the item ends inside a CDATA section, comment or processing instruction' };
    this.position.line = line;
    collector.startFragment(context.depth, context.bindings, row - 1);
    try {
      this.parser.write(text);
    } catch (error) {
      this.newParser();
      return { kind: 'doubt', reason: (error as Error).message };
    }
    const internals = this.parser as unknown as ParserInternals;
    if (internals.state !== SAXES_TEXT_STATE || internals.tags.length !== 0 || collector.insideItem || collector.openElements !== context.depth || collector.itemCount !== row) {
      this.newParser();
      return { kind: 'doubt', reason: 'the item is not one complete element' };
    }
    const { items, rejects } = collector.takeBatch();
    const problems = collector.problems;
    const item = items[0];
    if (item !== undefined && items.length === 1 && rejects.length === 0) return { kind: 'item', item, problems };
    const reject = rejects[0];
    if (reject !== undefined && rejects.length === 1 && items.length === 0) return { kind: 'reject', reject, problems };
    this.newParser();
    return { kind: 'doubt', reason: 'the item did not read as one item' };
  }

  private newParser(): void {
    const parser = new SaxesParser<{ xmlns: false; fragment: true; position: false }>({ xmlns: false, fragment: true, position: false });
    this.collector.listenTo(parser);
    this.parser = parser;
  }
}
