/**
 * The SAX event handlers that turn the <item>s of an RSS 2.0 feed and the <entry>s of an Atom
 * feed into FeedItems (Google Merchant format).
 *
 * Rules:
 * - An item is an element named item or entry (any namespace) outside another item; the root
 *   must be <rss>, <feed>, <rdf:RDF> or <channel>. Channel-level elements are not items.
 * - Each child element of an item is one field, named by its local name (g:price -> price).
 *   Its value is its text, CDATA included, entities decoded, trimmed; always a string.
 * - An element that occurs more than once in an item gives a string[] (additional_image_link).
 * - A child that holds elements and no text of its own (g:shipping, g:tax, g:installment,
 *   g:product_detail) is a structured attribute: it is skipped, and its children (a nested
 *   g:price, g:country) are never fields. A child with text and markup (<description>a
 *   <b>b</b></description>) keeps all its text.
 * - A field in the Google namespace wins over one of the same name in any other namespace, and
 *   a plain one (RSS, Atom) over one in another namespace (media:title, dc:description)
 *   (g:id over Atom's <id>, g:title over RSS <title>); the other is dropped.
 * - Atom: <link href="..."/> (rel absent or alternate) gives link; <summary>, else <content>,
 *   becomes description when the entry has no description.
 * - The line of an item is the line of its start tag ('>' of <item>).
 *
 * Prefixes are resolved here from xmlns declarations (saxes' own namespace mode halves its
 * speed); an undeclared "g:" prefix is taken as the Google namespace.
 *
 * Item-level problems (an undefined entity such as &nbsp;, a bare "&", a character XML forbids, an item
 * larger than the limit) reject that item and reading goes on. Everything else that is not
 * well-formed, a DOCTYPE that declares entities, nesting deeper than the limit, or a root that
 * is not a feed, is fatal: the handler throws SourceError out of the parser's write().
 */
import type { SaxesOptions, SaxesParser, SaxesTagPlain } from 'saxes';
import { SourceError } from '../errors.js';
import type { FeedItem, RowReject } from './types.js';
import { BARE_AMPERSAND_ENTITY } from './xml-bare-ampersand.js';

export const GOOGLE_NAMESPACE = 'http://base.google.com/ns/1.0';

export interface XmlFeedLimits {
  /** Deepest element nesting accepted. */
  maxDepth: number;
  /** Largest item, in characters of text. */
  maxItemChars: number;
  /** Most fields (child elements) one item may have. */
  maxItemFields: number;
}

export const DEFAULT_XML_FEED_LIMITS: XmlFeedLimits = {
  maxDepth: 64,
  maxItemChars: 4 * 1024 * 1024,
  maxItemFields: 10_000,
};

/** Where the parser is; saxes keeps it up to date. */
export interface ParserPosition {
  readonly line: number;
  readonly column: number;
}

type Fields = Record<string, string | string[]>;

export interface ResolvedName {
  local: string;
  google: boolean;
  /**
   * In a namespace other than Google's, Atom's or none (RSS): media:title, dc:description.
   * Such a field gives way to a plain one of the same local name.
   */
  foreign: boolean;
}

const ATOM_NAMESPACE = 'http://www.w3.org/2005/Atom';

/** A qualified name resolved with these namespace bindings; an undeclared "g:" is the Google namespace. */
export function resolveQualifiedName(bindings: ReadonlyMap<string, string>, qualifiedName: string): ResolvedName {
  const colon = qualifiedName.indexOf(':');
  const prefix = colon === -1 ? '' : qualifiedName.slice(0, colon);
  const local = colon === -1 ? qualifiedName : qualifiedName.slice(colon + 1);
  const uri = bindings.get(prefix);
  const google = uri === undefined ? prefix === 'g' : uri === GOOGLE_NAMESPACE;
  const foreign = !google && (uri === undefined ? prefix !== '' : uri !== '' && uri !== ATOM_NAMESPACE);
  return { local, google, foreign };
}

/**
 * Merges the fields of one item: Google's first, then the plain ones (RSS, Atom) under names
 * Google's did not give, then those of other namespaces (media:, dc:) under names still free.
 */
