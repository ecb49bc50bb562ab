import { describe, expect, it } from 'vitest';
import { normalizeCountry, normalizePhoneNumber } from '../../src/hash/index.js';

describe('normalizeCountry', () => {
  it.each([
    ['US', 'US'],
    ['us', 'US'],
    [' gb ', 'GB'],
    ['De', 'DE'],
    ['in', 'IN'],
    ['br', 'BR'],
    ['jp', 'JP'],
    ['au', 'AU'],
    ['mx', 'MX'],
    ['fr\t', 'FR'],
    ['UK', 'GB'],
    ['uk', 'GB'],
    // What CRM exports write in a country column: names in English, the ways of the US.
    ['USA', 'US'],
    ['U.S.', 'US'],
    ['United States', 'US'],
    ['united states of america', 'US'],
    ['United  Kingdom', 'GB'],
    ['Great Britain', 'GB'],
    ['Germany', 'DE'],
    [' south korea ', 'KR'],
    ['Hong Kong', 'HK'],
    ['Turkey', 'TR'],
    ['Türkiye', 'TR'],
  ])('%j -> %s', (raw, code) => {
    expect(normalizeCountry(raw)).toBe(code);
  });

  it.each(['', '  ', 'XX', 'EU', 'ZZ', 'u', '001', 'Deutschland', 'America', 'constructor', 'toString', '__proto__', 'TOSTRING'])(
    '%j is not a country',
    (raw) => {
      expect(normalizeCountry(raw)).toBeUndefined();
    },
  );
});

describe('phone country resolution', () => {
  it('uses the row country before the default country', () => {
    expect(normalizePhoneNumber('020 7946 0958', { country: 'GB', defaultCountry: 'US' })).toEqual({ ok: true, value: '442079460958' });
    expect(normalizePhoneNumber('(415) 555-2671', { country: 'US', defaultCountry: 'GB' })).toEqual({ ok: true, value: '14155552671' });
  });

  it('falls back to the default country when the row has none', () => {
    for (const country of [undefined, '', '   ']) {
      expect(normalizePhoneNumber('020 7946 0958', { country, defaultCountry: 'gb' })).toEqual({ ok: true, value: '442079460958' });
    }
  });

  it('names an unknown country it needed', () => {
    expect(normalizePhoneNumber('020 7946 0958', { defaultCountry: 'Britain' })).toEqual({
      ok: false,
      reason: "no country code and unknown country 'Britain'",
    });
  });
});
