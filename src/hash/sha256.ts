import { hash } from 'node:crypto';

/**
 * SHA-256 of the UTF-8 bytes of `text`, as 64 lowercase hex characters. The only hash
 * function of adsync: nothing else hashes.
 *
 * Uses the one-shot crypto.hash (Node 20.12+), measured ~2.5x faster than
 * createHash().update().digest() for short strings such as identifiers.
 */
export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}
