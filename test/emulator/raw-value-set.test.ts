/**
 * The compact set of unhashed values (partner_user_id) behind audience membership, checked
 * against a plain Set<string> over random operation sequences: any string (non-ASCII, code
 * units above 255, lone surrogates, empty, long), few distinct values so that adds and deletes
 * meet, enough of them to grow tables and arenas, delete back (shifting probed values) and
 * compact the arenas.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeRawValue, encodeLatin1RawValue, encodeRawValue, maxEncodedRawValueLength, RawValueSet } from '../../src/emulator/raw-value-set.js';

/** Strings of any UTF-16 code units, lone surrogates included. */
const anyString = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 12 }).map((units) => String.fromCharCode(...units));
const value = fc.oneof(
  fc.constantFrom('crm-1', 'crm-2', '', 'é', '\u0100', '\ud800', '\udc00x', 'crm-1 ', 'x'.repeat(300)),
  fc.integer({ min: 0, max: 40 }).map((n) => `crm-${n}`),
  anyString,
);

function encoded(text: string): Uint8Array {
  const out = new Uint8Array(maxEncodedRawValueLength(text.length));
  return out.subarray(0, encodeRawValue(text, out, 0));
}

describe('RawValueSet', () => {
  it('behaves like a Set of strings', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), value), { maxLength: 400 }), (ops) => {
        const set = new RawValueSet();
        const model = new Set<string>();
        for (const [add, v] of ops) {
          expect(add ? set.add(v) : set.delete(v)).toBe(add ? !model.has(v) : model.has(v));
          if (add) model.add(v);
          else model.delete(v);
        }
        expect(set.size).toBe(model.size);
        expect([...set.values()].sort()).toEqual([...model].sort());
        for (const v of model) expect(set.has(v)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('grows, deletes back and compacts through many values', () => {
    const set = new RawValueSet();
    const model = new Set<string>();
    const n = 30_000;
    for (let i = 0; i < n; i++) {
      set.add(`crm-${i}`);
      model.add(`crm-${i}`);
    }
    // Most removed, some added back: arenas compact, slots shift.
    for (let i = 0; i < n; i++) {
      if (i % 5 !== 0) {
        expect(set.delete(`crm-${i}`)).toBe(true);
        model.delete(`crm-${i}`);
      }
    }
    for (let i = 0; i < n; i += 7) {
      expect(set.add(`crm-${i}`)).toBe(!model.has(`crm-${i}`));
      model.add(`crm-${i}`);
    }
    expect(set.size).toBe(model.size);
    expect([...set.values()].sort()).toEqual([...model].sort());
    for (let i = 0; i < n; i++) expect(set.has(`crm-${i}`)).toBe(model.has(`crm-${i}`));
  });

  it('takes values by their canonical bytes as by their text', () => {
    fc.assert(
      fc.property(fc.array(value, { maxLength: 50 }), (values) => {
        const byText = new RawValueSet();
        const byBytes = new RawValueSet();
        for (const v of values) {
          const bytes = encoded(v);
          expect(byBytes.addEncoded(bytes, 0, bytes.length)).toBe(byText.add(v));
          expect(decodeRawValue(bytes, 0, bytes.length)).toBe(v);
        }
        expect([...byBytes.values()].sort()).toEqual([...byText.values()].sort());
      }),
    );
  });

  it('encodes a string of bytes read as latin1 as the string itself', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 20 }), (bytes) => {
        const out = new Uint8Array(1 + bytes.length);
        encodeLatin1RawValue(bytes, 0, bytes.length, out, 0);
        expect(out).toEqual(encoded(Buffer.from(bytes).toString('latin1')));
      }),
    );
  });

  it('keeps different strings apart when their code units share low bytes', () => {
    const set = new RawValueSet();
    expect(set.add('\u0041')).toBe(true);
    expect(set.add('\u0141')).toBe(true);
    expect(set.add('\u0041\u0000')).toBe(true);
    expect(set.has('\u4100')).toBe(false);
    expect([...set.values()].sort()).toEqual(['\u0041', '\u0041\u0000', '\u0141'].sort());
  });
});
