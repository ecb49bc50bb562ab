import { readFileSync } from 'node:fs';
import type { IdentifierType, NormalizeContext } from '../../src/hash/index.js';

/** One row of a table in test/fixtures/hash/<type>.json: a raw value and what it must give. */
export type FixtureCase =
  | { raw: string; ctx?: NormalizeContext; normalized: string; note?: string }
  | { raw: string; ctx?: NormalizeContext; reason: string; note?: string };

const FILES: Record<IdentifierType, string> = {
  email: 'email.json',
  phone_number: 'phone-number.json',
  handle: 'handle.json',
  twitter_id: 'twitter-id.json',
  device_id: 'device-id.json',
  partner_user_id: 'partner-user-id.json',
};

function isContext(value: unknown): value is NormalizeContext {
  if (typeof value !== 'object' || value === null) return false;
  return Object.entries(value).every(([key, field]) => (key === 'country' || key === 'defaultCountry') && typeof field === 'string');
}

function isCase(value: unknown): value is FixtureCase {
  if (typeof value !== 'object' || value === null) return false;
  const row = value as Record<string, unknown>;
  if (typeof row.raw !== 'string') return false;
  if (row.ctx !== undefined && !isContext(row.ctx)) return false;
  return (typeof row.normalized === 'string') !== (typeof row.reason === 'string');
}

/** The table of one identifier type, checked for shape so a typo in a fixture fails loudly. */
export function loadCases(type: IdentifierType): FixtureCase[] {
  const url = new URL(`../fixtures/hash/${FILES[type]}`, import.meta.url);
  const parsed: unknown = JSON.parse(readFileSync(url, 'utf8'));
  if (!Array.isArray(parsed)) throw new Error(`${FILES[type]}: not an array`);
  return parsed.map((row: unknown, index) => {
    if (!isCase(row)) throw new Error(`${FILES[type]}[${index}]: not a fixture case: ${JSON.stringify(row)}`);
    return row;
  });
}

/** A short printable label for a case in test names. */
export function label(row: FixtureCase): string {
  const raw = row.raw.length > 48 ? `${row.raw.slice(0, 45)}...(${row.raw.length} chars)` : row.raw;
  const ctx = row.ctx === undefined ? '' : ` ${JSON.stringify(row.ctx)}`;
  return `${JSON.stringify(raw)}${ctx}${row.note === undefined ? '' : ` (${row.note})`}`;
}
