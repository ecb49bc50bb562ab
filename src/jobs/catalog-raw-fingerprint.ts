/**
 * The raw fingerprint of a feed item: SHA-256 of its bytes, combined (XOR) with the 32 bytes of
 * its context key (everything else that decides what the bytes become: see
 * catalog-feed-scan.ts). Equal fingerprints mean equal bytes read the same way: finding two
 * different (key, bytes) pairs with equal fingerprints is as hard as finding a SHA-256
 * collision. One one-shot hash per item, on the main thread or in a read worker.
 */
import { hash } from 'node:crypto';

/** The 32 bytes of a context key (64 hex characters). */
export function contextKeyBytes(key: string): Buffer {
  const bytes = Buffer.from(key, 'hex');
  if (bytes.length !== 32) throw new Error(`a context key is 64 hex characters, got ${JSON.stringify(key)}`);
  return bytes;
}

export function rawFingerprintOf(keyBytes: Buffer, itemBytes: Buffer): Buffer {
  const digest = hash('sha256', itemBytes, 'buffer') as unknown as Buffer;
  for (let i = 0; i < 32; i++) digest[i] = (digest[i] ?? 0) ^ (keyBytes[i] ?? 0);
  return digest;
}
