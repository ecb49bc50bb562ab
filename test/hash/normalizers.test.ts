import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashIdentifier, IDENTIFIER_TYPES, NORMALIZERS, normalizeIdentifier } from '../../src/hash/index.js';
import { label, loadCases } from './fixtures.js';

/** SHA-256 computed independently of the code under test. */
const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

describe.each(IDENTIFIER_TYPES)('%s table (test/fixtures/hash)', (type) => {
  const cases = loadCases(type);
  const accepted = cases.filter((row) => 'normalized' in row);
  const rejected = cases.filter((row) => 'reason' in row);

  it('has accepted and rejected examples', () => {
    expect(accepted.length).toBeGreaterThan(3);
    expect(rejected.length).toBeGreaterThan(0);
  });

  it.each(cases.map((row) => [label(row), row] as const))('normalizes %s', (_, row) => {
    const expected = 'normalized' in row ? { ok: true, value: row.normalized } : { ok: false, reason: row.reason };
    expect(NORMALIZERS[type](row.raw, row.ctx)).toEqual(expected);
    expect(normalizeIdentifier(type, row.raw, row.ctx)).toEqual(expected);
  });

  it.each(cases.map((row) => [label(row), row] as const))('hashes %s', (_, row) => {
    const result = hashIdentifier(type, row.raw, row.ctx);
    if ('reason' in row) {
      expect(result).toEqual({ ok: false, reason: row.reason });
    } else if (type === 'partner_user_id') {
      expect(result).toEqual({ ok: true, value: row.normalized });
    } else if (/^[0-9a-f]{64}$/.test(row.normalized)) {
      expect(result).toEqual({ ok: true, value: row.normalized }); // already a hash: not hashed again
    } else {
      expect(result).toEqual({ ok: true, value: sha256(row.normalized) });
    }
  });
});
