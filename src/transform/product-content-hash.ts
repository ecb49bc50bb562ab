/**
 * The content hash of a product: SHA-256 (hex, through the project's one SHA-256 helper) of
 * its canonical JSON, keys sorted. Two feeds that give the same product with attributes in
 * another order, or with differences that normalization removes (spellings, spacing, HTML),
 * give the same hash; the planner compares it with the hash saved at the last sync to skip
 * unchanged products.
 */
import type { ProductPayload } from '../api/resources/catalogs.js';
import { sha256Hex } from '../hash/sha256.js';

/**
 * JSON of the product with its keys in sorted (UTF-16 code unit) order, no whitespace.
 * buildProduct adds the attributes in that order already, so this is one JSON.stringify; a
 * product with its keys in another order is copied in sorted order first.
 */
export function canonicalProductJson(product: ProductPayload): string {
  const keys = Object.keys(product);
  for (let i = 1; i < keys.length; i++) {
    if ((keys[i - 1] ?? '') >= (keys[i] ?? '')) return JSON.stringify(sortedCopy(product, keys));
  }
  return JSON.stringify(product);
}

function sortedCopy(product: ProductPayload, keys: string[]): ProductPayload {
  const sorted: ProductPayload = {};
  for (const key of keys.sort()) sorted[key] = product[key] ?? '';
  return sorted;
}

export function productContentHash(product: ProductPayload): string {
  return sha256Hex(canonicalProductJson(product));
}
