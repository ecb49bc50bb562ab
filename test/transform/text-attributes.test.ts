import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildProduct, htmlToPlainText } from '../../src/transform/index.js';
import { decodeEntities } from '../../src/transform/html-entities.js';
import { characterCount, collapseWhitespace, isSpaceLike } from '../../src/transform/text-values.js';
import { BASE_PRODUCT, feedItem } from './product-samples.js';

const EMOJI = '\u{1F9F6}'; // 🧶, one code point, two UTF-16 units

describe('title: at most 150 characters after normalization', () => {
  it('accepts 150 characters', () => {
    const title = 'a'.repeat(150);
    expect(buildProduct(feedItem({ title }))).toMatchObject({ ok: true, product: { ...BASE_PRODUCT, title } });
  });

  it('rejects 151 characters', () => {
    expect(buildProduct(feedItem({ title: 'a'.repeat(151) }))).toStrictEqual({
      ok: false,
      id: 'SKU-001',
      reasons: [{ field: 'title', reason: 'has 151 characters; at most 150 are allowed' }],
    });
  });

  it('counts code points: 150 emoji (300 UTF-16 units) pass, 151 do not', () => {
    expect(EMOJI.repeat(150).length).toBe(300);
    expect(buildProduct(feedItem({ title: EMOJI.repeat(150) }))).toMatchObject({ ok: true, product: { title: EMOJI.repeat(150) } });
    expect(buildProduct(feedItem({ title: EMOJI.repeat(151) }))).toStrictEqual({
      ok: false,
      id: 'SKU-001',
      reasons: [{ field: 'title', reason: 'has 151 characters; at most 150 are allowed' }],
    });
  });

  it('counts after collapsing whitespace and decoding references', () => {
    const title = `  ${'a'.repeat(74)}\n\n\t${'b'.repeat(74)}&amp;  `; // 74 + 1 + 74 + 1 = 150
    expect(buildProduct(feedItem({ title }))).toMatchObject({ ok: true, product: { title: `${'a'.repeat(74)} ${'b'.repeat(74)}&` } });
  });

  it('keeps "<" in a title (no tag stripping outside description)', () => {
    expect(buildProduct(feedItem({ title: 'Bolts <M8> 10 pack' }))).toMatchObject({ ok: true, product: { title: 'Bolts <M8> 10 pack' } });
  });
});

describe('description: plain text, at most 5000 characters after HTML stripping', () => {
  it('accepts 5000 characters wrapped in HTML', () => {
    const html = `<div class="desc"><p>${'a'.repeat(2500)}</p>\n<p>${'b'.repeat(2499)}</p></div>`;
    expect(buildProduct(feedItem({ description: html }))).toMatchObject({
      ok: true,
      product: { description: `${'a'.repeat(2500)} ${'b'.repeat(2499)}` },
    });
  });

  it('rejects 5001 characters once HTML is stripped', () => {
    const html = `<div class="desc"><p>${'a'.repeat(2500)}</p>\n<p>${'b'.repeat(2500)}</p></div>`;
    expect(buildProduct(feedItem({ description: html }))).toStrictEqual({
      ok: false,
      id: 'SKU-001',
      reasons: [{ field: 'description', reason: 'has 5001 characters; at most 5000 are allowed' }],
    });
  });

  it('counts code points in descriptions too', () => {
    expect(buildProduct(feedItem({ description: EMOJI.repeat(5000) })).ok).toBe(true);
    expect(buildProduct(feedItem({ description: EMOJI.repeat(5001) }))).toMatchObject({
      ok: false,
      reasons: [{ field: 'description', reason: 'has 5001 characters; at most 5000 are allowed' }],
    });
  });
});

describe('isSpaceLike', () => {
  it('matches exactly the characters collapseWhitespace turns into a space', () => {
    for (let c = 0; c <= 0xffff; c++) {
      const character = String.fromCharCode(c);
      expect([c, isSpaceLike(c)]).toStrictEqual([c, collapseWhitespace(`a${character}b`) === 'a b']);
    }
  });
});

describe('characterCount', () => {
  it('counts a surrogate pair once and a lone surrogate once', () => {
    expect(characterCount('abc')).toBe(3);
    expect(characterCount(`a${EMOJI}b`)).toBe(3);
    expect(characterCount('\ud83d')).toBe(1);
    expect(characterCount('\udc00\ud83d')).toBe(2);
    expect(characterCount('e\u0301')).toBe(2); // e + combining acute: two code points
  });
});

