/**
 * A compact set of strings, as audience membership keeps the values of an unhashed identifier
 * field (partner_user_id). The bench sends a million of them: in a Set<string> they were a
 * million strings and entries on the JS heap (the set's rehashing, the garbage collector
 * copying, promoting and tracing them): measured alone here, a million adds of
 * `crm-00000001`-like strings cost the Set ~0.4 s of CPU more than this set. Here a value is a
 * run of bytes in an arena, found through an open-addressing table of offsets and hashes:
 * nothing for the collector to trace, ~40 bytes per member.
 *
 * A value is kept in a canonical byte form (encodeRawValue), so that two strings are equal
 * exactly when their forms are: a tag byte, then one byte per UTF-16 code unit (tag 0) when
 * every code unit is below 256, else two, little-endian (tag 1). Every JS string, lone
 * surrogates included, comes back as it went in.
 *
 * As HashedValueSet, the table is split into 256 shards (by the hash's top byte), so that
 * growing moves one small shard at a time; a shard's arena is compacted when half of it is
 * values removed since.
 */

const LATIN1 = 0;
const UTF16 = 1;
const LENGTH_BYTES = 4;
const INITIAL_SHARD_CAPACITY = 16;
const INITIAL_ARENA_BYTES = 256;
const MAX_LOAD = 0.75;

/** Whether every UTF-16 code unit of the value is below 256 (its canonical form is then one byte per code unit). */
function isLatin1(value: string): boolean {
  for (let i = 0; i < value.length; i++) if (value.charCodeAt(i) > 0xff) return false;
  return true;
}

/** The most bytes the canonical form of a string of `length` code units takes. */
export function maxEncodedRawValueLength(length: number): number {
  return 1 + 2 * length;
}

/** Writes the canonical form of `value` at out[at..] (room for maxEncodedRawValueLength); returns the bytes written. */
export function encodeRawValue(value: string, out: Uint8Array, at: number): number {
  const wide = !isLatin1(value);
  out[at] = wide ? UTF16 : LATIN1;
  let o = at + 1;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    out[o++] = c & 0xff;
    if (wide) out[o++] = c >>> 8;
  }
  return o - at;
}

/**
 * Writes the canonical form of the string whose code units are the bytes src[start..end) (as
 * latin1 reads them) at out[at..] (room for 1 + end - start); returns the bytes written.
 */
export function encodeLatin1RawValue(src: Uint8Array, start: number, end: number, out: Uint8Array, at: number): number {
  out[at] = LATIN1;
  for (let i = start; i < end; i++) out[at + 1 + i - start] = src[i] ?? 0;
  return 1 + end - start;
}

/** The string of the canonical form at bytes[start..end). */
export function decodeRawValue(bytes: Uint8Array, start: number, end: number): string {
  const body = Buffer.from(bytes.buffer, bytes.byteOffset + start + 1, end - start - 1);
  return body.toString(bytes[start] === UTF16 ? 'utf16le' : 'latin1');
}

function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ (bytes[i] ?? 0), 0x01000193);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

class Shard {
  /** Per slot: [hash, 1 + offset of the value in the arena], 0 for an empty slot. */
  slots: Uint32Array;
  mask: number;
  count = 0;
  /** The values: a 4-byte length, then the bytes, one after the other. */
  arena = new Uint8Array(INITIAL_ARENA_BYTES);
  arenaLength = 0;
  /** Bytes of the arena held by values removed since. */
  garbage = 0;

  constructor(capacity: number) {
    this.slots = new Uint32Array(capacity * 2);
    this.mask = capacity - 1;
  }

  /** The slot holding the value, or ~slot of the empty slot where it would go. */
  find(hash: number, bytes: Uint8Array, start: number, end: number): number {
    const { slots, mask, arena } = this;
    const length = end - start;
    let slot = hash & mask;
    for (;;) {
      const ref = slots[slot * 2 + 1] ?? 0;
      if (ref === 0) return ~slot;
      if (slots[slot * 2] === hash) {
        const at = ref - 1;
        if (readLength(arena, at) === length) {
          const from = at + LENGTH_BYTES;
          let i = 0;
          while (i < length && arena[from + i] === bytes[start + i]) i++;
          if (i === length) return slot;
        }
      }
      slot = (slot + 1) & mask;
    }
  }

  insertAt(slot: number, hash: number, bytes: Uint8Array, start: number, end: number): void {
    const length = end - start;
    this.reserveArena(LENGTH_BYTES + length);
    const at = this.arenaLength;
    const arena = this.arena;
    writeLength(arena, at, length);
    for (let i = 0; i < length; i++) arena[at + LENGTH_BYTES + i] = bytes[start + i] ?? 0;
    this.arenaLength += LENGTH_BYTES + length;
    this.slots[slot * 2] = hash;
    this.slots[slot * 2 + 1] = at + 1;
    this.count += 1;
  }

  private reserveArena(bytes: number): void {
    if (this.arenaLength + bytes <= this.arena.length) return;
    let size = this.arena.length * 2;
    while (size < this.arenaLength + bytes) size *= 2;
    const arena = new Uint8Array(size);
    arena.set(this.arena.subarray(0, this.arenaLength));
    this.arena = arena;
  }

  /** Doubles the table; the values stay where they are in the arena. */
  grow(): void {
    const old = this.slots;
    const capacity = (this.mask + 1) * 2;
    this.slots = new Uint32Array(capacity * 2);
    this.mask = capacity - 1;
    for (let s = 0; s < old.length; s += 2) {
      const ref = old[s + 1] ?? 0;
      if (ref === 0) continue;
      const hash = old[s] ?? 0;
      let slot = hash & this.mask;
      while ((this.slots[slot * 2 + 1] ?? 0) !== 0) slot = (slot + 1) & this.mask;
      this.slots[slot * 2] = hash;
      this.slots[slot * 2 + 1] = ref;
    }
  }

