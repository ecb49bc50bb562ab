import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { SourceError } from '../../src/errors.js';
import { readXmlFeed, type XmlFeedOptions } from '../../src/sources/xml-feed.js';
import { fixturePath, plainItems, readAllFeed, streamOf, withTempDir } from './helpers.js';
import { oracleFeedFields } from './xml-oracle.js';

const RSS_ITEMS = [
  {
    row: 1,
    line: 7,
    fields: {
      id: '00123',
      title: 'Acme <Rocket> Skates & Helmet',
      description: 'Fast skates & a helmet, <b>now</b> with "wheels" \'n\' brakes',
      link: 'https://shop.example.com/p/00123?ref=feed&utm=x',
      image_link: 'https://img.example.com/00123.jpg',
      additional_image_link: ['https://img.example.com/00123-1.jpg', 'https://img.example.com/00123-2.jpg'],
      price: '49.99 USD',
      sale_price: '39.99 USD',
      availability: 'in stock',
      condition: 'new',
      brand: 'Acme',
      gtin: '04006381333931',
      custom_label_0: 'summer sale',
    },
  },
  {
    row: 2,
    line: 42,
    fields: {
      id: '0000000042',
      title: 'The g:title wins',
      description: 'Line one<br/>Line two',
      link: 'https://shop.example.com/p/42',
      image_link: 'https://img.example.com/42.jpg',
      price: '1,299.00 EUR',
      availability: 'out_of_stock',
      condition: 'refurbished',
      mpn: 'M-42',
      additional_image_link: 'https://img.example.com/42-1.jpg,https://img.example.com/42-2.jpg',
      sale_price: '',
      size: '',
      color: 'Grün & Blau',
    },
  },
  {
    row: 3,
    line: 58,
    fields: {
      title: 'Minimal item with plain RSS elements',
      link: 'https://shop.example.com/p/minimal',
      description: '<p>HTML in CDATA stays as it is</p>',
      guid: 'minimal-1',
      id: 'minimal-1',
    },
  },
];

const ATOM_ITEMS = [
  {
    row: 1,
    line: 6,
    fields: {
      id: '000777',
      title: 'Atom & Eve',
      link: 'https://shop.example.com/p/777?a=1&b=2',
      description: 'Summary becomes the description',
      image_link: 'https://img.example.com/777.jpg',
      additional_image_link: ['https://img.example.com/777-1.jpg', 'https://img.example.com/777-2.jpg', 'https://img.example.com/777-3.jpg'],
      price: '19.00 USD',
      gtin: '0012345678905',
      availability: 'in stock',
    },
  },
  {
    row: 2,
    line: 22,
    fields: {
      id: '778',
      title: 'Entry with a description and content',
      link: 'https://shop.example.com/p/778',
      description: 'The g:description',
      content: '<p>Content is kept as content when a description exists</p>',
      price: '5 USD',
    },
  },
  {
    row: 3,
    line: 30,
    fields: { id: '779', title: 'Content only', link: 'https://shop.example.com/p/779', description: 'Content becomes the description' },
  },
];

async function readFixtureFeed(name: string, chunkBytes = 0) {
  const bytes = await readFile(fixturePath(name));
  return readAllFeed(readXmlFeed({ name, stream: streamOf(bytes, chunkBytes) }));
}

function readText(xml: string | Buffer, options: XmlFeedOptions = {}, chunkBytes = 0) {
  return readAllFeed(readXmlFeed({ name: 'feed.xml', stream: streamOf(xml, chunkBytes) }, options));
}

const rssOf = (items: string) => `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:g="http://base.google.com/ns/1.0"><channel><title>Shop</title>
${items}
</channel></rss>`;

