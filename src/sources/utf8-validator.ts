/**
 * Checks a stream of chunks for invalid UTF-8 at native speed (buffer.isUtf8), carrying a
 * multi-byte character that is split across two chunks over to the next one, so that a chunk
 * border is never mistaken for bad bytes.
 *
 * The readers use it to stay cheap: values are only searched for U+FFFD (what invalid bytes
 * decode to) once a chunk has been found not to be UTF-8.
 */
import { isUtf8 } from 'node:buffer';

/** Length of the UTF-8 sequence a lead byte starts (1 for ASCII and for stray bytes). */
function sequenceLength(lead: number): number {
  if (lead >= 0xf0) return 4;
  if (lead >= 0xe0) return 3;
  if (lead >= 0xc0) return 2;
  return 1;
}

/** Where a multi-byte sequence cut off by the end of `bytes` starts; bytes.length when none is. */
function incompleteTailStart(bytes: Buffer): number {
  const length = bytes.length;
  for (let i = length - 1; i >= 0 && i >= length - 3; i--) {
    const byte = bytes[i] ?? 0;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: look further back
    return length - i < sequenceLength(byte) ? i : length;
  }
  return length;
}

export class Utf8Validator {
  private carry: Buffer | undefined;
  private valid = true;

  /** False once any byte seen so far is not valid UTF-8 (it stays false). */
  get validSoFar(): boolean {
    return this.valid;
  }

  /** The last chunk ended inside a character: the next one tells whether it is valid. */
  get holdsIncomplete(): boolean {
    return this.carry !== undefined;
  }

  /** Checks the next chunk; returns validSoFar. */
  check(chunk: Buffer): boolean {
    if (!this.valid) return false;
    let rest = chunk;
    if (this.carry !== undefined) {
      const needed = sequenceLength(this.carry[0] ?? 0) - this.carry.length;
      if (chunk.length < needed) {
        this.carry = Buffer.concat([this.carry, chunk]);
        return true;
      }
      const character = Buffer.concat([this.carry, chunk.subarray(0, needed)]);
      this.carry = undefined;
      if (!isUtf8(character)) return (this.valid = false);
      rest = chunk.subarray(needed);
    }
    const cut = incompleteTailStart(rest);
    if (!isUtf8(cut === rest.length ? rest : rest.subarray(0, cut))) return (this.valid = false);
    if (cut < rest.length) this.carry = Buffer.from(rest.subarray(cut));
    return true;
  }

  /** Call at the end of the input: a character left incomplete is invalid. */
  end(): boolean {
    if (this.carry !== undefined) {
      this.carry = undefined;
      this.valid = false;
    }
    return this.valid;
  }
}
