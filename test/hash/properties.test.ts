import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  hashIdentifier,
  IDENTIFIER_TYPES,
  MAX_PARTNER_USER_ID_LENGTH,
  NORMALIZERS,
  normalizeCountry,
  normalizePhoneNumber,
  type IdentifierType,
  type NormalizeContext,
  type Normalized,
} from '../../src/hash/index.js';
import { loadCases } from './fixtures.js';

const RUNS = { numRuns: 2000 };
const HASH = /^[0-9a-f]{64}$/;

/** What an accepted normalized value of each type must look like (besides a passed-through hash). */
const SHAPES: Record<Exclude<IdentifierType, 'partner_user_id'>, RegExp> = {
  email: /^[^\s@A-Z]+@[^\s@A-Z]+\.[^\s@A-Z]+$/u,
  handle: /^[a-z0-9_]{1,15}$/,
  twitter_id: /^[1-9][0-9]{0,19}$/,
  device_id: /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{16})$/,
  phone_number: /^[1-9][0-9]{4,14}$/,
};

/** Valid raw values of every type, taken from the fixture tables, to be edited at random. */
const VALID: Record<IdentifierType, string[]> = Object.fromEntries(
  IDENTIFIER_TYPES.map((type) => [type, loadCases(type).flatMap((row) => ('normalized' in row ? [row.raw] : []))]),
) as Record<IdentifierType, string[]>;

/** Characters that matter to some normalizer, so random strings hit interesting paths. */
const INTERESTING = [...'0123456789abcdefABCDEFxX@.+-_ /:()#;,eE\t\n\u00a0\ufeff＋٣😀ß'];

const anyString = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.string({ unit: fc.constantFrom(...INTERESTING), maxLength: 80 }),
  fc.stringMatching(/^[0-9a-fA-F]{64}$/),
);

type Edit = { kind: 'insert' | 'replace'; at: number; text: string } | { kind: 'delete' | 'upper' | 'lower'; at: number };

const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ kind: fc.constantFrom('insert' as const, 'replace' as const), at: fc.nat(), text: fc.string({ unit: fc.constantFrom(...INTERESTING), minLength: 1, maxLength: 3 }) }),
  fc.record({ kind: fc.constantFrom('delete' as const, 'upper' as const, 'lower' as const), at: fc.nat() }),
);

function applyEdits(text: string, edits: Edit[]): string {
  let result = text;
  for (const e of edits) {
    const at = result.length === 0 ? 0 : e.at % (result.length + 1);
    switch (e.kind) {
      case 'insert':
        result = result.slice(0, at) + e.text + result.slice(at);
        break;
      case 'replace':
        result = result.slice(0, at) + e.text + result.slice(at + e.text.length);
        break;
      case 'delete':
        result = result.slice(0, at) + result.slice(at + 1);
        break;
      case 'upper':
        result = result.slice(0, at) + result.slice(at).toUpperCase();
        break;
      case 'lower':
        result = result.slice(0, at) + result.slice(at).toLowerCase();
        break;
    }
  }
  return result;
}

function editedValid(type: IdentifierType): fc.Arbitrary<string> {
  return fc.tuple(fc.constantFrom(...VALID[type]), fc.array(edit, { maxLength: 4 })).map(([raw, edits]) => applyEdits(raw, edits));
}

const countryField = fc.option(fc.oneof(fc.constantFrom('US', 'gb', 'DE', 'fr', ' in ', 'BR', 'JP', 'au', 'MX', 'UK', 'XX', '', ' ', 'USA'), fc.string({ maxLength: 4 })), {
  nil: undefined,
});
const context: fc.Arbitrary<NormalizeContext | undefined> = fc.option(fc.record({ country: countryField, defaultCountry: countryField }), { nil: undefined });

function input(type: IdentifierType): fc.Arbitrary<string> {
  return fc.oneof(anyString, editedValid(type));
}

