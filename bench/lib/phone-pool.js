/**
 * Realistic, mostly valid phone numbers for the generated CRM exports, fast enough for 10M rows.
 *
 * For each country a pool of number *prefixes* (all digits of the national number but the
 * last 4) is built once, from the country's example mobile number with its tail randomised,
 * keeping only prefixes for which several random 4-digit tails validate with the 'max'
 * metadata (what adsync validates with). A row's number is prefix + a 4-digit tail taken
 * from a per-country counter, so numbers are unique until a country has more rows than its
 * pool holds numbers (1500 prefixes x 10,000 tails = 15M), and a small share of tails is invalid, as in real data.
 *
 * Formats: national as people write them in each country, international with +, spaces or
 * not, and rarely with the 00 call prefix. Every format is checked once per country at pool
 * build time to parse back to the same number.
 */
import { parsePhoneNumberWithError } from 'libphonenumber-js/max';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { digits, mulberry32 } from './prng.js';

const require = createRequire(import.meta.url);
const EXAMPLES = JSON.parse(readFileSync(require.resolve('libphonenumber-js/examples.mobile.json'), 'utf8'));

/** Country -> share of rows, calling code, how the national number is written. */
export const COUNTRIES = {
  US: { weight: 42, cc: '1', trunk: '' },
  GB: { weight: 12, cc: '44', trunk: '0' },
  CA: { weight: 8, cc: '1', trunk: '' },
  DE: { weight: 8, cc: '49', trunk: '0' },
  FR: { weight: 7, cc: '33', trunk: '0' },
  AU: { weight: 6, cc: '61', trunk: '0' },
  IN: { weight: 5, cc: '91', trunk: '0' },
  BR: { weight: 5, cc: '55', trunk: '' },
  MX: { weight: 4, cc: '52', trunk: '' },
  JP: { weight: 3, cc: '81', trunk: '0' },
};

const PREFIXES_PER_COUNTRY = 1500;

function isValid(text, country) {
  try {
    const p = parsePhoneNumberWithError(text, { defaultCountry: country, extract: false });
    return p.isValid() ? p.number : undefined;
  } catch {
    return undefined;
  }
}

/** Groups digits in blocks: the head, then 3, then 4 ("201 347 1234", "1512 335 1234"). */
function groups(national, sep) {
  const n = national.length;
  if (n <= 7) return national.slice(0, n - 4) + sep + national.slice(n - 4);
  return national.slice(0, n - 7) + sep + national.slice(n - 7, n - 4) + sep + national.slice(n - 4);
}

/** National formats of one country: functions of the national significant number. */
function nationalFormats(country, trunk) {
  switch (country) {
    case 'US':
    case 'CA':
      return [
        (d) => `(${d.slice(0, 3)}) ${d.slice(3, 6)}-${d.slice(6)}`,
        (d) => `${d.slice(0, 3)}.${d.slice(3, 6)}.${d.slice(6)}`,
        (d) => `${d.slice(0, 3)}-${d.slice(3, 6)}-${d.slice(6)}`,
        (d) => d,
        (d) => `1 ${d.slice(0, 3)} ${d.slice(3, 6)} ${d.slice(6)}`,
      ];
    case 'BR':
      return [(d) => `(${d.slice(0, 2)}) ${d.slice(2, d.length - 4)}-${d.slice(d.length - 4)}`, (d) => `${d.slice(0, 2)} ${d.slice(2)}`];
    case 'JP':
      return [(d) => `0${d.slice(0, 2)}-${d.slice(2, 6)}-${d.slice(6)}`, (d) => `0${d}`];
    case 'FR':
      return [(d) => `0${d}`.replace(/(\d\d)(?=\d)/g, '$1 '), (d) => `0${d}`.replace(/(\d\d)(?=\d)/g, '$1.')];
    default:
      return [(d) => trunk + groups(d, ' '), (d) => trunk + d, (d) => trunk + groups(d, '-')];
  }
}

function internationalFormats(cc) {
  return [(d) => `+${cc} ${groups(d, ' ')}`, (d) => `+${cc}${d}`, (d) => `+${cc} ${groups(d, '-')}`, (d) => `+${cc} (0) ${groups(d, ' ')}`];
}

/**
 * Builds the pools; deterministic for a seed. Returns {country: {prefixes, national[],
 * international[], cc}}.
 */
export function buildPhonePools(seed) {
  const rng = mulberry32(seed ^ 0x5eed1);
  const pools = {};
  for (const [country, spec] of Object.entries(COUNTRIES)) {
    const example = EXAMPLES[country];
    const keep = Math.max(1, example.length - 8);
    const prefixes = new Set();
    let attempts = 0;
    while (prefixes.size < PREFIXES_PER_COUNTRY && attempts < 200_000) {
      attempts++;
      const candidate = example.slice(0, keep) + digits(rng, example.length - keep);
      const prefix = candidate.slice(0, candidate.length - 4);
      if (prefixes.has(prefix)) continue;
      let ok = true;
      for (let k = 0; k < 4 && ok; k++) ok = isValid(`+${spec.cc}${prefix}${digits(rng, 4)}`, country) !== undefined;
      if (ok) prefixes.add(prefix);
    }
    if (prefixes.size < 10) throw new Error(`phone pool for ${country}: only ${prefixes.size} prefixes`);
    // Keep only the formats that parse back to the same number (national with the country).
    const sample = [...prefixes].slice(0, 20).map((p) => `${p}${digits(rng, 4)}`).filter((d) => isValid(`+${spec.cc}${d}`, country));
    const national = nationalFormats(country, spec.trunk).filter((f) => sample.every((d) => isValid(f(d), country) === `+${spec.cc}${d}`));
    const international = internationalFormats(spec.cc).filter((f) => sample.every((d) => isValid(f(d), 'US') === `+${spec.cc}${d}`));
    if (national.length === 0 || international.length === 0) throw new Error(`phone formats for ${country}: none valid`);
    pools[country] = { cc: spec.cc, prefixes: [...prefixes], national, international };
  }
  return pools;
}
