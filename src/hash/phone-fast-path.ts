/**
 * The phone_number fast path: the same answer as libphonenumber-js (phone.ts) for the common
 * shapes of phone numbers, several times faster, and `undefined` ("ask libphonenumber-js")
 * for everything else.
 *
 * Why it is faster: libphonenumber-js compiles every regular expression of the metadata again
 * on each use (`new RegExp(...)` in matchesEntirely, the national prefix, the IDD prefix, the
 * leading digits, ...) and allocates Metadata and NumberingPlan objects along the way. This
 * module compiles each country's expressions once and allocates nothing but strings.
 *
 * How it stays exact: it is a line-by-line port of the parse and validation steps that
 * libphonenumber-js 1.13 (`parsePhoneNumberWithError(text, {defaultCountry, extract: false})`
 * then `isValid()`) takes for such input, reading the same metadata with the same
 * interpretation (the v4 layout of NumberingPlan in libphonenumber-js/source/metadata.js).
 * Each step names the function of libphonenumber-js/source it mirrors.
 * test/hash/phone-fast-path.test.ts compares both paths on millions of generated numbers.
 *
 * What it takes (everything else falls back):
 * - text of ASCII digits with spaces, no-break spaces, dashes, dots, slashes and parentheses,
 *   optionally starting with a single '+', with 3 to MAX_DIGITS digits and at most MAX_LENGTH
 *   characters. For such text libphonenumber-js finds no extension, no RFC 3966 syntax and
 *   no letters, and keeps exactly the ASCII digits (and the leading '+').
 * - a number that parses: a known geographic country calling code after '+' or an IDD prefix,
 *   or a (row or default) country for national numbers. Non-geographic calling codes (+800,
 *   +808, +870, +878, +881, +882, +883, +888, +979), "+0...", no country for a national
 *   number, and national numbers shorter than 2 or longer than 17 digits fall back.
 * What it answers: the E.164 digits of a valid number; "phone number not valid for XX" (or
 * "for +NN") of a parsed but invalid number, except a possible pre-2019 Mexican mobile
 * (+52 1 ...), whose rewrite is left to phone.ts; "not a phone number" for text without any
 * digit ("n/a", "unknown"). Every other rejection is left to libphonenumber-js.
 */
import { createRequire } from 'node:module';
import type { CountryCode } from 'libphonenumber-js/core';
import { e164Digits, NOT_A_NUMBER, notValid } from './phone-reasons.js';
import { phoneMetadata } from './phone-metadata.js';
import type { NormalizedText } from './types.js';

/** Longest text taken (libphonenumber-js itself takes 250); longer text falls back. */
const MAX_LENGTH = 48;
/** libphonenumber-js parse.js: MAX_INPUT_STRING_LENGTH (longer text is TOO_LONG). */
const MAX_INPUT_STRING_LENGTH = 250;
/** Most digits taken: an IDD prefix (up to 5 digits), a calling code (3), a national number (17). */
const MAX_DIGITS = 25;
/** libphonenumber-js constants.js: MIN_LENGTH_FOR_NSN, MAX_LENGTH_FOR_NSN. */
const MIN_LENGTH_FOR_NSN = 2;
const MAX_LENGTH_FOR_NSN = 17;

/** One number type of a numbering plan (metadata.js Type): its pattern and possible lengths. */
interface NumberTypeRule {
  readonly pattern: RegExp;
  readonly lengths: readonly number[];
}

/** One country's numbering plan (metadata.js NumberingPlan), its expressions compiled once. */
interface Plan {
  readonly callingCode: string;
  /** IDDPrefix(), as `new RegExp(IDDPrefix())` in stripIddPrefix.js. */
  readonly idd: RegExp;
  /** nationalNumberPattern(), anchored as in matchesEntirely.js. */
  readonly nationalNumber: RegExp;
  readonly possibleLengths: readonly number[];
  /** nationalPrefixForParsing(), as in extractNationalNumberFromPossiblyIncompleteNumber.js. */
  readonly prefixForParsing: RegExp | undefined;
  readonly prefixTransformRule: string | undefined;
  /** leadingDigits(), as `search()` compiles it in getCountryByNationalNumber.js. */
  readonly leadingDigits: RegExp | undefined;
  readonly hasTypes: boolean;
  /** The number types with a pattern (getNumberType.js), in metadata order. */
  readonly types: readonly NumberTypeRule[];
}

/** What a calling code stands for: its countries, main one first, or a non-geographic plan. */
type CallingCodeEntry = { readonly countries: readonly string[] } | 'non-geographic';

/** Thrown while reading metadata of a shape this port does not know: the plan is not used. */
class UnexpectedMetadata extends Error {}