describe('readXmlFeed on Google Merchant fixtures', () => {
  it.each([
    ['merchant-rss.xml', RSS_ITEMS],
    ['merchant-atom.xml', ATOM_ITEMS],
  ])('reads %s into the exact items', async (name, expected) => {
    const result = await readFixtureFeed(name);
    expect(result.error).toBeUndefined();
    expect(result.rejects).toEqual([]);
    expect(plainItems(result.items)).toEqual(expected);
    for (const item of result.items) {
      for (const value of Object.values(item.fields)) {
        for (const text of typeof value === 'string' ? [value] : value) expect(typeof text).toBe('string');
      }
    }
  });

  it.each(['merchant-rss.xml', 'merchant-atom.xml'])('agrees with fast-xml-parser on %s', async (name) => {
    const xml = await readFile(fixturePath(name), 'utf8');
    const result = await readFixtureFeed(name);
    expect(plainItems(result.items).map((item) => item.fields)).toEqual(oracleFeedFields(xml));
  });

  it.each(['merchant-rss.xml', 'merchant-atom.xml'])('gives the same items of %s whatever the chunk size', async (name) => {
    const whole = await readFixtureFeed(name);
    for (const chunkBytes of [1, 2, 3, 7, 100]) {
      const chunked = await readFixtureFeed(name, chunkBytes);
      expect({ chunkBytes, items: plainItems(chunked.items) }).toEqual({ chunkBytes, items: plainItems(whole.items) });
    }
  });

  it('stops reading the stream when the caller stops early', async () => {
    const stream = Readable.from([await readFile(fixturePath('merchant-rss.xml'))]);
    for await (const batch of readXmlFeed({ name: 'feed.xml', stream })) {
      expect(batch.items.length).toBeGreaterThan(0);
      break;
    }
    expect(stream.destroyed).toBe(true);
  });
});

