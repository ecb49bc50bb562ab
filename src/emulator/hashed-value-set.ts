/**
 * A compact set of SHA-256 values (64 lowercase hex characters), as audience membership is
 * kept per identifier field. The benchmark pushes tens of millions of hashed values through one
 * emulator, so a value is stored as its 32 raw bytes (8 uint32 words) in an open-addressing
 * table, not as a 64-character string in a JS Set: about 45-60 bytes per member instead of
 * 150, and nothing for the garbage collector to trace.
 *
 * The table is split into 256 shards by the first byte of the value, so growing rehashes one
 * small shard at a time and iterating the shards in order yields the values sorted.
 */

const WORDS = 8;
const INITIAL_SHARD_CAPACITY = 16;
const MAX_LOAD = 0.75;

/** Character code (or byte) -> hex digit value, -1 for anything but 0-9 and a-f. */
const HEX_DIGIT = new Int8Array(256).fill(-1);
for (let c = 0; c < 10; c++) HEX_DIGIT[48 + c] = c;
for (let c = 0; c < 6; c++) HEX_DIGIT[97 + c] = 10 + c;

/**
 * Decodes 64 lowercase hex characters into 8 words at out[at..at+8), the first character
 * being the high nibble of the first word. Returns false (out is then partly written) when
 * the text is anything else: another length, upper case, a non-hex character.
 */
export function decodeSha256Hex(text: string, out: Uint32Array, at: number): boolean {
  if (text.length !== 64) return false;
  let i = 0;
  for (let w = 0; w < WORDS; w++) {
    let word = 0;
    for (const end = i + 8; i < end; i++) {
      const c = text.charCodeAt(i);
      const digit = c < 128 ? (HEX_DIGIT[c] ?? -1) : -1;
      if (digit < 0) return false;
      word = (word << 4) | digit;
    }
    out[at + w] = word;
  }
  return true;
}

/**
 * decodeSha256Hex of 64 bytes (ASCII characters) of `bytes` from `from`: false when they are
 * anything but lowercase hex digits, or the bytes end before.
 */
export function decodeSha256HexBytes(bytes: Uint8Array, from: number, out: Uint32Array, at: number): boolean {
  if (from < 0 || from + 64 > bytes.length) return false;
  let i = from;
  for (let w = 0; w < WORDS; w++) {
    let word = 0;
    for (const end = i + 8; i < end; i++) {
      const digit = HEX_DIGIT[bytes[i] ?? 0] ?? -1;
      if (digit < 0) return false;
      word = (word << 4) | digit;
    }
    out[at + w] = word;
  }
  return true;
}

/** True when the text is 64 lowercase hex characters. */
export function isSha256Hex(text: string): boolean {
  return decodeSha256Hex(text, SCRATCH, 0);
}
const SCRATCH = new Uint32Array(WORDS);

function encodeHex(words: Uint32Array, at: number): string {
  let out = '';
  for (let w = 0; w < WORDS; w++) out += (words[at + w] ?? 0).toString(16).padStart(8, '0');
  return out;
}

function hashWords(words: Uint32Array, at: number): number {
  // Words 1-7 are uniform for real SHA-256 values; mixing all of them keeps made-up test
  // values (long runs of zeros) from clustering.
  let h = Math.imul((words[at + 1] ?? 0) ^ (words[at + 3] ?? 0) ^ (words[at + 5] ?? 0) ^ (words[at + 7] ?? 0), 0x9e3779b1);
  h ^= (words[at] ?? 0) ^ (words[at + 2] ?? 0) ^ (words[at + 4] ?? 0) ^ (words[at + 6] ?? 0);
  h = Math.imul(h ^ (h >>> 15), 0x85ebca6b);
  return h ^ (h >>> 13);
}

class Shard {
  keys: Uint32Array;
  used: Uint8Array;
  mask: number;
  count = 0;

  constructor(capacity: number) {
    this.keys = new Uint32Array(capacity * WORDS);
    this.used = new Uint8Array(capacity);
    this.mask = capacity - 1;
  }

  /** The slot holding the value, or ~slot of the empty slot where it would go. */
  find(src: Uint32Array, at: number): number {
    const { keys, used, mask } = this;
    let slot = hashWords(src, at) & mask;
    while (used[slot] === 1) {
      const k = slot * WORDS;
      if (
        keys[k] === src[at] &&
        keys[k + 1] === src[at + 1] &&
        keys[k + 2] === src[at + 2] &&
        keys[k + 3] === src[at + 3] &&
        keys[k + 4] === src[at + 4] &&
        keys[k + 5] === src[at + 5] &&
        keys[k + 6] === src[at + 6] &&
        keys[k + 7] === src[at + 7]
      ) {
        return slot;
      }
      slot = (slot + 1) & mask;
    }
    return ~slot;
  }