/** A value that libphonenumber-js reads as "absent" (it stores 0 for absent fields) or a string. */
function optionalString(value: unknown): string | undefined {
  if (value === undefined || value === null || value === 0 || value === '' || value === false) return undefined;
  if (typeof value === 'string') return value;
  throw new UnexpectedMetadata(`not a string: ${JSON.stringify(value)}`);
}

function requiredString(value: unknown): string {
  const text = optionalString(value);
  if (text === undefined) throw new UnexpectedMetadata('missing string');
  return text;
}

function lengths(value: unknown): readonly number[] {
  const list: readonly unknown[] | undefined = Array.isArray(value) ? value : undefined;
  if (list === undefined || list.length === 0 || !list.every((n): n is number => typeof n === 'number')) {
    throw new UnexpectedMetadata(`not possible lengths: ${JSON.stringify(value)}`);
  }
  return list;
}

/** matchesEntirely.js: `new RegExp('^(?:' + pattern + ')$')`. */
function entirely(pattern: string): RegExp {
  return new RegExp(`^(?:${pattern})$`);
}

/** Indices of the v4 minified NumberingPlan (libphonenumber-js/source/metadata.js). */
const enum Field {
  CallingCode = 0,
  IddPrefix = 1,
  NationalNumberPattern = 2,
  PossibleLengths = 3,
  NationalPrefix = 5,
  NationalPrefixForParsing = 7,
  NationalPrefixTransformRule = 8,
  LeadingDigits = 10,
  Types = 11,
}

/** The number types getNumberType.js tries: FIXED_LINE and then the others (metadata.js getType). */
const TYPE_COUNT = 10;

function compilePlan(raw: unknown): Plan {
  if (!Array.isArray(raw)) throw new UnexpectedMetadata('plan is not an array');
  const plan = raw as readonly unknown[];
  const possibleLengths = lengths(plan[Field.PossibleLengths]);
  const prefixForParsing = optionalString(plan[Field.NationalPrefixForParsing]) ?? optionalString(plan[Field.NationalPrefix]);
  const leadingDigits = optionalString(plan[Field.LeadingDigits]);
  const rawTypes = plan[Field.Types];
  // NumberingPlan.hasTypes(): `[]` (old metadata) and absent (0/undefined) mean no types.
  const hasTypes = Array.isArray(rawTypes) ? rawTypes.length > 0 : rawTypes === undefined || rawTypes === 0 ? false : fail('types');
  const types: NumberTypeRule[] = [];
  if (hasTypes) {
    const list = rawTypes as readonly unknown[];
    if (list.length > TYPE_COUNT) throw new UnexpectedMetadata('more number types than known');
    for (const entry of list) {
      // metadata.js type(): an absent type is falsy; Type.pattern() '' means "same as fixed line".
      if (entry === undefined || entry === null || entry === 0) continue;
      if (!Array.isArray(entry)) throw new UnexpectedMetadata('number type is not an array');
      const rule = entry as readonly unknown[];
      const pattern = optionalString(rule[0]);
      if (pattern === undefined) continue;
      const typeLengths = rule[1] === undefined || rule[1] === 0 ? possibleLengths : lengths(rule[1]);
      types.push({ pattern: entirely(pattern), lengths: typeLengths });
    }
  }
  return {
    callingCode: requiredString(plan[Field.CallingCode]),
    idd: new RegExp(requiredString(plan[Field.IddPrefix])),
    nationalNumber: entirely(requiredString(plan[Field.NationalNumberPattern])),
    possibleLengths,
    prefixForParsing: prefixForParsing === undefined ? undefined : new RegExp(`^(?:${prefixForParsing})`),
    prefixTransformRule: optionalString(plan[Field.NationalPrefixTransformRule]),
    leadingDigits: leadingDigits === undefined ? undefined : new RegExp(leadingDigits),
    hasTypes,
    types,
  };
}

function fail(what: string): never {
  throw new UnexpectedMetadata(`unexpected ${what}`);
}

/**
 * The libphonenumber-js releases whose parse.js this module ports (1.13.16 when it was
 * written). Another release turns the fast path off until the differential test has been run
 * against it (ADSYNC_LONG_TESTS=1) and this range extended; metadata-only releases are fine,
 * the metadata is read, not copied.
 */
const PORTED_RELEASES = /^1\.13\./;

function libphonenumberVersion(): string | undefined {
  try {
    const manifest: unknown = createRequire(import.meta.url)('libphonenumber-js/package.json');
    const version = typeof manifest === 'object' && manifest !== null ? (manifest as { version?: unknown }).version : undefined;
    return typeof version === 'string' ? version : undefined;
  } catch {
    return undefined;
  }
}