describe('readXmlFeed field rules', () => {
  it('keeps all the text of a field with inline markup, joins text and CDATA, trims the whole', async () => {
    const result = await readText(
      rssOf(`<item><g:id>1</g:id>
        <description> Some <b>bold</b> and <i>italic <u>under</u></i> text<br/>end </description>
        <title>  x <![CDATA[ y < z ]]> w  </title></item>`),
    );
    expect(plainItems(result.items)).toEqual([
      { row: 1, line: 3, fields: { id: '1', description: 'Some bold and italic under textend', title: 'x  y < z  w' } },
    ]);
  });

  it('decodes character references and keeps leading zeros and numbers as strings', async () => {
    const result = await readText(rssOf('<item><g:id>007</g:id><g:price>1.50 USD</g:price><title>&#8212;&#x263A;&#233;</title><g:inventory>0010</g:inventory></item>'));
    expect(plainItems(result.items)[0]?.fields).toEqual({ id: '007', price: '1.50 USD', title: '—☺é', inventory: '0010' });
  });

  it('resolves the Google namespace by its URI, not by the prefix', async () => {
    const xml = `<rss xmlns:gm="http://base.google.com/ns/1.0" xmlns:g="http://example.com/not-google"><channel>
      <item><g:price>1 EUR</g:price><gm:price>2 EUR</gm:price><g:title>other title</g:title></item>
      <item xmlns:x="http://base.google.com/ns/1.0"><x:id>9</x:id><id>plain id</id></item>
    </channel></rss>`;
    const result = await readText(xml);
    expect(plainItems(result.items).map((item) => item.fields)).toEqual([{ price: '2 EUR', title: 'other title' }, { id: '9' }]);
  });

  it('a field of another namespace (media:, dc:) gives way to a plain one of the same name, and is read when there is none', async () => {
    const xml = `<rss xmlns:g="http://base.google.com/ns/1.0" xmlns:media="http://search.yahoo.com/mrss/" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel>
      <item><g:id>1</g:id><media:title>Media title</media:title><title>Base title</title><dc:description>DC text</dc:description><description>Own text</description></item>
      <item><g:id>2</g:id><media:title>Only a media title</media:title></item>
    </channel></rss>`;
    const result = await readText(xml);
    expect(plainItems(result.items).map((item) => item.fields)).toEqual([
      { id: '1', title: 'Base title', description: 'Own text' },
      { id: '2', title: 'Only a media title' },
    ]);
  });

  it('treats an undeclared g: prefix as the Google namespace', async () => {
    const result = await readText('<rss><channel><item><g:id>1</g:id><id>x</id></item></channel></rss>');
    expect(result.error).toBeUndefined();
    expect(plainItems(result.items)[0]?.fields).toEqual({ id: '1' });
  });

  it('reads an element named like an Object property as a plain field', async () => {
    const result = await readText(rssOf('<item><__proto__>p</__proto__><constructor>c</constructor><toString>t</toString><toString>u</toString></item>'));
    const fields = result.items[0]?.fields ?? {};
    expect(Object.getPrototypeOf(fields)).toBeNull();
    expect(Object.keys(fields)).toEqual(['__proto__', 'constructor', 'toString']);
    expect(fields['__proto__']).toBe('p');
    const inherited: string = 'toString';
    expect(fields[inherited]).toEqual(['t', 'u']);
  });

  it('rejects an item with an undefined entity (&nbsp;) and reads on', async () => {
    const result = await readText(rssOf('<item><g:id>1</g:id></item>\n<item><g:id>2</g:id><description>a&nbsp;b</description></item>\n<item><g:id>3</g:id></item>'));
    expect(result.error).toBeUndefined();
    expect(plainItems(result.items)).toEqual([
      { row: 1, line: 3, fields: { id: '1' } },
      { row: 3, line: 5, fields: { id: '3' } },
    ]);
    expect(result.rejects).toEqual([
      {
        row: 2,
        line: 4,
        reason:
          '<description> holds the undefined entity &nbsp; (XML defines only &amp; &lt; &gt; &quot; &apos;: write &#160; for a non-breaking space, or wrap the text in CDATA)',
      },
    ]);
  });

  it('rejects an item with a bare & (in text or in an attribute) instead of swallowing the rest of the feed', async () => {
    const xml = rssOf(
      [
        '<item><g:id>1</g:id><title>AT&T phones</title></item>',
        '<item><g:id>2</g:id><title><![CDATA[Tom & Jerry]]></title><!-- a & b --><?pi a & b?></item>',
        '<item><g:id>3</g:id><link href="https://x.example/p?a=1&b=2"/></item>',
        '<item><g:id>4</g:id><title>Fish &amp; Chips &#38; more</title></item>',
      ].join('\n'),
    );
    for (const chunkBytes of [0, 1, 5]) {
      const result = await readText(xml, {}, chunkBytes);
      expect(result.error).toBeUndefined();
      expect(plainItems(result.items)).toEqual([
        { row: 2, line: 4, fields: { id: '2', title: 'Tom & Jerry' } },
        { row: 4, line: 6, fields: { id: '4', title: 'Fish & Chips & more' } },
      ]);
      expect(result.rejects).toEqual([
        { row: 1, line: 3, reason: '<title> holds a bare "&" (write it as &amp;, or wrap the text in CDATA)' },
        { row: 3, line: 5, reason: '<link> holds a bare "&" (write it as &amp;, or wrap the text in CDATA)' },
      ]);
    }
  });

  it('rejects an item holding a character XML forbids, naming it', async () => {
    const result = await readText(rssOf('<item><g:id>1</g:id><title>bad\u000bchar</title></item><item><g:id>2</g:id></item>'));
    expect(result.rejects).toEqual([{ row: 1, line: 3, reason: '<title> holds a character XML does not allow (U+000B)' }]);
    expect(plainItems(result.items)).toEqual([{ row: 2, line: 3, fields: { id: '2' } }]);
  });

  it('rejects an item larger than the limit without keeping its text', async () => {
    const result = await readText(rssOf(`<item><g:id>1</g:id><description>${'x'.repeat(5000)}</description></item><item><g:id>2</g:id></item>`), {
      limits: { maxItemChars: 1000 },
    });
    expect(result.rejects).toEqual([{ row: 1, line: 3, reason: 'item is larger than 1000 characters' }]);
    expect(result.items.map((item) => item.fields.id)).toEqual(['2']);
  });
});

