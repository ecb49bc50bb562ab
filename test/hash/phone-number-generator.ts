/**
 * Seeded generators of phone number cells, for the differential test of the phone fast path
 * (phone-fast-path.test.ts) and for its throughput measurement (phone-fast-path.bench.ts).
 *
 * Seeds are libphonenumber-js's own example numbers ('max' metadata, mobile examples) plus a
 * few valid numbers of other types found by sampling each country's possible lengths; they are
 * mutated (last digits, first digits, a digit more or less) and written in many shapes.
 */
import { getCountries, getExampleNumber, parsePhoneNumberWithError, type CountryCode, type PhoneNumber } from 'libphonenumber-js/core';
import mobileExamples from 'libphonenumber-js/mobile/examples';
import { phoneMetadata } from '../../src/hash/phone-metadata.js';
import type { NormalizeContext } from '../../src/hash/index.js';

/** A deterministic random source (mulberry32): the same cells for the same seed. */
export class Random {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(list: readonly T[]): T {
    const value = list[this.int(list.length)];
    if (value === undefined) throw new Error('pick from an empty list');
    return value;
  }
  digit(): string {
    return String(this.int(10));
  }
  digits(n: number): string {
    let out = '';
    for (let i = 0; i < n; i++) out += this.digit();
    return out;
  }
}

const PHONE_METADATA = phoneMetadata();

export const ALL_COUNTRIES: readonly CountryCode[] = getCountries(PHONE_METADATA);

/** Countries CRM lists are mostly about, NANPA and +44 territories, and shared calling codes. */
export const MAIN_COUNTRIES: readonly CountryCode[] = [
  'US', 'CA', 'GB', 'DE', 'FR', 'IN', 'BR', 'JP', 'AU', 'MX', 'IT', 'ES', 'NL', 'RU', 'KZ', 'CN', 'KR', 'ZA', 'NG', 'AR',
  'PR', 'JM', 'GG', 'JE', 'IM', 'PL', 'SE', 'CH', 'BE', 'AT', 'IE', 'PT', 'TR', 'ID', 'PH', 'VN', 'TH', 'MY', 'SG', 'NZ',
  'EG', 'SA', 'AE', 'IL', 'PK', 'BD', 'CO', 'CL', 'PE', 'UA', 'DK', 'NO', 'FI', 'GR', 'CZ', 'HU', 'RO', 'KE', 'MA', 'VI',
  'AG', 'BS', 'DO', 'TT', 'CX', 'CC', 'AX', 'VA', 'SJ', 'TA', 'GA', 'MG', 'SM', 'NF', 'BY', 'UZ', 'VE', 'HK', 'TW', 'IR',
];

type RawPlan = readonly unknown[];
function rawPlan(country: CountryCode): RawPlan {
  const plan: unknown = (PHONE_METADATA.countries as Record<string, unknown>)[country];
  if (!Array.isArray(plan)) throw new Error(`no plan for ${country}`);
  return plan;
}

/** What the generator knows of one country. */
interface CountryData {
  country: CountryCode;
  callingCode: string;
  /** The national (trunk) prefix, '' when there is none. */
  nationalPrefix: string;
  /** A literal international call prefix of the country ('00', '011', '0011', '810', ...). */
  idd: string;
  possibleLengths: readonly number[];
  /** National significant numbers known to be valid: the mobile example and sampled ones. */
  seeds: string[];
  /** The mobile example as libphonenumber-js writes it: national, international, IDD, RFC 3966. */
  templates: string[];
}

const dataByCountry = new Map<CountryCode, CountryData>();

/** Valid numbers of other types than mobile, found by sampling: fixed lines, toll free, ... */
function sampleSeeds(country: CountryCode, callingCode: string, lengths: readonly number[], random: Random, tries: number): string[] {
  const found: string[] = [];
  for (let i = 0; i < tries && found.length < 4; i++) {
    const nsn = random.digits(random.pick(lengths));
    try {
      const phone = parsePhoneNumberWithError(`+${callingCode}${nsn}`, PHONE_METADATA);
      if (phone.country === country && phone.isValid() && !found.includes(phone.nationalNumber)) found.push(phone.nationalNumber);
    } catch {
      // not a number
    }
  }
  return found;
}

function literalIdd(plan: RawPlan): string {
  const preferred = plan[12];
  if (typeof preferred === 'string' && /^\d+$/.test(preferred)) return preferred;
  const idd = plan[1];
  if (typeof idd === 'string' && /^\d+$/.test(idd)) return idd;
  return '00';
}

