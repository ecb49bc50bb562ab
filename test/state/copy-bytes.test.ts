/** copyBytes against Buffer#copy, on both sides of the length where it stops looping. */
import { describe, expect, it } from 'vitest';
import { copyBytes } from '../../src/state/copy-bytes.js';
import { seededRandom } from '../helpers/seeded-random.js';

describe('copyBytes', () => {
  it('copies exactly source[start, end) to the offset, and nothing around it, for lengths 0 to 600', () => {
    const rnd = seededRandom(5);
    const source = Buffer.from(Array.from({ length: 1000 }, () => Math.floor(rnd() * 256)));
    for (let length = 0; length <= 600; length++) {
      const start = Math.floor(rnd() * (source.length - length));
      const at = Math.floor(rnd() * 300);
      const got = Buffer.alloc(1000, 0xee);
      const expected = Buffer.alloc(1000, 0xee);
      source.copy(expected, at, start, start + length);
      // A Uint8Array source as well as a Buffer: identifier lists received from another thread.
      copyBytes(length % 2 === 0 ? source : new Uint8Array(source), start, start + length, got, at);
      expect(got.equals(expected), `length ${length}`).toBe(true);
    }
  });
});
