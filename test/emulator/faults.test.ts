/**
 * Fault injection, and the client's answer to each fault: it retries 5xx, 429, dropped
 * connections, timeouts and count mismatches (signing each attempt afresh), never a 400.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiValidationError, CountMismatchError, NetworkError, RateLimitedError, RetryableHttpError } from '../../src/api/errors.js';
import { getAccount } from '../../src/api/resources/accounts.js';
import { postAudienceUsers, type AudienceTarget } from '../../src/api/resources/audiences.js';
import { putProducts } from '../../src/api/resources/catalogs.js';
import type { EmulatorHandle } from '../../src/emulator/index.js';
import { admin, clientFor, product, sha256, signedRaw, start } from './helpers.js';

let emu: EmulatorHandle;

beforeAll(async () => {
  emu = await start({ rateLimits: 'off' });
});
afterAll(() => emu.close());
beforeEach(() => emu.reset());

const AUDIENCE: AudienceTarget = { kind: 'custom_audience', accountId: 'emu-account', customAudienceId: 'emu-audience' };
const USERS = 'POST /12/accounts/*/custom_audiences/*/users';
const batch = (n: number) =>
  Buffer.from(JSON.stringify([{ operation_type: 'Update', params: { users: Array.from({ length: n }, (_, i) => ({ email: [sha256(`f${i}`)] })) } }]));
const emails = () => emu.stateSummary().custom_audiences['emu-audience']?.members.email;
const retrying = (extra = {}) => clientFor(emu, { retry: { retries: 3, minDelayMs: 1, maxDelayMs: 10 }, ...extra });

async function arm(spec: Record<string, unknown>): Promise<void> {
  const answer = await admin(emu, 'POST', '/_emulator/faults', spec);
  expect(answer.status).toBe(200);
}

describe('status faults', () => {
  it('answer the status with the service error body and Retry-After, applying nothing', async () => {
    await arm({ route: USERS, kind: 'status', status: 503, retry_after: 2 });
    const answer = await signedRaw(emu, {
      method: 'POST',
      path: '/12/accounts/emu-account/custom_audiences/emu-audience/users',
      contentType: 'application/json',
      body: batch(1),
    });
    expect(answer.status).toBe(503);
    expect(answer.headers['retry-after']).toBe('2');
    expect(answer.json).toEqual({
      errors: [{ code: 'SERVICE_UNAVAILABLE', message: 'injected fault: HTTP 503' }],
      request: { params: { account_id: 'emu-account', custom_audience_id: 'emu-audience' } },
    });
    expect(emails()).toBe(0);
    expect(emu.state().requests.by_status).toEqual({ '503': 1 });
  });

  it('surface 5xx as RetryableHttpError, and the client retries them', async () => {
    await arm({ route: USERS, kind: 'status', status: 500, code: 'INTERNAL_ERROR', times: 2 });
    const once = await postAudienceUsers(clientFor(emu), AUDIENCE, batch(2), 2).catch((e: unknown) => e);
    expect(once).toBeInstanceOf(RetryableHttpError);
    const client = retrying();
    await expect(postAudienceUsers(client, AUDIENCE, batch(2), 2)).resolves.toEqual({ successCount: 2, totalCount: 2 });
    expect(client.stats).toMatchObject({ requests: 2, retries: 1 });
    expect(emails()).toBe(2);
  });

  it('are not retried when they are a 400', async () => {
    await arm({ route: 'PUT /12/product_catalogs/**', kind: 'status', status: 400 });
    const client = retrying();
    const error = await putProducts(client, 'emu-catalog', [product('a')]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiValidationError);
    expect(client.stats).toMatchObject({ requests: 1, retries: 0 });
    await expect(putProducts(client, 'emu-catalog', [product('a')])).resolves.toMatchObject([{ status: 'CREATE_SUCCESS' }]);
  });
});

describe('rate_limit faults', () => {
  it('answer 429 with reset headers, or without any', async () => {
    await arm({ route: 'GET /12/accounts/emu-account', kind: 'rate_limit', with_reset: true, retry_after: 30 });
    await arm({ route: 'GET /12/accounts/emu-account', kind: 'rate_limit', with_reset: false });
    const withReset = await signedRaw(emu, { method: 'GET', path: '/12/accounts/emu-account' });
    expect(withReset.status).toBe(429);
    expect(withReset.headers['x-rate-limit-remaining']).toBe('0');
    expect(Number(withReset.headers['x-rate-limit-reset']) - Math.ceil(Date.now() / 1000)).toBeGreaterThanOrEqual(29);
    expect(withReset.json).toMatchObject({ errors: [{ code: 'TOO_MANY_REQUESTS', message: 'Rate limit exceeded' }] });
    const bare = await signedRaw(emu, { method: 'GET', path: '/12/accounts/emu-account' });
    expect(bare.status).toBe(429);
    expect(Object.keys(bare.headers).filter((k) => k.startsWith('x-rate-limit'))).toEqual([]);
  });

  it('are retried by the client: after the reset when given, with backoff otherwise', async () => {
    await arm({ route: 'GET /12/accounts/emu-account', kind: 'rate_limit', with_reset: false });
    const error = await getAccount(clientFor(emu), 'emu-account').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).retryAt).toBeUndefined();

    await arm({ route: 'GET /12/accounts/emu-account', kind: 'rate_limit', with_reset: false, times: 2 });
    const client = retrying();
    await expect(getAccount(client, 'emu-account')).resolves.toMatchObject({ id: 'emu-account' });
    expect(client.stats.retries).toBe(2);

    await arm({ route: 'GET /12/accounts/emu-account', kind: 'rate_limit', with_reset: true, retry_after: 0 });
    const waited = retrying();
    const started = Date.now();
    await expect(getAccount(waited, 'emu-account')).resolves.toMatchObject({ id: 'emu-account' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });
});

describe('count_mismatch faults', () => {
  it('apply the batch but answer one success fewer; the client retries the batch', async () => {
    await arm({ route: USERS, kind: 'count_mismatch' });
    const answer = await signedRaw(emu, {
      method: 'POST',
      path: '/12/accounts/emu-account/custom_audiences/emu-audience/users',
      contentType: 'application/json',
      body: batch(3),
    });
    expect(answer.json).toMatchObject({ data: { success_count: 2, total_count: 3 } });
    expect(emails()).toBe(3);

    await arm({ route: USERS, kind: 'count_mismatch' });
    const error = await postAudienceUsers(clientFor(emu), AUDIENCE, batch(3), 3).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CountMismatchError);
    expect(error).toMatchObject({ expected: 3, successCount: 2, totalCount: 3 });

    await arm({ route: USERS, kind: 'count_mismatch' });
    const client = retrying();
    await expect(postAudienceUsers(client, AUDIENCE, batch(3), 3)).resolves.toEqual({ successCount: 3, totalCount: 3 });
    expect(client.stats.retries).toBe(1);
  });

  it('also apply to do-not-reach batches', async () => {
    await arm({ route: 'POST /12/batch/**', kind: 'count_mismatch' });
    const dnr: AudienceTarget = { kind: 'do_not_reach', accountId: 'emu-account', doNotReachListId: 'emu-dnr' };
    const error = await postAudienceUsers(clientFor(emu), dnr, batch(2), 2).catch((e: unknown) => e);
    expect(error).toMatchObject({ successCount: 1, totalCount: 2 });
  });
});

describe('delay faults', () => {
  it('hold the answer past the client timeout; the request is applied and the client retries', async () => {
    await arm({ route: USERS, kind: 'delay', ms: 400 });
    const impatient = clientFor(emu, { timeoutMs: 150 });
    const error = await postAudienceUsers(impatient, AUDIENCE, batch(2), 2).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).message).toContain('no complete answer within 150 ms');
    expect(emails()).toBe(2);

    await arm({ route: USERS, kind: 'delay', ms: 400 });
    const client = retrying({ timeoutMs: 150 });
    await expect(postAudienceUsers(client, AUDIENCE, batch(2), 2)).resolves.toEqual({ successCount: 2, totalCount: 2 });
    expect(client.stats.retries).toBe(1);
  });

  it('delay without failing a patient client', async () => {
    await arm({ route: 'GET /12/accounts', kind: 'delay', ms: 150 });
    const started = Date.now();
    expect((await signedRaw(emu, { method: 'GET', path: '/12/accounts' })).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });
});

describe('drop faults', () => {
  it('destroy the connection before any answer, apply nothing; the client retries', async () => {
    await arm({ route: USERS, kind: 'drop' });
    const error = await postAudienceUsers(clientFor(emu), AUDIENCE, batch(500), 500).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect(emails()).toBe(0);
    expect(emu.state().requests.by_status).toEqual({ dropped: 1 });

    await arm({ route: USERS, kind: 'drop', times: 2 });
    const client = retrying();
    await expect(postAudienceUsers(client, AUDIENCE, batch(500), 500)).resolves.toEqual({ successCount: 500, totalCount: 500 });
    expect(client.stats.retries).toBe(2);
    expect(emails()).toBe(500);
  });

  it('drop bodiless requests too', async () => {
    await arm({ route: 'GET re:^/12/accounts/[^/]+$', kind: 'drop' });
    await expect(getAccount(clientFor(emu), 'emu-account')).rejects.toBeInstanceOf(NetworkError);
    await expect(getAccount(clientFor(emu), 'emu-account')).resolves.toMatchObject({ id: 'emu-account' });
  });
});

describe('the fault table', () => {
  it('matches method and path, counts uses down, lists and clears', async () => {
    await arm({ route: 'GET /12/accounts/emu-*', kind: 'status', status: 502, times: 2 });
    await arm({ route: '* re:/users$', kind: 'status', status: 504 });
    const listed = await admin(emu, 'GET', '/_emulator/faults');
    expect(listed.json).toEqual({
      faults: [
        { id: 1, route: 'GET /12/accounts/emu-*', kind: 'status', status: 502, times: 2, remaining: 2 },
        { id: 2, route: '* re:/users$', kind: 'status', status: 504, times: 1, remaining: 1 },
      ],
    });
    expect((await signedRaw(emu, { method: 'GET', path: '/12/accounts' })).status).toBe(200);
    expect((await signedRaw(emu, { method: 'GET', path: '/12/accounts/emu-account' })).status).toBe(502);
    expect((await signedRaw(emu, { method: 'GET', path: '/12/accounts/emu-account' })).status).toBe(502);
    expect((await signedRaw(emu, { method: 'GET', path: '/12/accounts/emu-account' })).status).toBe(200);
    expect((await admin(emu, 'GET', '/_emulator/faults')).json).toEqual({ faults: [{ id: 2, route: '* re:/users$', kind: 'status', status: 504, times: 1, remaining: 1 }] });
    expect((await admin(emu, 'DELETE', '/_emulator/faults')).json).toEqual({ faults: [] });
    expect((await admin(emu, 'GET', '/_emulator/faults')).json).toEqual({ faults: [] });
  });

  it('refuses an invalid fault', async () => {
    for (const spec of [{ route: 'GET /x', kind: 'explode' }, { route: '/x', kind: 'drop' }, { route: 'GET /x', kind: 'status', status: 200 }, { route: 'GET re:(', kind: 'drop' }]) {
      const answer = await admin(emu, 'POST', '/_emulator/faults', spec);
      expect(answer.status).toBe(400);
      expect(answer.json).toMatchObject({ errors: [{ code: 'INVALID_PARAMETER' }] });
    }
  });
});