let enabled: boolean | undefined;

/**
 * Whether the fast path answers at all: a ported release, and metadata of the v4 layout it reads.
 * Settled, and the calling codes read, on the first number (the metadata loads on first use).
 */
export function fastPathEnabled(): boolean {
  if (enabled === undefined) {
    enabled = PORTED_RELEASES.test(libphonenumberVersion() ?? '') && (phoneMetadata() as { version?: unknown }).version === 4;
    if (enabled) readCallingCodes();
  }
  return enabled;
}

/** Compiled plans by country; `null` for a plan this port cannot read (those countries fall back). */
const plans = new Map<string, Plan | null>();

function planOf(country: string): Plan | undefined {
  let plan = plans.get(country);
  if (plan === undefined) {
    try {
      plan = compilePlan((phoneMetadata().countries as Record<string, unknown>)[country]);
    } catch (error) {
      if (!(error instanceof UnexpectedMetadata || error instanceof SyntaxError)) throw error;
      plan = null;
    }
    plans.set(country, plan);
  }
  return plan ?? undefined;
}

/** metadata.js hasCallingCode() and getCountryCodesForCallingCode(), built once (fastPathEnabled). */
const callingCodes = new Map<string, CallingCodeEntry>();

function readCallingCodes(): void {
  const metadata = phoneMetadata();
  for (const [code, countries] of Object.entries(metadata.country_calling_codes as Record<string, unknown>)) {
    const list: readonly unknown[] | undefined = Array.isArray(countries) ? countries : undefined;
    if (list === undefined || list.length === 0 || !list.every((c): c is string => typeof c === 'string')) continue;
    // Old metadata listed non-geographic codes as ["001"]: getCountryCodesForCallingCode() skips them.
    callingCodes.set(code, list.length === 1 && list[0]?.length === 3 ? 'non-geographic' : { countries: list });
  }
  for (const code of Object.keys((metadata as { nonGeographic?: Record<string, unknown> }).nonGeographic ?? {})) {
    if (!callingCodes.has(code)) callingCodes.set(code, 'non-geographic');
  }
}

/** The plan libphonenumber-js selects for a calling code: its main country's (getNumberingPlanMetadata). */
function mainPlan(entry: { readonly countries: readonly string[] }): Plan | undefined {
  const main = entry.countries[0];
  return main === undefined ? undefined : planOf(main);
}

/** getNumberType.js isNumberTypeEqualTo(), over all the types: truthy getNumberType(). */
function hasMatchingType(plan: Plan, nationalNumber: string): boolean {
  if (!plan.nationalNumber.test(nationalNumber)) return false;
  if (!plan.hasTypes) return false;
  const length = nationalNumber.length;
  for (const type of plan.types) {
    if (type.lengths.indexOf(length) >= 0 && type.pattern.test(nationalNumber)) return true;
  }
  return false;
}

/** isValid.js isValidNumber(). */
function isValidFor(plan: Plan, nationalNumber: string): boolean {
  return plan.hasTypes ? hasMatchingType(plan, nationalNumber) : plan.nationalNumber.test(nationalNumber);
}

/**
 * getCountryByCallingCode.js + getCountryByNationalNumber.js: the country of a national number
 * among those sharing its calling code. `null`: a country this port cannot read was involved.
 */
function countryByCallingCode(callingCode: string, nationalNumber: string): string | undefined | null {
  const entry = callingCodes.get(callingCode);
  if (entry === undefined || entry === 'non-geographic') return undefined;
  const countries = entry.countries;
  if (countries.length === 1) return countries[0];
  for (const country of countries) {
    const plan = planOf(country);
    if (plan === undefined) return null;
    if (plan.leadingDigits !== undefined) {
      if (nationalNumber !== '' && nationalNumber.search(plan.leadingDigits) === 0) return country;
    } else if (hasMatchingType(plan, nationalNumber)) {
      return country;
    }
  }
  return undefined;
}

const enum Length {
  Possible,
  TooShort,
  TooLong,
  Invalid,
}

/** checkNumberLength.js checkNumberLengthForType() without a type. */
function checkLength(nationalNumber: string, plan: Plan): Length {
  const possible = plan.possibleLengths;
  const length = nationalNumber.length;
  const minimum = possible[0] ?? 0;
  if (minimum === length) return Length.Possible;
  if (minimum > length) return Length.TooShort;
  if ((possible[possible.length - 1] ?? 0) < length) return Length.TooLong;
  return possible.indexOf(length, 1) >= 0 ? Length.Possible : Length.Invalid;
}

