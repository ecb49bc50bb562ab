import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildProduct, canonicalProductJson, productContentHash } from '../../src/transform/index.js';
import type { FeedItem } from '../../src/sources/types.js';
import { BASE_FIELDS, feedItem } from './product-samples.js';

function hashOf(item: FeedItem): string {
  const result = buildProduct(item);
  if (!result.ok) throw new Error(JSON.stringify(result.reasons));
  return result.contentHash;
}

const FULL = { ...BASE_FIELDS, gtin: '4006381333931', inventory: '5', color: 'Red', additional_image_link: 'https://cdn.example.com/b.jpg' };

describe('content hash', () => {
  it('is the SHA-256 hex of the canonical JSON (keys sorted, no whitespace)', () => {
    const product = { title: 'T', id: '1', inventory: 5, availability: 'in stock' };
    const json = '{"availability":"in stock","id":"1","inventory":5,"title":"T"}';
    expect(canonicalProductJson(product)).toBe(json);
    expect(productContentHash(product)).toBe(createHash('sha256').update(json, 'utf8').digest('hex'));
  });

  it('pins the hash of the base product', () => {
    expect(hashOf(feedItem())).toBe('3a7b7d90d44122173ca5c544df440dcb12f857e7784609a3b08a8be922f748fb');
  });

  it('does not depend on the order of attributes in the feed', () => {
    const reversed = Object.fromEntries(Object.entries(FULL).reverse());
    expect(hashOf({ row: 9, line: 90, fields: reversed })).toBe(hashOf({ row: 1, line: 2, fields: FULL }));
  });

  it('does not depend on the order of keys of a product', () => {
    fc.assert(
      fc.property(fc.shuffledSubarray(Object.entries({ ...FULL, inventory: 5 }), { minLength: 9, maxLength: 9 }), (entries) => {
        const shuffled = Object.fromEntries(entries);
        const sorted = Object.fromEntries([...entries].sort(([a], [b]) => (a < b ? -1 : 1)));
        expect(productContentHash(shuffled)).toBe(productContentHash(sorted));
      }),
    );
  });

  it('does not change with what normalization removes (spelling, spacing, HTML, field-name case)', () => {
    const written = { ...FULL, availability: 'In_Stock', price: 'USD49.99', description: '<p>A warm sweater made of   merino wool.</p>', Color: 'Red' };
    delete (written as Record<string, string>)['color'];
    expect(hashOf({ row: 1, line: 2, fields: written })).toBe(hashOf({ row: 1, line: 2, fields: FULL }));
  });

  it('ignores fields that are not sent', () => {
    expect(hashOf(feedItem({ shipping: 'US:::4.95 USD' }))).toBe(hashOf(feedItem()));
  });

  it('changes when the price changes', () => {
    expect(hashOf(feedItem({ price: '49.98 USD' }))).not.toBe(hashOf(feedItem()));
  });

  it('changes when any sent attribute changes, is added or is removed', () => {
    const base = hashOf({ row: 1, line: 2, fields: FULL });
    expect(hashOf({ row: 1, line: 2, fields: { ...FULL, inventory: '6' } })).not.toBe(base);
    expect(hashOf({ row: 1, line: 2, fields: { ...FULL, size: 'M' } })).not.toBe(base);
    const { color: _color, ...withoutColor } = FULL;
    expect(hashOf({ row: 1, line: 2, fields: withoutColor })).not.toBe(base);
  });

  it('tells a number from the string of the same digits', () => {
    expect(productContentHash({ id: '1', inventory: 5 })).not.toBe(productContentHash({ id: '1', inventory: '5' }));
  });
});
