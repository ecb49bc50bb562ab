import { rejected, toNormalized } from './result.js';
import type { Normalized, NormalizedText } from './types.js';

/** The longest partner_user_id accepted, in characters (Unicode code points). */
export const MAX_PARTNER_USER_ID_LENGTH = 256;

const EMPTY = rejected('empty partner_user_id');
const TOO_LONG = rejected(`partner_user_id longer than ${MAX_PARTNER_USER_ID_LENGTH} characters`);

/**
 * partner_user_id: the advertiser's own id, never hashed and sent as is, except that
 * surrounding whitespace is trimmed. Case is kept (crm-ABC and crm-abc are different ids), and
 * a value that looks like a hash stays as it is.
 */
export function partnerUserIdText(raw: string): NormalizedText {
  const trimmed = raw.trim();
  if (trimmed === '') return EMPTY;
  // Count code points only when UTF-16 units could exceed the limit: the common case is cheap.
  if (trimmed.length > MAX_PARTNER_USER_ID_LENGTH && codePointCount(trimmed) > MAX_PARTNER_USER_ID_LENGTH) {
    return TOO_LONG;
  }
  return trimmed;
}

function codePointCount(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/** The partner_user_id as sent: `" crm-000123 "` gives `crm-000123`. */
export function normalizePartnerUserId(raw: string): Normalized {
  return toNormalized(partnerUserIdText(raw));
}
