/**
 * Feed items for tests and the benchmark: one valid base item whose exact product is known,
 * and a seeded generator of realistic items (HTML descriptions, Google spellings, extra fields).
 */
import type { FeedItem } from '../../src/sources/types.js';
import { seededRandom } from '../helpers/seeded-random.js';

export { seededRandom };

export const BASE_FIELDS: Readonly<Record<string, string>> = {
  id: 'SKU-001',
  title: 'Merino Wool Sweater',
  description: 'A warm sweater made of merino wool.',
  availability: 'in stock',
  condition: 'new',
  price: '49.99 USD',
  link: 'https://shop.example.com/products/sku-001',
  image_link: 'https://cdn.example.com/images/sku-001.jpg',
  brand: 'Acme',
};

/** The product buildProduct makes of BASE_FIELDS. */
export const BASE_PRODUCT: Readonly<Record<string, string | number>> = { ...BASE_FIELDS };

/** A feed item: BASE_FIELDS with some fields replaced, added, or removed (value undefined). */
export function feedItem(changes: Record<string, string | string[] | undefined> = {}, base: Readonly<Record<string, string>> = BASE_FIELDS): FeedItem {
  const fields: Record<string, string | string[]> = { ...base };
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined) delete fields[name];
    else fields[name] = value;
  }
  return { row: 1, line: 2, fields };
}

const WORDS = ['soft', 'merino', 'wool', 'cotton', 'classic', 'fit', 'warm', 'light', 'jacket', 'sweater', 'organic', 'blend', 'washable', 'durable', 'everyday', 'comfort'];
const AVAILABILITY = ['in stock', 'in_stock', 'out_of_stock', 'preorder', 'backorder', 'In Stock'];
const COLORS = ['Red', 'Navy Blue', 'Black', 'Heather Grey', 'Green'];

/**
 * A realistic Google-Merchant-style item as an XML source yields it: an HTML description of
 * 300-800 characters, 0-3 additional images, Google spellings, fields that are not sent.
 */
export function realisticItem(n: number, random: () => number): FeedItem {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const words = (count: number): string => Array.from({ length: count }, () => pick(WORDS)).join(' ');
  let description = '';
  while (description.length < 300 + random() * 500) description += `<p>${words(12)} &amp; ${words(6)}.</p>\n<ul><li>${words(4)}</li></ul>`;
  const price = 10 + Math.floor(random() * 9000) / 100;
  const fields: Record<string, string | string[]> = {
    id: `SKU-${String(n).padStart(7, '0')}`,
    title: `${words(5)} ${n}`,
    description,
    availability: pick(AVAILABILITY),
    condition: 'new',
    price: `${price.toFixed(2)} USD`,
    link: `https://shop.example.com/products/${n}?variant=${n * 7}`,
    image_link: `https://cdn.example.com/images/${n}/main.jpg`,
    brand: 'Acme Outfitters',
    gtin: '4006381333931',
    mpn: `MPN-${n}`,
    google_product_category: 'Apparel & Accessories > Clothing',
    product_type: 'Clothing > Sweaters',
    item_group_id: `GROUP-${Math.floor(n / 4)}`,
    color: pick(COLORS),
    size: pick(['S', 'M', 'L', 'XL']),
    gender: pick(['female', 'male', 'unisex']),
    age_group: 'adult',
    shipping: 'US:::4.95 USD',
    identifier_exists: 'yes',
  };
  const images = Math.floor(random() * 4);
  if (images > 0) fields['additional_image_link'] = Array.from({ length: images }, (_, i) => `https://cdn.example.com/images/${n}/alt-${i}.jpg`);
  if (random() < 0.3) fields['sale_price'] = `${(price * 0.8).toFixed(2)} USD`;
  return { row: n, line: n * 25, fields };
}
