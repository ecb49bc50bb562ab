/**
 * A fast reading of one feed item cut out of its feed (xml-item-cutter.ts), for the items
 * that feeds are made of: elements with plain names and simple attributes, text with the
 * predefined entities and character references, CDATA sections, nested elements. It gives
 * exactly the FeedItem that saxes and the FeedItemCollector give (xml-item-collector.ts: the
 * same fields, values, order of keys) or, for anything else, nothing (undefined): a comment, a
 * processing instruction, an attribute value with a tab or line break, a namespace
 * declaration inside the item, a character or reference XML does not allow, a name outside
 * ASCII, a limit reached... CutItemParser then reads the item with saxes. "Anything else"
 * includes everything that is not well-formed and every item-level problem: an item read
 * here has none.
 */
import type { FeedItem } from './types.js';
import { mergeFieldTiers, resolveQualifiedName, type ResolvedName, type XmlFeedLimits } from './xml-item-collector.js';

type Fields = Record<string, string | string[]>;

/** Names resolved in one context (namespace bindings). */
export class NameResolver {
  private readonly cache = new Map<string, ResolvedName>();
  private readonly bindings: Map<string, string>;

  constructor(bindings: readonly (readonly [string, string])[]) {
    this.bindings = new Map(bindings);
  }

  resolve(name: string): ResolvedName {
    let resolved = this.cache.get(name);
    if (resolved !== undefined) return resolved;
    resolved = resolveQualifiedName(this.bindings, name);
    if (this.cache.size < 1024) this.cache.set(name, resolved);
    return resolved;
  }
}

/** Something outside the fast reading: the caller reads the item with saxes. */
class NotFast extends Error {}
const NOT_FAST = new NotFast();

const LT = 0x3c;
const GT = 0x3e;
const SLASH = 0x2f;
const EQUALS = 0x3d;
const COLON = 0x3a;

/** Characters in text that need a closer look: controls, CR, "&", "]" (of "]]>"), U+FFFE/U+FFFF. */
// eslint-disable-next-line no-control-regex -- control characters are the point
const TEXT_SPECIAL = /[\u0000-\u0008\u000b\u000c\u000d\u000e-\u001f&\]\ufffe\uffff]/;
// eslint-disable-next-line no-control-regex -- as above
const TEXT_BAD = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/;
/** The references the bare-ampersand marker keeps and saxes decodes (undefined names excluded). */
const REFERENCE = /&(?:(amp|lt|gt|quot|apos)|#([0-9]{1,7})|#x([0-9a-fA-F]{1,6}));/y;
const PREDEFINED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function isNameStart(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f;
}

function isNameChar(c: number): boolean {
  return isNameStart(c) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2e;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d;
}

function isXmlChar(n: number): boolean {
  return n === 0x9 || n === 0xa || n === 0xd || (n >= 0x20 && n <= 0xd7ff) || (n >= 0xe000 && n <= 0xfffd) || (n >= 0x10000 && n <= 0x10ffff);
}

function isXmlWhitespace(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x09 && c !== 0x0d) return false;
  }
  return true;
}

/** Decodes the references of a piece of text or attribute value; throws NOT_FAST for anything else. */
function decodeReferences(raw: string): string {
  let out = '';
  let from = 0;
  for (let amp = raw.indexOf('&'); amp !== -1; amp = raw.indexOf('&', from)) {
    REFERENCE.lastIndex = amp;
    const m = REFERENCE.exec(raw);
    if (m === null) throw NOT_FAST;
    let decoded: string;
    if (m[1] !== undefined) decoded = PREDEFINED[m[1]] ?? '';
    else {
      const n = m[2] !== undefined ? parseInt(m[2], 10) : parseInt(m[3] ?? '', 16);
      if (!isXmlChar(n)) throw NOT_FAST;
      decoded = String.fromCodePoint(n);
    }
    out += raw.slice(from, amp) + decoded;
    from = REFERENCE.lastIndex;
  }
  return from === 0 ? raw : out + raw.slice(from);
}

/** Text content as saxes gives it: line ends normalized, references decoded. */
function textOf(raw: string): string {
  if (!TEXT_SPECIAL.test(raw)) return raw;
  if (TEXT_BAD.test(raw) || raw.includes(']]>')) throw NOT_FAST;
  const normalized = raw.includes('\r') ? raw.replace(/\r\n?/g, '\n') : raw;
  return normalized.includes('&') ? decodeReferences(normalized) : normalized;
}

