/**
 * Rate limits per endpoint family and access token: the x-rate-limit-* headers, 429 when a
 * window is used up, separate windows per family and token, 'off', and the client's limiter
 * slowing down on the headers before it ever meets a 429.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RateLimitedError } from '../../src/api/errors.js';
import { getAccount } from '../../src/api/resources/accounts.js';
import { postAudienceUsers } from '../../src/api/resources/audiences.js';
import type { EmulatorHandle, EmulatorOptions } from '../../src/emulator/index.js';
import { clientFor, sha256, signedRaw, start } from './helpers.js';

let emu: EmulatorHandle | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

async function startWith(options: EmulatorOptions): Promise<EmulatorHandle> {
  emu = await start(options);
  return emu;
}

const limitHeaders = (h: Record<string, unknown>) => ({
  limit: h['x-rate-limit-limit'],
  remaining: h['x-rate-limit-remaining'],
  reset: h['x-rate-limit-reset'],
});

describe('rate limits', () => {
  it('sends the headers on every answer of a family and answers 429 past the limit, until the window resets', async () => {
    let clock = 1_700_000_000_500;
    const e = await startWith({ now: () => clock, timestampSkewSeconds: 10 ** 9, rateLimits: { read: { limit: 3, windowMs: 60_000 } } });
    const get = (path = '/12/accounts/emu-account') => signedRaw(e, { method: 'GET', path });
    const reset = String(Math.ceil((clock + 60_000) / 1000));
    const seen = [];
    for (let i = 0; i < 3; i++) {
      const answer = await get(i === 2 ? '/12/accounts/nope' : undefined);
      seen.push([answer.status, limitHeaders(answer.headers)]);
    }
    expect(seen).toEqual([
      [200, { limit: '3', remaining: '2', reset }],
      [200, { limit: '3', remaining: '1', reset }],
      [404, { limit: '3', remaining: '0', reset }],
    ]);
    clock += 59_999;
    const over = await get();
    expect(over.status).toBe(429);
    expect(limitHeaders(over.headers)).toEqual({ limit: '3', remaining: '0', reset });
    expect(over.json).toEqual({
      errors: [{ code: 'TOO_MANY_REQUESTS', message: 'Rate limit exceeded' }],
      request: { params: { account_id: 'emu-account' } },
    });
    clock += 1;
    const fresh = await get();
    expect(fresh.status).toBe(200);
    expect(limitHeaders(fresh.headers)).toEqual({ limit: '3', remaining: '2', reset: String(Math.ceil((clock + 60_000) / 1000)) });
  });

  it('keeps one window per family: writes, with_total_count and user batches apart from reads', async () => {
    const e = await startWith({
      rateLimits: { read: { limit: 1, windowMs: 60_000 }, total_count: { limit: 1, windowMs: 60_000 }, write: { limit: 1, windowMs: 60_000 }, audience_users: { limit: 1, windowMs: 60_000 } },
    });
    const batch = JSON.stringify([{ operation_type: 'Update', params: { users: [{ email: [sha256('a')] }] } }]);
    const users = () => signedRaw(e, { method: 'POST', path: '/12/accounts/emu-account/custom_audiences/emu-audience/users', contentType: 'application/json', body: batch });
    const statuses = [
      (await signedRaw(e, { method: 'GET', path: '/12/accounts' })).status,
      (await signedRaw(e, { method: 'GET', path: '/12/accounts?with_total_count=true' })).status,
      (await signedRaw(e, { method: 'PUT', path: '/12/product_catalogs/emu-catalog?name=x' })).status,
      (await users()).status,
      (await signedRaw(e, { method: 'GET', path: '/12/accounts' })).status,
      (await signedRaw(e, { method: 'GET', path: '/12/accounts?with_total_count=true' })).status,
      (await signedRaw(e, { method: 'DELETE', path: '/12/accounts/emu-account/do_not_reach_lists/emu-dnr' })).status,
      (await users()).status,
    ];
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429, 429, 429]);
    const dnr = await signedRaw(e, { method: 'POST', path: '/12/batch/accounts/emu-account/do_not_reach_lists/emu-dnr/users', contentType: 'application/json', body: batch });
    expect(dnr.headers['x-rate-limit-limit']).toBe('1500');
  });

  it('keeps one window per access token', async () => {
    const e = await startWith({ rateLimits: { read: { limit: 1, windowMs: 60_000 } } });
    const { obtainRequestToken, exchangeForAccessToken } = await import('../../src/api/oauth-flow.js');
    const client = clientFor(e);
    const rt = await obtainRequestToken(client);
    const pin = ((await (await fetch(`${e.url}/_emulator/pin?oauth_token=${rt.token}`)).json()) as { pin: string }).pin;
    const access = await exchangeForAccessToken(client, rt, pin);
    expect((await signedRaw(e, { method: 'GET', path: '/12/accounts' })).status).toBe(200);
    expect((await signedRaw(e, { method: 'GET', path: '/12/accounts' })).status).toBe(429);
    expect((await signedRaw(e, { method: 'GET', path: '/12/accounts', token: access })).status).toBe(200);
  });

  it("sends the documented defaults with 'default' and nothing with 'off'", async () => {
    const d = await startWith({ rateLimits: 'default' });
    const read = await signedRaw(d, { method: 'GET', path: '/12/accounts' });
    const write = await signedRaw(d, { method: 'PUT', path: '/12/product_catalogs/emu-catalog?name=x' });
    const counted = await signedRaw(d, { method: 'GET', path: '/12/accounts?with_total_count=true' });
    expect([read, write, counted].map((a) => a.headers['x-rate-limit-limit'])).toEqual(['2000', '450', '200']);
    expect(Number(counted.headers['x-rate-limit-reset']) - Math.floor(Date.now() / 1000)).toBeGreaterThan(15 * 60 - 5);
    await d.close();
    const off = await startWith({ rateLimits: 'off' });
    const answer = await signedRaw(off, { method: 'GET', path: '/12/accounts' });
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.headers).filter((k) => k.startsWith('x-rate-limit'))).toEqual([]);
  });

  it('surfaces a 429 as RateLimitedError with the reset time', async () => {
    const e = await startWith({ rateLimits: { read: { limit: 1, windowMs: 60_000 } } });
    const client = clientFor(e);
    await getAccount(client, 'emu-account');
    const answer = await signedRaw(e, { method: 'GET', path: '/12/accounts/emu-account' });
    const error = await getAccount(clientFor(e), 'emu-account').catch((x: unknown) => x);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).retryAt).toBe(Number(answer.headers['x-rate-limit-reset']) * 1000);
  });

  it('lets the client limiter slow down on the headers before any 429', async () => {
    const e = await startWith({ rateLimits: { audience_users: { limit: 4, windowMs: 1_200 } } });
    const client = clientFor(e, { rateLimits: {} });
    const body = Buffer.from(JSON.stringify([{ operation_type: 'Update', params: { users: [{ email: [sha256('x')] }] } }]));
    const target = { kind: 'custom_audience', accountId: 'emu-account', customAudienceId: 'emu-audience' } as const;
    const started = Date.now();
    for (let i = 0; i < 6; i++) await postAudienceUsers(client, target, body, 1);
    // The fifth request waited for the window of the first four to reset.
    expect(Date.now() - started).toBeGreaterThan(1_150);
    expect(e.state().requests.by_status).toEqual({ '200': 6 });

    // Without reading the headers, the fifth request in a window is refused.
    e.reset();
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      statuses.push(
        (await signedRaw(e, { method: 'POST', path: '/12/accounts/emu-account/custom_audiences/emu-audience/users', contentType: 'application/json', body })).status,
      );
    }
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
  });
});
