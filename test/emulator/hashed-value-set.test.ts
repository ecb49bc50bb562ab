/**
 * The compact set of SHA-256 values behind audience membership, checked against a plain
 * Set<string> over random operation sequences, including values that collide in their first
 * bytes (so probing, growth and backward-shift deletion are exercised).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeSha256Hex, HashedValueSet, isSha256Hex } from '../../src/emulator/hashed-value-set.js';
import { sha256 } from './helpers.js';

const hex64 = fc.stringMatching(/^[0-9a-f]{64}$/);
/** Values sharing their first 62 characters: same shard, same words but the last. */
const crowded = fc.integer({ min: 0, max: 255 }).map((n) => `${'ab'.repeat(31)}${n.toString(16).padStart(2, '0')}`);

describe('HashedValueSet', () => {
  it('behaves like a Set of strings', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), fc.oneof(hex64, crowded)), { maxLength: 600 }), (ops) => {
        const set = new HashedValueSet();
        const model = new Set<string>();
        for (const [add, value] of ops) {
          expect(add ? set.add(value) : set.delete(value)).toBe(add ? !model.has(value) : model.has(value));
          if (add) model.add(value);
          else model.delete(value);
        }
        expect(set.size).toBe(model.size);
        expect([...set.sortedValues()]).toEqual([...model].sort());
        for (const v of model) expect(set.has(v)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('holds many values and removes them all', () => {
    const set = new HashedValueSet();
    const values = Array.from({ length: 20_000 }, (_, i) => sha256(String(i)));
    for (const v of values) set.add(v);
    expect(set.size).toBe(20_000);
    expect(set.has(sha256('19999'))).toBe(true);
    expect(set.has(sha256('20000'))).toBe(false);
    for (const v of values.slice(0, 19_999)) expect(set.delete(v)).toBe(true);
    expect([...set.sortedValues()]).toEqual([sha256('19999')]);
  });

  it('accepts exactly 64 lowercase hex characters', () => {
    const out = new Uint32Array(8);
    expect(decodeSha256Hex(sha256('adsapi'), out, 0)).toBe(true);
    expect([...out].map((w) => w.toString(16).padStart(8, '0')).join('')).toBe('49e0be2aeccfb51a8dee4c945c8a70a9ac500cf6f5cb08112575f74db9b1470d');
    for (const bad of [sha256('x').toUpperCase(), sha256('x').slice(1), `${sha256('x')}0`, `${sha256('x').slice(0, 63)}g`, '']) {
      expect(isSha256Hex(bad)).toBe(false);
    }
  });
});