describe('readXmlFeed text encodings', () => {
  it('decodes a feed declared ISO-8859-1 as Windows-1252', async () => {
    const bytes = Buffer.concat([
      Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?><rss><channel><item><title>Caf'),
      Buffer.from([0xe9, 0x20, 0x35, 0x80, 0x20, 0x93, 0x78, 0x94]),
      Buffer.from('</title></item></channel></rss>'),
    ]);
    const result = await readText(bytes, {}, 5);
    expect(plainItems(result.items)[0]?.fields).toEqual({ title: 'Café 5€ “x”' });
  });

  it('reads UTF-16 with a byte order mark', async () => {
    const xml = '\ufeff<?xml version="1.0" encoding="UTF-16"?><rss><channel><item><title>Grüße 日本</title></item></channel></rss>';
    const result = await readText(Buffer.from(xml, 'utf16le'), {}, 7);
    expect(plainItems(result.items)[0]?.fields).toEqual({ title: 'Grüße 日本' });
  });

  it('rejects the items of a UTF-8 feed that hold bytes that are not UTF-8', async () => {
    const bytes = Buffer.concat([
      Buffer.from(rssOf('<item><g:id>1</g:id><title>Zoë</title></item>\n<item><g:id>2</g:id><title>Bj').replace(/<\/channel><\/rss>$/, '')),
      Buffer.from([0xf6]),
      Buffer.from('rn</title></item>\n<item><g:id>3</g:id><title>Chloé</title></item></channel></rss>'),
    ]);
    const result = await readText(bytes);
    expect(result.error).toBeUndefined();
    expect(plainItems(result.items).map((item) => item.fields.title)).toEqual(['Zoë', 'Chloé']);
    expect(result.rejects).toEqual([
      {
        row: 2,
        line: 4,
        reason: 'item contains bytes that are not UTF-8 (is the feed Latin-1? declare encoding="ISO-8859-1" or set source.encoding: latin1)',
      },
    ]);
  });

  it('reads a Latin-1 feed with encoding latin1', async () => {
    const result = await readText(Buffer.from('<rss><channel><item><title>Björn</title></item></channel></rss>', 'latin1'), { encoding: 'latin1' });
    expect(plainItems(result.items)[0]?.fields).toEqual({ title: 'Björn' });
  });
});

describe('readXmlFeed security', () => {
  it('refuses the billion laughs without expanding anything', async () => {
    const started = performance.now();
    const heapBefore = process.memoryUsage().heapUsed;
    const result = await readFixtureFeed('billion-laughs.xml');
    expect(result.items).toEqual([]);
    expect(result.error).toBeInstanceOf(SourceError);
    expect((result.error as SourceError).message).toBe(
      'billion-laughs.xml line 13, column 2: the DOCTYPE declares entities, which adsync refuses to read (they can expand without limit or read local files)',
    );
    expect((result.error as SourceError).hint).toBe('remove the <!DOCTYPE ...> declaration from the feed');
    expect(performance.now() - started).toBeLessThan(1000);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(20 * 1024 * 1024);
  });

  it('refuses an external entity pointing at /etc/passwd', async () => {
    const result = await readFixtureFeed('external-entity.xml');
    expect(result.items).toEqual([]);
    expect(result.error).toBeInstanceOf(SourceError);
    expect((result.error as SourceError).message).toMatch(/^external-entity\.xml line 4, column 2: the DOCTYPE declares entities/);
    expect((result.error as SourceError).message).not.toContain('root:');
  });

  it('never reads the file an external entity points at', async () => {
    await withTempDir(async (dir) => {
      const secret = join(dir, 'secret.txt');
      await writeFile(secret, 'TOP-SECRET-MARKER');
      for (const doctype of [
        `<!DOCTYPE rss [<!ENTITY xxe SYSTEM "file://${secret}">]>`,
        `<!DOCTYPE rss [<!ENTITY % p SYSTEM "file://${secret}"> %p;]>`,
        `<!DOCTYPE rss SYSTEM "file://${secret}">`,
      ]) {
        const result = await readText(`<?xml version="1.0"?>${doctype}<rss><channel><item><title>&xxe;</title></item></channel></rss>`);
        const everything = JSON.stringify({ items: plainItems(result.items), rejects: result.rejects, error: String(result.error) });
        expect(everything).not.toContain('TOP-SECRET-MARKER');
      }
    });
  });

  it('reads a feed whose DOCTYPE declares no entities (old RSS 0.91), leaving an undefined entity as a reject', async () => {
    const xml = `<?xml version="1.0"?>
<!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN" "http://my.netscape.com/publish/formats/rss-0.91.dtd">
<rss version="0.91"><channel><item><title>ok</title></item><item><title>&eacute;</title></item></channel></rss>`;
    const result = await readText(xml);
    expect(result.error).toBeUndefined();
    expect(plainItems(result.items)).toEqual([{ row: 1, line: 3, fields: { title: 'ok' } }]);
    expect(result.rejects.map((reject) => reject.row)).toEqual([2]);
  });

  it('refuses nesting deeper than the limit', async () => {
    const deep = `${'<a>'.repeat(100)}${'</a>'.repeat(100)}`;
    const result = await readText(rssOf(`<item><g:id>1</g:id><x>${deep}</x></item>`));
    expect(result.error).toBeInstanceOf(SourceError);
    expect((result.error as SourceError).message).toBe('feed.xml line 3, column 206: elements are nested more than 64 levels deep');
  });

  it('refuses a stretch without markup longer than the limit (a giant text or comment)', async () => {
    const result = await readText(rssOf(`<item><g:id>1</g:id></item><!-- ${'c'.repeat(50_000)} -->`), { maxCharsWithoutMarkup: 10_000 }, 1000);
    expect(plainItems(result.items)).toEqual([{ row: 1, line: 3, fields: { id: '1' } }]);
    expect(result.error).toBeInstanceOf(SourceError);
    expect((result.error as SourceError).message).toMatch(
      /^feed\.xml line 3, column \d+: more than 10000 characters without any markup \(a text, CDATA, comment or DOCTYPE that large is refused\) \(1 item was read before it; the feed is incomplete\)$/,
    );
  });
});