export function mergeFieldTiers(fields: Fields, plain: Fields | undefined, foreign: Fields | undefined): void {
  for (const tier of [plain, foreign]) {
    if (tier === undefined) continue;
    for (const key in tier) {
      const value = tier[key];
      if (fields[key] === undefined && value !== undefined) fields[key] = value;
    }
  }
}

/** The limits of a read: those given, the defaults for the others. */
export function xmlFeedLimits(limits: Partial<XmlFeedLimits> = {}): XmlFeedLimits {
  return {
    maxDepth: limits.maxDepth ?? DEFAULT_XML_FEED_LIMITS.maxDepth,
    maxItemChars: limits.maxItemChars ?? DEFAULT_XML_FEED_LIMITS.maxItemChars,
    maxItemFields: limits.maxItemFields ?? DEFAULT_XML_FEED_LIMITS.maxItemFields,
  };
}

interface NamespaceUndo {
  depth: number;
  prefix: string;
  previous: string | undefined;
}

type ItemProblem = 'entity' | 'character' | 'character reference';

const FEED_ROOTS: ReadonlySet<string> = new Set(['rss', 'feed', 'RDF', 'channel']);
const MAX_CACHED_NAMES = 1024;
/** Item-level problems a feed may have; the next one is fatal. */
export const MAX_ITEM_PROBLEMS = 10_000;
const ENTITY_REFERENCE = /&([^\s&;<]{1,64});/;
const SAXES_POSITION = /^(?:.*?:)?\d+:\d+: /;

/** A null-prototype object: a field named "__proto__" or "constructor" is just a field. */
function newFields(): Fields {
  return Object.create(null) as Fields;
}

function addValue(fields: Fields, name: string, value: string): void {
  const existing = fields[name];
  if (existing === undefined) fields[name] = value;
  else if (typeof existing === 'string') fields[name] = [existing, value];
  else existing.push(value);
}

function isXmlWhitespace(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x09 && c !== 0x0d) return false;
  }
  return true;
}

/** The first character XML 1.0 does not allow (a control character, U+FFFE, U+FFFF). */
function forbiddenCharacterIn(text: string): number | undefined {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) || c === 0xfffe || c === 0xffff) return c;
  }
  return undefined;
}

function hasReplacementCharacter(fields: Fields): boolean {
  for (const name in fields) {
    const value = fields[name];
    if (typeof value === 'string' ? value.includes('\ufffd') : value?.some((v) => v.includes('\ufffd'))) return true;
  }
  return false;
}

function itemProblemOf(message: string): ItemProblem | undefined {
  switch (message) {
    case 'undefined entity.':
    case 'disallowed character in entity name.':
    case 'empty entity name.':
      return 'entity';
    case 'disallowed character.':
      return 'character';
    case 'malformed character entity.':
      return 'character reference';
    default:
      return undefined;
  }
}

export class FeedItemCollector {
  items: FeedItem[] = [];
  rejects: RowReject[] = [];
  /** Items completed so far, rejected ones included: the row number of the last one. */
  itemCount = 0;
  /** Count of parser events; the reader watches it to refuse endless stretches without markup. */
  events = 0;
  private eventsSeen = 0;
  private charsSinceMarkup = 0;
  sawRoot = false;
  /** Set once a chunk was not valid UTF-8: from then on items are searched for U+FFFD. */
  checkValuesForBadBytes = false;

  private depth = 0;
  private itemDepth = 0;
  private itemLine = 0;
  private itemIsAtom = false;
  private fields: Fields = newFields();
  private otherFields: Fields | undefined;
  private foreignFields: Fields | undefined;
  private itemRejectReason: string | undefined;
  private itemProblem: ItemProblem | undefined;
  private itemChars = 0;
  private itemFields = 0;
  private itemProblems = 0;

  private fieldName: string | undefined;
  private fieldGoogle = false;
  private fieldForeign = false;
  private fieldText = '';
  private fieldHref: string | undefined;
  private fieldHasChildren = false;
  private fieldHasOwnText = false;

  private readonly bindings = new Map<string, string>();
  private undo: NamespaceUndo[] = [];
  private readonly names = new Map<string, ResolvedName>();
  /** Changes whenever the namespace bindings in scope may have changed. */
  private bindingsChanges = 0;
  /** The bindings the last fragment started with (names resolved with them stay cached). */
  private fragmentBindings: readonly (readonly [string, string])[] | undefined;

