/**
 * The OAuth endpoints through src/api/oauth-flow.ts: the PIN flow end to end, the browser
 * page and callback redirect, token revocation (401 code 89 -> AuthError revoked), and the
 * app-only bearer token.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AdsApiClient } from '../../src/api/client.js';
import { Credentials } from '../../src/api/credentials.js';
import { AuthError } from '../../src/api/errors.js';
import { authorizeUrl, exchangeForAccessToken, invalidateAccessToken, obtainRequestToken, parseFormAnswer } from '../../src/api/oauth-flow.js';
import { getAccount } from '../../src/api/resources/accounts.js';
import type { EmulatorHandle } from '../../src/emulator/index.js';
import { invalidateBearerToken, requestBearerToken } from './extra-resources.js';
import { admin, clientFor, raw, signedRaw, start } from './helpers.js';

let emu: EmulatorHandle;

beforeAll(async () => {
  emu = await start({ rateLimits: { oauth2_token: { limit: 5, windowMs: 60_000 } } });
});
afterAll(() => emu.close());
beforeEach(() => emu.reset());

async function pinFor(requestToken: string): Promise<string> {
  const answer = await admin(emu, 'GET', `/_emulator/pin?oauth_token=${encodeURIComponent(requestToken)}`);
  expect(answer.status).toBe(200);
  const pin = (answer.json as { pin: string }).pin;
  expect(pin).toMatch(/^\d{7}$/);
  return pin;
}

describe('the PIN flow', () => {
  it('goes request token -> PIN -> access token -> API call -> invalidate -> 401 code 89', async () => {
    const consumerOnly = clientFor(emu);
    const requestToken = await obtainRequestToken(consumerOnly);
    expect(requestToken.callbackConfirmed).toBe(true);
    expect(requestToken.token).not.toBe('');

    const pin = await pinFor(requestToken.token);
    const access = await exchangeForAccessToken(consumerOnly, requestToken, pin);
    expect(access).toMatchObject({ userId: emu.user.userId, screenName: emu.user.screenName });
    expect(access.token.startsWith(`${emu.user.userId}-`)).toBe(true);

    const c = emu.credentials;
    const userClient = new AdsApiClient({
      credentials: new Credentials('default', c.consumerKey, c.consumerSecret, access.token, access.tokenSecret),
      adsUrl: emu.url,
      apiUrl: emu.url,
      retry: { retries: 0 },
    });
    await expect(getAccount(userClient, 'emu-account')).resolves.toMatchObject({ id: 'emu-account' });

    await invalidateAccessToken(userClient, { token: access.token, tokenSecret: access.tokenSecret });
    const error = await getAccount(userClient, 'emu-account').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthError);
    expect((error as AuthError).revoked).toBe(true);
    expect((error as AuthError).status).toBe(401);
    expect((error as AuthError).serviceErrors).toEqual([{ code: 89, message: 'Invalid or expired token.' }]);

    // The seeded token is untouched.
    await expect(getAccount(clientFor(emu), 'emu-account')).resolves.toMatchObject({ id: 'emu-account' });
  });

  it('answers the two token steps as ampersand-joined text, not JSON', async () => {
    const step1 = await signedRaw(emu, { method: 'POST', path: '/oauth/request_token', token: null, extraOAuthParams: { oauth_callback: 'oob' } });
    expect(step1.status).toBe(200);
    expect(step1.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(step1.text).toMatch(/^oauth_token=[\w-]+&oauth_token_secret=[\w-]+&oauth_callback_confirmed=true$/);
    const { oauth_token: token = '', oauth_token_secret: secret = '' } = parseFormAnswer(step1.text);
    const pin = await pinFor(token);
    const step3 = await signedRaw(emu, { method: 'POST', path: `/oauth/access_token?oauth_verifier=${pin}`, token: { token, tokenSecret: secret } });
    expect(step3.status).toBe(200);
    expect(Object.keys(parseFormAnswer(step3.text))).toEqual(['oauth_token', 'oauth_token_secret', 'user_id', 'screen_name']);
    expect(parseFormAnswer(step3.text).screen_name).toBe('emulator_user');
  });

  it('takes the verifier from the header and the form too, and a request token once only', async () => {
    const client = clientFor(emu);
    const rt1 = await obtainRequestToken(client);
    const pin1 = await pinFor(rt1.token);
    const viaHeader = await signedRaw(emu, { method: 'POST', path: '/oauth/access_token', token: rt1, extraOAuthParams: { oauth_verifier: pin1 } });
    expect(viaHeader.status).toBe(200);
    const again = await signedRaw(emu, { method: 'POST', path: '/oauth/access_token', token: rt1, extraOAuthParams: { oauth_verifier: pin1 } });
    expect(again.status).toBe(401);
    expect(again.json).toEqual({ errors: [{ code: 'UNAUTHORIZED_ACCESS', message: 'invalid or unknown request token' }] });

    const rt2 = await obtainRequestToken(client);
    const pin2 = await pinFor(rt2.token);
    const viaForm = await signedRaw(emu, {
      method: 'POST',
      path: '/oauth/access_token',
      token: rt2,
      form: [['oauth_verifier', pin2]],
      contentType: 'application/x-www-form-urlencoded',
      body: `oauth_verifier=${pin2}`,
    });
    expect(viaForm.status).toBe(200);
  });

  it('refuses an access token request without the verifier, or with a wrong one', async () => {
    const client = clientFor(emu);
    const rt = await obtainRequestToken(client);
    const missing = await signedRaw(emu, { method: 'POST', path: '/oauth/access_token', token: rt });
    expect(missing.status).toBe(401);
    expect(missing.json).toEqual({ errors: [{ code: 'UNAUTHORIZED_ACCESS', message: 'oauth_verifier is required' }] });
    const pin = await pinFor(rt.token);
    const wrong = String((Number(pin) % 9_000_000) + 1_000_000);
    await expect(exchangeForAccessToken(client, rt, wrong)).rejects.toBeInstanceOf(AuthError);
    await expect(exchangeForAccessToken(client, rt, pin)).resolves.toMatchObject({ screenName: 'emulator_user' });
  });

  it('requires oauth_callback (oob or a URL) on the request token step', async () => {
    const none = await signedRaw(emu, { method: 'POST', path: '/oauth/request_token', token: null });
    expect(none.status).toBe(400);
    expect(none.json).toEqual({ errors: [{ code: 'MISSING_PARAMETER', message: 'oauth_callback is required: oob, or the URL to return to', parameter: 'oauth_callback' }] });
    const bad = await signedRaw(emu, { method: 'POST', path: '/oauth/request_token', token: null, extraOAuthParams: { oauth_callback: 'not a url' } });
    expect(bad.status).toBe(400);
    const withToken = await signedRaw(emu, { method: 'POST', path: '/oauth/request_token', extraOAuthParams: { oauth_callback: 'oob' } });
    expect(withToken.status).toBe(401);
  });
});

describe('the browser step', () => {
  it('shows an approval page, then the PIN for oob', async () => {
    const rt = await obtainRequestToken(clientFor(emu));
    const pageUrl = authorizeUrl(emu.url, rt.token);
    const page = await raw(emu, { method: 'GET', path: pageUrl.slice(emu.url.length) });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.text).toContain(`<input type="hidden" name="oauth_token" value="${rt.token}">`);
    expect(page.text).toContain('<button type="submit" name="approve" value="1">Approve</button>');
    const approved = await raw(emu, {
      method: 'POST',
      path: '/oauth/authorize',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `oauth_token=${encodeURIComponent(rt.token)}&approve=1`,
    });
    expect(approved.status).toBe(200);
    const pin = /<code id="pin">(\d{7})<\/code>/.exec(approved.text)?.[1] ?? '';
    await expect(exchangeForAccessToken(clientFor(emu), rt, pin)).resolves.toMatchObject({ userId: emu.user.userId });
  });

  it('redirects to the callback with oauth_token and oauth_verifier', async () => {
    const rt = await obtainRequestToken(clientFor(emu), 'https://app.example.com/done?state=42');
    const approved = await raw(emu, {
      method: 'POST',
      path: '/oauth/authorize',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `oauth_token=${encodeURIComponent(rt.token)}`,
    });
    expect(approved.status).toBe(302);
    const location = new URL(approved.headers.location ?? '');
    expect(location.origin + location.pathname).toBe('https://app.example.com/done');
    expect(location.searchParams.get('state')).toBe('42');
    expect(location.searchParams.get('oauth_token')).toBe(rt.token);
    const verifier = location.searchParams.get('oauth_verifier') ?? '';
    await expect(exchangeForAccessToken(clientFor(emu), rt, verifier)).resolves.toMatchObject({ screenName: 'emulator_user' });
  });

  it('answers 404 for an unknown request token', async () => {
    expect((await raw(emu, { method: 'GET', path: '/oauth/authorize?oauth_token=nope' })).status).toBe(404);
    const pin = await admin(emu, 'GET', '/_emulator/pin?oauth_token=nope');
    expect(pin.status).toBe(404);
    expect(pin.json).toEqual({ errors: [{ code: 'NOT_FOUND', message: 'request token nope is unknown or already exchanged' }] });
  });
});

describe('token revocation', () => {
  it('answers {access_token} on both paths and 89 afterwards, also on the OAuth endpoints', async () => {
    const answer = await signedRaw(emu, { method: 'POST', path: '/1.1/oauth/invalidate_token' });
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ access_token: emu.credentials.accessToken });
    const again = await signedRaw(emu, { method: 'POST', path: '/1.1/oauth/invalidate_token.json' });
    expect(again.status).toBe(401);
    expect(again.json).toEqual({ errors: [{ code: 89, message: 'Invalid or expired token.' }] });
    const api = await signedRaw(emu, { method: 'GET', path: '/12/accounts' });
    expect(api.json).toEqual({ errors: [{ code: 89, message: 'Invalid or expired token.' }], request: { params: {} } });
  });
});

describe('app-only bearer tokens', () => {
  const basic = () => `Basic ${Buffer.from(`${emu.credentials.consumerKey}:${emu.credentials.consumerSecret}`).toString('base64')}`;
  const requestBearer = (authorization = basic(), body = 'grant_type=client_credentials') =>
    raw(emu, { method: 'POST', path: '/oauth2/token', headers: { authorization, 'content-type': 'application/x-www-form-urlencoded;charset=UTF-8' }, body });

  it('issues one token until it is invalidated, then a different one', async () => {
    const first = await requestBearer();
    expect(first.status).toBe(200);
    const { token_type: type, access_token: token } = first.json as { token_type: string; access_token: string };
    expect(type).toBe('bearer');
    expect(token).toContain('%3D');
    expect((await requestBearer()).json).toEqual({ token_type: 'bearer', access_token: token });

    const client = clientFor(emu);
    expect(await requestBearerToken(client, emu.credentials.consumerKey, emu.credentials.consumerSecret)).toBe(token);
    expect(await invalidateBearerToken(client, token)).toBe(token);
    const next = await requestBearerToken(client, emu.credentials.consumerKey, emu.credentials.consumerSecret);
    expect(next).not.toBe(token);
    expect((await requestBearer()).json).toEqual({ token_type: 'bearer', access_token: next });

    const unknown = await signedRaw(emu, { method: 'POST', path: `/oauth2/invalidate_token?access_token=${encodeURIComponent(token)}` });
    expect(unknown.status).toBe(400);
  });

  it('answers 403 with code 99 when asked too often', async () => {
    for (let i = 0; i < 5; i++) expect((await requestBearer()).status).toBe(200);
    await expect(requestBearerToken(clientFor(emu), emu.credentials.consumerKey, emu.credentials.consumerSecret)).rejects.toMatchObject({
      status: 403,
      serviceErrors: [{ code: 99, message: 'Bearer token requested too often; cache the token instead.' }],
    });
    const tooOften = await requestBearer();
    expect(tooOften.status).toBe(403);
    expect(tooOften.json).toEqual({ errors: [{ code: 99, message: 'Bearer token requested too often; cache the token instead.' }] });
  });

  it('refuses wrong credentials and a wrong grant_type', async () => {
    const wrong = await requestBearer(`Basic ${Buffer.from(`${emu.credentials.consumerKey}:nope`).toString('base64')}`);
    expect(wrong.status).toBe(401);
    const grant = await requestBearer(basic(), 'grant_type=password');
    expect(grant.status).toBe(400);
    expect(grant.json).toEqual({ errors: [{ code: 'INVALID_PARAMETER', message: 'grant_type must be client_credentials', parameter: 'grant_type' }] });
  });
});
