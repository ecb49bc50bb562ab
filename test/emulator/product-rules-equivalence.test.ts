/**
 * The emulator's product checks (src/emulator/product-attributes.ts, tuned for speed) give
 * exactly the answers of the plain reading of the rules (reference/product-rules-reference.ts,
 * the code before tuning): the same id, errors and warnings in the same order, the same
 * attributes stored, the same prices, and NO_CHANGE in the same cases. Products are drawn
 * around every rule's boundaries and at random; fast-check draws from a fixed seed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkProduct, parseMoney } from '../../src/emulator/product-attributes.js';
import { sameAttributes } from '../../src/emulator/product-catalog.js';
import * as reference from './reference/product-rules-reference.js';

const SEED = 20261122;
const RUNS = { numRuns: 4000, seed: SEED };

const KNOWN = [...reference.KNOWN_ATTRIBUTES];
const OTHER_NAMES = ['product_key', 'item_group_key', 'colour', '0', '__proto__', 'constructor', 'ID', ''];

const ENUM_VALUES = ['in stock', 'available for order', 'preorder', 'out of stock', 'discontinued', 'new', 'used', 'refurbished', 'female', 'male', 'unisex', 'adult', 'all ages', 'teen', 'kids', 'toddler', 'infant', 'newborn', 'In Stock', 'in_stock', 'mint', 'baby', 'women', ' new'];
const MONEY_VALUES = ['19.99 USD', '20 EUR', '1500 JPY', '19.98 USD', '9.99 EUR', '25 USD', '0 USD', '0.0 USD', '007.50 GBP', '19,99 EUR', '19.99USD', 'USD 19.99', '19.99 usd', '19. USD', '.5 USD', '-1.00 USD', '19.99  USD', '19.99 XYZ', '19.99 USDX', '1e3 USD', '19.99 USD\n', '١٩ USD', 'free', '1 ABC', '5 usD'];
const URL_VALUES = [
  'https://shop.example.com/p',
  'https://cdn.example.com/a.webp',
  'http://cdn.example.com/a.png',
  'https://cdn.example.com/a.bmp',
  'https://cdn.example.com/a.JPG',
  'https://cdn.example.com/a.',
  'https://cdn.example.com/.png',
  'https://cdn.example.com/.bmp',
  'https://cdn.example.com/dir.v2/',
  'https://cdn.example.com/a.png/..',
  'https://cdn.example.com/%2e%2e/a.tiff',
  'https://cdn.example.com/a.png?x=1.gif',
  'https://cdn.example.com/a#b.gif',
  'https://cdn.example.com',
  'HTTPS://CDN.EXAMPLE.COM/A.PNG',
  'https:cdn.example.com/a.png',
  'https:///cdn.example.com/a.png',
  'https://user:pw@cdn.example.com/a.png',
  'https://cdn.example.com:8443/a.png',
  'https://cdn.example.com:99999/a.png',
  'https://1.2.3.4/a.png',
  'https://foo.123/a.png',
  'https://[::1]/a.png',
  'https://xn--nxasmq6b.com/a.png',
  'https://ex ample.com/a.png',
  'https://example.com/a b.png',
  ' https://example.com/a.png',
  'https://example.com/\u00e4.png',
  'https://example.com/a.p\u00f1g',
  'https://exa\u00df.com/a.gif',
  'file:///tmp/a.png',
  'ftp://cdn.example.com/a.png',
  'http://',
  'https://',
  'shop.example.com/p',
  'mailto:a@example.com',
  'javascript:alert(1)',
];
const DATE_VALUES = ['2025-11-01T00:00:00Z/2025-11-30T23:59:59+01:00', '2025-11-01T00:00:00Z', '2025-11-01/2025-11-30', '2025-11-01T00:00:00Z/2025-11-31T00:00:00Z', '2025-11-01T00:00:00Z/', '2025-11-30T00:00:00Z/2025-11-01T00:00:00Z', '2025-11-01T00:00:00Z/2025-11-01T00:00:00Z', '2025-11-01T00:00Z/2025-11-02T00:00:00.5-0800', 'a/b/c'];
const COLOR_VALUES = ['navy blue', 'beaded', '#000080', '#fff', '#ffff', '#fffff', '000080', 'abcdef', 'ABCDEF12', 'deadbeef', '12345', 'Red/Blue', ''];
const TEXT_VALUES = ['Alpine Tent 2P', 'A <b>bold</b> claim', 'a < b and c > d', '<br/>', '< p>', 'The Alpine Tent \u2014 built for long days', '\u{1F600}'.repeat(150), '\u{1F600}'.repeat(151), 'x'.repeat(150), 'x'.repeat(151), 'x'.repeat(5000), 'x'.repeat(5001), '\u{1F600}'.repeat(2600), ' ', 'sku-1', 'sku-2'];

const anyText = fc.oneof(fc.constantFrom(...TEXT_VALUES), fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 20 }));
const linkList = fc
  .array(fc.oneof(fc.constantFrom(...URL_VALUES), fc.constantFrom('', ' ', ' https://cdn.example.com/b.gif ')), { minLength: 1, maxLength: 12 })
  .map((links) => links.join(','));
const oddValue = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(-0, 0, 1, -1, 1.5, 2 ** 53, Number.MAX_SAFE_INTEGER), fc.boolean(), fc.constant(null), fc.constant([]), fc.constant({}), fc.constant(''));

/** A value for an attribute: mostly the kind it takes, sometimes anything. */
function valueFor(name: string): fc.Arbitrary<unknown> {
  let usual: fc.Arbitrary<unknown>;
  if (['availability', 'condition', 'gender', 'age_group'].includes(name)) usual = fc.constantFrom(...ENUM_VALUES);
  else if (name === 'price' || name === 'sale_price') usual = fc.oneof(fc.constantFrom(...MONEY_VALUES), fc.string({ unit: fc.constantFrom(...'0123456789. USDEURJPYX'), maxLength: 12 }));
  else if (['link', 'mobile_link', 'image_link'].includes(name)) usual = fc.oneof(fc.constantFrom(...URL_VALUES), fc.webUrl());
  else if (name === 'additional_image_link') usual = linkList;
  else if (name === 'sale_price_effective_date') usual = fc.constantFrom(...DATE_VALUES);
  else if (name === 'color') usual = fc.constantFrom(...COLOR_VALUES);
  else if (name === 'inventory') usual = fc.oneof(fc.nat(), fc.constantFrom(0, -0, 1, -1, 1.5, '5', 2 ** 53));
  else usual = anyText;
  return fc.oneof({ weight: 6, arbitrary: usual }, { weight: 1, arbitrary: oddValue });
}