describe('htmlToPlainText', () => {
  it.each([
    ['plain text stays', 'Warm sweater', 'Warm sweater'],
    ['block tags leave a space', '<p>One</p><p>Two</p><br>Three<br/>Four<li>Five', 'One Two Three Four Five'],
    ['inline tags leave nothing', '<b>50</b>% <span class="x">off</span> <a href="/x">now</a>', '50% off now'],
    ['upper-case tags', '<P>One</P><B>Two</B>', 'One Two'],
    ['attributes holding ">"', '<p title="a > b">Text</p>', 'Text'],
    ['script and style go with their content', 'A<script>alert("x<p>")</script>B<style>p { color: red }</style>C', 'A B C'],
    ['comments go', 'A<!-- hidden <p> -->B', 'A B'],
    ['CDATA keeps its text', '<![CDATA[<b>Bold</b> & more]]>', 'Bold & more'],
    ['declarations go', '<?xml version="1.0"?><!DOCTYPE html>Text', 'Text'],
    ['a lone "<" is text', 'a < b and 3<4', 'a < b and 3<4'],
    ['an unclosed tag is text', 'size <M', 'size <M'],
    ['named references', '&amp; &lt; &gt; &quot; &apos; &eacute; &euro; &copy;', '& < > " \' é € ©'],
    ['numeric references', '&#39; &#x27; &#X27; &#233; &#x1F9F6;', `' ' ' é ${EMOJI}`],
    ['&nbsp; and &#10; are whitespace', 'a&nbsp;&nbsp;b&#10;c', 'a b c'],
    ['decoded once', '&amp;lt;p&amp;gt;', '&lt;p&gt;'],
    ['markup written escaped (a CSV cell, a CDATA section) is markup once decoded', '&lt;p&gt;Soft &lt;b&gt;wool&lt;/b&gt;&lt;/p&gt;', 'Soft wool'],
    ['a decoded "<" that is not a tag stays text', '5 &lt; 6 &amp;&amp; 7 &gt; 3', '5 < 6 && 7 > 3'],
    ['escaped twice: decoded once, so no tag appears', '&amp;lt;p&amp;gt;', '&lt;p&gt;'],
    ['decoded markup with a quote that never closes is text, as it would be written out', '&lt;a&#x27;&gt;', "<a'>"],
    ['unknown names stay', '&bogus; &amp &#; &#xZZ;', '&bogus; &amp &#; &#xZZ;'],
    ['invalid code points become U+FFFD', '&#0;&#xD800;&#x110000;', '\ufffd\ufffd\ufffd'],
    ['&#128;-&#159; read as Windows-1252', 'It&#146;s &#150; &#128;5', 'It\u2019s \u2013 \u20ac5'],
    ['whitespace runs collapse and ends are trimmed', '\n\t  Warm\r\n\r\n  soft\u00a0\u2003wool  \n', 'Warm soft wool'],
    ['control characters count as whitespace', 'a\u0000b\u0007\u0085c', 'a b c'],
    ['nested lists', '<ul>\n  <li>One</li>\n  <li>Two <em>big</em></li>\n</ul>', 'One Two big'],
  ])('%s', (_name, html, text) => {
    expect(htmlToPlainText(html)).toBe(text);
  });
});

