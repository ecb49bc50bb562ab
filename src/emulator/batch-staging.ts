/**
 * The staging area of a user batch: the values planning found, decoded, waiting for the batch
 * to be applied. Hashed values are 8 words each (decodeSha256Hex); unhashed ones are their
 * canonical bytes (raw-value-set.ts) one after the other. Each has the index of its field.
 *
 * Shared by all batches and reused from one to the next (no allocation per value): a plan is
 * applied synchronously right after it is made, before the next one is planned.
 */
import { decodeSha256Hex, decodeSha256HexBytes } from './hashed-value-set.js';
import { encodeLatin1RawValue, encodeRawValue, maxEncodedRawValueLength } from './raw-value-set.js';

export const WORDS = 8;

/** Staged hashed values: value i in words[i * 8 .. i * 8 + 8), its field in fields[i]. */
export const hashedStaging = {
  words: new Uint32Array(WORDS * 4096),
  fields: new Uint8Array(4096),
  count: 0,
};

/** Staged unhashed values: value i in bytes[ends[i - 1] (0 for the first) .. ends[i]), its field in fields[i]. */
export const rawStaging = {
  bytes: new Uint8Array(64 * 1024),
  ends: new Uint32Array(1024),
  fields: new Uint8Array(1024),
  count: 0,
};

/** Starts the staging of a new batch. */
export function resetStaging(): void {
  hashedStaging.count = 0;
  rawStaging.count = 0;
}

/** A new array of `length` elements (at least the array's) starting with the array's. */
function grown<T extends Uint8Array | Uint32Array>(array: T, length: number): T {
  const out = new (array.constructor as new (length: number) => T)(length);
  out.set(array);
  return out;
}

/** Room for one more hashed value. */
function reserveHashed(): void {
  const s = hashedStaging;
  if (s.count < s.fields.length) return;
  s.words = grown(s.words, s.words.length * 2);
  s.fields = grown(s.fields, s.fields.length * 2);
}

/** Stages the value written as 64 lowercase hex characters; false (nothing staged) when the text is anything else. */
export function stageHashed(text: string, field: number): boolean {
  reserveHashed();
  if (!decodeSha256Hex(text, hashedStaging.words, hashedStaging.count * WORDS)) return false;
  hashedStaging.fields[hashedStaging.count] = field;
  hashedStaging.count += 1;
  return true;
}

/** stageHashed of the 64 bytes at bytes[from..from+64). */
export function stageHashedBytes(bytes: Uint8Array, from: number, field: number): boolean {
  reserveHashed();
  if (!decodeSha256HexBytes(bytes, from, hashedStaging.words, hashedStaging.count * WORDS)) return false;
  hashedStaging.fields[hashedStaging.count] = field;
  hashedStaging.count += 1;
  return true;
}

/** Room for one more unhashed value of up to `bytes` bytes; returns where it goes. */
function reserveRaw(bytes: number): number {
  const s = rawStaging;
  const at = s.count === 0 ? 0 : (s.ends[s.count - 1] ?? 0);
  if (at + bytes > s.bytes.length) {
    let size = s.bytes.length * 2;
    while (size < at + bytes) size *= 2;
    s.bytes = grown(s.bytes.subarray(0, at), size);
  }
  if (s.count === s.fields.length) {
    s.ends = grown(s.ends, s.ends.length * 2);
    s.fields = grown(s.fields, s.fields.length * 2);
  }
  return at;
}

function pushRaw(end: number, field: number): void {
  rawStaging.ends[rawStaging.count] = end;
  rawStaging.fields[rawStaging.count] = field;
  rawStaging.count += 1;
}

/** Stages an unhashed value. */
export function stageRaw(value: string, field: number): void {
  const at = reserveRaw(maxEncodedRawValueLength(value.length));
  pushRaw(at + encodeRawValue(value, rawStaging.bytes, at), field);
}

/** Stages the unhashed value whose characters are the bytes src[start..end), read as latin1. */
export function stageRawLatin1Bytes(src: Uint8Array, start: number, end: number, field: number): void {
  const at = reserveRaw(1 + end - start);
  pushRaw(at + encodeLatin1RawValue(src, start, end, rawStaging.bytes, at), field);
}
