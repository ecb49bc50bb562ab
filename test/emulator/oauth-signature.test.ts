/**
 * OAuth 1.0a verification: requests signed by an independent implementation (the oauth-1.0a
 * package) are accepted; a single changed byte anywhere in what is signed is refused; so are
 * a reused nonce, a timestamp outside the skew, unknown keys and tokens.
 */
import { createHmac } from 'node:crypto';
import OAuth from 'oauth-1.0a';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getAccount } from '../../src/api/resources/accounts.js';
import type { EmulatorHandle } from '../../src/emulator/index.js';
import { authorizationFor, clientFor, raw, signedRaw, start } from './helpers.js';

let emu: EmulatorHandle;
let clock = Date.now();

beforeAll(async () => {
  emu = await start({ now: () => clock, rateLimits: 'off' });
});
afterAll(() => emu.close());
beforeEach(() => {
  clock = Date.now();
});

function independentSigner(): OAuth {
  return new OAuth({
    consumer: { key: emu.credentials.consumerKey, secret: emu.credentials.consumerSecret },
    signature_method: 'HMAC-SHA1',
    hash_function: (base, key) => createHmac('sha1', key).update(base).digest('base64'),
  });
}

const token = (): OAuth.Token => ({ key: emu.credentials.accessToken, secret: emu.credentials.accessTokenSecret });

const unauthorized = (message: string) => ({
  errors: [{ code: 'UNAUTHORIZED_ACCESS', message }],
  request: expect.any(Object) as unknown,
});

