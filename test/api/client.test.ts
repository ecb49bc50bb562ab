import { afterEach, describe, expect, it } from 'vitest';
import { AdsApiClient, serviceClockAheadMs } from '../../src/api/client.js';
import { Credentials } from '../../src/api/credentials.js';
import {
  ApiRequestError,
  ApiValidationError,
  AuthError,
  CountMismatchError,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  RetryableHttpError,
} from '../../src/api/errors.js';
import { parseErrorBody } from '../../src/api/envelope.js';
import { parseAuthorizationHeader } from '../../src/api/oauth1.js';
import { postAudienceUsers } from '../../src/api/resources/audiences.js';
import { json, startScriptedServer, type RecordedRequest, type ScriptedServer } from '../helpers/scripted-server.js';

const creds = new Credentials('default', 'ck-test', 'cs-test-secret', 'at-test-token', 'ats-test-secret');
const ok = { request: { params: {} }, data: { id: 'acc1', name: 'Acme' } };
let server: ScriptedServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

function client(url: string, overrides: Partial<ConstructorParameters<typeof AdsApiClient>[0]> = {}): AdsApiClient {
  return new AdsApiClient({
    credentials: creds,
    adsUrl: url,
    apiUrl: url,
    retry: { retries: 5, minDelayMs: 10, maxDelayMs: 50, budgetMs: 20_000 },
    timeoutMs: 2000,
    ...overrides,
  });
}

const getAccount = (c: AdsApiClient) =>
  c.call({ method: 'GET', path: '/12/accounts/acc1', family: 'accounts' }, (d) => d as { id: string });

function nonceOf(r: RecordedRequest): string | undefined {
  return parseAuthorizationHeader(r.headers.authorization)?.oauth_nonce;
}

