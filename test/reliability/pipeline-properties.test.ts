/**
 * An end-to-end property of the audience pipeline (source -> row mapper -> state -> batch
 * builder -> request), through the real CLI and the emulator: whatever a CRM export holds,
 * the service only ever receives identifiers that are 64 lowercase hex characters (SHA-256),
 * or, for partner_user_id, the raw value trimmed; it never refuses one; and nothing throws.
 *
 * - Well-formed exports (every cell quoted) whose values are random: random strings, binary
 *   and unicode junk, already-hashed values, and random edits of the valid values of the
 *   normalizer fixtures, in every identifier column and the country column. Here the
 *   expected audience is known exactly: each cell through hashIdentifier (src/hash, whose
 *   normalizers have their own property tests), so the test proves the plumbing around it
 *   neither drops, corrupts nor invents an identifier.
 * - The same exports with random byte edits (quotes, line breaks, invalid UTF-8, cuts):
 *   the run succeeds or fails cleanly, and the audience still holds only well-formed values.
 *
 * The source readers and the normalizers have their own fuzz and property tests
 * (test/sources/fuzz.test.ts, test/hash/properties.test.ts); this one covers what joins them.
 * Deterministic: fast-check draws from a fixed seed (ADSYNC_PROPERTY_SEED to change it).
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashIdentifier, IDENTIFIER_TYPES, type IdentifierType } from '../../src/hash/index.js';
import { createWorkspace, type Workspace } from '../helpers/e2e.js';
import { loadCases } from '../hash/fixtures.js';
import { errorLines, expectNoStackTrace, integrity, summaryOf } from './support.js';

const SEED = Number(process.env.ADSYNC_PROPERTY_SEED ?? 7_2026);
const ROWS = 400;
const HASH = /^[0-9a-f]{64}$/;
const COLUMNS: Record<IdentifierType, string> = {
  email: 'Email',
  phone_number: 'Phone',
  handle: 'Handle',
  twitter_id: 'Twitter ID',
  device_id: 'Device ID',
  partner_user_id: 'Customer ID',
};
const HEADER = [...IDENTIFIER_TYPES.map((t) => COLUMNS[t]), 'Country'];

const VALID: Record<IdentifierType, string[]> = Object.fromEntries(
  IDENTIFIER_TYPES.map((t) => [t, loadCases(t).flatMap((row) => ('normalized' in row ? [row.raw] : []))]),
) as Record<IdentifierType, string[]>;
const INTERESTING = [...'0123456789abcdefABCDEF@.+-_ /:()#;,"\'\t\r\n\u00a0\ufeff＋٣😀ßxX'];

/** A random edit of a valid value: characters inserted, replaced, deleted, case changed. */
function edited(type: IdentifierType): fc.Arbitrary<string> {
  const edit = fc.record({ at: fc.nat(), kind: fc.constantFrom('insert', 'delete', 'upper', 'lower'), text: fc.string({ unit: fc.constantFrom(...INTERESTING), minLength: 1, maxLength: 3 }) });
  return fc.tuple(fc.constantFrom(...VALID[type]), fc.array(edit, { maxLength: 3 })).map(([raw, edits]) => {
    let s = raw;
    for (const e of edits) {
      const at = s.length === 0 ? 0 : e.at % (s.length + 1);
      if (e.kind === 'insert') s = s.slice(0, at) + e.text + s.slice(at);
      else if (e.kind === 'delete') s = s.slice(0, at) + s.slice(at + 1);
      else if (e.kind === 'upper') s = s.slice(0, at) + s.slice(at).toUpperCase();
      else s = s.slice(0, at) + s.slice(at).toLowerCase();
    }
    return s;
  });
}

/** What a cell of a type may hold. No NUL: a file with NUL bytes near its start is refused whole. */
function cell(type: IdentifierType): fc.Arbitrary<string> {
  const noNul = (s: string): string => s.replaceAll('\u0000', '');
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...VALID[type]) },
    { weight: 4, arbitrary: edited(type).map(noNul) },
    { weight: 1, arbitrary: fc.constant('') },
    { weight: 1, arbitrary: fc.string({ maxLength: 40 }).map(noNul) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }).map(noNul) },
    { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom(...INTERESTING), maxLength: 40 }) },
    { weight: 1, arbitrary: fc.stringMatching(/^ ?[0-9a-fA-F]{64} ?$/) },
  );
}

const country = fc.oneof(fc.constantFrom('US', 'gb', 'DE', ' fr ', 'IN', 'BR', 'jp', 'UK', 'XX', '', 'USA'), fc.string({ maxLength: 4 }).map((s) => s.replaceAll('\u0000', '')));
const row = fc.tuple(...IDENTIFIER_TYPES.map(cell), country);

/** As written to the file and read back: a lone surrogate becomes U+FFFD. */
const asUtf8 = (s: string): string => Buffer.from(s, 'utf8').toString('utf8');

function csv(rows: readonly string[][]): string {
  const quote = (s: string): string => `"${s.replace(/"/g, '""')}"`;
  return `${HEADER.join(',')}\n${rows.map((r) => r.map(quote).join(',')).join('\n')}\n`;
}

type Members = Record<IdentifierType, string[]>;

/** The identifiers each row gives, by the normalizers: what the audience must hold. */
function expectedOf(rows: readonly string[][], into: Record<IdentifierType, Set<string>>): void {
  for (const r of rows) {
    const countryCell = asUtf8(r[IDENTIFIER_TYPES.length] ?? '').trim();
    const ctx = { country: countryCell === '' ? undefined : countryCell, defaultCountry: 'US' };
    IDENTIFIER_TYPES.forEach((type, i) => {
      const raw = asUtf8(r[i] ?? '');
      if (raw.trim() === '') return;
      const result = hashIdentifier(type, raw, ctx);
      if (result.ok) into[type].add(result.value);
    });
  }
}