  constructor(
    private readonly name: string,
    private readonly limits: XmlFeedLimits,
    private readonly position: ParserPosition,
  ) {}

  /** Has this collector handle the events of a saxes parser (without namespace handling). */
  listenTo<O extends SaxesOptions & { xmlns: false }>(parser: SaxesParser<O>): void {
    parser.on('opentag', this.onOpenTag);
    parser.on('closetag', this.onCloseTag);
    parser.on('text', this.onText);
    parser.on('cdata', this.onText);
    parser.on('doctype', this.onDoctype);
    parser.on('error', this.onError);
  }

  /**
   * After `chars` characters were written to the parser: how many were written since its last
   * markup event (0 when there was one meanwhile).
   */
  charsWithoutMarkup(chars: number): number {
    if (this.events !== this.eventsSeen) {
      this.eventsSeen = this.events;
      this.charsSinceMarkup = 0;
      return 0;
    }
    this.charsSinceMarkup += chars;
    return this.charsSinceMarkup;
  }

  /** Items and rejects completed since the last call. */
  takeBatch(): { items: FeedItem[]; rejects: RowReject[] } {
    const batch = { items: this.items, rejects: this.rejects };
    this.items = [];
    this.rejects = [];
    return batch;
  }

  hasBatch(): boolean {
    return this.items.length > 0 || this.rejects.length > 0;
  }

  // ---- For the item cutter (xml-cut-feed.ts), which takes items out of the stream this
  // collector sees and has them parsed on their own (xml-item-parser.ts).

  /** Elements open now. */
  get openElements(): number {
    return this.depth;
  }

  /** True while inside an item. */
  get insideItem(): boolean {
    return this.itemDepth !== 0;
  }

  /** Item-level problems seen so far (see MAX_ITEM_PROBLEMS). */
  get problems(): number {
    return this.itemProblems;
  }

  /** A number that changes whenever the namespace bindings in scope may have changed. */
  get bindingsVersion(): number {
    return this.bindingsChanges;
  }

  /** The namespace bindings in scope (prefix -> URI; '' is the default namespace). */
  namespaceBindings(): [string, string][] {
    return [...this.bindings.entries()];
  }

  /** Counts an item that was cut out of the stream (its row number is taken). */
  countCutItem(): void {
    this.itemCount += 1;
  }

  /**
   * Prepares this collector to read one item on its own, as if `depth` elements were open
   * with these namespace bindings and `itemCount` items had been read before it.
   */
  startFragment(depth: number, bindings: readonly (readonly [string, string])[], itemCount: number): void {
    this.items = [];
    this.rejects = [];
    this.itemCount = itemCount;
    this.sawRoot = true;
    this.depth = depth;
    this.itemDepth = 0;
    this.fieldName = undefined;
    this.itemProblems = 0;
    if (bindings !== this.fragmentBindings || this.undo.length > 0) {
      this.undo = [];
      this.bindings.clear();
      for (const [prefix, uri] of bindings) this.bindings.set(prefix, uri);
      this.names.clear();
      this.fragmentBindings = bindings;
    }
  }

  /** A fatal SourceError at the parser's position. */
  failure(problem: string, hint?: string): SourceError {
    const { line, column } = this.position;
    const read = this.itemCount === 1 ? '1 item was' : `${this.itemCount} items were`;
    const incomplete = this.itemCount > 0 ? ` (${read} read before it; the feed is incomplete)` : '';
    return new SourceError(`${this.name} line ${line}, column ${column}: ${problem}${incomplete}`, hint === undefined ? {} : { hint });
  }

  readonly onOpenTag = (tag: SaxesTagPlain): void => {
    this.events++;
    const depth = ++this.depth;
    if (depth > this.limits.maxDepth) throw this.failure(`elements are nested more than ${this.limits.maxDepth} levels deep`);
    const itemDepth = this.itemDepth;
    if (itemDepth === 0) {
      this.declareNamespaces(tag.attributes, depth);
      const local = this.resolve(tag.name).local;
      if (depth === 1) this.checkRoot(local);
      else if (local === 'item' || local === 'entry') this.startItem(depth, local === 'entry');
      return;
    }
    if (depth === itemDepth + 1) {
      this.startField(tag, depth);
      return;
    }
    if (depth === itemDepth + 2 && this.fieldName !== undefined && !this.fieldHasChildren) {
      this.fieldHasChildren = true;
      this.fieldHasOwnText = !isXmlWhitespace(this.fieldText);
    }
  };