describe('readXmlFeed on broken feeds', () => {
  it('yields the items before a well-formedness error, then throws a SourceError with line and column', async () => {
    const result = await readFixtureFeed('not-well-formed.xml');
    expect(plainItems(result.items)).toEqual([
      { row: 1, line: 4, fields: { id: '1', title: 'First' } },
      { row: 2, line: 8, fields: { id: '2', title: 'Second' } },
    ]);
    expect(result.error).toBeInstanceOf(SourceError);
    expect((result.error as SourceError).message).toBe(
      'not-well-formed.xml line 14, column 34: not well-formed XML: unexpected close tag. (2 items were read before it; the feed is incomplete)',
    );
  });

  it('yields the items before a cut in the middle of an item, then throws a SourceError', async () => {
    const full = await readFile(fixturePath('merchant-rss.xml'), 'utf8');
    const cut = full.slice(0, full.indexOf('<g:image_link>https://img.example.com/42.jpg') + 20);
    for (const chunkBytes of [0, 64]) {
      const result = await readAllFeed(readXmlFeed({ name: 'cut.xml', stream: streamOf(cut, chunkBytes) }));
      expect(plainItems(result.items)).toEqual([RSS_ITEMS[0]]);
      expect(result.error).toBeInstanceOf(SourceError);
      expect((result.error as SourceError).message).toBe(
        'cut.xml line 48, column 26: not well-formed XML: unclosed tag: g:image_link (1 item was read before it; the feed is incomplete)',
      );
    }
  });

  it.each([
    ['an empty file', '', 'feed.xml is empty'],
    ['blank text', '  \n ', 'feed.xml holds no XML element (is it an XML feed?)'],
    ['a CSV file', 'id,title\n1,x\n', 'feed.xml line 3, column 0: not well-formed XML: text data outside of root node.'],
    ['another XML document', '<products><product/></products>', 'feed.xml line 1, column 10: the root element <products> is neither RSS (<rss>) nor Atom (<feed>)'],
    ['a zip archive', Buffer.from([0x50, 0x4b, 0x03, 0x04, 0, 0, 0, 0]), 'feed.xml is a ZIP archive (an .xlsx workbook?); export the sheet as CSV'],
    ['an HTML page', '<!doctype html><html><body>502 Bad Gateway</body></html>', 'feed.xml is an HTML page, not a CSV, TSV or XML file (a login or error page instead of the export?)'],
  ])('refuses %s with a SourceError', async (_what, input, message) => {
    const result = await readText(input);
    expect(result.error).toBeInstanceOf(SourceError);
    expect((result.error as SourceError).message).toBe(message);
  });
});