/** extractNationalNumberFromPossiblyIncompleteNumber.js: the number without national prefix. */
function stripNationalPrefix(number: string, plan: Plan): string {
  const pattern = plan.prefixForParsing;
  if (number === '' || pattern === undefined) return number;
  const match = pattern.exec(number);
  if (match === null) return number;
  const capturedGroupsCount = match.length - 1;
  // Truthy in the original: the last group matched something.
  const hasCapturedGroups = capturedGroupsCount > 0 && (match[capturedGroupsCount] ?? '') !== '';
  if (plan.prefixTransformRule !== undefined && hasCapturedGroups) return number.replace(pattern, plan.prefixTransformRule);
  return number.slice(match[0].length);
}

/** extractNationalNumber.js (country undefined). `null`: fall back. */
function extractNationalNumber(number: string, plan: Plan): string | null {
  const nationalNumber = stripNationalPrefix(number, plan);
  if (nationalNumber === number) return nationalNumber;
  // shouldHaveExtractedNationalPrefix()
  if (plan.nationalNumber.test(number) && !plan.nationalNumber.test(nationalNumber)) return number;
  // isPossibleIncompleteNationalNumber(), with the country the shorter number would be of.
  const country = countryByCallingCode(plan.callingCode, nationalNumber);
  if (country === null) return null;
  const lengthPlan = country === undefined ? plan : planOf(country);
  if (lengthPlan === undefined) return null;
  const length = checkLength(nationalNumber, lengthPlan);
  return length === Length.TooShort || length === Length.Invalid ? number : nationalNumber;
}

/**
 * extractCountryCallingCodeFromInternationalNumberWithoutPlusSign.js: the number without the
 * home country's calling code when it was written with it but without '+' ('4930123456' in
 * DE), `undefined` when it is national, `null` to fall back.
 */
function withoutCallingCode(number: string, home: Plan): string | undefined | null {
  if (!number.startsWith(home.callingCode)) return undefined;
  const shorter = number.slice(home.callingCode.length);
  const shorterNational = extractNationalNumber(shorter, home);
  const national = extractNationalNumber(number, home);
  if (shorterNational === null || national === null) return null;
  if (
    (!home.nationalNumber.test(national) && home.nationalNumber.test(shorterNational)) ||
    checkLength(national, home) === Length.TooLong
  ) {
    return shorter;
  }
  return undefined;
}

/** stripIddPrefix.js: the digits after the home country's international prefix, if it starts them. */
function withoutIddPrefix(number: string, home: Plan): string | undefined {
  if (number.search(home.idd) !== 0) return undefined;
  const match = home.idd.exec(number);
  if (match === null) return undefined;
  const rest = number.slice(match[0].length);
  // Country calling codes do not start with 0; extractCountryCallingCode.js then takes the
  // digits as national when nothing was stripped or nothing is left.
  if (rest === '' || rest === number || rest.charCodeAt(0) === 48 /* 0 */) return undefined;
  return rest;
}

/** The number once its country calling code is known (parse.js parsePhoneNumber() and after). */
interface Parsed {
  callingCode: string;
  /** The country libphonenumber-js gives the PhoneNumber (phone.country), if any. */
  country: string | undefined;
  nationalNumber: string;
}

/** extractCountryCallingCode.js for '+' followed by `digits`, then parsePhoneNumber(). */
function parseInternational(digits: string): Parsed | undefined {
  // "Fast abortion: country codes do not begin with a '0'" (an INVALID_COUNTRY error).
  if (digits.charCodeAt(0) === 48) return undefined;
  for (let length = 1; length <= 3 && length <= digits.length; length++) {
    const callingCode = digits.slice(0, length);
    const entry = callingCodes.get(callingCode);
    if (entry === undefined) continue;
    if (entry === 'non-geographic') return undefined;
    const plan = mainPlan(entry);
    if (plan === undefined) return undefined;
    return parseNational(digits.slice(length), callingCode, undefined, plan);
  }
  return undefined; // no calling code: INVALID_COUNTRY
}

/** parse.js parsePhoneNumber() from extractNationalNumber() on. */
function parseNational(number: string, callingCode: string, country: string | undefined, plan: Plan): Parsed | undefined {
  if (number === '') return undefined; // TOO_SHORT
  const nationalNumber = extractNationalNumber(number, plan);
  if (nationalNumber === null) return undefined;
  const exact = countryByCallingCode(callingCode, nationalNumber);
  if (exact === null) return undefined;
  return { callingCode, country: exact ?? country, nationalNumber };
}