export function countryData(country: CountryCode, sampleTries = 150): CountryData {
  let data = dataByCountry.get(country);
  if (data !== undefined) return data;
  const plan = rawPlan(country);
  const callingCode = String(plan[0]);
  const nationalPrefix = typeof plan[5] === 'string' ? plan[5] : '';
  const lengths = Array.isArray(plan[3]) ? (plan[3] as number[]) : [8];
  const seeds: string[] = [];
  const templates: string[] = [];
  let example: PhoneNumber | undefined;
  try {
    example = getExampleNumber(country, mobileExamples, PHONE_METADATA);
  } catch {
    example = undefined;
  }
  if (example !== undefined) {
    seeds.push(example.nationalNumber);
    templates.push(example.format('NATIONAL'), example.format('INTERNATIONAL'), example.format('E.164'), example.format('RFC3966'));
    for (const from of ['US', 'GB', 'AU', 'JP'] as const) {
      const idd = example.format('IDD', { fromCountry: from });
      if (idd !== '') templates.push(idd);
    }
  }
  let hash = 0;
  for (const ch of country) hash = hash * 31 + ch.charCodeAt(0);
  seeds.push(...sampleSeeds(country, callingCode, lengths, new Random(hash), sampleTries));
  if (seeds.length === 0) seeds.push(new Random(hash + 1).digits(lengths[0] ?? 8));
  data = { country, callingCode, nationalPrefix, idd: literalIdd(plan), possibleLengths: lengths, seeds, templates };
  dataByCountry.set(country, data);
  return data;
}

/** A valid seed, edited: last digits replaced (often still valid), first digits, a digit more or less. */
function mutate(nsn: string, random: Random): string {
  let digits = nsn;
  const roll = random.next();
  if (roll < 0.15) return digits; // the seed itself
  if (roll < 0.75) {
    const k = 1 + random.int(Math.min(7, digits.length));
    digits = digits.slice(0, digits.length - k) + random.digits(k);
  } else if (roll < 0.87) {
    const k = 1 + random.int(Math.min(3, digits.length));
    digits = random.digits(k) + digits.slice(k);
  } else if (roll < 0.9) {
    digits = random.chance(0.5) ? digits + random.digit() : digits.slice(0, -1); // too long, too short
  } else if (roll < 0.94) {
    // A local number (area code left out: NANPA 7 digits, GG/JE/IM 6 digits) or digits in front.
    digits = random.chance(0.6) ? digits.slice(1 + random.int(Math.min(4, digits.length))) : random.digits(1 + random.int(3)) + digits;
  } else {
    const at = random.int(digits.length + 1);
    digits = digits.slice(0, at) + random.digits(1 + random.int(3)) + digits.slice(at);
  }
  return digits;
}

/** Replaces the last k digits of formatted text with random digits, keeping its punctuation. */
function mutateTemplate(template: string, random: Random): string {
  const chars = [...template];
  let k = random.chance(0.2) ? 0 : 1 + random.int(6);
  for (let i = chars.length - 1; i >= 0 && k > 0; i--) {
    if (/[0-9]/.test(chars[i] ?? '')) {
      chars[i] = random.digit();
      k--;
    }
  }
  return chars.join('');
}

const SEPARATORS = [' ', ' ', ' ', '-', '-', '.', '', ' - ', '/', '\u00a0', '  '];

/** Digits split into groups of 2 to 4 with one separator style, sometimes the first in parentheses. */
function group(digits: string, random: Random): string {
  if (random.chance(0.2)) return digits;
  const separator = random.pick(SEPARATORS);
  const parts: string[] = [];
  let i = 0;
  while (i < digits.length) {
    const size = 2 + random.int(3);
    parts.push(digits.slice(i, i + size));
    i += size;
  }
  if (parts.length > 1 && random.chance(0.25)) return `(${parts[0] ?? ''}) ${parts.slice(1).join(separator)}`;
  return parts.join(separator);
}

const EXTENSIONS = [' x123', ' ext. 45', ' ext 7', '#12', ' #9', ' extension 100', ',,22', ';ext=5', ' - 503#', ' x 1'];
const JUNK_BEFORE = ['tel:', 'Tel: ', 'phone ', '(', '[', '~', '*', '#', 'a', '\t', '"', "'", '++', '+ ', '+(', ' ＋', '..', '-'];
const JUNK_AFTER = [' abc', ')', ']', '.', '-', '/', '\t1', ' ;', ',', '*', 'x', ' (mobile)', '"', '#', '!', '  0', ' / +1 415 555 2671'];
const WEIRD = ['\u00ad', '\u200b', '\u2060', '\u3000', '\u2010', '\u2212', '\uff0d', '\uff0e', '\uff08', '\uff09', '~', '\t', '\n', '_', ',', ';', 'o', 'O', 'l'];
const FULLWIDTH = ['０', '１', '２', '３', '４', '５', '６', '７', '８', '９'];
const ARABIC = ['٠', '١', '٢', '٣', '٤', '٥', '٦', '٧', '٨', '٩'];

