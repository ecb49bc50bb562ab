/**
 * src/hash: one normalizer per audience identifier type and the one SHA-256 helper. Nothing
 * else in adsync hashes. The rest of adsync calls hashIdentifier once per identifier value.
 */
import { isSha256Hex } from './already-hashed.js';
import { deviceIdText, normalizeDeviceId } from './device-id.js';
import { emailText, normalizeEmail } from './email.js';
import { handleText, normalizeHandle } from './handle.js';
import { normalizePartnerUserId, partnerUserIdText } from './partner-user-id.js';
import { normalizePhoneNumber, phoneText } from './phone.js';
import { rejected, toNormalized } from './result.js';
import { sha256Hex } from './sha256.js';
import { normalizeTwitterId, twitterIdText } from './twitter-id.js';
import type { IdentifierType, NormalizeContext, Normalized, NormalizedText, Normalizer } from './types.js';

export { IDENTIFIER_TYPES } from './types.js';
export type { IdentifierType, NormalizeContext, Normalized, Normalizer, Rejected } from './types.js';
export { sha256Hex } from './sha256.js';
export { isSha256Hex } from './already-hashed.js';
export { normalizeCountry } from './country.js';
export { normalizeEmail } from './email.js';
export { normalizeHandle } from './handle.js';
export { normalizeTwitterId } from './twitter-id.js';
export { normalizeDeviceId } from './device-id.js';
export { normalizePhoneNumber } from './phone.js';
export { normalizePartnerUserId, MAX_PARTNER_USER_ID_LENGTH } from './partner-user-id.js';

/** The normalizer of each identifier type (the text before hashing). */
export const NORMALIZERS: Readonly<Record<IdentifierType, Normalizer>> = Object.freeze({
  email: normalizeEmail,
  phone_number: normalizePhoneNumber,
  handle: normalizeHandle,
  twitter_id: normalizeTwitterId,
  device_id: normalizeDeviceId,
  partner_user_id: normalizePartnerUserId,
});

const UNKNOWN_TYPE = rejected('unknown identifier type');

/** The normalized text of one value of `type`, before hashing (for previews and the rejects file). */
export function normalizeIdentifier(type: IdentifierType, raw: string, ctx?: NormalizeContext): Normalized {
  return toNormalized(normalizedText(type, raw, ctx));
}

/**
 * The value to send for one identifier: `{ok: true, value}` with value the SHA-256 of the
 * normalized text as 64 lowercase hex (a value that already is a 64-hex hash is lowercased and
 * passed through, never hashed again), or for partner_user_id the trimmed raw value unhashed;
 * `{ok: false, reason}` when the value is unusable.
 */
export function hashIdentifier(type: IdentifierType, raw: string, ctx?: NormalizeContext): Normalized {
  if (type === 'partner_user_id') return toNormalized(partnerUserIdText(raw));
  const text = normalizedText(type, raw, ctx);
  if (typeof text !== 'string') return text;
  // Normalized text is 64 hex only when the input was a hash (see already-hashed.ts).
  return { ok: true, value: isSha256Hex(text) ? text : sha256Hex(text) };
}

function normalizedText(type: IdentifierType, raw: string, ctx: NormalizeContext | undefined): NormalizedText {
  switch (type) {
    case 'email':
      return emailText(raw);
    case 'phone_number':
      return phoneText(raw, ctx);
    case 'handle':
      return handleText(raw);
    case 'twitter_id':
      return twitterIdText(raw);
    case 'device_id':
      return deviceIdText(raw);
    case 'partner_user_id':
      return partnerUserIdText(raw);
    default:
      return UNKNOWN_TYPE;
  }
}