describe('other text attributes', () => {
  it('decode references and collapse whitespace in brand, color, size, labels, categories', () => {
    const result = buildProduct(
      feedItem({
        brand: ' H&amp;M\n',
        color: 'Navy   Blue',
        size: ' XL ',
        custom_label_1: 'summer\tsale',
        product_type: 'Home &gt; Kitchen',
      }),
    );
    expect(result).toMatchObject({
      ok: true,
      product: { brand: 'H&M', color: 'Navy Blue', size: 'XL', custom_label_1: 'summer sale', product_type: 'Home > Kitchen' },
    });
  });

  it('writes category paths with " > " between subcategories', () => {
    const result = buildProduct(
      feedItem({ product_type: 'Home>Kitchen >Knives', google_product_category: 'Apparel & Accessories > Clothing > Shirts & Tops' }),
    );
    expect(result).toMatchObject({
      ok: true,
      product: { product_type: 'Home > Kitchen > Knives', google_product_category: 'Apparel & Accessories > Clothing > Shirts & Tops' },
    });
    expect(buildProduct(feedItem({ google_product_category: '212' }))).toMatchObject({ ok: true, product: { google_product_category: '212' } });
  });

  it('sends ids as written (trimmed only)', () => {
    expect(buildProduct(feedItem({ id: ' A&amp;B  1 ', item_group_id: ' G&amp;1 ', mpn: ' M  1 ' }))).toMatchObject({
      ok: true,
      id: 'A&amp;B  1',
      product: { id: 'A&amp;B  1', item_group_id: 'G&amp;1', mpn: 'M  1' },
    });
  });

  it('warns about custom labels over 100 characters but sends them', () => {
    const label = 'x'.repeat(101);
    expect(buildProduct(feedItem({ custom_label_0: 'x'.repeat(100), custom_label_3: label }))).toMatchObject({
      ok: true,
      product: { custom_label_0: 'x'.repeat(100), custom_label_3: label },
      warnings: ["custom_label_3: longer than 100 characters (Google Merchant's limit); sent as is"],
    });
  });

  it('leaves out an optional text attribute with nothing left after normalization', () => {
    const result = buildProduct(feedItem({ size: '&nbsp;', color: '\u0000' }));
    expect(result).toMatchObject({ ok: true, product: BASE_PRODUCT });
  });
});

describe('htmlToPlainText edge cases', () => {
  it.each([
    ['an unclosed script removes the rest', 'A<script>var x = 1;', 'A'],
    ['a script end tag in another case', 'A<SCRIPT>x()</Script >B', 'A B'],
    ['text whose lower case is longer before a script', '\u0130stanbul<script>x()</script> ok', '\u0130stanbul ok'],
    ['an unterminated CDATA keeps its text', '<![CDATA[Bold & more', 'Bold & more'],
    ['a trailing "&" and "<"', 'a & b <', 'a & b <'],
    ['an unterminated comment removes the rest', 'A<!-- B', 'A'],
    ['a quote that never closes makes a "<" text', '<a title="x>y', '<a title="x>y'],
    ['inline tags keep surrounding spaces single', 'foo <b> bar </b> baz', 'foo bar baz'],
    ['block tags inside words separate them', 'one<br>two<hr/>three', 'one two three'],
  ])('%s', (_name, html, text) => {
    expect(htmlToPlainText(html)).toBe(text);
  });
});

describe('htmlToPlainText against a slow reference', () => {
  // The same rules written as one regular-expression pass: an inline tag (name ending at
  // whitespace, "/" or ">") goes, any other tag leaves a space; then references are decoded and
  // whitespace collapses.
  const INLINE = new Set(['a', 'b', 'em', 'span', 'strong']);
  // A quote in a tag must close before its ">" ('<a title="x>y' is text); the tokens hold quotes
  // only as references, which a second pass decodes.
  const TAG = /<\/?([A-Za-z][A-Za-z0-9:-]*)((?:[^>"']|"[^"]*"|'[^']*')*)>/g;
  const once = (html: string): string =>
    collapseWhitespace(decodeEntities(html.replace(TAG, (_tag, name: string, rest: string) => (INLINE.has(name.toLowerCase()) && /^(?:$|[\s/])/.test(rest) ? '' : ' '))));
  // Markup that decoding reveals goes in another pass (two at most).
  const reference = (html: string): string => {
    let text = once(html);
    for (let pass = 0; pass < 2 && text.search(TAG) !== -1; pass++) text = once(text);
    return text;
  };
  const token = fc.constantFrom(
    'a', 'word', 'é', '\u{1F9F6}', ' ', '  ', '\n', '\t', '\u00a0', '\u0001', '<', '>', '&', ';', '#', 'p',
    '<p>', '</p>', '<P>', '<br/>', '<li class=x>', '<div>', '</div>', '<b>', '</b>', '<span>', '</SPAN>', '<em>',
    '&amp;', '&lt;', '&gt;', '&nbsp;', '&#39;', '&#x27;', '&#10;', '&eacute;', '&bogus;', '&#;',
  );

  it('gives the same text on any mix of tags, references, text and whitespace', () => {
    fc.assert(
      fc.property(fc.array(token, { maxLength: 40 }), (tokens) => {
        const html = tokens.join('');
        expect(htmlToPlainText(html)).toBe(reference(html));
      }),
      { numRuns: 2000 },
    );
  });
});