/** Some characters of text replaced by exotic but phone-like ones (fullwidth or Arabic digits, odd spaces). */
function exotic(text: string, random: Random): string {
  const chars = [...text];
  const n = 1 + random.int(2);
  for (let j = 0; j < n && chars.length > 0; j++) {
    const at = random.int(chars.length);
    const c = chars[at] ?? '';
    if (/[0-9]/.test(c) && random.chance(0.6)) chars[at] = (random.chance(0.5) ? FULLWIDTH : ARABIC)[Number(c)] ?? c;
    else chars.splice(at, 0, random.pick(WEIRD));
  }
  return chars.join('');
}

/**
 * Prefixes that national_prefix_for_parsing of some countries takes besides the trunk prefix:
 * carrier codes (BR, CO), mobile tokens (AR 15), dial-around codes (JP), special routes (GG).
 */
const EXTRA_PREFIXES: Partial<Record<CountryCode, readonly string[]>> = {
  BR: ['015', '021', '014', '031', '90', '9015', '0 21', '099'],
  AR: ['0', '15', '011', '0 15', '9', '09'],
  CO: ['0', '03', '04', '09', '0 9 4'],
  JP: ['003768', '0037680', '0'],
  GG: ['180020', '0'],
  JE: ['180020', '0'],
  IM: ['180020', '0'],
  MX: ['01', '044', '045', '1'],
  RU: ['8', '8 10'],
  KZ: ['8'],
  BY: ['8', '80', '8 0'],
  UZ: ['8', '0'],
  SM: ['0549'],
  CC: ['0', '08'],
  CX: ['0', '08'],
  MG: ['0', '020'],
  GA: ['0', '011'],
  NF: ['3', '0'],
};

/** A number of `data`'s country in one of many shapes; `from` is the country it is dialled from (for IDD). */
function shape(data: CountryData, nsn: string, from: CountryData, random: Random): string {
  const cc = data.callingCode;
  switch (random.int(15)) {
    case 0:
      return `+${cc}${nsn}`;
    case 1:
    case 2:
      return `+${cc}${random.pick([' ', '-', '.', '', ' (', '  '])}${group(nsn, random)}`.replace(/\(([^)]*)$/, '($1)');
    case 3:
      return `+${cc} (${data.nationalPrefix === '' ? '0' : data.nationalPrefix}) ${group(nsn, random)}`;
    case 4:
      return `${from.idd}${random.pick([' ', '', '-'])}${cc}${random.pick([' ', '', '-'])}${group(nsn, random)}`;
    case 5:
      return `${random.pick(['00', '011', '0011', '010', '810', '8 10', '000', '001', '119'])} ${cc} ${group(nsn, random)}`;
    case 6:
    case 7:
    case 8:
      return (random.chance(0.6) ? data.nationalPrefix : '') + random.pick([' ', '', '-', '']) + group(nsn, random);
    case 9:
      return `(${data.nationalPrefix}${nsn.slice(0, 2 + random.int(3))}) ${group(nsn.slice(2 + random.int(3)), random)}`;
    case 10:
      return `${cc}${random.pick([' ', '', '-'])}${group(nsn, random)}`;
    case 11:
      return `+${cc} ${data.nationalPrefix}${group(nsn, random)}`;
    case 12:
      return data.templates.length === 0 ? `+${cc}${nsn}` : mutateTemplate(random.pick(data.templates), random);
    default: {
      const extra = EXTRA_PREFIXES[data.country];
      const prefix = extra !== undefined && random.chance(0.7) ? random.pick(extra) : data.nationalPrefix;
      return `${prefix}${random.pick(['', ' ', '-'])}${nsn}`;
    }
  }
}

/** Digits and punctuation with no particular structure, 1 to 20 digits. */
function randomDigits(random: Random): string {
  const n = 1 + random.int(20);
  let out = random.chance(0.3) ? '+' : '';
  for (let i = 0; i < n; i++) {
    out += random.digit();
    if (random.chance(0.15)) out += random.pick(SEPARATORS);
  }
  return out;
}

/** Text without digits, or nearly: "n/a", letters, punctuation, RFC 3966 fragments, long text. */
function noDigits(random: Random): string {
  const words = ['n/a', 'N/A', 'none', 'unknown', '-', '?', '.', '+', '()', 'tel:', ';phone-context=example.com', 'tel:abc;phone-context=+1', ';isub=', 'x', 'ext', '#', ' ', ' ', '　', 'é', '😀', 'a;b', '٣', '３', '۳', 'call me', '+ +'];
  let out = '';
  const n = 1 + random.int(5);
  for (let i = 0; i < n; i++) out += random.pick(words);
  if (random.chance(0.05)) out = out.repeat(20 + random.int(40)); // around and over 250 characters
  return out;
}