  readonly onText = (text: string): void => {
    this.events++;
    if (this.fieldName === undefined) return;
    if (this.fieldHasChildren && !this.fieldHasOwnText && this.depth === this.itemDepth + 1 && !isXmlWhitespace(text)) {
      this.fieldHasOwnText = true;
    }
    this.itemChars += text.length;
    if (this.itemChars > this.limits.maxItemChars) {
      this.itemRejectReason ??= `item is larger than ${this.limits.maxItemChars} characters`;
      this.fieldText = '';
      return;
    }
    this.fieldText += text;
  };

  readonly onCloseTag = (): void => {
    this.events++;
    const depth = this.depth--;
    const itemDepth = this.itemDepth;
    if (itemDepth !== 0) {
      if (depth === itemDepth + 1) {
        if (this.fieldName !== undefined) this.finishField();
      } else if (depth === itemDepth) {
        this.finishItem();
      }
    }
    const lastUndo = this.undo[this.undo.length - 1];
    if (lastUndo !== undefined && lastUndo.depth === depth) this.closeNamespaces(depth);
  };

  readonly onDoctype = (doctype: string): void => {
    if (/<!ENTITY/i.test(doctype)) {
      throw this.failure(
        'the DOCTYPE declares entities, which adsync refuses to read (they can expand without limit or read local files)',
        'remove the <!DOCTYPE ...> declaration from the feed',
      );
    }
  };

  /** saxes reports every problem here; what is not an item-level problem ends the feed. */
  readonly onError = (error: Error): void => {
    const message = error.message.replace(SAXES_POSITION, '');
    const problem = itemProblemOf(message);
    if (problem !== undefined && ++this.itemProblems <= MAX_ITEM_PROBLEMS) {
      if (this.itemDepth !== 0) this.itemProblem ??= problem;
      return; // outside items: nothing read is affected
    }
    if (message === 'document must contain a root element.') {
      throw new SourceError(`${this.name} holds no XML element (is it an XML feed?)`);
    }
    const hint = message === 'text data outside of root node.' ? 'is it an XML feed? A feed starts with <?xml ...?>, <rss> or <feed>' : undefined;
    throw this.failure(`not well-formed XML: ${message}`, hint);
  };

  private checkRoot(local: string): void {
    this.sawRoot = true;
    if (!FEED_ROOTS.has(local)) {
      throw this.failure(`the root element <${local}> is neither RSS (<rss>) nor Atom (<feed>)`, 'a product feed is RSS 2.0 or Atom 1.0 in the Google Merchant format');
    }
  }

  private startItem(depth: number, atom: boolean): void {
    this.itemDepth = depth;
    this.itemLine = this.position.line;
    this.itemIsAtom = atom;
    this.fields = newFields();
    this.otherFields = undefined;
    this.foreignFields = undefined;
    this.itemRejectReason = undefined;
    this.itemProblem = undefined;
    this.itemChars = 0;
    this.itemFields = 0;
  }

  private startField(tag: SaxesTagPlain, depth: number): void {
    const attributes = tag.attributes;
    this.declareNamespaces(attributes, depth);
    const { local, google, foreign } = this.resolve(tag.name);
    this.fieldName = local;
    this.fieldGoogle = google;
    this.fieldForeign = foreign;
    this.fieldText = '';
    this.fieldHref = undefined;
    this.fieldHasChildren = false;
    this.fieldHasOwnText = false;
    if (local === 'link') {
      const href = attributes.href;
      if (href !== undefined) {
        const rel = attributes.rel;
        if (rel === undefined || rel === 'alternate') this.fieldHref = href;
        else this.fieldName = undefined; // rel="self", "enclosure"...: not the product page
      }
    }
  }

