import { alreadyHashed } from './already-hashed.js';
import { rejected, toNormalized } from './result.js';
import type { Normalized, NormalizedText } from './types.js';

/** RFC 5321 caps a forward path at 254 characters; anything longer is not an address. */
const MAX_EMAIL_LENGTH = 254;

/**
 * An address as the X docs need it: exactly one @, a non-empty local part, and a domain of at
 * least two non-empty dot-separated labels; no whitespace anywhere (\s with the u flag covers
 * Unicode spaces such as NBSP). Domain labels also exclude the characters that only ever appear
 * there when two addresses or a display name were pasted into one cell (, ; : < > ( ) [ ] \ ").
 * Labels cannot contain a dot, so the pattern cannot backtrack badly on long input.
 */
const EMAIL_PATTERN = /^[^\s@]+@(?:[^\s@.,;:<>()[\]\\"]+\.)+[^\s@.,;:<>()[\]\\"]+$/u;

const EMPTY = rejected('empty email');
const NOT_AN_EMAIL = rejected('not an email address');
const TOO_LONG = rejected(`email address longer than ${MAX_EMAIL_LENGTH} characters`);

/**
 * Email: trim leading and trailing whitespace, lowercase. No provider-specific rewriting (no
 * Gmail dot or +tag removal): X matches on the address as the docs normalize it.
 */
export function emailText(raw: string): NormalizedText {
  const trimmed = raw.trim();
  if (trimmed === '') return EMPTY;
  const hashed = alreadyHashed(trimmed);
  if (hashed !== undefined) return hashed;
  if (trimmed.length > MAX_EMAIL_LENGTH) return TOO_LONG;
  const email = trimmed.toLowerCase();
  return EMAIL_PATTERN.test(email) ? email : NOT_AN_EMAIL;
}

/** The email as hashed: `"  Support@X.com "` gives `support@x.com`. */
export function normalizeEmail(raw: string): Normalized {
  return toNormalized(emailText(raw));
}