  insertAt(slot: number, src: Uint32Array, at: number): void {
    const keys = this.keys;
    const k = slot * WORDS;
    for (let w = 0; w < WORDS; w++) keys[k + w] = src[at + w] ?? 0;
    this.used[slot] = 1;
    this.count += 1;
  }

  grow(): void {
    const { keys, used } = this;
    const capacity = used.length * 2;
    this.keys = new Uint32Array(capacity * WORDS);
    this.used = new Uint8Array(capacity);
    this.mask = capacity - 1;
    this.count = 0;
    for (let slot = 0; slot < used.length; slot++) {
      if (used[slot] === 1) this.insertAt(~this.find(keys, slot * WORDS), keys, slot * WORDS);
    }
  }

  /** Removes the value in `slot`, shifting back the values probed past it (no tombstones). */
  removeAt(slot: number): void {
    const { keys, used, mask } = this;
    let hole = slot;
    let next = slot;
    for (;;) {
      next = (next + 1) & mask;
      if (used[next] !== 1) break;
      const home = hashWords(keys, next * WORDS) & mask;
      const stays = hole <= next ? hole < home && home <= next : hole < home || home <= next;
      if (stays) continue;
      keys.copyWithin(hole * WORDS, next * WORDS, next * WORDS + WORDS);
      hole = next;
    }
    used[hole] = 0;
    this.count -= 1;
  }
}

export class HashedValueSet {
  private readonly shards: (Shard | undefined)[] = new Array<Shard | undefined>(256);
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Adds the value held in src[at..at+8) (see decodeSha256Hex); false when already present. */
  addWords(src: Uint32Array, at: number): boolean {
    const index = (src[at] ?? 0) >>> 24;
    let shard = this.shards[index];
    if (!shard) {
      shard = new Shard(INITIAL_SHARD_CAPACITY);
      this.shards[index] = shard;
    }
    if (shard.count + 1 > shard.used.length * MAX_LOAD) shard.grow();
    const slot = shard.find(src, at);
    if (slot >= 0) return false;
    shard.insertAt(~slot, src, at);
    this.count += 1;
    return true;
  }

  /** Removes the value held in src[at..at+8); false when it was not present. */
  deleteWords(src: Uint32Array, at: number): boolean {
    const shard = this.shards[(src[at] ?? 0) >>> 24];
    if (!shard) return false;
    const slot = shard.find(src, at);
    if (slot < 0) return false;
    shard.removeAt(slot);
    this.count -= 1;
    return true;
  }

  hasWords(src: Uint32Array, at: number): boolean {
    const shard = this.shards[(src[at] ?? 0) >>> 24];
    return shard !== undefined && shard.find(src, at) >= 0;
  }

  /** Convenience for tests and small callers: the value as 64 lowercase hex characters. */
  add(hex: string): boolean {
    if (!decodeSha256Hex(hex, SCRATCH, 0)) throw new RangeError('not a 64-character lowercase hex SHA-256 value');
    return this.addWords(SCRATCH, 0);
  }

  has(hex: string): boolean {
    return decodeSha256Hex(hex, SCRATCH, 0) && this.hasWords(SCRATCH, 0);
  }

  delete(hex: string): boolean {
    return decodeSha256Hex(hex, SCRATCH, 0) && this.deleteWords(SCRATCH, 0);
  }

  clear(): void {
    this.shards.fill(undefined);
    this.count = 0;
  }

  /** Every value as lowercase hex, in ascending order. */
  *sortedValues(): Generator<string> {
    for (const shard of this.shards) {
      if (!shard || shard.count === 0) continue;
      const { keys, used } = shard;
      const slots: number[] = [];
      for (let slot = 0; slot < used.length; slot++) if (used[slot] === 1) slots.push(slot);
      slots.sort((a, b) => {
        for (let w = 0; w < WORDS; w++) {
          const d = (keys[a * WORDS + w] ?? 0) - (keys[b * WORDS + w] ?? 0);
          if (d !== 0) return d;
        }
        return 0;
      });
      for (const slot of slots) yield encodeHex(keys, slot * WORDS);
    }
  }
}
