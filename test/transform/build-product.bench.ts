/**
 * Cost of buildProduct per item, and of the zod alternative, on 1000 realistic items.
 * Run: npx vitest bench --run test/transform
 * (each bench iteration builds 1000 items: µs per item = mean time in ms.) Vitest's module
 * runner adds cost to every call across modules; the compiled code under plain Node is ~30%
 * faster (numbers in src/transform/build-product.ts).
 */
import { bench, describe } from 'vitest';
import { buildProduct, productSchema } from '../../src/transform/index.js';
import type { ProductPayload } from '../../src/api/resources/catalogs.js';
import { realisticItem, seededRandom } from './product-samples.js';

const random = seededRandom(42);
const items = Array.from({ length: 1000 }, (_, n) => realisticItem(n, random));
const products: ProductPayload[] = [];
for (const item of items) {
  const result = buildProduct(item);
  if (result.ok) products.push(result.product);
}

describe('1000 items', () => {
  bench('buildProduct (hand-written rules + content hash)', () => {
    for (const item of items) buildProduct(item);
  });
  bench('productSchema.safeParse of the built products (zod, validation only)', () => {
    for (const product of products) productSchema.safeParse(product);
  });
});
