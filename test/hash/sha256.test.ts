import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashIdentifier, sha256Hex, type IdentifierType, type NormalizeContext } from '../../src/hash/index.js';

describe('sha256Hex', () => {
  it('gives the published vector of the X docs', () => {
    expect(sha256Hex('adsapi')).toBe('49e0be2aeccfb51a8dee4c945c8a70a9ac500cf6f5cb08112575f74db9b1470d');
  });

  it('hashes the UTF-8 bytes, as lowercase hex', () => {
    for (const text of ['', 'a', 'jöhn@exämple.de', '😀', 'x'.repeat(10_000)]) {
      expect(sha256Hex(text)).toBe(createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex'));
    }
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
});

describe('hashIdentifier gives exact hashes', () => {
  // Expected digests from `printf '%s' <normalized> | sha256sum`, not from the code under test.
  const cases: [IdentifierType, string, NormalizeContext | undefined, string, string][] = [
    ['email', '  Support@X.com ', undefined, 'support@x.com', '6afb3b8ba60b4050a492472f3c82294dede1ecc6319a9c420f776fd3bca2a381'],
    // A mailto: link's escapes decoded (before: the hash of 'ada%2blists@example.com', 519f6b4c...).
    ['email', 'mailto:ada%2Blists@example.com', undefined, 'ada+lists@example.com', 'bb186e97b0e56bdff6962fe2dc6050f481a9e702f90fd48294594d5c05339db0'],
    ['email', 'mailto:ada%40example.com', undefined, 'ada@example.com', 'b5fc85e55755f9e0d030a10ab4429b6b2944855f9a0d60077fe832becbc41d72'],
    ['email', 'mailto:J%C3%B6hn@Example.de', undefined, 'j\u00f6hn@example.de', 'ddcbd8be195eaa51e64cd331568e8067c55b6ba343df2787e3823b48c8ec589b'],
    ['email', 'mailto:jose%CC%81@example.com', undefined, 'jos\u00e9@example.com', 'b0a53cf19e34d05b57bced7365c6b00ddbe38d62957e863de2a66a56c3b42cea'],
    ['handle', '@Jack', undefined, 'jack', '31611159e7e6ff7843ea4627745e89225fc866621cfcfdbd40871af4413747cc'],
    ['handle', 'https://x.com/jack/', undefined, 'jack', '31611159e7e6ff7843ea4627745e89225fc866621cfcfdbd40871af4413747cc'],
    ['twitter_id', '000143567', undefined, '143567', '617b8747525a154b1ecf75a42d883df00e0dd6d0f981bea57ac7bdce73e57eae'],
    ['device_id', '4B61639E47CC4056A16AC8217E029462', undefined, '4b61639e-47cc-4056-a16a-c8217e029462', '225859d35b46df63b4fb381eb3f815b2ef4620bec0a79f2115a6a3eb71a5fa1a'],
    ['device_id', '38400000-8CF0-11BD-B23E-10B96E40000D', undefined, '38400000-8cf0-11bd-b23e-10b96e40000d', 'd4181bb455a74b3bc8b37c75ac9b2c702eb6b9930bd040b861403b31ca85634d'],
    ['device_id', 'AF3802A465767E36', undefined, 'af3802a465767e36', '38bb33cb239524887c276ca99f9a077bc7161629804b914f4fd52e19dcffe92c'],
    ['phone_number', '(415) 555-2671', { defaultCountry: 'US' }, '14155552671', '758fbf68945f21c416814c539ab578876c8d98fb69e6da692def92cd52417fe0'],
    ['phone_number', '+1 415.555.2671', undefined, '14155552671', '758fbf68945f21c416814c539ab578876c8d98fb69e6da692def92cd52417fe0'],
  ];

  it.each(cases)('%s %j', (type, raw, ctx, normalized, digest) => {
    expect(createHash('sha256').update(normalized).digest('hex')).toBe(digest);
    expect(hashIdentifier(type, raw, ctx)).toEqual({ ok: true, value: digest });
  });

  it('hashes each value, never a concatenation', () => {
    const a = hashIdentifier('email', 'a@x.com');
    const b = hashIdentifier('email', 'b@x.com');
    expect(a).toEqual({ ok: true, value: createHash('sha256').update('a@x.com').digest('hex') });
    expect(b).toEqual({ ok: true, value: createHash('sha256').update('b@x.com').digest('hex') });
  });

  it('never hashes a hash: a 64-hex value is lowercased and passed through for every hashed type', () => {
    const upper = '49E0BE2AECCFB51A8DEE4C945C8A70A9AC500CF6F5CB08112575F74DB9B1470D';
    const valid = {
      email: 'a@x.com',
      phone_number: '+14155552671',
      handle: '@jack',
      twitter_id: '143567',
      device_id: 'af3802a465767e36',
    } as const;
    for (const [type, raw] of Object.entries(valid) as [keyof typeof valid, string][]) {
      expect(hashIdentifier(type, ` ${upper} `)).toEqual({ ok: true, value: upper.toLowerCase() });
      const once = hashIdentifier(type, raw);
      expect(once.ok).toBe(true);
      if (once.ok) expect(hashIdentifier(type, once.value)).toEqual(once);
    }
    // 64 digits are hex too.
    expect(hashIdentifier('twitter_id', '1'.repeat(64))).toEqual({ ok: true, value: '1'.repeat(64) });
  });

  it('sends partner_user_id unhashed, trimmed, case kept', () => {
    expect(hashIdentifier('partner_user_id', ' CRM-000123 ')).toEqual({ ok: true, value: 'CRM-000123' });
  });

  it('rejects an unknown type at run time instead of throwing', () => {
    expect(hashIdentifier('fax' as IdentifierType, '123')).toEqual({ ok: false, reason: 'unknown identifier type' });
  });
});
