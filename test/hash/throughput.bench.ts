/**
 * Throughput of the normalizers and of hashIdentifier (values/s = the hz column).
 * Not part of the test run: `npx vitest bench --run test/hash`.
 */
import { createHash } from 'node:crypto';
import { parsePhoneNumberWithError as parseCore, type CountryCode } from 'libphonenumber-js/core';
import maxMetadata from 'libphonenumber-js/max/metadata';
import minMetadata from 'libphonenumber-js/min/metadata';
import { bench, describe } from 'vitest';
import { hashIdentifier, NORMALIZERS, sha256Hex, type IdentifierType, type NormalizeContext } from '../../src/hash/index.js';

const PHONES: [string, NormalizeContext][] = [
  ['(415) 555-2671', { defaultCountry: 'US' }],
  ['+1 201-555-0123', { defaultCountry: 'US' }],
  ['020 7946 0958', { country: 'GB', defaultCountry: 'US' }],
  ['+44 7400 123456', { defaultCountry: 'US' }],
  ['0151 23456789', { country: 'de', defaultCountry: 'US' }],
  ['06 12 34 56 78', { country: 'FR', defaultCountry: 'US' }],
  ['98765 43210', { country: 'IN', defaultCountry: 'US' }],
  ['(11) 96123-4567', { country: 'BR', defaultCountry: 'US' }],
  ['090-1234-5678', { country: 'JP', defaultCountry: 'US' }],
  ['0412 345 678', { country: 'AU', defaultCountry: 'US' }],
  ['55 1234 5678', { country: 'MX', defaultCountry: 'US' }],
  ['4155552671', { defaultCountry: 'US' }],
];

const SAMPLES: Record<IdentifierType, string[]> = {
  email: ['  Support@X.com ', 'jane.doe+ads@example.co.uk', 'JOHN.SMITH@GMAIL.COM', 'a@b.io'],
  handle: ['@Jack', 'xdevelopers', 'https://x.com/jack/', 'Under_Score_99'],
  twitter_id: ['143567', '000143567', '1475829391528927232', '12'],
  device_id: ['4B61639E-47CC-4056-A16A-C8217E029462', '4b61639e47cc4056a16ac8217e029462', 'af3802a465767e36', '38400000-8cf0-11bd-b23e-10b96e40000d'],
  phone_number: PHONES.map(([raw]) => raw),
  partner_user_id: [' crm-000123 ', 'CRM-ABC', '42', 'user-7f3a'],
};

/** Runs `fn` over a batch of `n` values so per-call timer overhead does not dominate. */
const BATCH = 1000;

for (const type of Object.keys(SAMPLES) as IdentifierType[]) {
  const values = SAMPLES[type];
  const contexts: (NormalizeContext | undefined)[] = type === 'phone_number' ? PHONES.map(([, ctx]) => ctx) : values.map(() => undefined);
  describe(`${type} (x${BATCH} values per iteration)`, () => {
    bench(`normalize ${type}`, () => {
      const normalize = NORMALIZERS[type];
      for (let i = 0; i < BATCH; i++) normalize(values[i % values.length] ?? '', contexts[i % contexts.length]);
    });
    bench(`hashIdentifier ${type}`, () => {
      for (let i = 0; i < BATCH; i++) hashIdentifier(type, values[i % values.length] ?? '', contexts[i % contexts.length]);
    });
  });
}

describe(`sha256 of short text (x${BATCH})`, () => {
  bench('crypto.hash (sha256Hex)', () => {
    for (let i = 0; i < BATCH; i++) sha256Hex('support@x.com');
  });
  bench('createHash().update().digest()', () => {
    for (let i = 0; i < BATCH; i++) createHash('sha256').update('support@x.com').digest('hex');
  });
});

describe(`libphonenumber-js parse + isValid, min vs max metadata (x${BATCH})`, () => {
  const inputs = PHONES.map(([raw, ctx]) => [raw, { defaultCountry: (ctx.country ?? ctx.defaultCountry ?? 'US').toUpperCase() as CountryCode }] as const);
  for (const [name, metadata] of [['min', minMetadata], ['max', maxMetadata]] as const) {
    bench(name, () => {
      for (let i = 0; i < BATCH; i++) {
        const [raw, options] = inputs[i % inputs.length] ?? ['', {}];
        parseCore(raw, options, metadata).isValid();
      }
    });
  }
});
