/**
 * The admin endpoints (state, summary, reset, custom audiences), the request counters, the
 * programmatic handle, the banner, and where the emulator listens.
 */
import { createServer } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { postAudienceUsers } from '../../src/api/resources/audiences.js';
import { putProducts } from '../../src/api/resources/catalogs.js';
import { EMULATOR_DEFAULTS, formatEmulatorBanner, startEmulator, type EmulatorHandle } from '../../src/emulator/index.js';
import { admin, clientFor, product, raw, sha256, signedRaw, start } from './helpers.js';

let emu: EmulatorHandle;
const lines: string[] = [];

beforeAll(async () => {
  emu = await start({ rateLimits: 'off', logger: (line) => lines.push(line) });
});
afterAll(() => emu.close());
beforeEach(() => {
  emu.reset();
  lines.length = 0;
});

const AUDIENCE = { kind: 'custom_audience', accountId: 'emu-account', customAudienceId: 'emu-audience' } as const;
const usersBody = (values: string[]) => Buffer.from(JSON.stringify([{ operation_type: 'Update', params: { users: values.map((v) => ({ email: [v] })) } }]));

describe('GET /_emulator/state', () => {
  it('shows products, members as sorted sets and request counters', async () => {
    const client = clientFor(emu);
    const [created] = await putProducts(client, 'emu-catalog', [product('sku-1')]);
    await postAudienceUsers(client, AUDIENCE, usersBody([sha256('b'), sha256('a')]), 2);
    await postAudienceUsers(client, AUDIENCE, usersBody([sha256('c')]), 1);
    await signedRaw(emu, { method: 'GET', path: '/12/accounts/nope' });

    const state = await admin(emu, 'GET', '/_emulator/state');
    expect(state.status).toBe(200);
    expect(state.json).toEqual({
      accounts: [{ id: 'emu-account', name: 'Emulator account', deleted: false }],
      catalogs: { 'emu-catalog': { name: 'Emulator catalog', deleted: false, products: [{ product_key: created?.product_key, ...product('sku-1') }] } },
      custom_audiences: {
        'emu-audience': {
          account_id: 'emu-account',
          name: 'Emulator custom audience',
          deleted: false,
          members: { email: [sha256('a'), sha256('b'), sha256('c')].sort(), phone_number: [], handle: [], twitter_id: [], device_id: [], partner_user_id: [] },
        },
      },
      do_not_reach_lists: {
        'emu-dnr': { account_id: 'emu-account', name: 'Emulator do-not-reach list', deleted: false, members: { email: [], phone_number: [] } },
      },
      requests: {
        total: 4,
        by_route: {
          'GET /12/accounts/:account_id': 1,
          'POST /12/accounts/:account_id/custom_audiences/:custom_audience_id/users': 2,
          'PUT /12/product_catalogs/:product_catalog_id/products': 1,
        },
        by_status: { '200': 3, '404': 1 },
      },
    });
  });

  it('gives only counts with summary=1', async () => {
    await putProducts(clientFor(emu), 'emu-catalog', [product('a'), product('b')]);
    await postAudienceUsers(clientFor(emu), AUDIENCE, usersBody([sha256('a')]), 1);
    await raw(emu, { method: 'GET', path: '/nowhere' });
    const summary = await admin(emu, 'GET', '/_emulator/state?summary=1');
    expect(summary.json).toEqual({
      accounts: 1,
      catalogs: { 'emu-catalog': { name: 'Emulator catalog', deleted: false, products: 2 } },
      custom_audiences: {
        'emu-audience': {
          account_id: 'emu-account',
          name: 'Emulator custom audience',
          deleted: false,
          members: { email: 1, phone_number: 0, handle: 0, twitter_id: 0, device_id: 0, partner_user_id: 0 },
        },
      },
      do_not_reach_lists: { 'emu-dnr': { account_id: 'emu-account', name: 'Emulator do-not-reach list', deleted: false, members: { email: 0, phone_number: 0 } } },
      requests: {
        total: 3,
        by_route: { 'GET (unknown route)': 1, 'POST /12/accounts/:account_id/custom_audiences/:custom_audience_id/users': 1, 'PUT /12/product_catalogs/:product_catalog_id/products': 1 },
        by_status: { '200': 2, '404': 1 },
      },
    });
    expect(summary.json).toEqual(emu.stateSummary());
  });
});

describe('POST /_emulator/reset', () => {
  it('restores the seeded records, tokens and counters', async () => {
    await putProducts(clientFor(emu), 'emu-catalog', [product('a')]);
    await signedRaw(emu, { method: 'POST', path: '/1.1/oauth/invalidate_token' });
    expect((await signedRaw(emu, { method: 'GET', path: '/12/accounts' })).status).toBe(401);
    const reset = await admin(emu, 'POST', '/_emulator/reset');
    expect(reset.json).toEqual({ reset: true });
    expect(emu.stateSummary().catalogs['emu-catalog']?.products).toBe(0);
    expect(emu.stateSummary().requests.total).toBe(0);
    expect((await signedRaw(emu, { method: 'GET', path: '/12/accounts' })).status).toBe(200);
  });
});

