/**
 * An independent reading of a feed with fast-xml-parser (whole document, parseTagValue false so
 * "04006381333931" stays a string), mapped to FeedItem fields by the same rules the streaming
 * reader documents: local names, g: over other namespaces, repeated -> array, structured
 * children skipped, Atom link href and summary/content -> description.
 *
 * fast-xml-parser leaves numeric character references (&#8212;) undecoded and trims the text
 * and the CDATA parts of one element separately; the fixtures cross-checked avoid both. It does
 * not trim a CDATA section at all: the oracle trims every value, as the reader does.
 */
import { XMLParser } from 'fast-xml-parser';

type Fields = Record<string, string | string[]>;
type Node = string | { [key: string]: Node | Node[] };

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  processEntities: true,
});

function isAttribute(key: string): boolean {
  return key.startsWith('@_');
}

/** The value of one element as a field, or undefined when the reader skips it. */
function fieldValue(local: string, node: Node): string | undefined {
  if (typeof node === 'string') return node.trim();
  const keys = Object.keys(node);
  if (local === 'link' && typeof node['@_href'] === 'string') {
    const rel = node['@_rel'];
    return rel === undefined || rel === 'alternate' ? node['@_href'] : undefined;
  }
  const text = node['#text'];
  if (typeof text === 'string') return text.trim();
  if (keys.every(isAttribute)) return '';
  return undefined; // holds elements: a structured attribute (g:shipping)
}

function add(fields: Fields, name: string, value: string): void {
  const existing = fields[name];
  if (existing === undefined) fields[name] = value;
  else if (typeof existing === 'string') fields[name] = [existing, value];
  else existing.push(value);
}

function itemFields(item: Record<string, Node | Node[]>, atom: boolean): Fields {
  const google: Fields = {};
  const other: Fields = {};
  for (const [key, raw] of Object.entries(item)) {
    if (isAttribute(key)) continue;
    const colon = key.indexOf(':');
    const local = colon === -1 ? key : key.slice(colon + 1);
    const target = key.slice(0, colon) === 'g' ? google : other;
    for (const node of Array.isArray(raw) ? raw : [raw]) {
      const value = fieldValue(local, node);
      if (value !== undefined) add(target, local, value);
    }
  }
  for (const [key, value] of Object.entries(other)) if (google[key] === undefined) google[key] = value;
  if (atom && google.description === undefined) {
    const source = google.summary !== undefined ? 'summary' : google.content !== undefined ? 'content' : undefined;
    if (source !== undefined) {
      google.description = google[source] ?? '';
      delete google[source];
    }
  }
  return google;
}

function asList(node: Node | Node[] | undefined): Record<string, Node | Node[]>[] {
  if (node === undefined) return [];
  const list = Array.isArray(node) ? node : [node];
  return list.map((entry) => (typeof entry === 'string' ? {} : entry));
}

/** The fields of every item (RSS) or entry (Atom) of the document, in order. */
export function oracleFeedFields(xml: string): Fields[] {
  const document = parser.parse(xml) as Record<string, Node>;
  const rss = document.rss;
  if (rss !== undefined && typeof rss !== 'string') {
    const channel = rss.channel;
    const items = channel !== undefined && !Array.isArray(channel) && typeof channel !== 'string' ? channel.item : undefined;
    return asList(items).map((item) => itemFields(item, false));
  }
  const feed = document.feed;
  if (feed !== undefined && typeof feed !== 'string') return asList(feed.entry).map((entry) => itemFields(entry, true));
  throw new Error('neither RSS nor Atom');
}