function addValue(fields: Fields, name: string, value: string): void {
  const existing = fields[name];
  if (existing === undefined) fields[name] = value;
  else if (typeof existing === 'string') fields[name] = [existing, value];
  else existing.push(value);
}

interface Tag {
  name: string;
  /** Attributes, when the tag has any (names in order of appearance). */
  attributes: Record<string, string> | undefined;
  empty: boolean;
  /** Index after the tag's ">". */
  end: number;
}

/** Reads a start tag at `at` ("<" there); throws NOT_FAST outside the fast subset. */
function startTag(s: string, at: number): Tag {
  let i = at + 1;
  const nameStart = i;
  if (!isNameStart(s.charCodeAt(i))) throw NOT_FAST;
  let colon = -1;
  for (i++; ; i++) {
    const c = s.charCodeAt(i);
    if (isNameChar(c)) continue;
    if (c === COLON && colon === -1) {
      colon = i;
      if (!isNameStart(s.charCodeAt(i + 1))) throw NOT_FAST;
      continue;
    }
    break;
  }
  const name = s.slice(nameStart, i);
  let attributes: Record<string, string> | undefined;
  for (;;) {
    const c = s.charCodeAt(i);
    if (c === GT) return { name, attributes, empty: false, end: i + 1 };
    if (c === SLASH) {
      if (s.charCodeAt(i + 1) !== GT) throw NOT_FAST;
      return { name, attributes, empty: true, end: i + 2 };
    }
    if (!isSpace(c)) throw NOT_FAST;
    while (isSpace(s.charCodeAt(i))) i++;
    const next = s.charCodeAt(i);
    if (next === GT || next === SLASH) continue;
    // An attribute: name="value" or name='value'.
    const attributeStart = i;
    if (!isNameStart(next)) throw NOT_FAST;
    for (i++; isNameChar(s.charCodeAt(i)) || s.charCodeAt(i) === COLON; i++);
    const attribute = s.slice(attributeStart, i);
    if (attribute.startsWith('xmlns')) throw NOT_FAST;
    while (isSpace(s.charCodeAt(i))) i++;
    if (s.charCodeAt(i) !== EQUALS) throw NOT_FAST;
    i++;
    while (isSpace(s.charCodeAt(i))) i++;
    const quote = s.charCodeAt(i);
    if (quote !== 0x22 && quote !== 0x27) throw NOT_FAST;
    const close = s.indexOf(quote === 0x22 ? '"' : "'", i + 1);
    if (close === -1) throw NOT_FAST;
    const raw = s.slice(i + 1, close);
    if (/[<\t\n\r]/.test(raw) || TEXT_BAD.test(raw)) throw NOT_FAST;
    attributes ??= Object.create(null) as Record<string, string>;
    if (attributes[attribute] !== undefined) throw NOT_FAST;
    attributes[attribute] = raw.includes('&') ? decodeReferences(raw) : raw;
    i = close + 1;
    const after = s.charCodeAt(i);
    if (after !== GT && after !== SLASH && !isSpace(after)) throw NOT_FAST;
  }
}

/**
 * The item in `s` (from "<" of its start tag to ">" of its end tag) as the full reader reads
 * it, or undefined when it is outside the fast subset. `depth`: elements open around it.
 */
export function readItemFast(s: string, names: NameResolver, depth: number, limits: XmlFeedLimits, row: number, line: number): FeedItem | undefined {
  try {
    return read(s, names, depth, limits, row, line);
  } catch (error) {
    if (error === NOT_FAST) return undefined;
    throw error;
  }
}

