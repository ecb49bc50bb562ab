import { getCountries, type CountryCode } from 'libphonenumber-js/core';
import { PHONE_METADATA } from './phone-metadata.js';

/** Every country libphonenumber-js has a numbering plan for (ISO 3166-1 alpha-2, plus XK, AC, TA). */
const KNOWN_COUNTRIES: ReadonlySet<string> = new Set<string>(getCountries(PHONE_METADATA));

/**
 * Codes that are not ISO 3166-1 alpha-2 but that people write for a country, mapped explicitly.
 * Only UK: it is ISO's "exceptionally reserved" code for the United Kingdom, used by the EU and
 * common in CRM exports, and it has exactly one meaning (GB). Other spellings (USA, "United
 * States", EL for Greece) are not guessed: the country column is documented as alpha-2.
 */
const COUNTRY_ALIASES: Readonly<Record<string, CountryCode>> = { UK: 'GB' };

/** True when `code` is already an upper-case country code that phone numbers can use. */
export function isKnownCountry(code: string): code is CountryCode {
  return KNOWN_COUNTRIES.has(code);
}

/**
 * The country code of a job's default_country or of a row's country column: trimmed and upper
 * case ('us' -> 'US', ' gb ' -> 'GB', 'UK' -> 'GB'), or undefined when libphonenumber-js knows
 * no such country ('XX', 'USA', '').
 */
export function normalizeCountry(raw: string): CountryCode | undefined {
  if (isKnownCountry(raw)) return raw;
  const code = raw.trim().toUpperCase();
  if (isKnownCountry(code)) return code;
  return Object.hasOwn(COUNTRY_ALIASES, code) ? COUNTRY_ALIASES[code] : undefined;
}
