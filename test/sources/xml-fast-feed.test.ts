/**
 * The fast XML reader (items cut out of the bytes and read one by one, xml-fast-feed.ts)
 * against the full reader (xml-feed.ts): the same items, rejects, rows, lines and error,
 * whatever the input and its chunking. And it must really be fast: on ordinary feeds (CDATA,
 * comments, namespaces, Atom, CRLF, Latin-1...) it never falls back to the full reader.
 */
import { readFile } from 'node:fs/promises';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ByteSource } from '../../src/sources/byte-source.js';
import { cutXmlFeed } from '../../src/sources/xml-cut-feed.js';
import { readXmlFeedFast } from '../../src/sources/xml-fast-feed.js';
import { readXmlFeed } from '../../src/sources/xml-feed.js';
import { NameResolver, readItemFast } from '../../src/sources/xml-fast-item.js';
import { XmlItemCutter, type CutPiece } from '../../src/sources/xml-item-cutter.js';
import { CutItemParser } from '../../src/sources/xml-item-parser.js';
import { applyEdits, cutsArbitrary, editArbitrary, fixturePath, plainItems, readAllFeed, streamCutAt } from './helpers.js';

const RUNS = 400;
const XML_FIXTURES = ['merchant-rss.xml', 'merchant-atom.xml', 'not-well-formed.xml', 'billion-laughs.xml', 'external-entity.xml'];
const XML_TOKENS = [
  '<', '>', '&', ';', '/', '"', "'", '=', ' ', '\n', '\r', '\r\n', ']', ']]', '<item>', '</item>', '<entry>', '</entry>', '<item/>', '<g:price>', '</g:price>',
  '<![CDATA[', ']]>', '<![CDATA[<item>]]>', '<!-- </item> -->', '<?pi </item>?>', '<a x="</item>">', '<a x=\'>\'/>', '&amp;', '&nbsp;', '&#0;', '&#x1F600;',
  '<!--', '-->', '<?xml version="1.0"?>', '<?xml version="1.1"?>', '<!DOCTYPE x [<!ENTITY a "b">]>', '<!DOCTYPE x>', 'xmlns:g="x"', ' xmlns="http://base.google.com/ns/1.0"',
  '\u000b', '\u00e9', '\ufeff', '<g:item>', '</g:item>',
].map((token) => Buffer.from(token));
const xmlEdit = editArbitrary(XML_TOKENS);

/** The fixture with its items repeated `times` more times. */
function enlarged(bytes: Buffer, times: number): Buffer {
  const text = bytes.toString('latin1');
  const first = text.search(/<(item|entry)>/);
  const lastEnd = Math.max(text.lastIndexOf('</item>') + 7, text.lastIndexOf('</entry>') + 8);
  if (times === 0 || first === -1 || lastEnd <= first) return bytes;
  const items = bytes.subarray(first, lastEnd);
  return Buffer.concat([bytes.subarray(0, lastEnd), ...Array.from({ length: times }, () => items), bytes.subarray(lastEnd)]);
}

/** Random valid feeds (set by the test that defines them, used by the next). */
let validFeeds: fc.Arbitrary<string> = fc.constant('<rss><channel></channel></rss>');

interface Compared {
  fast: unknown;
  full: unknown;
  doubts: string[];
  /** Rows read the fast way (all of them when there was no doubt). */
  fastRows: number;
}

function source(bytes: Buffer, cuts: readonly number[], encoding?: 'utf8' | 'latin1'): ByteSource {
  return { name: 'feed.xml', stream: streamCutAt(bytes, cuts), encoding };
}

/** What a reader gave, the order of each item's fields included (buildProduct's warnings follow it). */
function summary(result: Awaited<ReturnType<typeof readAllFeed>>): unknown {
  const items = plainItems(result.items).map((item) => ({ ...item, keys: Object.keys(item.fields) }));
  return { items, rejects: result.rejects, error: result.error instanceof Error ? result.error.message : result.error };
}