function members(ws: Workspace): Members {
  const m = ws.emulator.state().custom_audiences['emu-audience']?.members ?? {};
  return Object.fromEntries(IDENTIFIER_TYPES.map((t) => [t, [...(m[t] ?? [])].sort()])) as Members;
}

function expectWellFormed(m: Members): void {
  for (const type of IDENTIFIER_TYPES) {
    for (const value of m[type]) {
      if (type === 'partner_user_id') {
        expect(value.trim(), 'a partner_user_id is sent trimmed').toBe(value);
        expect(value.length).toBeGreaterThan(0);
        expect([...value].length).toBeLessThanOrEqual(256);
      } else {
        expect(value, `${type} holds a value that is not 64 lowercase hex`).toMatch(HASH);
      }
    }
  }
}

function expectNoServiceRefusal(summary: Record<string, unknown>): void {
  if (typeof summary.rejects_file === 'string') expect(readFileSync(summary.rejects_file, 'utf8')).not.toContain('refused');
}

let ws: Workspace;
beforeAll(async () => {
  ws = await createWorkspace();
  ws.write(
    'crm.yaml',
    [
      'name: crm',
      'account_id: emu-account',
      'max_reject_ratio: 1',
      'source: { path: crm.csv }',
      'audience:',
      '  custom_audience_id: emu-audience',
      '  mode: add',
      `  identifiers: { ${IDENTIFIER_TYPES.map((t) => `${t}: ${COLUMNS[t]}`).join(', ')} }`,
      '  country_column: Country',
      '  default_country: US',
      '',
    ].join('\n'),
  );
});
afterAll(async () => {
  await ws.close();
});

describe('random CRM exports through the whole audience pipeline', () => {
  const expected = Object.fromEntries(IDENTIFIER_TYPES.map((t) => [t, new Set<string>()])) as Record<IdentifierType, Set<string>>;

  it('well-formed exports of random values: the audience is exactly what the normalizers give, every value well-formed', { timeout: 60_000 }, async () => {
    const exports = fc.sample(fc.array(row, { minLength: ROWS, maxLength: ROWS }), { seed: SEED, numRuns: 5 });
    for (const [i, rows] of exports.entries()) {
      const file = ws.write('crm.csv', csv(rows));
      const result = await ws.cli(['run', 'crm.yaml', '--json']);
      const context = `export ${i} (ADSYNC_PROPERTY_SEED=${SEED}), kept in ${file}.${i}`;
      ws.write(`crm.csv.${i}`, csv(rows));
      expectNoStackTrace(result);
      expect(result.code, `${context}\n${result.stderr}`).toBe(0);
      const summary = summaryOf(result);
      expect(summary.read, context).toBe(ROWS);
      expectNoServiceRefusal(summary);
      expectedOf(rows, expected);
      const actual = members(ws);
      expectWellFormed(actual);
      for (const type of IDENTIFIER_TYPES) expect(actual[type], `${type}, ${context}`).toEqual([...expected[type]].sort());
    }
    // Every kind of value was exercised.
    for (const type of IDENTIFIER_TYPES) expect(expected[type].size, type).toBeGreaterThan(50);
  });

  it('the same exports with random byte edits: a clean success or failure, and still only well-formed values', { timeout: 60_000 }, async () => {
    const byteEdit = fc.oneof(
      fc.record({ at: fc.double({ min: 0, max: 1, noNaN: true }), insert: fc.constantFrom(...['"', '\n', '\r', ',', '""', '\u00e9', '\ufeff'].map((t) => Buffer.from(t)), Buffer.from([0xff]), Buffer.from([0xc3]), Buffer.from([0xe2, 0x82])) }),
      fc.record({ at: fc.double({ min: 0, max: 1, noNaN: true }), remove: fc.integer({ min: 1, max: 30 }) }),
      fc.record({ cut: fc.double({ min: 0.5, max: 1, noNaN: true }) }),
    );
    const cases = fc.sample(fc.tuple(fc.array(row, { minLength: ROWS, maxLength: ROWS }), fc.array(byteEdit, { minLength: 1, maxLength: 6 })), { seed: SEED + 1, numRuns: 4 });
    for (const [i, [rows, edits]] of cases.entries()) {
      let bytes = Buffer.from(csv(rows));
      const headerEnd = bytes.indexOf(0x0a) + 1;
      for (const e of edits) {
        // Edits after the header: a broken header only gives "no column for ..." (exit 2).
        const at = (x: number): number => headerEnd + Math.floor(x * (bytes.length - headerEnd));
        if ('insert' in e) bytes = Buffer.concat([bytes.subarray(0, at(e.at)), e.insert, bytes.subarray(at(e.at))]);
        else if ('remove' in e) bytes = Buffer.concat([bytes.subarray(0, at(e.at)), bytes.subarray(at(e.at) + e.remove)]);
        else bytes = bytes.subarray(0, at(e.cut));
      }
      const file = ws.write(`mangled-${i}.csv`, bytes);
      ws.write('crm.csv', bytes);
      const context = `mangled export ${i} (ADSYNC_PROPERTY_SEED=${SEED}), kept in ${file}`;
      const result = await ws.cli(['run', 'crm.yaml', '--json']);
      expectNoStackTrace(result);
      expect([0, 1], `${context}\n${result.stderr}`).toContain(result.code);
      if (result.code === 1) expect(errorLines(result.stderr), context).toHaveLength(1);
      expectNoServiceRefusal(summaryOf(result));
      expect(integrity(ws.statePath)).toBe('ok');
      expectWellFormed(members(ws));
    }
  });
});
