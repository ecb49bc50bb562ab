import { rejected } from './result.js';
import type { Rejected } from './types.js';

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