  /** Removes the value in `slot`, shifting back the values probed past it (no tombstones). */
  removeAt(slot: number): void {
    const { slots, mask } = this;
    this.garbage += LENGTH_BYTES + readLength(this.arena, (slots[slot * 2 + 1] ?? 1) - 1);
    let hole = slot;
    let next = slot;
    for (;;) {
      next = (next + 1) & mask;
      if ((slots[next * 2 + 1] ?? 0) === 0) break;
      const home = (slots[next * 2] ?? 0) & mask;
      const stays = hole <= next ? hole < home && home <= next : hole < home || home <= next;
      if (stays) continue;
      slots[hole * 2] = slots[next * 2] ?? 0;
      slots[hole * 2 + 1] = slots[next * 2 + 1] ?? 0;
      hole = next;
    }
    slots[hole * 2] = 0;
    slots[hole * 2 + 1] = 0;
    this.count -= 1;
    if (this.garbage > INITIAL_ARENA_BYTES && this.garbage * 2 > this.arenaLength) this.compact();
  }

  /** Copies the values still in the set to a new arena, in slot order. */
  private compact(): void {
    const old = this.arena;
    const arena = new Uint8Array(Math.max(INITIAL_ARENA_BYTES, this.arenaLength - this.garbage));
    let length = 0;
    const slots = this.slots;
    for (let s = 0; s < slots.length; s += 2) {
      const ref = slots[s + 1] ?? 0;
      if (ref === 0) continue;
      const size = LENGTH_BYTES + readLength(old, ref - 1);
      arena.set(old.subarray(ref - 1, ref - 1 + size), length);
      slots[s + 1] = length + 1;
      length += size;
    }
    this.arena = arena;
    this.arenaLength = length;
    this.garbage = 0;
  }

  /** Every value, as [start, end) of its bytes in the arena. */
  *ranges(): Generator<[number, number]> {
    const slots = this.slots;
    for (let s = 0; s < slots.length; s += 2) {
      const ref = slots[s + 1] ?? 0;
      if (ref !== 0) yield [ref - 1 + LENGTH_BYTES, ref - 1 + LENGTH_BYTES + readLength(this.arena, ref - 1)];
    }
  }
}

function readLength(arena: Uint8Array, at: number): number {
  return ((arena[at] ?? 0) | ((arena[at + 1] ?? 0) << 8) | ((arena[at + 2] ?? 0) << 16) | ((arena[at + 3] ?? 0) << 24)) >>> 0;
}

function writeLength(arena: Uint8Array, at: number, length: number): void {
  arena[at] = length & 0xff;
  arena[at + 1] = (length >>> 8) & 0xff;
  arena[at + 2] = (length >>> 16) & 0xff;
  arena[at + 3] = length >>> 24;
}

export class RawValueSet {
  private readonly shards: (Shard | undefined)[] = new Array<Shard | undefined>(256);
  private count = 0;
  private scratch = new Uint8Array(256);

  get size(): number {
    return this.count;
  }

  /** Adds the value whose canonical form is bytes[start..end); false when already present. */
  addEncoded(bytes: Uint8Array, start: number, end: number): boolean {
    const hash = hashBytes(bytes, start, end);
    const index = hash >>> 24;
    let shard = this.shards[index];
    if (!shard) {
      shard = new Shard(INITIAL_SHARD_CAPACITY);
      this.shards[index] = shard;
    }
    if (shard.count + 1 > (shard.mask + 1) * MAX_LOAD) shard.grow();
    const slot = shard.find(hash, bytes, start, end);
    if (slot >= 0) return false;
    shard.insertAt(~slot, hash, bytes, start, end);
    this.count += 1;
    return true;
  }

  /** Removes the value whose canonical form is bytes[start..end); false when it was not present. */
  deleteEncoded(bytes: Uint8Array, start: number, end: number): boolean {
    const hash = hashBytes(bytes, start, end);
    const shard = this.shards[hash >>> 24];
    if (!shard) return false;
    const slot = shard.find(hash, bytes, start, end);
    if (slot < 0) return false;
    shard.removeAt(slot);
    this.count -= 1;
    return true;
  }

  hasEncoded(bytes: Uint8Array, start: number, end: number): boolean {
    const hash = hashBytes(bytes, start, end);
    const shard = this.shards[hash >>> 24];
    return shard !== undefined && shard.find(hash, bytes, start, end) >= 0;
  }

  add(value: string): boolean {
    const n = this.encode(value);
    return this.addEncoded(this.scratch, 0, n);
  }

  delete(value: string): boolean {
    const n = this.encode(value);
    return this.deleteEncoded(this.scratch, 0, n);
  }

  has(value: string): boolean {
    const n = this.encode(value);
    return this.hasEncoded(this.scratch, 0, n);
  }

  clear(): void {
    this.shards.fill(undefined);
    this.count = 0;
  }

  /** Every value, in no particular order. */
  *values(): Generator<string> {
    for (const shard of this.shards) {
      if (!shard) continue;
      for (const [start, end] of shard.ranges()) yield decodeRawValue(shard.arena, start, end);
    }
  }

  private encode(value: string): number {
    const length = maxEncodedRawValueLength(value.length);
    if (length > this.scratch.length) this.scratch = new Uint8Array(length);
    return encodeRawValue(value, this.scratch, 0);
  }
}