const VALID_BASE: Record<string, string | number> = {
  id: 'sku-1',
  title: 'Alpine Tent 2P',
  description: 'A tent \u2014 built for long days outside',
  availability: 'in stock',
  condition: 'new',
  price: '19.99 USD',
  link: 'https://shop.example.com/p/sku-1',
  image_link: 'https://cdn.example.com/i/sku-1.jpg',
  brand: 'Acme',
  inventory: 5,
};

/** A product: a valid one with some attributes changed, removed or added, in a shuffled order. */
const products: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .tuple(
        fc.subarray(KNOWN),
        fc.subarray(Object.keys(VALID_BASE)),
        fc.subarray(OTHER_NAMES, { maxLength: 2 }),
        fc.infiniteStream(fc.nat()),
      )
      .chain(([changed, kept, others, order]) => {
        const names = [...new Set([...kept, ...changed, ...others])];
        return fc.tuple(...names.map((n) => (changed.includes(n) || !(n in VALID_BASE) ? valueFor(n) : fc.constant(VALID_BASE[n])))).map((values) => {
          const entries = names.map((n, i) => [n, values[i]] as const);
          const keys = [...order.take(entries.length)];
          entries.sort((a, b) => (keys[entries.indexOf(a)] ?? 0) - (keys[entries.indexOf(b)] ?? 0));
          // As the emulator receives it: parsed from the JSON of the request.
          return JSON.parse(JSON.stringify(Object.fromEntries(entries))) as unknown;
        });
      }),
  },
  { weight: 1, arbitrary: fc.oneof(fc.constant(null), fc.constant([]), fc.constant('sku'), fc.constant(5), fc.constant([{ id: 'a' }])) },
);

describe('the tuned product checks agree with the reference reading of the rules', () => {
  it('on the products of the rule table and at random', () => {
    fc.assert(
      fc.property(products, (raw) => {
        const tuned = checkProduct(raw);
        const plain = reference.checkProduct(raw);
        expect(tuned.id).toBe(plain.id);
        expect(tuned.errors).toEqual(plain.errors);
        expect(tuned.warnings).toEqual(plain.warnings);
        if (plain.errors.length === 0) {
          // Same attributes, same values, same order.
          expect(Object.entries(tuned.attributes ?? {})).toEqual(Object.entries(plain.attributes));
        } else {
          expect(tuned.attributes).toBeUndefined();
        }
      }),
      RUNS,
    );
  });

  it('on a product without any error, which is stored as it was parsed', () => {
    const raw = JSON.parse(JSON.stringify(VALID_BASE)) as unknown;
    const tuned = checkProduct(raw);
    expect(tuned.errors).toEqual([]);
    expect(tuned.attributes).toBe(raw);
    const withKey = { ...VALID_BASE, product_key: 'mine' };
    expect(checkProduct(withKey).attributes).toEqual(VALID_BASE);
  });

  it('reads prices exactly as the regular expression does', () => {
    const texts = fc.oneof(
      fc.constantFrom(...MONEY_VALUES),
      fc.string({ unit: fc.constantFrom(...'0123456789. ,-+eEUSDJPYXusd\n\u0663'), maxLength: 14 }),
      fc.string({ maxLength: 14 }),
    );
    fc.assert(
      fc.property(texts, (text) => {
        expect(parseMoney(text)).toEqual(reference.parseMoney(text));
      }),
      RUNS,
    );
  });

  it('tells NO_CHANGE exactly when the canonical JSON of the attributes is the same', () => {
    const pool = fc.oneof(fc.constantFrom('a', 'b', 'x'.repeat(3), '\u2014', '\ud800', '"', '\\'), fc.constantFrom(0, -0, 1, 5));
    const attributes = fc.dictionary(fc.constantFrom('id', 'title', 'price', 'inventory', 'size', 'color'), pool, { maxKeys: 6 });
    const pairs = fc.oneof(
      fc.tuple(attributes, attributes),
      // The same attributes in another order, or with one value changed.
      attributes.chain((a) =>
        fc.tuple(
          fc.constant(a),
          fc.shuffledSubarray(Object.keys(a), { minLength: Object.keys(a).length }).chain((keys) =>
            fc.oneof(
              fc.constant(Object.fromEntries(keys.map((k) => [k, a[k] ?? '']))),
              pool.map((v) => Object.fromEntries(keys.map((k, i) => [k, i === 0 ? v : (a[k] ?? '')]))),
            ),
          ),
        ),
      ),
    );
    fc.assert(
      fc.property(pairs, ([a, b]) => {
        expect(sameAttributes(a, b)).toBe(reference.canonicalAttributes(a) === reference.canonicalAttributes(b));
      }),
      RUNS,
    );
  });
});
