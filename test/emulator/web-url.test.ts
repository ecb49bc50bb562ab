/**
 * The plain-URL reading of src/emulator/web-url.ts gives exactly what the WHATWG URL parser
 * gives (scheme, whether there is a host, path) whenever it answers, and urlParts as a whole
 * answers as `new URL` does, on links drawn around the edges of the plain form: schemes in
 * other cases, IPv4-like and punycode hosts, ports, users, dot segments, percent signs,
 * backslashes, non-ASCII text, whitespace. fast-check draws from a fixed seed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { plainWebUrlParts, urlParts, type UrlParts } from '../../src/emulator/web-url.js';

/** The reading the product rules had before: whitespace refused, then the parser. */
function parsed(text: string): UrlParts | undefined {
  if (/\s/.test(text)) return undefined;
  try {
    const url = new URL(text);
    return { protocol: url.protocol, hasHost: url.hostname !== '', pathname: url.pathname };
  } catch {
    return undefined;
  }
}

const piece = (chars: string, maxLength: number) => fc.string({ unit: fc.constantFrom(...chars), maxLength });
const label = fc.oneof(
  { weight: 6, arbitrary: piece('abcxyzABCZ0129-', 12).filter((s) => s !== '') },
  { weight: 1, arbitrary: fc.constantFrom('xn--nxasmq6b', 'XN--abc', 'xn--', '0x1f', '0X', '123', '4294967296', '1e3', '-', '--', 'a-', '-a', 'ab--cd', 'a'.repeat(64), 'b'.repeat(300), 'ß', 'é', '_', '%41', '', 'a_b', 'localhost') },
);
const host = fc.oneof(
  { weight: 8, arbitrary: fc.array(label, { minLength: 1, maxLength: 4 }).map((labels) => labels.join('.')) },
  { weight: 1, arbitrary: fc.constantFrom('[::1]', '1.2.3.4', '1.2.3', '0x7f.1', 'example.com.', '.example.com', 'a..b', 'user@example.com', 'u:p@example.com', 'example.com:443', 'example.com:', 'example.com:99999', 'exa mple.com', '') },
);
const segment = fc.oneof(
  { weight: 6, arbitrary: piece("abcXYZ019-._~!$&'()*+,;=:@", 10) },
  { weight: 1, arbitrary: fc.constantFrom('.', '..', '%2e', '%2E%2e', '%', '%zz', '\\', 'a\\b', 'ä', 'é.png', '😀', '"', '<', '>', '`', '{', '}', '^', '|', '\u0001', 'a.PNG', 'x.bmp', '.gif') },
);
const path = fc.oneof(fc.constant(''), fc.array(segment, { maxLength: 5 }).map((segments) => `/${segments.join('/')}`));
const query = fc.oneof(fc.constant(''), piece('?a=1&b.gif#/\\%é ', 12).map((q) => `?${q}`));
const fragment = fc.oneof(fc.constant(''), piece('#a.png/?é ', 8).map((f) => `#${f}`));
const scheme = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('https', 'http') },
  { weight: 1, arbitrary: fc.constantFrom('HTTPS', 'Http', 'ftp', 'file', 'javascript', 'httpss', '', 'h ttps') },
);
const separator = fc.oneof({ weight: 6, arbitrary: fc.constant('://') }, { weight: 1, arbitrary: fc.constantFrom(':', ':/', ':///', '//', ':\\\\', ': //') });
const link = fc.oneof(
  { weight: 10, arbitrary: fc.tuple(scheme, separator, host, path, query, fragment).map((parts) => parts.join('')) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(' ', '\t', '\u0001', ''), fc.webUrl(), fc.constantFrom(' ', '\n', '\u0001', '')).map((parts) => parts.join('')) },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
);

describe('reading links', () => {
  it('reads plain links exactly as the URL parser does, and every other text through it', () => {
    let plain = 0;
    let runs = 0;
    fc.assert(
      fc.property(link, (text) => {
        runs += 1;
        const fast = plainWebUrlParts(text);
        if (fast !== undefined) {
          plain += 1;
          expect(fast).toEqual(parsed(text));
        }
        expect(urlParts(text)).toEqual(parsed(text));
      }),
      { numRuns: 20000, seed: 20261122 },
    );
    // The plain reading must have been put to the test, not skipped.
    expect(plain).toBeGreaterThan(runs / 8);
  });

  it('reads the links of a product feed without the parser', () => {
    for (const text of ['https://shop.example.com/products/sku-0000001', 'https://cdn.example.com/i/sku-0000001-2.jpg', 'https://shop.example.com/p?utm_source=x&utm_medium=catalog']) {
      expect(plainWebUrlParts(text)).toEqual(parsed(text));
    }
  });
});
