import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IDENTIFIERS_FIELD, PRODUCT_ATTRIBUTES, buildProduct, productContentHash, productSchema } from '../../src/transform/index.js';
import type { FeedItem } from '../../src/sources/types.js';
import { BASE_PRODUCT, realisticItem, seededRandom } from './product-samples.js';

const REASON_FIELDS = new Set<string>([...PRODUCT_ATTRIBUTES, IDENTIFIERS_FIELD]);

const oddValue = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('', ' ', '0', '-1', '#fff', 'http://x.com/a.jpg', 'https://x.com/a.jpg', '19,99 EUR', '19.99 EUR', 'in_stock', '&amp;', '<p>', '\u0000'),
);
const mutation = fc.record({
  field: fc.constantFrom(...PRODUCT_ATTRIBUTES, 'shipping', 'product_key', 'Title', 'g:price'),
  value: fc.oneof(oddValue, fc.array(oddValue, { maxLength: 12 }), fc.constant(undefined)),
});
const mutatedItem = fc
  .tuple(fc.integer({ min: 1, max: 1_000_000 }), fc.array(mutation, { maxLength: 6 }))
  .map(([seed, mutations]): FeedItem => {
    const item = realisticItem(seed, seededRandom(seed));
    for (const { field, value } of mutations) {
      if (value === undefined) delete item.fields[field];
      else item.fields[field] = value;
    }
    return item;
  });

describe('buildProduct against productSchema', () => {
  it('never throws; every product it makes passes productSchema; every reject names a field', () => {
    fc.assert(
      fc.property(mutatedItem, (item) => {
        const result = buildProduct(item);
        if (result.ok) {
          expect(productSchema.safeParse(result.product).error?.issues).toBeUndefined();
          expect(result.id).toBe(result.product['id']);
          expect(result.contentHash).toBe(productContentHash(result.product));
        } else {
          expect(result.reasons.length).toBeGreaterThan(0);
          for (const { field, reason } of result.reasons) {
            expect(REASON_FIELDS.has(field)).toBe(true);
            expect(reason).not.toBe('');
          }
        }
      }),
      { numRuns: 500 },
    );
  });

  it('is idempotent on realistic items: building from a built product gives it back', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), (seed) => {
        const first = buildProduct(realisticItem(seed, seededRandom(seed)));
        if (!first.ok) return;
        const fields = Object.fromEntries(Object.entries(first.product).map(([k, v]) => [k, String(v)]));
        const second = buildProduct({ row: 1, line: 1, fields });
        expect(second).toStrictEqual({ ...first, warnings: [] });
      }),
      { numRuns: 200 },
    );
  });
});

describe('productSchema', () => {
  it('accepts a minimal product and types it', () => {
    expect(productSchema.parse(BASE_PRODUCT)).toStrictEqual(BASE_PRODUCT);
  });

  it('rejects what the service would, at the attribute', () => {
    const result = productSchema.safeParse({
      ...BASE_PRODUCT,
      availability: 'in_stock',
      price: '19.99USD',
      link: 'http://shop.example.com/p',
      brand: undefined,
      inventory: 1.5,
      color: '#fff',
      shipping: 'x',
    });
    expect(result.error?.issues.map((issue) => [issue.path.join('.'), issue.code])).toStrictEqual([
      ['availability', 'invalid_value'],
      ['price', 'custom'],
      ['link', 'custom'],
      ['inventory', 'invalid_type'],
      ['color', 'custom'],
      ['', 'unrecognized_keys'],
    ]);
  });

  it('checks the rules between attributes', () => {
    const result = productSchema.safeParse({ ...BASE_PRODUCT, brand: undefined, sale_price: '49.99 USD', inventory: 0 });
    expect(result.error?.issues.map((issue) => [issue.path.join('.'), issue.message])).toStrictEqual([
      ['brand/gtin/mpn', 'one of brand, gtin or mpn is required'],
      ['sale_price', '"49.99 USD" is not lower than price "49.99 USD"'],
      ['inventory', 'is 0; it must be at least 1 when availability is "in stock"'],
    ]);
  });
});
