/**
 * Accounts through src/api/resources/accounts.ts: list and get, count and cursor paging,
 * with_total_count (not with a cursor), soft delete and with_deleted.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AdsApiClient } from '../../src/api/client.js';
import { NotFoundError } from '../../src/api/errors.js';
import { getAccount, listAccounts } from '../../src/api/resources/accounts.js';
import type { EmulatorHandle } from '../../src/emulator/index.js';
import { createSandboxAccount, deleteSandboxAccount, getRecord, listPage } from './extra-resources.js';
import { clientFor, signedRaw, start } from './helpers.js';

let emu: EmulatorHandle;
let client: AdsApiClient;

beforeAll(async () => {
  emu = await start({ rateLimits: 'off' });
  client = clientFor(emu);
});
afterAll(() => emu.close());
beforeEach(() => emu.reset());

type ListBody = { data: { id: string; deleted: boolean }[]; next_cursor: string | null; total_count?: number; request: unknown };

async function createSandboxAccounts(n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await createSandboxAccount(client)).id);
  return ids;
}

describe('accounts', () => {
  it('gets the seeded account with every documented field', async () => {
    const account = await getAccount(client, 'emu-account');
    expect(Object.keys(account).sort()).toEqual(
      ['approval_status', 'business_id', 'business_name', 'created_at', 'deleted', 'id', 'industry_type', 'name', 'timezone', 'timezone_switch_at', 'updated_at'].sort(),
    );
    expect(account).toMatchObject({ id: 'emu-account', name: 'Emulator account', approval_status: 'ACCEPTED', deleted: false });
  });

  it('pages with count and cursor, through the client', async () => {
    const ids = await createSandboxAccounts(4);
    const first = await listPage(client, '/12/accounts', { count: 2 });
    expect(first.data.map((a) => a.id)).toEqual(['emu-account', ids[0]]);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await listPage(client, '/12/accounts', { count: 2, cursor: first.next_cursor ?? '' });
    expect(second.data.map((a) => a.id)).toEqual([ids[1], ids[2]]);
    const third = await listPage(client, '/12/accounts', { count: 2, cursor: second.next_cursor ?? '' });
    expect(third.data.map((a) => a.id)).toEqual([ids[3]]);
    expect(third.next_cursor).toBeNull();

    const viaClient: string[] = [];
    for await (const page of listAccounts(client)) viaClient.push(...page.map((a) => a.id));
    expect(viaClient).toEqual(['emu-account', ...ids]);
  });

  it('bounds count to 1..1000', async () => {
    for (const [count, status] of [['1', 200], ['1000', 200], ['0', 400], ['1001', 400]] as const) {
      expect((await signedRaw(emu, { method: 'GET', path: `/12/accounts?count=${count}` })).status).toBe(status);
    }
  });

  it('adds total_count when asked, and refuses it with a cursor', async () => {
    await createSandboxAccounts(2);
    const counted = await listPage(client, '/12/accounts', { count: 1, with_total_count: true });
    expect(counted.total_count).toBe(3);
    expect(counted.data).toHaveLength(1);
    const refused = await signedRaw(emu, { method: 'GET', path: `/12/accounts?with_total_count=true&cursor=${counted.next_cursor ?? ''}` });
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({
      errors: [{ code: 'INVALID_PARAMETER', message: 'with_total_count cannot be combined with cursor', parameter: 'with_total_count' }],
    });
    const plain = (await signedRaw(emu, { method: 'GET', path: '/12/accounts' })).json as ListBody;
    expect(plain).not.toHaveProperty('total_count');
  });

  it('soft-deletes: hidden by default, shown with with_deleted', async () => {
    const [id = ''] = await createSandboxAccounts(1);
    expect(await deleteSandboxAccount(client, id)).toMatchObject({ id, deleted: true });
    await expect(getAccount(client, id)).rejects.toBeInstanceOf(NotFoundError);
    expect(await getRecord(client, `/12/accounts/${id}`, { with_deleted: true })).toMatchObject({ id, deleted: true });
    const withDeleted = await signedRaw(emu, { method: 'GET', path: `/12/accounts/${id}?with_deleted=true` });
    expect(withDeleted.json).toMatchObject({ request: { params: { account_id: id, with_deleted: 'true' } }, data: { id, deleted: true } });
    const list = (await signedRaw(emu, { method: 'GET', path: '/12/accounts' })).json as ListBody;
    expect(list.data.map((a) => a.id)).toEqual(['emu-account']);
    const listAll = await listPage(client, '/12/accounts', { with_deleted: true });
    expect(listAll.data.map((a) => [a.id, a.deleted])).toEqual([['emu-account', false], [id, true]]);
    await expect(deleteSandboxAccount(client, id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('filters by account_ids and q, and refuses a bad boolean', async () => {
    const [a = '', b = ''] = await createSandboxAccounts(2);
    const byIds = (await signedRaw(emu, { method: 'GET', path: `/12/accounts?account_ids=${a},${b}` })).json as ListBody;
    expect(byIds.data.map((x) => x.id)).toEqual([a, b]);
    const byName = (await signedRaw(emu, { method: 'GET', path: '/12/accounts?q=emulator' })).json as ListBody;
    expect(byName.data.map((x) => x.id)).toEqual(['emu-account']);
    const bad = await signedRaw(emu, { method: 'GET', path: '/12/accounts?with_deleted=yes' });
    expect(bad.json).toMatchObject({ errors: [{ code: 'INVALID_PARAMETER', message: 'with_deleted must be true or false, got "yes"', parameter: 'with_deleted' }] });
  });

  it('answers 404 NOT_FOUND for an unknown account and an unknown route', async () => {
    const unknown = await signedRaw(emu, { method: 'GET', path: '/12/accounts/nope' });
    expect(unknown.json).toEqual({ errors: [{ code: 'NOT_FOUND', message: 'account nope was not found' }], request: { params: { account_id: 'nope' } } });
    const route = await signedRaw(emu, { method: 'GET', path: '/12/campaigns' });
    expect(route.status).toBe(404);
    expect(route.json).toEqual({ errors: [{ code: 'NOT_FOUND', message: 'no route matches GET /12/campaigns' }], request: { params: {} } });
  });
});