/** Characters libphonenumber-js takes as punctuation (constants.js VALID_PUNCTUATION) that we take. */
function isPunctuation(code: number): boolean {
  // ' ' ( ) - . / and the no-break space
  return code === 32 || code === 40 || code === 41 || code === 45 || code === 46 || code === 47 || code === 0xa0;
}

/**
 * The digits of `text` (trimmed, not empty), or undefined when the text is not of the simple
 * shape this path takes. With a '+' first, the digits are after it.
 */
function digitsOf(text: string, from: number): string | undefined {
  let digits = '';
  let runStart = -1;
  for (let i = from; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 48 && code <= 57) {
      if (runStart < 0) runStart = i;
    } else if (isPunctuation(code)) {
      if (runStart >= 0) {
        digits += text.slice(runStart, i);
        runStart = -1;
      }
    } else {
      return undefined;
    }
  }
  if (runStart >= 0) digits += runStart === 0 ? text : text.slice(runStart);
  return digits;
}

/**
 * Text without a digit ("n/a", "unknown", "-") is "not a phone number" for libphonenumber-js:
 * neither isViablePhoneNumber() nor isViablePhoneNumberStart() holds without a digit
 * (constants.js VALID_DIGITS: ASCII, fullwidth, Arabic-Indic and Eastern Arabic digits).
 * Text with ';' (RFC 3966 parameters, which may carry digits of their own: phone-context) and
 * text over 250 characters (TOO_LONG) are left to libphonenumber-js.
 */
function hasNoDigits(text: string): boolean {
  if (text.length > MAX_INPUT_STRING_LENGTH) return false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (
      (code >= 48 && code <= 57) ||
      code === 59 /* ; */ ||
      (code >= 0xff10 && code <= 0xff19) ||
      (code >= 0x0660 && code <= 0x0669) ||
      (code >= 0x06f0 && code <= 0x06f9)
    ) {
      return false;
    }
  }
  return true;
}

/**
 * What phone.ts's libphonenumber-js path gives for `text` (trimmed, not empty, not a hash)
 * read with `country` (the row's or the job's default, known), or undefined when this path
 * is not sure and libphonenumber-js must decide.
 */
export function fastPhoneText(text: string, country: CountryCode | undefined): NormalizedText | undefined {
  if (!(enabled ?? fastPathEnabled())) return undefined;
  if (text.length > MAX_LENGTH) return text.length <= MAX_INPUT_STRING_LENGTH && hasNoDigits(text) ? NOT_A_NUMBER : undefined;
  const international = text.charCodeAt(0) === 43; /* + */
  const digits = digitsOf(text, international ? 1 : 0);
  if (digits === undefined) return hasNoDigits(text) ? NOT_A_NUMBER : undefined;
  // Fewer than 3 digits: isViablePhoneNumber() decides (TOO_SHORT or NOT_A_NUMBER).
  if (digits.length < 3 || digits.length > MAX_DIGITS) return undefined;

  let parsed: Parsed | undefined;
  if (international) {
    parsed = parseInternational(digits);
  } else {
    if (country === undefined) return undefined; // INVALID_COUNTRY
    const home = planOf(country);
    if (home === undefined) return undefined;
    const afterIdd = withoutIddPrefix(digits, home);
    if (afterIdd !== undefined) {
      parsed = parseInternational(afterIdd);
    } else {
      const shorter = withoutCallingCode(digits, home);
      if (shorter === null) return undefined;
      if (shorter !== undefined) {
        const entry = callingCodes.get(home.callingCode);
        const plan = entry === undefined || entry === 'non-geographic' ? undefined : mainPlan(entry);
        if (plan === undefined) return undefined;
        parsed = parseNational(shorter, home.callingCode, undefined, plan);
      } else {
        parsed = parseNational(digits, home.callingCode, country, home);
      }
    }
  }
  if (parsed === undefined) return undefined;

  const { callingCode, nationalNumber } = parsed;
  if (nationalNumber.length < MIN_LENGTH_FOR_NSN || nationalNumber.length > MAX_LENGTH_FOR_NSN) return undefined;
  const entry = callingCodes.get(callingCode);
  const validationPlan =
    parsed.country !== undefined ? planOf(parsed.country) : entry === undefined || entry === 'non-geographic' ? undefined : mainPlan(entry);
  if (validationPlan === undefined) return undefined;
  if (isValidFor(validationPlan, nationalNumber)) return e164Digits(callingCode + nationalNumber);
  // phone.ts rewrites +52 1 XX XXXX XXXX (the pre-2019 Mexican mobile format): its call.
  if (callingCode === '52' && nationalNumber.length === 11 && nationalNumber.charCodeAt(0) === 49) return undefined;
  return notValid(parsed.country ?? `+${callingCode}`);
}