async function compare(bytes: Buffer, cuts: readonly number[] = [], options: { encoding?: 'utf8' | 'latin1'; maxItemChars?: number } = {}): Promise<Compared> {
  const limits = options.maxItemChars === undefined ? undefined : { maxItemChars: options.maxItemChars };
  const doubts: string[] = [];
  let fastRows: number | undefined;
  const fast = await readAllFeed(
    readXmlFeedFast(source(bytes, cuts, options.encoding), () => Promise.resolve(source(bytes, [], options.encoding)), {
      limits,
      onDoubt: (reason, rowsDone) => {
        doubts.push(reason);
        fastRows = rowsDone;
      },
    }),
  );
  const full = await readAllFeed(readXmlFeed(source(bytes, [], options.encoding), { limits }));
  return { fast: summary(fast), full: summary(full), doubts, fastRows: fastRows ?? fast.items.length + fast.rejects.length };
}

async function expectSame(bytes: Buffer | string, options: { encoding?: 'utf8' | 'latin1'; cuts?: number[]; fast?: boolean } = {}): Promise<Compared> {
  const input = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
  const result = await compare(input, options.cuts ?? [], options);
  expect(result.fast).toEqual(result.full);
  if (options.fast === true) expect(result.doubts).toEqual([]);
  if (options.fast === false) expect(result.doubts).not.toEqual([]);
  return result;
}

const fixtures = new Map<string, Buffer>();
beforeAll(async () => {
  for (const name of XML_FIXTURES) fixtures.set(name, await readFile(fixturePath(name)));
});
function fixture(name: string): Buffer {
  const bytes = fixtures.get(name);
  if (bytes === undefined) throw new Error(`fixture ${name} not loaded`);
  return bytes;
}

const rss = (items: string, header = '<rss version="2.0" xmlns:g="http://base.google.com/ns/1.0"><channel><title>t</title>\n') => `<?xml version="1.0" encoding="UTF-8"?>\n${header}${items}\n</channel></rss>\n`;
const item = (id: string, extra = '') => `<item>\n  <g:id>${id}</g:id>\n  <title>Product ${id}</title>${extra}\n</item>\n`;