describe('AdsApiClient', () => {
  it('retries a 503 and then succeeds, counting the retry', async () => {
    server = await startScriptedServer((_req, res, i) => (i === 0 ? json(res, 503, { errors: [{ code: 'SERVICE_UNAVAILABLE', message: 'busy' }] }) : json(res, 200, ok)));
    const c = client(server.url);
    const env = await getAccount(c);
    expect(env.data).toEqual({ id: 'acc1', name: 'Acme' });
    expect(server.requests).toHaveLength(2);
    expect(c.stats).toMatchObject({ requests: 2, retries: 1 });
  });

  it('signs every attempt afresh: a new nonce and a valid header each time', async () => {
    server = await startScriptedServer((_req, res, i) => (i < 3 ? json(res, 502, {}) : json(res, 200, ok)));
    await getAccount(client(server.url));
    const nonces = server.requests.map(nonceOf);
    expect(nonces).toHaveLength(4);
    expect(new Set(nonces).size).toBe(4);
    for (const r of server.requests) {
      const p = parseAuthorizationHeader(r.headers.authorization);
      expect(p?.oauth_consumer_key).toBe('ck-test');
      expect(p?.oauth_token).toBe('at-test-token');
      expect(p?.oauth_signature).toMatch(/^[A-Za-z0-9+/]{27}=$/);
    }
  });

  it('on a 429 with x-rate-limit-reset, waits until the reset before trying again', async () => {
    let resetAt = 0;
    server = await startScriptedServer((_req, res, i) => {
      if (i === 0) {
        resetAt = Math.ceil(Date.now() / 1000) + 1;
        json(res, 429, { errors: [{ code: 'TOO_MANY_REQUESTS', message: 'slow down' }] }, {
          'x-rate-limit-limit': '1500',
          'x-rate-limit-remaining': '0',
          'x-rate-limit-reset': String(resetAt),
        });
      } else json(res, 200, ok);
    });
    const c = client(server.url);
    await getAccount(c);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]!.receivedAt).toBeGreaterThanOrEqual(resetAt * 1000);
    expect(c.stats.retries).toBe(1);
  });

  it('honours a 429 reset time on its own, without a remaining count for the limiter to see', async () => {
    let resetAt = 0;
    server = await startScriptedServer((_req, res, i) => {
      if (i === 0) {
        resetAt = Math.ceil(Date.now() / 1000) + 1;
        json(res, 429, { errors: [{ code: 'TOO_MANY_REQUESTS', message: 'slow down' }] }, { 'x-rate-limit-reset': String(resetAt) });
      } else json(res, 200, ok);
    });
    await getAccount(client(server.url));
    expect(server.requests[1]!.receivedAt).toBeGreaterThanOrEqual(resetAt * 1000);
  });

  it('on a 429 of a GET whose account-level limit is used up, waits for the account-level reset, not the earlier user-level one', async () => {
    let accountResetAt = 0;
    server = await startScriptedServer((_req, res) => {
      const now = Date.now();
      if (accountResetAt === 0) accountResetAt = Math.ceil(now / 1000) + 2;
      const headers = {
        'x-rate-limit-limit': '2000',
        'x-rate-limit-remaining': '1990',
        'x-rate-limit-reset': String(Math.ceil(now / 1000)),
        'x-account-rate-limit-limit': '100',
        'x-account-rate-limit-remaining': now < accountResetAt * 1000 ? '0' : '99',
        'x-account-rate-limit-reset': String(accountResetAt),
      };
      if (now < accountResetAt * 1000) json(res, 429, { errors: [{ code: 'TOO_MANY_REQUESTS', message: 'slow down' }] }, headers);
      else json(res, 200, ok, headers);
    });
    const c = client(server.url);
    await getAccount(c);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]!.receivedAt).toBeGreaterThanOrEqual(accountResetAt * 1000);
  });

  it('honours Retry-After on a 503', async () => {
    let first = 0;
    server = await startScriptedServer((_req, res, i) => {
      if (i === 0) {
        first = Date.now();
        json(res, 503, {}, { 'retry-after': '1' });
      } else json(res, 200, ok);
    });
    await getAccount(client(server.url));
    expect(server.requests[1]!.receivedAt - first).toBeGreaterThanOrEqual(990);
  });

  it('retries a 429 without a reset header with backoff', async () => {
    server = await startScriptedServer((_req, res, i) => (i === 0 ? json(res, 429, { errors: [{ code: 'TOO_MANY_REQUESTS', message: 'x' }] }) : json(res, 200, ok)));
    await getAccount(client(server.url));
    expect(server.requests).toHaveLength(2);
  });

  it('does not retry a 400 and reports the service errors and operation_errors', async () => {
    server = await startScriptedServer((_req, res) =>
      json(res, 400, {
        errors: [{ code: 'INVALID_PARAMETER', message: 'bad users', parameter: 'users' }],
        operation_errors: [null, [{ code: 'MISSING_PARAMETER', message: 'users is required', parameter: 'params.users' }]],
      }),
    );
    const error = await getAccount(client(server.url)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiValidationError);
    const v = error as ApiValidationError;
    expect(v.retryable).toBe(false);
    expect(v.message).toBe('GET /12/accounts/acc1 answered HTTP 400: INVALID_PARAMETER bad users (parameter users)');
    expect(v.operationErrors).toEqual([{ index: 1, errors: [{ code: 'MISSING_PARAMETER', message: 'users is required', parameter: 'params.users' }] }]);
    expect(server.requests).toHaveLength(1);
  });

  it('reads the empty placeholders of operation_errors (null, [], {}, [{}], {index, errors: []}) as operations without error', () => {
    const missing = { code: 'MISSING_PARAMETER', message: 'users is required', parameter: 'params.users' };
    expect(parseErrorBody({ operation_errors: [null, [], {}, [{}], [missing]] }).operationErrors).toEqual([{ index: 4, errors: [missing] }]);
    expect(parseErrorBody({ operation_errors: [{ index: 0, errors: [] }, { index: 1, errors: [missing] }] }).operationErrors).toEqual([{ index: 1, errors: [missing] }]);
  });

  it('surfaces a 401 with code 89 as a revoked-token error that ends with exit code 3', async () => {
    server = await startScriptedServer((_req, res) => json(res, 401, { errors: [{ code: 89, message: 'Invalid or expired token.' }] }));
    const error = await getAccount(client(server.url)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthError);
    const a = error as AuthError;
    expect(a.revoked).toBe(true);
    expect(a.exitCode).toBe(3);
    expect(a.message).toContain('revoked');
    expect(a.hint).toContain('adsync auth login');
    expect(server.requests).toHaveLength(1);
  });

  it('a 401 without code 89 is an auth error that is not called revoked', async () => {
    server = await startScriptedServer((_req, res) => json(res, 401, { errors: [{ code: 'UNAUTHORIZED_ACCESS', message: 'bad signature' }] }));
    const error = (await getAccount(client(server.url)).catch((e: unknown) => e)) as AuthError;
    expect(error).toBeInstanceOf(AuthError);
    expect(error.revoked).toBe(false);
  });

  it('a 401 hint names the credentials profile, unless it is the default one in any case', () => {
    const ctx = { method: 'GET', path: '/12/accounts/acc1', status: 401, errors: [{ code: 32, message: 'Could not authenticate you.' }] };
    const check = 'check the consumer key/secret and access token/secret of the credentials profile';
    expect(new AuthError(ctx, 'acme').hint).toBe(`${check} "acme" (see README, "Credentials")`);
    expect(new AuthError(ctx, 'default').hint).toBe(`${check} (see README, "Credentials")`);
    expect(new AuthError(ctx, 'Default').hint).toBe(`${check} (see README, "Credentials")`);
  });

  it('a 404 is a not-found error, not retried', async () => {
    server = await startScriptedServer((_req, res) => json(res, 404, { errors: [{ code: 'NOT_FOUND', message: 'no such account' }] }));
    await expect(getAccount(client(server.url))).rejects.toBeInstanceOf(NotFoundError);
    expect(server.requests).toHaveLength(1);
  });

  it('times out a request that hangs and retries it', async () => {
    server = await startScriptedServer((_req, res, i) => {
      if (i === 0) return; // never answer
      json(res, 200, ok);
    });
    const c = client(server.url, { timeoutMs: 300 });
    const env = await getAccount(c);
    expect(env.data.id).toBe('acc1');
    expect(server.requests).toHaveLength(2);
    expect(nonceOf(server.requests[0]!)).not.toBe(nonceOf(server.requests[1]!));
  });

  it('gives up with the last error when the retries are used up', async () => {
    server = await startScriptedServer((_req, res) => json(res, 503, {}));
    const c = client(server.url, { retry: { retries: 2, minDelayMs: 5, maxDelayMs: 5, budgetMs: 10_000 } });
    await expect(getAccount(c)).rejects.toBeInstanceOf(RetryableHttpError);
    expect(server.requests).toHaveLength(3);
  });

  it('stops retrying when the time budget is spent', async () => {
    server = await startScriptedServer((_req, res) => json(res, 503, {}));
    const c = client(server.url, { retry: { retries: 100, minDelayMs: 50, maxDelayMs: 50, budgetMs: 300 } });
    const started = Date.now();
    await expect(getAccount(c)).rejects.toBeInstanceOf(RetryableHttpError);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(server.requests.length).toBeLessThan(10);
  });

  it('fails at once when a 429 asks to come back after the time budget', async () => {
    server = await startScriptedServer((_req, res) =>
      json(res, 429, {}, { 'x-rate-limit-remaining': '0', 'x-rate-limit-reset': String(Math.ceil(Date.now() / 1000) + 3600) }),
    );
    const c = client(server.url, { retry: { retries: 5, minDelayMs: 5, maxDelayMs: 5, budgetMs: 5000 } });
    const error = await getAccount(c).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(server.requests).toHaveLength(1);
  });

  it('a refused connection is a retryable network error', async () => {
    server = await startScriptedServer((_req, res) => json(res, 200, ok));
    const url = server.url;
    await server.close();
    server = undefined;
    const c = client(url, { retry: { retries: 1, minDelayMs: 5, maxDelayMs: 5, budgetMs: 1000 } });
    const error = (await getAccount(c).catch((e: unknown) => e)) as NetworkError;
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('slows down before a 429 when the service says the window is used up', async () => {
    let resetAt = 0;
    server = await startScriptedServer((_req, res, i) => {
      if (i === 0) {
        resetAt = Math.ceil(Date.now() / 1000) + 1;
        json(res, 200, ok, { 'x-rate-limit-limit': '10', 'x-rate-limit-remaining': '0', 'x-rate-limit-reset': String(resetAt) });
      } else json(res, 200, ok);
    });
    const c = client(server.url);
    await getAccount(c);
    await getAccount(c);
    expect(server.requests[1]!.receivedAt).toBeGreaterThanOrEqual(resetAt * 1000);
    expect(c.stats.retries).toBe(0);
  });

  it('sends a prebuilt JSON body byte for byte, with the JSON content type, and reuses it on retries', async () => {
    const body = Buffer.from('[{"operation_type":"Update","params":{"users":[{"email":["aa"]}]}}]');
    server = await startScriptedServer((_req, res, i) =>
      i === 0 ? json(res, 500, {}) : json(res, 200, { request: {}, data: { success_count: 1, total_count: 1 } }),
    );
    const target = { kind: 'custom_audience', accountId: 'acc 1', customAudienceId: 'aud/1' } as const;
    const counts = await postAudienceUsers(client(server.url), target, body, 1);
    expect(counts).toEqual({ successCount: 1, totalCount: 1 });
    for (const r of server.requests) {
      expect(r.body.equals(body)).toBe(true);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.url).toBe('/12/accounts/acc%201/custom_audiences/aud%2F1/users');
    }
  });

  it('retries a batch whose counts differ from the user records sent, accepting data as an object or an array', async () => {
    server = await startScriptedServer((_req, res, i) =>
      i === 0
        ? json(res, 200, { request: {}, data: { success_count: 3, total_count: 4 } })
        : json(res, 200, { request: [], data: [{ success_count: 4, total_count: 4 }] }),
    );
    const c = client(server.url);
    const target = { kind: 'do_not_reach', accountId: 'a', doNotReachListId: 'l' } as const;
    await expect(postAudienceUsers(c, target, Buffer.from('[]'), 4)).resolves.toEqual({ successCount: 4, totalCount: 4 });
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0]!.url).toBe('/12/batch/accounts/a/do_not_reach_lists/l/users');
  });

  it('reports a count mismatch after the retries are used up', async () => {
    server = await startScriptedServer((_req, res) => json(res, 200, { request: {}, data: { success_count: 1, total_count: 2 } }));
    const c = client(server.url, { retry: { retries: 2, minDelayMs: 5, maxDelayMs: 5, budgetMs: 5000 } });
    const error = await postAudienceUsers(c, { kind: 'custom_audience', accountId: 'a', customAudienceId: 'b' }, Buffer.from('[]'), 2).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CountMismatchError);
    expect((error as CountMismatchError).message).toBe(
      'POST /12/accounts/a/custom_audiences/b/users: the service counted success_count=1 total_count=2 for 2 user records sent',
    );
    expect(server.requests).toHaveLength(3);
  });

  it('signs query parameters and follows next_cursor to the last page', async () => {
    server = await startScriptedServer((req, res) => {
      const cursor = new URL(req.url, 'http://x').searchParams.get('cursor');
      if (!cursor) json(res, 200, { request: {}, data: [{ id: '1' }, { id: '2' }], next_cursor: 'c 2' });
      else if (cursor === 'c 2') json(res, 200, { request: {}, data: [{ id: '3' }], next_cursor: null });
      else json(res, 400, {});
    });
    const c = client(server.url);
    const seen: string[] = [];
    for await (const page of c.paginate({ method: 'GET', path: '/12/accounts', query: { count: 2 }, family: 'accounts' }, (d) => d as { id: string }[])) {
      seen.push(...page.map((p) => p.id));
    }
    expect(seen).toEqual(['1', '2', '3']);
    expect(server.requests.map((r) => r.url)).toEqual(['/12/accounts?count=2', '/12/accounts?count=2&cursor=c%202']);
  });

  it('stops a listing whose next_cursor repeats one already followed, instead of listing forever', async () => {
    server = await startScriptedServer((req, res) => {
      const cursor = new URL(req.url, 'http://x').searchParams.get('cursor');
      // Page 1 -> "a" -> "b" -> "a" again: a loop.
      json(res, 200, { request: {}, data: [{ id: cursor ?? 'first' }], next_cursor: cursor === 'a' ? 'b' : 'a' });
    });
    const c = client(server.url);
    const seen: string[] = [];
    const error = await (async () => {
      for await (const page of c.paginate({ method: 'GET', path: '/12/accounts', family: 'accounts' }, (d) => d as { id: string }[])) {
        seen.push(...page.map((p) => p.id));
        if (seen.length > 10) return new Error('the listing did not stop');
      }
      return undefined;
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiRequestError);
    expect((error as ApiRequestError).retryable).toBe(false);
    expect((error as Error).message).toBe('GET /12/accounts: the service gave next_cursor "a" again after 3 pages; stopped listing (the list would never end)');
    expect(seen).toEqual(['first', 'a', 'b']);
    expect(server.requests).toHaveLength(3);
  });

  it('never puts a secret into an error message or its JSON form', async () => {
    server = await startScriptedServer((_req, res) => json(res, 401, { errors: [{ code: 89, message: 'Invalid or expired token.' }] }));
    const error = await getAccount(client(server.url)).catch((e: unknown) => e);
    const text = `${String(error)} ${JSON.stringify(error)} ${JSON.stringify(creds)}`;
    for (const secret of creds.secrets()) expect(text).not.toContain(secret);
  });
});

