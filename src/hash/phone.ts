import type { CountryCode, PhoneNumber } from 'libphonenumber-js/core';
import { alreadyHashed } from './already-hashed.js';
import { isKnownCountry, normalizeCountry } from './country.js';
import { fastPhoneText } from './phone-fast-path.js';
import { phoneLibrary, phoneMetadata } from './phone-metadata.js';
import { e164Digits, EMPTY, NO_COUNTRY, NOT_A_NUMBER, notValid, PARAMETERS, SCIENTIFIC, TOO_LONG, TOO_SHORT, UNKNOWN_CALLING_CODE, UNPARSABLE } from './phone-reasons.js';
import { rejected, toNormalized } from './result.js';
import { SCIENTIFIC_NOTATION } from './scientific-notation.js';
import type { NormalizeContext, Normalized, NormalizedText, Rejected } from './types.js';

/**
 * Parse options, one object per country, made once: the hot path allocates none. `extract:
 * false` parses the whole cell as one number, so text around a number ("call 415 555 2671",
 * "abc 4155552671") is rejected instead of silently mined for digits.
 */
interface ParseOptions {
  defaultCountry?: CountryCode;
  extract: false;
}
const NO_COUNTRY_OPTIONS: ParseOptions = Object.freeze({ extract: false });
const optionsByCountry = new Map<CountryCode, ParseOptions>();

function parseOptions(country: CountryCode | undefined): ParseOptions {
  if (country === undefined) return NO_COUNTRY_OPTIONS;
  let options = optionsByCountry.get(country);
  if (options === undefined) {
    options = Object.freeze({ defaultCountry: country, extract: false });
    optionsByCountry.set(country, options);
  }
  return options;
}

/** A number written with its country code: + (or the fullwidth ＋) before the first digit. */
const INTERNATIONAL_PATTERN = /^[^0-9]*[+＋]/;

/**
 * phone_number: E.164 digits without the '+' (14155552671), through libphonenumber-js.
 *
 * - A number written with + (or with the international call prefix of its country: 011 from
 *   the US, 00 from most of the world) uses the country code it carries.
 * - A number written nationally ((415) 555-2671, 020 7946 0958, +44 (0)20 ...) takes the row's
 *   country (ctx.country) or else the job's default (ctx.defaultCountry); any case is accepted.
 *   A row country that is set but unknown is an error of that row, not a reason to fall back
 *   to the default: it is named in the rejection when the number needs it.
 * - Spaces, dots, dashes, parentheses and a trailing extension (x123, ext. 123, #123) are
 *   accepted; the extension is dropped (E.164 has none).
 * - The number must be valid (isValid()) for its country with the 'max' metadata.
 * - Mexico: mobiles written internationally with the "1" Mexico dropped in 2019
 *   (+52 1 55 1234 5678) are taken as the current +52 55 1234 5678.
 *
 * One parse and one validation per value; only invalid numbers pay for more. Common shapes
 * take phone-fast-path.ts, which gives the same answer as libphonenumber-js several times
 * faster (test/hash/phone-fast-path.test.ts compares both on millions of numbers).
 */
export function phoneText(raw: string, ctx?: NormalizeContext): NormalizedText {
  return phoneTextWith(raw, ctx, true);
}

/**
 * phoneText through libphonenumber-js alone, without the fast path: the reference the fast
 * path is tested against (and a way around it should it ever be in doubt).
 */
export function phoneTextWithoutFastPath(raw: string, ctx?: NormalizeContext): NormalizedText {
  return phoneTextWith(raw, ctx, false);
}

/** Digits written with separators only: no +, no letters, no extension. */
const DIGITS_ONLY = /^[0-9 ().\-/]+$/;

/** Per country: its calling code and national (trunk) prefix, from the metadata. */
const dialingByCountry = new Map<CountryCode, { callingCode: string; trunkPrefix: string | undefined }>();

function dialingOf(country: CountryCode): { callingCode: string; trunkPrefix: string | undefined } {
  let dialing = dialingByCountry.get(country);
  if (dialing === undefined) {
    const { getCountryCallingCode, Metadata } = phoneLibrary();
    const metadata = new Metadata(phoneMetadata());
    metadata.selectNumberingPlan(country);
    // nationalPrefix() is there at run time; the library's types leave it out.
    const plan = metadata.numberingPlan as unknown as { nationalPrefix(): string | undefined } | undefined;
    dialing = { callingCode: getCountryCallingCode(country, phoneMetadata()), trunkPrefix: plan?.nationalPrefix() || undefined };
    dialingByCountry.set(country, dialing);
  }
  return dialing;
}

/**
 * A number whose '+' was lost (a spreadsheet drops it: +49 151 23456789 becomes 4915123456789)
 * in a country whose national numbers are written with a trunk prefix (0 in Germany): digits
 * that start with the country's calling code and not with its trunk prefix are read as
 * international when that reading is a valid number. libphonenumber-js reads them as a
 * national number of that country when the numbering plan allows it (49 151... as 0491
 * 5123456789 in Germany), which hashes to a number nobody has. Countries without a trunk
 * prefix (Italy) keep libphonenumber-js's reading: there a national number may start with
 * the calling code (393 ... is an Italian mobile).
 */