describe('the fast XML reader gives exactly what the full reader gives', () => {
  it('on the fixtures, in any chunking, without falling back on the valid ones', async () => {
    for (const name of ['merchant-rss.xml', 'merchant-atom.xml']) {
      for (const cuts of [[], [1], [7, 100, 101, 350], Array.from({ length: 60 }, (_, i) => i * 37 + 3)]) {
        await expectSame(enlarged(fixture(name), 3), { cuts, fast: true });
      }
    }
    for (const name of ['not-well-formed.xml', 'billion-laughs.xml', 'external-entity.xml']) await expectSame(fixture(name), { fast: false });
  });

  it('on random edits of the fixtures, in random chunks', async () => {
    let someFast = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...XML_FIXTURES), fc.integer({ min: 0, max: 6 }), fc.array(xmlEdit, { maxLength: 6 }), cutsArbitrary, fc.constantFrom(undefined, 200), async (name, times, edits, cuts, maxItemChars) => {
        const result = await compare(applyEdits(enlarged(fixture(name), times), edits), cuts, { maxItemChars });
        expect(result.fast).toEqual(result.full);
        if (result.fastRows > 0) someFast++;
      }),
      { numRuns: Number(process.env.ADSYNC_FUZZ_RUNS ?? RUNS) },
    );
    // The edits break many inputs, but the fast way must have read items in a good share of them.
    expect(someFast).toBeGreaterThan(Number(process.env.ADSYNC_FUZZ_RUNS ?? RUNS) / 20);
  });

  it('on random edits of large feeds, in chunks larger than the 16 KiB the cutter joins to what a chunk left', async () => {
    // Chunk sizes around and above the join (xml-item-cutter.ts, push): an item cut by a border
    // is completed within the next chunk's first 16 KiB, or past them, or in a chunk after that.
    const chunkSizes = fc.array(fc.oneof(fc.integer({ min: 16 * 1024 - 64, max: 16 * 1024 + 64 }), fc.integer({ min: 1, max: 70_000 })), { minLength: 1, maxLength: 8 });
    // Long items too: a title made longer than a join by text inserted before its end tag.
    const longTitles = fc.array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 10_000, max: 40_000 })), { minLength: 1, maxLength: 4 });
    const lengthened = (bytes: Buffer, titles: readonly [number, number][]): Buffer => {
      let text = bytes.toString('latin1');
      for (const [where, length] of titles) {
        const ends = [...text.matchAll(/<\/title>/g)].map((m) => m.index);
        const at = ends[Math.floor(where * ends.length)];
        if (at !== undefined) text = `${text.slice(0, at)}${'long title '.repeat(length / 10)}${text.slice(at)}`;
      }
      return Buffer.from(text, 'latin1');
    };
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('merchant-rss.xml', 'merchant-atom.xml'), fc.integer({ min: 30, max: 60 }), longTitles, fc.array(xmlEdit, { maxLength: 4 }), chunkSizes, async (name, times, titles, edits, sizes) => {
        const bytes = applyEdits(lengthened(enlarged(fixture(name), times), titles), edits);
        const cuts: number[] = [];
        for (let at = 0, i = 0; at < bytes.length; i++) cuts.push((at += sizes[i % sizes.length] ?? 1));
        const result = await compare(bytes, cuts);
        expect(result.fast).toEqual(result.full);
        // A doubt would hide a wrong cut behind the full reader: unedited, there is none.
        if (edits.length === 0) expect(result.doubts).toEqual([]);
      }),
      { numRuns: Math.ceil(Number(process.env.ADSYNC_FUZZ_RUNS ?? RUNS) / 8) },
    );
    // Unedited, the whole feed the fast way.
    await expectSame(enlarged(fixture('merchant-rss.xml'), 40), { cuts: Array.from({ length: 12 }, (_, i) => (i + 1) * (16 * 1024 + 100)), fast: true });
  });

  it('on random valid feeds, the fast way all through', async () => {
    const text = fc.constantFrom('plain', ' spaced  out ', 'AT&amp;T', '&lt;b&gt;', '&#233;t&#xE9;', '\u00e9\u4e2d\ud83d\ude00', 'a > b', '', 'a\r\nb\rc', '&#13;&#x9;', '&quot;&apos;', ']] ]>', '\u00a0trimmed?\u00a0', '\ufeff');
    const cdata = fc.constantFrom('<![CDATA[<p>x</p>]]>', '<![CDATA[</item>]]>', '<![CDATA[a]]]]><![CDATA[>b]]>', '<![CDATA[]]>');
    const value = fc.array(fc.oneof(text, cdata, fc.constantFrom('<!-- note -->', '<?pi x?>')), { maxLength: 3 }).map((parts) => parts.join(''));
    const name = fc.constantFrom('g:id', 'id', 'title', 'g:price', 'description', 'g:additional_image_link', 'x:id', 'link', 'summary', 'content', 'unknown_field');
    const field = fc.tuple(
      name,
      value,
      fc.constantFrom('', ' rel="alternate" href="https://h/?a=1&amp;b=2"', ' href="https://h/x"', ' rel="self" href="https://h/self"', " a='>'", ' a = "1"  b="&#233;"', ' xmlns:x="http://base.google.com/ns/1.0"', ' type="html"'),
      fc.boolean(),
    ).map(
      ([n, v, attributes, empty]) => (empty ? `<${n}${attributes}/>` : `<${n}${attributes}>${v}</${n}>`),
    );
    const structured = fc.constantFrom(
      '<g:shipping><g:country>US</g:country><g:price>1 USD</g:price></g:shipping>',
      '<g:shipping>\n  <g:country>US</g:country>\n</g:shipping>',
      '<description>own <b>bold</b> text</description>',
      '<description><b>only</b> <i>children</i></description>',
      '<g:tax><g:rate/><x:deep><y>z</y></x:deep></g:tax>',
    );
    const space = fc.constantFrom('', '\n', '\r\n', '\n  ', '\t');
    const entry = fc.tuple(fc.constantFrom('item', 'entry', 'g:item'), fc.constantFrom('', ' xmlns:x="urn:x"', ' xmlns:g="urn:not-google"'), fc.array(fc.tuple(space, fc.oneof(field, structured)), { maxLength: 8 }), space).map(
      ([tag, attributes, fields, end]) => `<${tag}${attributes}>${fields.map(([s, f]) => s + f).join('')}${end}</${tag}>`,
    );
    const between = fc.constantFrom('\n', '', '\r\n', '\n<!-- between -->\n', '<title>x</title>', '\n<?pi?>\n');
    const feed = fc.tuple(fc.constantFrom('rss', 'atom'), fc.array(fc.tuple(between, entry), { maxLength: 12 }), between).map(([kind, entries, tail]) => {
      const body = entries.map(([b, e]) => b + e).join('') + tail;
      return kind === 'rss'
        ? `<?xml version="1.0"?>\n<rss xmlns:g="http://base.google.com/ns/1.0"><channel>${body}</channel></rss>\n`
        : `<feed xmlns="http://www.w3.org/2005/Atom" xmlns:g="http://base.google.com/ns/1.0">${body}</feed>`;
    });
    validFeeds = feed;
    await fc.assert(
      fc.asyncProperty(feed, cutsArbitrary, async (xml, cuts) => {
        const result = await compare(Buffer.from(xml), cuts.map((c) => c % (xml.length + 1)));
        expect(result.fast).toEqual(result.full);
        expect(result.doubts).toEqual([]);
      }),
      { numRuns: Number(process.env.ADSYNC_FUZZ_RUNS ?? RUNS) },
    );
  });

  it('reads each item the same with and without the fast item reader (xml-fast-item.ts)', async () => {
    const limits = { maxDepth: 64, maxItemChars: 4 * 1024 * 1024, maxItemFields: 10_000 };
    const edited = fc.tuple(validFeeds, fc.array(xmlEdit, { maxLength: 2 })).map(([xml, edits]) => applyEdits(Buffer.from(xml), edits));
    let fastItems = 0;
    let items = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(validFeeds.map((xml) => Buffer.from(xml)), edited), async (bytes) => {
        const withFast = new CutItemParser('f.xml', limits);
        const saxesOnly = new CutItemParser('f.xml', limits, false);
        for await (const batch of cutXmlFeed({ name: 'f.xml', stream: streamCutAt(bytes, []) })) {
          for (const item of batch.items) {
            const fast = readItemFast(item.bytes.toString('utf8'), new NameResolver(item.context.bindings), item.context.depth, limits, item.row, item.line);
            const a = withFast.parse(item.bytes, item.context, item.row, item.line);
            const b = saxesOnly.parse(item.bytes, item.context, item.row, item.line);
            items++;
            if (fast !== undefined) {
              fastItems++;
              expect(b.kind).toBe('item');
              expect(b.kind === 'item' && b.problems).toBe(0);
            }
            const keys = (r: typeof a) => (r.kind === 'item' ? Object.keys(r.item.fields) : []);
            expect(a).toEqual(b);
            expect(keys(a)).toEqual(keys(b));
          }
        }
      }),
      { numRuns: Number(process.env.ADSYNC_FUZZ_RUNS ?? RUNS) },
    );
    // The generator is hostile (comments, processing instructions, namespace declarations in
    // items): a good share of its items must still be read the fast way.
    expect(fastItems).toBeGreaterThan(items / 8);
  });

  it('reads items made of random XML tokens the same with and without the fast item reader', async () => {
    const limits = { maxDepth: 8, maxItemChars: 200, maxItemFields: 6 };
    const token = fc.constantFrom(
      '<g:id>', '</g:id>', '<title>', '</title>', '<title >', '</title >', '<a:b:c>', '</a:b:c>', '<g:>', '<link', ' href="h"', ' rel="self"', " rel='alternate'", '/>', '>', '<',
      '<é>', '</é>', '<x y="1"y="2">', '<x y="1" y="2">', '<x y=1>', '<x y="a<b">', '<x y="a\tb">', '<x y="&amp;&#65;&#x42;">', '<x y="&bad;">', '<x xmlns:g="urn:x">', '</x>',
      '<![CDATA[', ']]>', '<![CDATA[x]]>', '<![CDATA[\r\n]]>', '<!-- c -->', '<?p?>', '<!DOCTYPE x>', '&amp;', '&lt;', '&#0;', '&#65;', '&#x1F600;', '&#xD800;', '&#X41;', '&#00000065;', '&nbsp;', '&', ';',
      ']]', ']]>', '>', '\u0001', '\ufffe', '\r', '\r\n', '\n', '\t', ' ', 'text', '\u00e9', '<b>', '</b>', '<b/>', '<c><d><e><f><g><h><i><j>', '</j></i></h></g></f></e></d></c>',
      'x'.repeat(150),
    );
    const itemText = fc.tuple(fc.constantFrom('item', 'entry', 'g:item'), fc.array(token, { maxLength: 25 })).map(([tag, tokens]) => `<${tag}>${tokens.join('')}</${tag}>`);
    let fastItems = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(itemText, { minLength: 1, maxLength: 4 }), async (items) => {
        const xml = `<rss xmlns:g="http://base.google.com/ns/1.0"><channel>\n${items.join('\n')}\n</channel></rss>`;
        const withFast = new CutItemParser('f.xml', limits);
        const saxesOnly = new CutItemParser('f.xml', limits, false);
        for await (const batch of cutXmlFeed({ name: 'f.xml', stream: streamCutAt(Buffer.from(xml), []) }, { limits })) {
          for (const item of batch.items) {
            if (readItemFast(item.bytes.toString('utf8'), new NameResolver(item.context.bindings), item.context.depth, limits, item.row, item.line) !== undefined) fastItems++;
            const a = withFast.parse(item.bytes, item.context, item.row, item.line);
            const b = saxesOnly.parse(item.bytes, item.context, item.row, item.line);
            expect(a).toEqual(b);
            expect(a.kind === 'item' ? Object.keys(a.item.fields) : []).toEqual(b.kind === 'item' ? Object.keys(b.item.fields) : []);
          }
        }
      }),
      { numRuns: Number(process.env.ADSYNC_FUZZ_RUNS ?? RUNS) * 5 },
    );
    if (process.env.ADSYNC_FUZZ_STATS) console.log('items read fast', fastItems);
    expect(fastItems).toBeGreaterThan(0);
  });

  it('on random bytes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 2000 }), cutsArbitrary, async (bytes, cuts) => {
        const result = await compare(Buffer.from(bytes), cuts);
        expect(result.fast).toEqual(result.full);
      }),
      { numRuns: RUNS },
    );
  });

  it('cuts items correctly around CDATA, comments, processing instructions and quoted ">"', async () => {
    const tricky = [
      item('1', '\n  <description><![CDATA[<item><g:id>fake</g:id></item> ]] > ]]></description>'),
      item('2', '\n  <!-- </item><item> -->\n  <?note </item>?>'),
      item('3', '\n  <link rel="alternate" href="https://x.example/?a=1&amp;b=>2"/>'),
      "<item note='a > b'>\n<g:id>4</g:id></item>",
      '<item/>',
      '<g:item><g:id>6</g:id><g:item>nested item element is a field</g:item></g:item>',
      '<item><g:id>7</g:id><g:shipping><g:price>1 USD</g:price></g:shipping></item>',
    ].join('');
    await expectSame(rss(tricky), { fast: true });
    await expectSame(rss(tricky), { fast: true, cuts: Array.from({ length: 200 }, (_, i) => i * 7 + 1) });
  });

  it('keeps the namespaces in scope: declared on the root, the channel, an item, or as the default namespace', async () => {
    const header = '<rss version="2.0"><channel xmlns:p="http://base.google.com/ns/1.0" xmlns="http://base.google.com/ns/1.0">\n';
    await expectSame(rss(`<item><p:id>1</p:id><id>atom-ish</id></item><item xmlns:p="urn:other"><p:id>2</p:id><id>3</id></item><item><p:id>4</p:id></item>`, header), { fast: true });
    // Undeclared g: is the Google namespace; an item that rebinds g is read with its own binding.
    await expectSame(rss(`<item><g:id>1</g:id><id>x</id></item><item xmlns:g="urn:not-google"><g:id>2</g:id><id>y</id></item>`, '<rss><channel>'), { fast: true });
    // Items at another depth (inside a group element) and after channel-level elements between items.
    await expectSame(rss(`${item('1')}<group xmlns:q="urn:q">${item('2')}</group><note>between &amp; items</note>${item('3')}`), { fast: true });
  });

  it('counts lines with LF, CR LF and lone CR, and rows with rejected items', async () => {
    const feed = rss([item('1'), '<item><g:id>2</g:id><title>&nbsp;</title></item>', item('3', '\n<g:price>1,00 EUR</g:price>'), '<item><g:id>4</g:id><title>bare & ampersand</title></item>', item('5')].join(''));
    await expectSame(feed, { fast: true });
    await expectSame(feed.replace(/\n/g, '\r\n'), { fast: true });
    await expectSame(feed.replace(/\n/g, '\r'), {});
  });

  it('reads a BOM, Latin-1 and Windows-1252 feeds the fast way', async () => {
    await expectSame(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(rss(item('1', '<g:brand>Caf\u00e9</g:brand>')))]), { fast: true });
    const latin = Buffer.from(rss(item('1', '<g:brand>Caf\u00e9 \u0080</g:brand>')).replace('UTF-8', 'ISO-8859-1'), 'latin1');
    await expectSame(latin, { fast: true });
    await expectSame(Buffer.from(rss(item('1', '<g:brand>Caf\u00e9</g:brand>')), 'latin1'), { encoding: 'latin1', fast: true });
  });

  it('falls back to the full reader, with the same result, when in doubt', async () => {
    const valid = rss([item('1'), item('2'), item('3')].join(''));
    // Not UTF-8 (a stray byte in the third item), UTF-16, XML 1.1, a DOCTYPE with entities, a cut-off feed.
    const bad = Buffer.from(valid);
    bad[bad.lastIndexOf('Product 3') + 2] = 0xff;
    await expectSame(bad, { fast: false });
    await expectSame(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(valid, 'utf16le')]), { fast: false });
    await expectSame(valid.replace('version="1.0"', 'version="1.1"'), { fast: false });
    await expectSame(valid.replace('<rss', '<!DOCTYPE rss [<!ENTITY e "x">]>\n<rss'), { fast: false });
    await expectSame(valid.slice(0, valid.indexOf('Product 3')), { fast: false });
    // A malformed item in the middle: the items before it are read the fast way, then the full reader reports it.
    await expectSame(rss([item('1'), '<item><g:id>2</g:id><title>x</titel></item>', item('3')].join('')), { fast: false });
    // ]]> in text between items.
    await expectSame(rss([item('1'), ']]', item('2'), '>', item('3')].join('')), {});
  });

  it('applies the feed-wide limit on item-level problems exactly', async () => {
    const bad = '<item><g:id>x</g:id><title>&nbsp;</title></item>\n';
    for (const count of [9_999, 10_000, 10_001]) {
      const result = await expectSame(rss(item('0') + bad.repeat(count) + item('last')));
      expect(result.doubts.length).toBe(count > 10_000 ? 1 : 0);
    }
  });
});

