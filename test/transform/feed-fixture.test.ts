import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildProduct } from '../../src/transform/index.js';
import type { FeedItem } from '../../src/sources/types.js';

const read = (name: string): unknown => JSON.parse(readFileSync(new URL(`../fixtures/transform/${name}`, import.meta.url), 'utf8'));

describe('a Google Merchant feed, item by item', () => {
  it('gives exactly the products, hashes, warnings and rejects of the expected file', () => {
    const items = read('google-feed-items.json') as FeedItem[];
    const results = items.map((item) => buildProduct(item));
    // The canonical JSON of each product comes along (it is what is sent): the product's JSON.
    for (const result of results) if (result.ok) expect(result.json).toBe(JSON.stringify(result.product));
    // toEqual, not toStrictEqual: JSON cannot hold the `id: undefined` of a reject without an id.
    expect(results.map((result) => (result.ok ? { ...result, json: undefined } : result))).toEqual(read('google-feed-expected.json'));
  });
});
