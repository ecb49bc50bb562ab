import type { CountryCode } from 'libphonenumber-js/core';
import { phoneLibrary, phoneMetadata } from './phone-metadata.js';

let knownCountries: ReadonlySet<string> | undefined;

/**
 * Every country libphonenumber-js has a numbering plan for (ISO 3166-1 alpha-2, plus XK, AC, TA),
 * on first use (see phone-metadata.ts).
 */
function known(): ReadonlySet<string> {
  knownCountries ??= new Set<string>(phoneLibrary().getCountries(phoneMetadata()));
  return knownCountries;
}

/**
 * Codes that are not ISO 3166-1 alpha-2 but that people write for a country, mapped explicitly:
 * UK (ISO's "exceptionally reserved" code for the United Kingdom, used by the EU) and the ways
 * CRM exports write the United States. Each has exactly one meaning. Other codes (EL for
 * Greece, alpha-3 codes) are not guessed.
 */
const COUNTRY_ALIASES: Readonly<Record<string, CountryCode>> = { UK: 'GB', USA: 'US', 'U.S.': 'US', 'U.S.A.': 'US', 'UNITED STATES OF AMERICA': 'US', 'GREAT BRITAIN': 'GB' };

let countryNames: Map<string, CountryCode> | undefined;

/**
 * Countries by their English name, upper case ('UNITED STATES', 'GERMANY'), from the ICU data
 * Node.js carries (Intl.DisplayNames): CRM exports (Salesforce, HubSpot) often hold names in
 * their country column.
 */
function countryByName(name: string): CountryCode | undefined {
  if (countryNames === undefined) {
    countryNames = new Map();
    for (const style of ['long', 'short'] as const) {
      const names = new Intl.DisplayNames(['en'], { type: 'region', style, fallback: 'none' });
      for (const code of known()) {
        const english = names.of(code);
        // Short names of two letters are codes ("US", "UK"): known already.
        if (english !== undefined && english.length > 2) countryNames.set(english.toUpperCase(), code as CountryCode);
      }
    }
    countryNames.set('TURKEY', 'TR');
  }
  return countryNames.get(name);
}

/** True when `code` is already an upper-case country code that phone numbers can use. */
export function isKnownCountry(code: string): code is CountryCode {
  return known().has(code);
}

/**
 * The country code of a job's default_country or of a row's country column: trimmed and upper
 * case ('us' -> 'US', ' gb ' -> 'GB', 'UK' -> 'GB'), an alias ('USA' -> 'US') or an English
 * country name ('United States', 'germany'), or undefined when libphonenumber-js knows no such
 * country ('XX', '').
 */
export function normalizeCountry(raw: string): CountryCode | undefined {
  if (isKnownCountry(raw)) return raw;
  const code = raw.trim().toUpperCase();
  if (isKnownCountry(code)) return code;
  // Names and aliases only (a row's code, 'us' or ' gb ', is done by now): spaces as one.
  const name = code.replace(/\s+/g, ' ');
  if (Object.hasOwn(COUNTRY_ALIASES, name)) return COUNTRY_ALIASES[name];
  return name.length > 2 ? countryByName(name) : undefined;
}
