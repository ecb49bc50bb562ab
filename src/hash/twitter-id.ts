import { alreadyHashed } from './already-hashed.js';
import { rejected, toNormalized } from './result.js';
import { SCIENTIFIC_NOTATION } from './scientific-notation.js';
import type { Normalized, NormalizedText } from './types.js';

/** X account ids are 64-bit; the largest 64-bit unsigned integer has 20 digits. */
const MAX_DIGITS = 20;
const MAX_UINT64 = '18446744073709551615';


const EMPTY = rejected('empty twitter_id');
const ZERO = rejected('twitter_id 0 is not an account id');
const SCIENTIFIC = rejected('twitter_id in scientific notation (rewritten by a spreadsheet?); export it as text');
const NOT_AN_INTEGER = rejected('twitter_id is not a plain integer');
const TOO_LONG = rejected(`twitter_id longer than ${MAX_DIGITS} digits`);
const OUT_OF_RANGE = rejected('twitter_id larger than a 64-bit id');

/** twitter_id: trim; a plain decimal integer without leading zeros ("000143567" -> "143567"). */
export function twitterIdText(raw: string): NormalizedText {
  const trimmed = raw.trim();
  const length = trimmed.length;
  if (length === 0) return EMPTY;
  if (length === 64) {
    const hashed = alreadyHashed(trimmed);
    if (hashed !== undefined) return hashed;
  }
  let firstSignificant = -1;
  for (let i = 0; i < length; i++) {
    const c = trimmed.charCodeAt(i);
    if (c < 48 || c > 57) return SCIENTIFIC_NOTATION.test(trimmed) ? SCIENTIFIC : NOT_AN_INTEGER;
    if (firstSignificant < 0 && c !== 48) firstSignificant = i;
  }
  if (firstSignificant < 0) return ZERO;
  const digits = firstSignificant === 0 ? trimmed : trimmed.slice(firstSignificant);
  if (digits.length > MAX_DIGITS) return TOO_LONG;
  if (digits.length === MAX_DIGITS && digits > MAX_UINT64) return OUT_OF_RANGE;
  return digits;
}

/** The twitter_id as hashed: `" 000143567 "` gives `143567`. */
export function normalizeTwitterId(raw: string): Normalized {
  return toNormalized(twitterIdText(raw));
}
