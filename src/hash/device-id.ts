import { alreadyHashed } from './already-hashed.js';
import { rejected, toNormalized } from './result.js';
import type { Normalized, NormalizedText } from './types.js';

/** Separators tolerated inside a device id: dashes and whitespace (as in "af38 02a4 ..."). */
const SEPARATORS = /[-\s]/g;
const HEX_32 = /^[0-9a-f]{32}$/;
const HEX_16 = /^[0-9a-f]{16}$/;
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ALL_ZERO = /^[0-]+$/;

const EMPTY = rejected('empty device_id');
const ZERO = rejected('all-zero device_id (the user limits ad tracking)');
const NOT_A_DEVICE_ID = rejected('not a device id (IDFA or AdID UUID, or a 16-hex-digit Android ID)');

/**
 * device_id, in the form the device reports it:
 * - IDFA / Android advertising id: a UUID, lowercase, with dashes
 *   (4b61639e-47cc-4056-a16a-c8217e029462); uppercase input is lowercased and 32 hex digits
 *   written without dashes get them;
 * - Android ID: 16 hex digits, lowercase, no dashes or spaces (af3802a465767e36).
 * Dashes and spaces anywhere inside are tolerated (only the hex digits count). The all-zero id
 * is what a device that limits ad tracking reports: it identifies nobody and is rejected.
 */
export function deviceIdText(raw: string): NormalizedText {
  const trimmed = raw.trim();
  if (trimmed === '') return EMPTY;
  const lower = trimmed.toLowerCase();
  // The common case first: a canonical UUID needs no rewriting beyond lowercasing.
  if (lower.length === 36 && CANONICAL_UUID.test(lower)) return ALL_ZERO.test(lower) ? ZERO : lower;
  if (lower.length === 64) {
    const hashed = alreadyHashed(lower);
    if (hashed !== undefined) return hashed;
  }
  const hex = lower.replace(SEPARATORS, '');
  if (hex.length === 32 && HEX_32.test(hex)) {
    if (ALL_ZERO.test(hex)) return ZERO;
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
  if (hex.length === 16 && HEX_16.test(hex)) return ALL_ZERO.test(hex) ? ZERO : hex;
  return NOT_A_DEVICE_ID;
}

/** The device id as hashed: `4B61639E47CC4056A16AC8217E029462` gives the dashed lowercase UUID. */
export function normalizeDeviceId(raw: string): Normalized {
  return toNormalized(deviceIdText(raw));
}