function lostPlusReading(text: string, country: CountryCode, fastPath: boolean): { text: string; normalized: string } | undefined {
  const { callingCode, trunkPrefix } = dialingOf(country);
  if (trunkPrefix === undefined) return undefined;
  // Most cells are out at the first digit (a trunk prefix, an area code): no regex, no copy.
  let first = 0;
  while (first < text.length && (text.charCodeAt(first) < 48 || text.charCodeAt(first) > 57)) first++;
  if (text.charCodeAt(first) !== callingCode.charCodeAt(0) || !DIGITS_ONLY.test(text)) return undefined;
  const digits = text.replace(/[^0-9]/g, '');
  if (!digits.startsWith(callingCode) || digits.startsWith(trunkPrefix)) return undefined;
  const international = `+${digits}`;
  const normalized = phoneTextWith(international, undefined, fastPath);
  return typeof normalized === 'string' ? { text: international, normalized } : undefined;
}

/**
 * What is parsed for a cell: the text in the row's country, or the text read as international
 * (lostPlusReading) without one, already normalized then. The fast path and libphonenumber-js
 * both parse this.
 */
export function phoneInput(
  text: string,
  country: CountryCode | undefined,
  fastPath = true,
): { text: string; country: CountryCode | undefined; normalized?: string | undefined } {
  const international = country === undefined ? undefined : lostPlusReading(text, country, fastPath);
  return international === undefined ? { text, country } : { text: international.text, country: undefined, normalized: international.normalized };
}

function phoneTextWith(raw: string, ctx: NormalizeContext | undefined, fastPath: boolean): NormalizedText {
  const text = raw.trim();
  if (text === '') return EMPTY;
  if (text.length === 64) {
    const hashed = alreadyHashed(text);
    if (hashed !== undefined) return hashed;
  }

  // libphonenumber-js tests a phone-context with 'g'-flag expressions whose lastIndex carries
  // over between calls: the same cell would be valid on one row and not on the next.
  if (text.includes(';')) return PARAMETERS;
  // Its digits are gone (4.155552671E+09 lost its last ones): say why, not "not a phone number".
  if (SCIENTIFIC_NOTATION.test(text)) return SCIENTIFIC;
  const code = givenCode(ctx);
  const country = code === undefined ? undefined : normalizeCountry(code);
  const input = phoneInput(text, country, fastPath);
  if (input.normalized !== undefined) return input.normalized;
  if (fastPath) {
    const fast = fastPhoneText(input.text, input.country);
    if (fast !== undefined) return fast;
  }
  const unknownCountry = code !== undefined && country === undefined ? code.trim() : undefined;

  const { parsePhoneNumberWithError, ParseError } = phoneLibrary();
  let phone: PhoneNumber;
  try {
    phone = parsePhoneNumberWithError(input.text, parseOptions(input.country), phoneMetadata());
  } catch (error) {
    // ParseError says what is wrong with the text. Anything else would be a libphonenumber-js
    // bug on this one input: it rejects the value (one row), it does not end the run.
    return error instanceof ParseError ? parseFailure(error.message, input.text, unknownCountry) : UNPARSABLE;
  }
  if (phone.isValid()) return e164Digits(phone.number.slice(1));
  return legacyMexicanMobile(phone) ?? notValid(phone.country ?? `+${phone.countryCallingCode}`);
}

/**
 * The country national numbers of a row are read in: the row's country, else the job's
 * default (phoneText); undefined when neither is given or the one given is unknown.
 */
export function phoneCountry(ctx: NormalizeContext | undefined): CountryCode | undefined {
  const code = givenCode(ctx);
  return code === undefined ? undefined : normalizeCountry(code);
}

/** The country code given for a row, as given: the row's country, else the job's default. */
function givenCode(ctx: NormalizeContext | undefined): string | undefined {
  return ctx === undefined ? undefined : (givenCountry(ctx.country) ?? givenCountry(ctx.defaultCountry));
}

/** A country field that says something (not blank), as given; known codes take a fast path. */
function givenCountry(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (isKnownCountry(value)) return value;
  return value.trim() === '' ? undefined : value;
}

function parseFailure(code: string, text: string, unknownCountry: string | undefined): Rejected {
  switch (code) {
    case 'INVALID_COUNTRY':
      if (INTERNATIONAL_PATTERN.test(text)) return UNKNOWN_CALLING_CODE;
      return unknownCountry === undefined ? NO_COUNTRY : rejected(`no country code and unknown country '${unknownCountry.slice(0, 40)}'`);
    case 'TOO_SHORT':
      return TOO_SHORT;
    case 'TOO_LONG':
      return TOO_LONG;
    default:
      return NOT_A_NUMBER;
  }
}

/** +52 1 XX XXXX XXXX (pre-2019 mobile format) as the valid +52 XX XXXX XXXX, or undefined. */
function legacyMexicanMobile(phone: PhoneNumber): string | undefined {
  const national = phone.nationalNumber;
  if (phone.countryCallingCode !== '52' || national.length !== 11 || national.charCodeAt(0) !== 49 /* 1 */) {
    return undefined;
  }
  try {
    const current = phoneLibrary().parsePhoneNumberWithError(`+52${national.slice(1)}`, NO_COUNTRY_OPTIONS, phoneMetadata());
    return current.isValid() ? current.number.slice(1) : undefined;
  } catch {
    return undefined;
  }
}

/** The phone number as hashed: `(415) 555-2671` with default country US gives `14155552671`. */
export function normalizePhoneNumber(raw: string, ctx?: NormalizeContext): Normalized {
  return toNormalized(phoneText(raw, ctx));
}