  private finishField(): void {
    const name = this.fieldName ?? '';
    this.fieldName = undefined;
    const text = this.fieldText;
    this.fieldText = '';
    if (this.itemProblem !== undefined && this.itemRejectReason === undefined) {
      this.itemRejectReason = this.describeProblem(name, this.fieldHref === undefined ? text : `${text} ${this.fieldHref}`);
    }
    if (this.fieldHasChildren && !this.fieldHasOwnText) return; // structured attribute (g:shipping)
    if (++this.itemFields > this.limits.maxItemFields) {
      this.itemRejectReason ??= `item has more than ${this.limits.maxItemFields} fields`;
      return;
    }
    const tier = this.fieldGoogle ? this.fields : this.fieldForeign ? (this.foreignFields ??= newFields()) : (this.otherFields ??= newFields());
    addValue(tier, name, this.fieldHref ?? text.trim());
  }

  private describeProblem(field: string, text: string): string {
    switch (this.itemProblem) {
      case 'entity': {
        const entity = ENTITY_REFERENCE.exec(text)?.[1];
        if (entity === BARE_AMPERSAND_ENTITY) return `<${field}> holds a bare "&" (write it as &amp;, or wrap the text in CDATA)`;
        const what = entity === undefined ? 'an undefined or malformed entity' : `the undefined entity &${entity};`;
        return `<${field}> holds ${what} (XML defines only &amp; &lt; &gt; &quot; &apos;: write &#160; for a non-breaking space, or wrap the text in CDATA)`;
      }
      case 'character': {
        const found = forbiddenCharacterIn(text);
        const code = found === undefined ? '' : ` (U+${found.toString(16).toUpperCase().padStart(4, '0')})`;
        return `<${field}> holds a character XML does not allow${code}`;
      }
      default:
        return `<${field}> holds a malformed character reference (&#...;)`;
    }
  }

  private finishItem(): void {
    this.itemDepth = 0;
    const row = ++this.itemCount;
    const line = this.itemLine;
    if (this.itemProblem !== undefined && this.itemRejectReason === undefined) {
      this.itemRejectReason = this.describeProblem(this.itemIsAtom ? 'entry' : 'item', '');
    }
    if (this.itemRejectReason !== undefined) {
      this.rejects.push({ row, line, reason: this.itemRejectReason });
      return;
    }
    const fields = this.fields;
    mergeFieldTiers(fields, this.otherFields, this.foreignFields);
    if (this.itemIsAtom && fields.description === undefined) {
      const source = fields.summary !== undefined ? 'summary' : fields.content !== undefined ? 'content' : undefined;
      if (source !== undefined) {
        fields.description = fields[source] ?? '';
        delete fields[source];
      }
    }
    if (this.checkValuesForBadBytes && hasReplacementCharacter(fields)) {
      this.rejects.push({
        row,
        line,
        reason: 'item contains bytes that are not UTF-8 (is the feed Latin-1? declare encoding="ISO-8859-1" or set source.encoding: latin1)',
      });
      return;
    }
    this.items.push({ row, line, fields });
  }

  private declareNamespaces(attributes: Record<string, string>, depth: number): void {
    for (const key in attributes) {
      if (key.charCodeAt(0) !== 0x78 || !key.startsWith('xmlns')) continue;
      let prefix: string;
      if (key.length === 5) prefix = '';
      else if (key.charCodeAt(5) === 0x3a) prefix = key.slice(6);
      else continue;
      this.undo.push({ depth, prefix, previous: this.bindings.get(prefix) });
      this.bindings.set(prefix, attributes[key] ?? '');
      this.names.clear();
      this.bindingsChanges++;
    }
  }

  private closeNamespaces(depth: number): void {
    for (let last = this.undo[this.undo.length - 1]; last !== undefined && last.depth === depth; last = this.undo[this.undo.length - 1]) {
      this.undo.pop();
      if (last.previous === undefined) this.bindings.delete(last.prefix);
      else this.bindings.set(last.prefix, last.previous);
    }
    this.names.clear();
    this.bindingsChanges++;
  }

  private resolve(qualifiedName: string): ResolvedName {
    const cached = this.names.get(qualifiedName);
    if (cached !== undefined) return cached;
    const resolved = resolveQualifiedName(this.bindings, qualifiedName);
    if (this.names.size < MAX_CACHED_NAMES) this.names.set(qualifiedName, resolved);
    return resolved;
  }
}