function read(s: string, names: NameResolver, outerDepth: number, limits: XmlFeedLimits, row: number, line: number): FeedItem {
  if (s.charCodeAt(0) !== LT) throw NOT_FAST;
  const itemTag = startTag(s, 0);
  if (itemTag.attributes !== undefined) throw NOT_FAST;
  const itemLocal = names.resolve(itemTag.name).local;
  if (itemLocal !== 'item' && itemLocal !== 'entry') throw NOT_FAST;
  if (outerDepth + 1 > limits.maxDepth) throw NOT_FAST;
  const fields = Object.create(null) as Fields;
  let other: Fields | undefined;
  let foreign: Fields | undefined;
  let itemChars = 0;
  let itemFields = 0;
  /** Open elements inside the item (the field is the first). */
  const open: string[] = [];
  let fieldName: string | undefined;
  let fieldGoogle = false;
  let fieldForeign = false;
  let fieldText = '';
  let fieldHref: string | undefined;
  let fieldHasChildren = false;
  let fieldHasOwnText = false;

  const onText = (text: string): void => {
    if (fieldName === undefined) return;
    if (fieldHasChildren && !fieldHasOwnText && open.length === 1 && !isXmlWhitespace(text)) fieldHasOwnText = true;
    itemChars += text.length;
    if (itemChars > limits.maxItemChars) throw NOT_FAST;
    fieldText += text;
  };
  const finishField = (): void => {
    const name = fieldName ?? '';
    fieldName = undefined;
    const text = fieldText;
    fieldText = '';
    if (fieldHasChildren && !fieldHasOwnText) return;
    if (++itemFields > limits.maxItemFields) throw NOT_FAST;
    const tier = fieldGoogle ? fields : fieldForeign ? (foreign ??= Object.create(null) as Fields) : (other ??= Object.create(null) as Fields);
    addValue(tier, name, fieldHref ?? text.trim());
  };

  let pos = itemTag.end;
  let closed = itemTag.empty;
  while (!closed) {
    const lt = s.indexOf('<', pos);
    if (lt === -1) throw NOT_FAST;
    if (lt > pos) onText(textOf(s.slice(pos, lt)));
    const c = s.charCodeAt(lt + 1);
    if (c === SLASH) {
      // End tag: the name of the element it closes, then optional spaces.
      const expected = open.length === 0 ? itemTag.name : (open[open.length - 1] ?? '');
      if (!s.startsWith(expected, lt + 2)) throw NOT_FAST;
      let i = lt + 2 + expected.length;
      while (isSpace(s.charCodeAt(i))) i++;
      if (s.charCodeAt(i) !== GT) throw NOT_FAST;
      pos = i + 1;
      if (open.length === 0) {
        closed = true;
        break;
      }
      open.pop();
      if (open.length === 0 && fieldName !== undefined) finishField();
      continue;
    }
    if (c === 0x21) {
      if (!s.startsWith('<![CDATA[', lt)) throw NOT_FAST;
      const end = s.indexOf(']]>', lt + 9);
      if (end === -1) throw NOT_FAST;
      const raw = s.slice(lt + 9, end);
      if (TEXT_BAD.test(raw)) throw NOT_FAST;
      onText(raw.includes('\r') ? raw.replace(/\r\n?/g, '\n') : raw);
      pos = end + 3;
      continue;
    }
    const tag = startTag(s, lt);
    pos = tag.end;
    if (outerDepth + 2 + open.length > limits.maxDepth) throw NOT_FAST;
    if (open.length === 0) {
      // A field.
      const resolved = names.resolve(tag.name);
      fieldName = resolved.local;
      fieldGoogle = resolved.google;
      fieldForeign = resolved.foreign;
      fieldText = '';
      fieldHref = undefined;
      fieldHasChildren = false;
      fieldHasOwnText = false;
      if (resolved.local === 'link' && tag.attributes !== undefined) {
        const href = tag.attributes.href;
        if (href !== undefined) {
          const rel = tag.attributes.rel;
          if (rel === undefined || rel === 'alternate') fieldHref = href;
          else fieldName = undefined;
        }
      }
    } else if (open.length === 1 && fieldName !== undefined && !fieldHasChildren) {
      fieldHasChildren = true;
      fieldHasOwnText = !isXmlWhitespace(fieldText);
    }
    if (tag.empty) {
      if (open.length === 0 && fieldName !== undefined) finishField();
    } else {
      open.push(tag.name);
    }
  }
  if (pos !== s.length) throw NOT_FAST;

  mergeFieldTiers(fields, other, foreign);
  if (itemLocal === 'entry' && fields.description === undefined) {
    const source = fields.summary !== undefined ? 'summary' : fields.content !== undefined ? 'content' : undefined;
    if (source !== undefined) {
      fields.description = fields[source] ?? '';
      delete fields[source];
    }
  }
  return { row, line, fields };
}