describe('the item cutter', () => {
  function cut(text: string, chunk = 0): CutPiece[] {
    const cutter = new XmlItemCutter();
    const out: CutPiece[] = [];
    const bytes = Buffer.from(text);
    if (chunk === 0) cutter.push(bytes, out);
    else for (let i = 0; i < bytes.length; i += chunk) cutter.push(bytes.subarray(i, i + chunk), out);
    cutter.end(out);
    return out;
  }
  const kinds = (pieces: CutPiece[]) =>
    pieces.map((p) => (p.kind === 'item' ? `item:${p.bytes.toString()}` : p.kind === 'gap' ? `gap:${p.bytes.toString()}` : `doubt:${p.reason}`)).join('|');

  it('finds items, not the root, and not what is hidden in CDATA, comments and quotes', () => {
    const text = '<rss><channel><!-- <item> --><item a=">"><x><![CDATA[</item>]]></x></item><entry/></channel></rss>';
    for (const chunk of [0, 1, 2, 5]) {
      const joined = kinds(cut(text, chunk)).replace(/\|gap:/g, '').replace(/^gap:/, 'gap:');
      expect(joined).toContain('item:<item a=">"><x><![CDATA[</item>]]></x></item>');
      expect(joined).toContain('item:<entry/>');
    }
    expect(kinds(cut('<item><g:id>1</g:id></item>'))).toBe('gap:<item><g:id>1</g:id></item>');
  });

  it('cuts the same pieces whatever the chunks, across and beyond where a chunk is joined to what the last one left', () => {
    // A chunk is joined to what the previous one left pending (an item cut by its border) by
    // its first 16 KiB only, or whole when the pending item goes on past them.
    const items: string[] = [];
    for (let i = 0; i < 400; i++) {
      const long = i % 97 === 5 ? `<description><![CDATA[${'x</item>'.repeat(2500 + i * 40)}]]></description>` : '';
      items.push(`<item n="${i}" a='>' b="" c=">">\n  <g:id>${i}</g:id><!-- </item> -->${long}<title>${'t'.repeat(i % 300)}</title>\n</item>\n`);
    }
    const text = `<?xml version="1.0"?>\n<rss><channel><title>a</title>\n${items.join('')}<!-- ${'c'.repeat(30_000)} -->\n</channel></rss>\n`;
    const pieces = (parts: CutPiece[]) => {
      const cut = parts.filter((p) => p.kind === 'item').map((p) => (p.kind === 'item' ? `${p.tagEnd}:${p.depth}:${p.bytes.toString()}` : ''));
      const gaps = parts.map((p) => (p.kind === 'gap' ? p.bytes.toString() : '')).join('');
      return { cut, gaps, doubts: parts.filter((p) => p.kind === 'doubt') };
    };
    const whole = pieces(cut(text));
    expect(whole.cut).toHaveLength(400);
    // tagEnd: the ">" that ends the start tag, not one in its quoted values.
    expect(whole.cut.map((c) => Number(c.split(':')[0]))).toEqual(Array.from({ length: 400 }, (_, i) => `<item n="${i}" a='>' b="" c=">">`.length - 1));
    expect(whole.doubts).toEqual([]);
    for (const chunk of [16 * 1024 - 1, 16 * 1024, 16 * 1024 + 1, 20_000, 64 * 1024, 100_000]) expect(pieces(cut(text, chunk))).toEqual(whole);
  });

  it('doubts what it does not understand', () => {
    expect(kinds(cut('<rss><!ELEMENT x ANY><channel/></rss>'))).toContain('doubt:a markup declaration');
    expect(kinds(cut('<!DOCTYPE rss [<!ENTITY a "b">]><rss/>'))).toContain('doubt:a DOCTYPE with an internal subset');
    expect(kinds(cut('<rss><channel><item><g:id>'))).toContain('doubt:the feed ends inside an item');
  });

  it('gives every item of a real feed with its line (the full reader agrees)', async () => {
    const bytes = enlarged(fixture('merchant-rss.xml'), 20);
    const lines: number[] = [];
    for await (const batch of cutXmlFeed({ name: 'f.xml', stream: streamCutAt(bytes, [100, 2000, 2001]) })) lines.push(...batch.items.map((i) => i.line));
    const full = await readAllFeed(readXmlFeed({ name: 'f.xml', stream: streamCutAt(bytes, []) }));
    expect(lines).toEqual([...full.items.map((i) => i.line), ...full.rejects.map((r) => r.line)].sort((a, b) => a - b));
  });
});