/** The value is acceptable output for `type` from `raw`, or this throws with a description. */
function checkAccepted(type: IdentifierType, raw: string, result: Normalized): void {
  if (!result.ok) {
    expect(result.reason).toMatch(/\S/);
    return;
  }
  if (type === 'partner_user_id') {
    expect(result.value).toBe(raw.trim());
    expect(result.value).not.toBe('');
    expect([...result.value].length).toBeLessThanOrEqual(MAX_PARTNER_USER_ID_LENGTH);
    return;
  }
  if (HASH.test(result.value)) {
    expect(result.value).toBe(raw.trim().toLowerCase()); // only a hash given as input comes out as one
    return;
  }
  expect(result.value).toMatch(SHAPES[type]);
}

describe.each(IDENTIFIER_TYPES)('%s properties', (type) => {
  it('the normalizer never throws and accepts only well-formed values', () => {
    fc.assert(
      fc.property(input(type), context, (raw, ctx) => {
        checkAccepted(type, raw, NORMALIZERS[type](raw, ctx));
      }),
      RUNS,
    );
  });

  it('hashIdentifier never throws and gives 64 lowercase hex (partner_user_id: the trimmed value)', () => {
    fc.assert(
      fc.property(input(type), context, (raw, ctx) => {
        const result = hashIdentifier(type, raw, ctx);
        if (!result.ok) return;
        if (type === 'partner_user_id') expect(result.value).toBe(raw.trim());
        else expect(result.value).toMatch(HASH);
      }),
      RUNS,
    );
  });

  it('hashIdentifier agrees with the normalizer on what is rejected', () => {
    fc.assert(
      fc.property(input(type), context, (raw, ctx) => {
        const normalized = NORMALIZERS[type](raw, ctx);
        const hashed = hashIdentifier(type, raw, ctx);
        expect(hashed.ok).toBe(normalized.ok);
        if (!normalized.ok) expect(hashed).toEqual(normalized);
      }),
      RUNS,
    );
  });

  it('hashing the output again changes nothing (never hash a hash)', () => {
    fc.assert(
      fc.property(input(type), context, (raw, ctx) => {
        const once = hashIdentifier(type, raw, ctx);
        if (once.ok) expect(hashIdentifier(type, once.value, ctx)).toEqual(once);
      }),
      RUNS,
    );
  });

  if (type !== 'phone_number') {
    it('normalization is idempotent', () => {
      fc.assert(
        fc.property(input(type), (raw) => {
          const once = NORMALIZERS[type](raw);
          if (once.ok) expect(NORMALIZERS[type](once.value)).toEqual(once);
        }),
        RUNS,
      );
    });
  }
});

describe('phone_number idempotence', () => {
  it('the E.164 digits, given back with a +, normalize to themselves whatever the context', () => {
    fc.assert(
      fc.property(input('phone_number'), context, context, (raw, ctx, otherCtx) => {
        const once = normalizePhoneNumber(raw, ctx);
        if (!once.ok || HASH.test(once.value)) return;
        expect(normalizePhoneNumber(`+${once.value}`, otherCtx)).toEqual(once);
      }),
      RUNS,
    );
  });

  it('the digits without + normalize to themselves in the country they were read in', () => {
    const differing: string[] = [];
    for (const row of loadCases('phone_number')) {
      if (!('normalized' in row) || HASH.test(row.normalized) || row.raw.includes('+')) continue;
      const country = normalizeCountry(row.ctx?.country ?? '') ?? normalizeCountry(row.ctx?.defaultCountry ?? '');
      const viaPrefix = /^(?:00|011|010|0011)\s*/.test(row.raw.trim());
      if (country === undefined || viaPrefix) continue; // 00/011 numbers belong to another country
      const again = normalizePhoneNumber(row.normalized, { defaultCountry: country });
      if (!again.ok || again.value !== row.normalized) differing.push(`${country} ${row.normalized} -> ${JSON.stringify(again)}`);
    }
    // Digits without '+' are ambiguous where national numbers vary in length: in Germany
    // 4915123456789 is also a valid national number (area code 491). Where national numbers
    // are written with a trunk prefix (0 in Germany), digits that start with the calling code
    // instead are read as the international number whose '+' was lost (phone.ts).
    expect(differing).toEqual([]);
  });
});