describe('POST /_emulator/custom_audiences', () => {
  it('refuses a missing name and an unknown account', async () => {
    expect((await admin(emu, 'POST', '/_emulator/custom_audiences', { account_id: 'emu-account' })).json).toEqual({
      errors: [{ code: 'INVALID_PARAMETER', message: 'name must be a non-empty string', parameter: 'name' }],
    });
    const unknown = await admin(emu, 'POST', '/_emulator/custom_audiences', { account_id: 'nope', name: 'x' });
    expect(unknown.status).toBe(404);
    expect((await admin(emu, 'GET', '/_emulator/nothing')).status).toBe(404);
  });
});

describe('the request log', () => {
  it('writes one line per API request to the logger, none for admin requests', async () => {
    await signedRaw(emu, { method: 'GET', path: '/12/accounts?count=1' });
    await admin(emu, 'GET', '/_emulator/state');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^GET \/12\/accounts 200 \d+ms$/);
  });
});

describe('the handle and the banner', () => {
  it('listens on 127.0.0.1 by default and names the seeded ids and credentials', () => {
    expect(emu.host).toBe('127.0.0.1');
    expect(emu.url).toBe(`http://127.0.0.1:${emu.port}`);
    expect(emu.ids).toEqual({ accountId: 'emu-account', catalogId: 'emu-catalog', customAudienceId: 'emu-audience', doNotReachListId: 'emu-dnr' });
    expect(emu.credentials).toEqual(EMULATOR_DEFAULTS.credentials);
    expect(EMULATOR_DEFAULTS.credentials).toEqual({
      consumerKey: 'emulator-consumer-key',
      consumerSecret: 'emulator-consumer-secret',
      accessToken: 'emulator-access-token',
      accessTokenSecret: 'emulator-access-token-secret',
    });
  });

  it('formats the start banner', () => {
    expect(formatEmulatorBanner({ url: 'http://127.0.0.1:8080', ids: emu.ids, credentials: emu.credentials, rateLimits: 'default' })).toBe(
      [
        'X Ads API emulator listening on http://127.0.0.1:8080',
        '',
        '  account              emu-account',
        '  product catalog      emu-catalog',
        '  custom audience      emu-audience',
        '  do-not-reach list    emu-dnr',
        '  consumer key         emulator-consumer-key',
        '  consumer secret      emulator-consumer-secret',
        '  access token         emulator-access-token',
        '  access token secret  emulator-access-token-secret',
        '  rate limits          default',
        '',
        'Point adsync at it with:',
        '  export ADSYNC_ADS_URL=http://127.0.0.1:8080 ADSYNC_API_URL=http://127.0.0.1:8080',
        '  export ADSYNC_CONSUMER_KEY=emulator-consumer-key ADSYNC_CONSUMER_SECRET=emulator-consumer-secret',
        '  export ADSYNC_ACCESS_TOKEN=emulator-access-token ADSYNC_ACCESS_TOKEN_SECRET=emulator-access-token-secret',
        '',
        'Admin endpoints: http://127.0.0.1:8080/_emulator/state, /_emulator/faults, /_emulator/reset',
      ].join('\n'),
    );
    expect(emu.banner()).toContain(`listening on ${emu.url}`);
  });

  it('seeds the ids and credentials it is given', async () => {
    const custom = await startEmulator({
      accountId: 'acc-1',
      catalogId: 'cat-1',
      customAudienceId: 'aud-1',
      doNotReachListId: 'dnr-1',
      credentials: { consumerKey: 'ck', consumerSecret: 'cs', accessToken: 'at', accessTokenSecret: 'ats' },
    });
    try {
      const answer = await signedRaw(custom, { method: 'GET', path: '/12/accounts/acc-1/custom_audiences/aud-1' });
      expect(answer.status).toBe(200);
      expect(Object.keys(custom.state().catalogs)).toEqual(['cat-1']);
      expect(Object.keys(custom.state().do_not_reach_lists)).toEqual(['dnr-1']);
    } finally {
      await custom.close();
    }
  });

  it('reports a port in use as a ConfigError', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const error = await startEmulator({ port }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).message).toBe(`the emulator cannot listen: port ${port} on 127.0.0.1 is already in use`);
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });
});

describe('options', () => {
  it.each([
    [{ port: 70_000 }, 'emulator port must be a whole number from 0 to 65535, got 70000'],
    [{ rateLimits: 'sometimes' as 'off' }, 'rate limits must be off or default, got "sometimes"'],
    [{ rateLimits: { reads: { limit: 1, windowMs: 1 } } as Record<string, { limit: number; windowMs: number }> }, 'unknown rate-limit family "reads"; the families are audience_users, do_not_reach_users, total_count, write, read, oauth2_token'],
    [{ rateLimits: { read: { limit: 0, windowMs: 1000 } } }, 'the rate limit of read needs a whole limit of at least 1 and a positive windowMs'],
  ])('refuses %j with a ConfigError', async (options, message) => {
    const error = await startEmulator(options).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toBe(message);
  });
});