describe('a request signed by the independent oauth-1.0a package', () => {
  it('is accepted, with query parameters signed', async () => {
    const url = `${emu.url}/12/accounts?count=1&with_deleted=false`;
    const auth = independentSigner().authorize({ url, method: 'GET' }, token());
    const answer = await raw(emu, { method: 'GET', path: '/12/accounts?count=1&with_deleted=false', headers: { authorization: independentSigner().toHeader(auth).Authorization } });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ data: [{ id: 'emu-account', name: 'Emulator account' }], next_cursor: null });
  });

  it('is accepted with a signed form-urlencoded body', async () => {
    const url = `${emu.url}/12/product_catalogs/emu-catalog`;
    const data = { name: 'Renamed by a form & signed' };
    const auth = independentSigner().authorize({ url, method: 'PUT', data }, token());
    const answer = await raw(emu, {
      method: 'PUT',
      path: '/12/product_catalogs/emu-catalog',
      headers: { authorization: independentSigner().toHeader(auth).Authorization, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'name=Renamed%20by%20a%20form%20%26%20signed',
    });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ data: { id: 'emu-catalog', name: 'Renamed by a form & signed' } });
    emu.reset();
  });

  it('is refused when any single byte of what was signed changes', async () => {
    const path = '/12/accounts?count=5';
    const url = `${emu.url}${path}`;
    const signer = independentSigner();
    const sign = () => signer.toHeader(signer.authorize({ url, method: 'GET' }, token())).Authorization;

    const flipLastSignatureChar = (header: string) =>
      header.replace(/oauth_signature="([^"]+)"/, (_m, sig: string) => {
        const decoded = decodeURIComponent(sig);
        const last = decoded.at(-2) === 'A' ? 'B' : 'A';
        return `oauth_signature="${encodeURIComponent(decoded.slice(0, -2) + last + decoded.slice(-1))}"`;
      });
    const changeNonce = (header: string) => header.replace(/oauth_nonce="(.)/, (_m, c: string) => `oauth_nonce="${c === 'a' ? 'b' : 'a'}`);
    const changeTimestamp = (header: string) => header.replace(/oauth_timestamp="(\d+)"/, (_m, t: string) => `oauth_timestamp="${Number(t) - 1}"`);
    const cases: { name: string; path: string; header: string; method?: string }[] = [
      { name: 'signature', path, header: flipLastSignatureChar(sign()) },
      { name: 'query value', path: '/12/accounts?count=6', header: sign() },
      { name: 'query name', path: '/12/accounts?cound=5', header: sign() },
      { name: 'nonce', path, header: changeNonce(sign()) },
      { name: 'timestamp', path, header: changeTimestamp(sign()) },
      { name: 'path', path: '/12/accounts/emu-account?count=5', header: sign() },
      { name: 'method', path, header: sign(), method: 'POST' },
    ];
    for (const c of cases) {
      const answer = await raw(emu, { method: c.method ?? 'GET', path: c.path, headers: { authorization: c.header } });
      expect({ case: c.name, status: answer.status }).toEqual({ case: c.name, status: 401 });
      expect(answer.json).toEqual(unauthorized('the OAuth signature does not match the request'));
    }
    // ... and the untouched header still works.
    expect((await raw(emu, { method: 'GET', path, headers: { authorization: sign() } })).status).toBe(200);
  });
});

describe('the signature base string', () => {
  it('uses the Host header the client sent', async () => {
    const header = authorizationFor(emu, { method: 'GET', path: '/12/accounts' });
    const sameHost = await raw(emu, { method: 'GET', path: '/12/accounts', headers: { authorization: header } });
    expect(sameHost.status).toBe(200);
    const header2 = authorizationFor(emu, { method: 'GET', path: '/12/accounts' });
    const otherHost = await raw(emu, { method: 'GET', path: '/12/accounts', headers: { authorization: header2, host: `localhost:${emu.port}` } });
    expect(otherHost.status).toBe(401);
    expect(otherHost.json).toEqual(unauthorized('the OAuth signature does not match the request'));
  });

  it('does not cover a JSON body, but covers a form body', async () => {
    const jsonPath = '/12/product_catalogs/emu-catalog/product_sets';
    const signedFor = { method: 'POST', path: jsonPath };
    const header = authorizationFor(emu, signedFor);
    const answer = await raw(emu, {
      method: 'POST',
      path: jsonPath,
      headers: { authorization: header, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'any body at all', type: 'FILTERED', filters: [{ attribute: 'price', operator: 'LESS_THAN', value: '10' }] }),
    });
    expect(answer.status).toBe(200);

    const formHeader = authorizationFor(emu, { method: 'PUT', path: '/12/product_catalogs/emu-catalog', form: [['name', 'Signed name']] });
    const tampered = await raw(emu, {
      method: 'PUT',
      path: '/12/product_catalogs/emu-catalog',
      headers: { authorization: formHeader, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'name=Signed%20nama',
    });
    expect(tampered.status).toBe(401);
    emu.reset();
  });
});

describe('replay and clock checks', () => {
  it('refuses a reused nonce', async () => {
    const first = await signedRaw(emu, { method: 'GET', path: '/12/accounts', nonce: 'the-same-nonce-twice' });
    expect(first.status).toBe(200);
    const second = await signedRaw(emu, { method: 'GET', path: '/12/accounts/emu-account', nonce: 'the-same-nonce-twice' });
    expect(second.status).toBe(401);
    expect(second.json).toEqual(unauthorized('oauth_nonce was already used'));
  });

  it('accepts a timestamp at the skew boundary and refuses one past it, on both sides', async () => {
    const now = Math.floor(clock / 1000);
    clock = now * 1000;
    const at = async (timestamp: number) => (await signedRaw(emu, { method: 'GET', path: '/12/accounts', timestamp })).status;
    expect(await at(now - 300)).toBe(200);
    expect(await at(now + 300)).toBe(200);
    expect(await at(now - 301)).toBe(401);
    expect(await at(now + 301)).toBe(401);
    const stale = await signedRaw(emu, { method: 'GET', path: '/12/accounts', timestamp: now - 3600 });
    expect(stale.json).toEqual(unauthorized("oauth_timestamp is more than 300 seconds away from the server's clock"));
  });

  it('signs every retry afresh, so the client never trips the nonce check', async () => {
    emu.addFault({ route: 'GET /12/accounts/emu-account', kind: 'status', status: 503, times: 2 });
    const client = clientFor(emu, { retry: { retries: 3, minDelayMs: 1, maxDelayMs: 5 } });
    await expect(getAccount(client, 'emu-account')).resolves.toMatchObject({ id: 'emu-account' });
    expect(client.stats.retries).toBe(2);
  });
});

describe('keys and tokens', () => {
  it('refuses a request without an Authorization header', async () => {
    const answer = await raw(emu, { method: 'GET', path: '/12/accounts' });
    expect(answer.status).toBe(401);
    expect(answer.json).toEqual({
      errors: [{ code: 'UNAUTHORIZED_ACCESS', message: 'the request carries no valid OAuth 1.0a Authorization header' }],
      request: { params: {} },
    });
  });

  it('refuses an unknown consumer key and an unknown token', async () => {
    const signer = new OAuth({
      consumer: { key: 'someone-else', secret: emu.credentials.consumerSecret },
      signature_method: 'HMAC-SHA1',
      hash_function: (base, key) => createHmac('sha1', key).update(base).digest('base64'),
    });
    const url = `${emu.url}/12/accounts`;
    const badConsumer = await raw(emu, { method: 'GET', path: '/12/accounts', headers: signer.toHeader(signer.authorize({ url, method: 'GET' }, token())) as unknown as Record<string, string> });
    expect(badConsumer.json).toEqual(unauthorized('unknown consumer key'));
    const badToken = await signedRaw(emu, { method: 'GET', path: '/12/accounts', token: { token: 'not-a-token', tokenSecret: 'x' } });
    expect(badToken.status).toBe(401);
    expect(badToken.json).toEqual(unauthorized('invalid or unknown access token'));
  });

  it('refuses a right token signed with the wrong token secret', async () => {
    const answer = await signedRaw(emu, {
      method: 'GET',
      path: '/12/accounts',
      token: { token: emu.credentials.accessToken, tokenSecret: 'wrong-secret' },
    });
    expect(answer.status).toBe(401);
    expect(answer.json).toEqual(unauthorized('the OAuth signature does not match the request'));
  });
});
