import { hash } from 'node:crypto';

/**
 * SHA-256 of the UTF-8 bytes of `text`, as 64 lowercase hex characters. Every value adsync
 * sends or compares as a hash (identifiers, product content hashes) goes through here. The
 * other SHA-256 uses are fingerprints of feed bytes kept for adsync's own bookkeeping, never
 * sent: src/jobs/catalog-raw-fingerprint.ts, src/sources/read-prefix.ts, the item context
 * keys of src/sources/xml-cut-feed.ts.
 *
 * Uses the one-shot crypto.hash (Node 20.12+), measured ~2.5x faster than
 * createHash().update().digest() for short strings such as identifiers.
 */
export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}
