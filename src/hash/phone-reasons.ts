import { rejected } from './result.js';
import type { NormalizedText, Rejected } from './types.js';

/**
 * The rejections of phone_number, shared by the libphonenumber-js path (phone.ts) and the fast
 * path (phone-fast-path.ts) so that both give the very same reason strings.
 */
export const EMPTY = rejected('empty phone number');
export const NOT_A_NUMBER = rejected('not a phone number');
export const TOO_SHORT = rejected('phone number too short');
export const TOO_LONG = rejected('phone number too long');
export const NO_COUNTRY = rejected('no country code and no default country');
export const UNKNOWN_CALLING_CODE = rejected('unknown country calling code');
export const UNPARSABLE = rejected('phone number could not be parsed');
export const SCIENTIFIC = rejected('phone number in scientific notation (rewritten by a spreadsheet?); format the column as text and export it again');
/** E.164 caps an international number at 15 digits, country code included. */
export const MAX_E164_DIGITS = 15;
export const LONGER_THAN_E164 = rejected(`phone number longer than an international (E.164) number can be: at most ${MAX_E164_DIGITS} digits with the country code`);

/**
 * The digits of a number libphonenumber-js (or the fast path) found valid, or the rejection
 * of one longer than E.164 allows: libphonenumber-js takes some German numbers with extension
 * digits (`912 1 55 1234 5678`, 16 digits with +49) that no phone has as its number.
 */
export function e164Digits(digits: string): NormalizedText {
  return digits.length > MAX_E164_DIGITS ? LONGER_THAN_E164 : digits;
}

/** RFC 3966 parameters: libphonenumber-js answers them differently from one call to the next. */
export const PARAMETERS = rejected("a ';' parameter (phone-context, ...) is not read: write the number alone");

/** "phone number not valid for US" (or "for +1" when not even the country is known), shared. */
const notValidFor = new Map<string, Rejected>();
export function notValid(where: string): Rejected {
  let rejection = notValidFor.get(where);
  if (rejection === undefined) {
    rejection = rejected(`phone number not valid for ${where}`);
    notValidFor.set(where, rejection);
  }
  return rejection;
}