/** The row and job countries a cell may come with. */
function context(country: CountryCode, other: CountryCode, random: Random): NormalizeContext | undefined {
  switch (random.int(16)) {
    case 0:
      return undefined;
    case 1:
    case 2:
    case 3:
      return { defaultCountry: country };
    case 4:
    case 5:
      return { country, defaultCountry: other };
    case 6:
      return { country: country.toLowerCase() };
    case 7:
      return { country: ` ${country} `, defaultCountry: 'US' };
    case 8:
      return { country: other, defaultCountry: country };
    case 9:
      return { defaultCountry: other };
    case 10:
      return { country: 'XX', defaultCountry: country };
    case 11:
      return { country: '', defaultCountry: country };
    case 12:
      return { country: ' ', defaultCountry: other };
    case 13:
      return random.pick([{ country: 'UK' }, { country: 'uk', defaultCountry: country }, { country: 'USA', defaultCountry: country }, { defaultCountry: 'zz' }, { country: 'Germany' }]);
    case 14:
      return { country: other.toLowerCase(), defaultCountry: 'GB' };
    default:
      return { country };
  }
}

export interface Cell {
  raw: string;
  ctx: NormalizeContext | undefined;
}

/** Cells of every kind: valid, invalid, unusual and malformed numbers, in every context. */
export function differentialCell(random: Random): Cell {
  const country = random.chance(0.55) ? random.pick(MAIN_COUNTRIES) : random.pick(ALL_COUNTRIES);
  const data = countryData(country);
  const otherCountry = random.chance(0.5) ? random.pick(MAIN_COUNTRIES) : random.pick(ALL_COUNTRIES);
  const from = random.chance(0.5) ? data : countryData(otherCountry);
  const ctx = context(country, random.chance(0.5) ? from.country : otherCountry, random);
  const roll = random.next();
  if (roll < 0.04) return { raw: randomDigits(random), ctx };
  if (roll < 0.055) return { raw: noDigits(random), ctx };
  if (roll < 0.065) return { raw: random.pick(['+800 1234 5678', '+808 1234 5678', '+870 301 234 567', '+882 3456 7890', '+979 1 234 5678', '+0 123 456', '+1', '+44', '1', '12', '+', '()', '---', '+12 3', '0', '00', '000 000']), ctx };
  const nsn = mutate(random.pick(data.seeds), random);
  let raw = shape(data, nsn, from, random);
  const extra = random.next();
  if (extra < 0.05) raw += random.pick(EXTENSIONS);
  else if (extra < 0.09) raw = random.pick(JUNK_BEFORE) + raw;
  else if (extra < 0.13) raw += random.pick(JUNK_AFTER);
  else if (extra < 0.17) raw = exotic(raw, random);
  else if (extra < 0.2) raw = random.pick([' ', '\t', '\u00a0', '\ufeff', '  ']) + raw + random.pick(['', ' ', '\n', '\u3000']);
  if (random.chance(0.01)) raw = raw.repeat(2 + random.int(4)); // long
  return { raw, ctx };
}

/**
 * A realistic CRM phone column, for throughput: mostly valid numbers of the row's country,
 * written nationally (the way people type them) or internationally, a few invalid or odd.
 */
export function realisticCell(random: Random): Cell {
  const country = random.chance(0.35) ? 'US' : random.chance(0.85) ? random.pick(MAIN_COUNTRIES.slice(0, 30)) : random.pick(MAIN_COUNTRIES);
  const data = countryData(country);
  const ctx: NormalizeContext = random.chance(0.7) ? { country, defaultCountry: 'US' } : { defaultCountry: country };
  const seed = random.pick(data.seeds);
  const nsn = random.chance(0.9) ? seed.slice(0, Math.max(0, seed.length - 4)) + random.digits(Math.min(4, seed.length)) : mutate(seed, random);
  const roll = random.next();
  let raw: string;
  if (roll < 0.35) raw = (random.chance(0.7) ? data.nationalPrefix : '') + group(nsn, random);
  else if (roll < 0.6) raw = `+${data.callingCode} ${group(nsn, random)}`;
  else if (roll < 0.75) raw = `+${data.callingCode}${nsn}`;
  else if (roll < 0.9) {
    const templates = data.templates.filter((t) => !t.startsWith('tel:')); // RFC 3966 is no CRM format
    raw = templates.length === 0 ? `+${data.callingCode}${nsn}` : mutateTemplate(random.pick(templates), random);
  }
  else if (roll < 0.95) raw = `${data.callingCode}${nsn}`;
  else if (roll < 0.97) raw = `${group(nsn, random)} x${random.digits(3)}`;
  else raw = random.pick(['n/a', 'N/A', '', '-', 'unknown', 'none', '555-1234', '0000000000', '+1 (555) 555-5555']);
  return { raw, ctx };
}