describe('serviceClockAheadMs', () => {
  const sent = Date.parse('2026-03-29T01:00:00.400Z');
  const at = (iso: string): { date: string } => ({ date: new Date(iso).toUTCString() });
  it('is 0 when the Date header (whole seconds) fits between the send and the answer', () => {
    expect(serviceClockAheadMs(at('2026-03-29T01:00:00Z'), sent, sent + 300)).toBe(0);
    // An answer held back 30 s, its Date written when the request came: still 0.
    expect(serviceClockAheadMs(at('2026-03-29T01:00:00Z'), sent, sent + 30_000)).toBe(0);
    expect(serviceClockAheadMs({}, sent, sent + 300)).toBe(0);
    expect(serviceClockAheadMs({ date: 'yesterday' }, sent, sent + 300)).toBe(0);
  });
  it('is the offset that puts a reset latest on this clock when the Date cannot be of this clock', () => {
    // The service 4 minutes ahead: at least 239.7 s.
    expect(serviceClockAheadMs(at('2026-03-29T01:04:00Z'), sent, sent + 300)).toBe(240_000 - 700);
    // 4 minutes behind: at least 240.7 s behind (the Date may be up to 1 s older than the answer).
    expect(serviceClockAheadMs(at('2026-03-29T00:56:00Z'), sent, sent + 300)).toBe(-240_000 - 700);
  });
  it('is 0 for a Date more than 5 minutes off (a cached answer, a proxy): not the clock OAuth accepted', () => {
    expect(serviceClockAheadMs(at('2026-03-28T22:00:00Z'), sent, sent + 300)).toBe(0);
    expect(serviceClockAheadMs(at('2026-03-29T04:00:00Z'), sent, sent + 300)).toBe(0);
    expect(serviceClockAheadMs(at('2026-03-29T01:04:59Z'), sent, sent + 300)).toBe(298_300);
  });
});
