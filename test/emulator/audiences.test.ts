/**
 * Audience user batches through src/api/resources/audiences.ts: the 2500-operation and
 * 5,000,000-byte limits at their boundaries, counts of user records, operation_errors
 * indexes, all-or-nothing batches, membership per identifier field; do-not-reach lists; the
 * audience itself, its targeting and its permissions.
 */
import http from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AdsApiClient } from '../../src/api/client.js';
import { ApiRequestError, ApiValidationError, NotFoundError } from '../../src/api/errors.js';
import {
  deleteDoNotReachList,
  getCustomAudience,
  grantAudiencePermission,
  listAudiencePermissions,
  listTargeted,
  postAudienceUsers,
  revokeAudiencePermission,
  type AudienceTarget,
} from '../../src/api/resources/audiences.js';
import type { EmulatorHandle } from '../../src/emulator/index.js';
import { createSandboxAccount, getRecord, listPage } from './extra-resources.js';
import { admin, authorizationFor, clientFor, sha256, signedRaw, start } from './helpers.js';

let emu: EmulatorHandle;
let client: AdsApiClient;
let clock = Date.now();

beforeAll(async () => {
  emu = await start({ rateLimits: 'off', now: () => clock });
  client = clientFor(emu);
});
afterAll(() => emu.close());
beforeEach(() => {
  clock = Date.now();
  emu.reset();
});

const AUDIENCE: AudienceTarget = { kind: 'custom_audience', accountId: 'emu-account', customAudienceId: 'emu-audience' };
const DNR: AudienceTarget = { kind: 'do_not_reach', accountId: 'emu-account', doNotReachListId: 'emu-dnr' };
const USERS_PATH = '/12/accounts/emu-account/custom_audiences/emu-audience/users';
const DNR_PATH = '/12/batch/accounts/emu-account/do_not_reach_lists/emu-dnr/users';
const h = (n: number | string) => sha256(`user-${n}`);

type Json = unknown;
const body = (operations: Json): Buffer => Buffer.from(JSON.stringify(operations));
const update = (users: Json, extra: Record<string, Json> = {}) => ({ operation_type: 'Update', params: { users, ...extra } });
const remove = (users: Json) => ({ operation_type: 'Delete', params: { users } });

function members(kind: 'custom_audiences' | 'do_not_reach_lists', id: string): Record<string, string[]> {
  return emu.state()[kind][id]?.members ?? {};
}

describe('custom audience user batches', () => {
  it('counts user records, not operations: 2 operations of 4 users answer 4 and 4', async () => {
    const ops = [update([{ email: [h(1)] }, { email: [h(2)], phone_number: [h('p2')] }]), update([{ handle: [h('jack')] }, { twitter_id: [h(143567)] }])];
    const answer = await signedRaw(emu, { method: 'POST', path: USERS_PATH, contentType: 'application/json', body: body(ops) });
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({
      request: { params: { account_id: 'emu-account', custom_audience_id: 'emu-audience' } },
      data: { success_count: 4, total_count: 4 },
    });
    await expect(postAudienceUsers(client, AUDIENCE, body(ops), 4)).resolves.toEqual({ successCount: 4, totalCount: 4 });
  });

  it('keeps members per identifier field: Update adds, Delete removes, partner_user_id unhashed', async () => {
    await postAudienceUsers(client, AUDIENCE, body([update([{ email: [h(3), h(1)], partner_user_id: ['crm-2', 'crm-1'] }, { device_id: [h('idfa')] }])]), 2);
    await postAudienceUsers(client, AUDIENCE, body([remove([{ email: [h(3)], partner_user_id: ['crm-2'] }]), update([{ email: [h(2)] }])]), 2);
    expect(members('custom_audiences', 'emu-audience')).toEqual({
      email: [h(1), h(2)].sort(),
      phone_number: [],
      handle: [],
      twitter_id: [],
      device_id: [h('idfa')],
      partner_user_id: ['crm-1'],
    });
    // Deleting a value that is not a member is not an error, and adding twice keeps one.
    await expect(postAudienceUsers(client, AUDIENCE, body([remove([{ email: [h(99)] }]), update([{ email: [h(1)] }])]), 2)).resolves.toEqual({
      successCount: 2,
      totalCount: 2,
    });
    expect(emu.stateSummary().custom_audiences['emu-audience']?.members.email).toBe(2);
  });

  it('takes 2500 operations and refuses 2501 as a request-level error', async () => {
    const ops = Array.from({ length: 2501 }, (_, i) => update([{ email: [h(i)] }]));
    await expect(postAudienceUsers(client, AUDIENCE, body(ops.slice(0, 2500)), 2500)).resolves.toEqual({ successCount: 2500, totalCount: 2500 });
    emu.reset();
    const error = await postAudienceUsers(client, AUDIENCE, body(ops), 2501).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiValidationError);
    expect((error as ApiValidationError).serviceErrors).toEqual([{ code: 'INVALID_PARAMETER', message: 'a batch holds at most 2500 operations, got 2501' }]);
    expect((error as ApiValidationError).operationErrors).toEqual([]);
    expect(emu.stateSummary().custom_audiences['emu-audience']?.members.email).toBe(0);
  });

  it('takes a body of 5,000,000 bytes and answers 413 to 5,000,001', async () => {
    const head = JSON.stringify([update([{ email: [h(1)] }])]).slice(0, -1);
    const exact = (size: number) => Buffer.from(head + ' '.repeat(size - head.length - 1) + ']');
    expect(exact(5_000_000).length).toBe(5_000_000);
    await expect(postAudienceUsers(client, AUDIENCE, exact(5_000_000), 1)).resolves.toEqual({ successCount: 1, totalCount: 1 });

    emu.reset();
    const error = await postAudienceUsers(client, AUDIENCE, exact(5_000_001), 1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiRequestError);
    expect((error as ApiRequestError).status).toBe(413);
    expect((error as ApiRequestError).serviceErrors).toEqual([{ code: 'PAYLOAD_TOO_LARGE', message: 'the request body is larger than 5000000 bytes' }]);
    expect(emu.stateSummary().custom_audiences['emu-audience']?.members.email).toBe(0);
  });

  it('answers 413 to a chunked body without reading past the limit', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${emu.url}${USERS_PATH}`, {
        method: 'POST',
        agent: false,
        headers: { authorization: authorizationFor(emu, { method: 'POST', path: USERS_PATH }), 'content-type': 'application/json' },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      const chunk = Buffer.alloc(1_000_000, 0x20);
      for (let i = 0; i < 6; i++) req.write(chunk);
      req.end();
    });
    expect(status).toBe(413);
  });

  it('answers 413 on a declared length over the limit without waiting for the body', async () => {
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(`${emu.url}${USERS_PATH}`, {
        method: 'POST',
        agent: false,
        headers: {
          authorization: authorizationFor(emu, { method: 'POST', path: USERS_PATH }),
          'content-type': 'application/json',
          'content-length': '5000001',
        },
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() });
          req.destroy();
        });
      });
      req.on('error', reject);
      req.write('[');
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toEqual({
      errors: [{ code: 'PAYLOAD_TOO_LARGE', message: 'the request body is larger than 5000000 bytes' }],
      request: { params: { account_id: 'emu-account', custom_audience_id: 'emu-audience' } },
    });
  });

  it('puts item-level errors in operation_errors, indexed like the operations, and applies nothing', async () => {
    const ops = [
      update([{ email: [h(1)] }]),
      update([{ email: [h(2)] }, { email: [h(3).toUpperCase()] }]),
      remove([{ phone: [h(4)] }]),
      { operation_type: 'Upsert', params: { users: [{ email: [h(5)] }] } },
      { operation_type: 'Update' },
    ];
    const answer = await signedRaw(emu, { method: 'POST', path: USERS_PATH, contentType: 'application/json', body: body(ops) });
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({
      operation_errors: [
        null,
        [{ code: 'INVALID_PARAMETER', message: 'email must be a SHA-256 hash: 64 lowercase hexadecimal characters', parameter: 'users[1].email[0]' }],
        [
          {
            code: 'INVALID_PARAMETER',
            message: 'unknown identifier field "phone"; a user holds email, phone_number, handle, twitter_id, device_id, partner_user_id',
            parameter: 'users[0].phone',
          },
        ],
        [{ code: 'INVALID_PARAMETER', message: 'operation_type must be Update or Delete, got "Upsert"', parameter: 'operation_type' }],
        [{ code: 'MISSING_PARAMETER', message: 'params is required', parameter: 'params' }],
      ],
      request: { params: { account_id: 'emu-account', custom_audience_id: 'emu-audience' } },
    });
    const error = await postAudienceUsers(client, AUDIENCE, body(ops), 6).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiValidationError);
    expect((error as ApiValidationError).operationErrors.map((o) => o.index)).toEqual([1, 2, 3, 4]);
    expect(members('custom_audiences', 'emu-audience').email).toEqual([]);
  });

  it.each([
    ['a value that is not 64 hex characters', [{ email: [h(1).slice(1)] }], 'users[0].email[0]', 'email must be a SHA-256 hash: 64 lowercase hexadecimal characters'],
    ['a number instead of a string', [{ twitter_id: [143567] }], 'users[0].twitter_id[0]', 'twitter_id must be a SHA-256 hash: 64 lowercase hexadecimal characters'],
    ['a value not in an array', [{ email: h(1) }], 'users[0].email', 'email must be a non-empty array of strings'],
    ['an empty array', [{ email: [] }], 'users[0].email', 'email must be a non-empty array of strings'],
    ['an empty user', [{}], 'users[0]', 'a user needs at least one identifier'],
    ['the platform-named service_id', [{ service_id: [h(1)] }], 'users[0].service_id', 'unknown identifier field "service_id"; a user holds email, phone_number, handle, twitter_id, device_id, partner_user_id'],
    ['an empty partner_user_id', [{ partner_user_id: [''] }], 'users[0].partner_user_id[0]', 'partner_user_id must be a non-empty string'],
    ['users that is not an array', { email: [h(1)] }, 'users', 'users must be a non-empty array of user objects'],
  ])('refuses %s', async (_name, users, parameter, message) => {
    const error = await postAudienceUsers(client, AUDIENCE, body([update(users)]), 1).catch((e: unknown) => e);
    expect((error as ApiValidationError).operationErrors).toEqual([{ index: 0, errors: [{ code: 'INVALID_PARAMETER', message, parameter }] }]);
  });

  it('checks effective_at and expires_at', async () => {
    const iso = (ms: number) => new Date(ms).toISOString();
    const day = 86_400_000;
    const ok = await postAudienceUsers(client, AUDIENCE, body([update([{ email: [h(1)] }], { effective_at: iso(clock - day), expires_at: iso(clock + day) })]), 1);
    expect(ok.successCount).toBe(1);
    const cases: [Record<string, string>, string][] = [
      [{ expires_at: iso(clock - 1000) }, 'expires_at must be later than now'],
      [{ effective_at: iso(clock + 2 * day), expires_at: iso(clock + day) }, 'expires_at must be later than effective_at'],
      [{ expires_at: '2030-02-30T00:00:00Z' }, 'expires_at must be an ISO 8601 instant, e.g. 2030-01-31T00:00:00Z'],
      [{ effective_at: 'tomorrow' }, 'effective_at must be an ISO 8601 instant, e.g. 2030-01-31T00:00:00Z'],
    ];
    for (const [times, message] of cases) {
      const error = await postAudienceUsers(client, AUDIENCE, body([update([{ email: [h(1)] }], times)]), 1).catch((e: unknown) => e);
      const parameter = message.split(' ')[0] ?? '';
      expect((error as ApiValidationError).operationErrors).toEqual([{ index: 0, errors: [{ code: 'INVALID_PARAMETER', message, parameter }] }]);
    }
  });

  it('requires Content-Type application/json and a JSON array', async () => {
    const wrongType = await signedRaw(emu, { method: 'POST', path: USERS_PATH, contentType: 'text/plain', body: body([update([{ email: [h(1)] }])]) });
    expect(wrongType.status).toBe(400);
    expect(wrongType.json).toEqual({
      errors: [{ code: 'INVALID_PARAMETER', message: 'Content-Type must be application/json, got text/plain', parameter: 'Content-Type' }],
      request: { params: { account_id: 'emu-account', custom_audience_id: 'emu-audience' } },
    });
    const charset = await signedRaw(emu, { method: 'POST', path: USERS_PATH, contentType: 'application/json; charset=utf-8', body: body([update([{ email: [h(1)] }])]) });
    expect(charset.status).toBe(200);
    const notArray = await signedRaw(emu, { method: 'POST', path: USERS_PATH, contentType: 'application/json', body: '{"users": []}' });
    expect(notArray.json).toMatchObject({ errors: [{ code: 'INVALID_PARAMETER', message: 'the body must be a JSON array of operations' }] });
  });

  it('answers 404 TAILORED_AUDIENCE_NOT_FOUND for an unknown audience', async () => {
    const error = await postAudienceUsers(client, { ...AUDIENCE, customAudienceId: 'nope' }, body([update([{ email: [h(1)] }])]), 1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).serviceErrors).toEqual([{ code: 'TAILORED_AUDIENCE_NOT_FOUND', message: 'custom audience nope was not found in account emu-account' }]);
    const otherAccount = await postAudienceUsers(client, { ...AUDIENCE, accountId: 'nope' }, body([update([{ email: [h(1)] }])]), 1).catch((e: unknown) => e);
    expect((otherAccount as NotFoundError).serviceErrors).toEqual([{ code: 'NOT_FOUND', message: 'account nope was not found' }]);
  });

  it('works on an audience created through the admin endpoint', async () => {
    const created = await admin(emu, 'POST', '/_emulator/custom_audiences', { account_id: 'emu-account', name: 'Lapsed buyers' });
    const id = (created.json as { id: string }).id;
    expect(created.json).toEqual({ id, account_id: 'emu-account', name: 'Lapsed buyers' });
    await postAudienceUsers(client, { ...AUDIENCE, customAudienceId: id }, body([update([{ email: [h(1)] }])]), 1);
    expect(members('custom_audiences', id).email).toEqual([h(1)]);
    expect(members('custom_audiences', 'emu-audience').email).toEqual([]);
  });
});

describe('the custom audience and its targeting', () => {
  it('gets the audience, targetable from 100 members', async () => {
    expect(await getCustomAudience(client, 'emu-account', 'emu-audience')).toMatchObject({
      id: 'emu-audience',
      name: 'Emulator custom audience',
      audience_size: 0,
      targetable: false,
      reasons_not_targetable: ['TOO_SMALL'],
      deleted: false,
    });
    await postAudienceUsers(client, AUDIENCE, body([update(Array.from({ length: 100 }, (_, i) => ({ email: [h(i)] })))]), 100);
    expect(await getCustomAudience(client, 'emu-account', 'emu-audience')).toMatchObject({ audience_size: 100, targetable: true, reasons_not_targetable: [] });
  });

  it('lists the campaigns targeting it, servable line items only unless with_active=false', async () => {
    const pages = async (withActive: boolean) => {
      const out: unknown[] = [];
      for await (const page of listTargeted(client, 'emu-account', 'emu-audience', withActive)) out.push(...page);
      return out;
    };
    expect(await pages(true)).toEqual([
      { campaign_id: 'emu-campaign', campaign_name: 'Emulator campaign', line_items: [{ id: 'emu-line-item', name: 'Emulator line item', servable: true }] },
    ]);
    expect(await pages(false)).toEqual([
      {
        campaign_id: 'emu-campaign',
        campaign_name: 'Emulator campaign',
        line_items: [
          { id: 'emu-line-item', name: 'Emulator line item', servable: true },
          { id: 'emu-line-item-paused', name: 'Emulator paused line item', servable: false },
        ],
      },
    ]);
  });
});

describe('do-not-reach list user batches', () => {
  it('answers data and request as arrays, counting user records', async () => {
    const ops = [{ operation_type: 'Update', params: { users: [{ email: [h(1)], phone_number: [h('p1')] }, { email: [h(2)] }] } }];
    const answer = await signedRaw(emu, { method: 'POST', path: DNR_PATH, contentType: 'application/json', body: body(ops) });
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({
      request: [{ params: { account_id: 'emu-account', do_not_reach_list_id: 'emu-dnr' } }],
      data: [{ success_count: 2, total_count: 2 }],
    });
    expect(members('do_not_reach_lists', 'emu-dnr')).toEqual({ email: [h(1), h(2)].sort(), phone_number: [h('p1')] });
  });

  it('takes the documented params.emails variant, and Delete', async () => {
    const expires = new Date(clock + 86_400_000).toISOString();
    await expect(
      postAudienceUsers(client, DNR, body([{ operation_type: 'Update', params: { emails: [h(1), h(2), h(3)], expires_at: expires } }]), 3),
    ).resolves.toEqual({ successCount: 3, totalCount: 3 });
    await postAudienceUsers(client, DNR, body([{ operation_type: 'Delete', params: { emails: [h(2)], expires_at: expires } }]), 1);
    expect(members('do_not_reach_lists', 'emu-dnr').email).toEqual([h(1), h(3)].sort());
  });

  it('requires expires_at with the params.emails variant (ads-api.md: "params with an emails array ... and a required expires_at")', async () => {
    const ops = [
      { operation_type: 'Update', params: { emails: [h(1)] } },
      { operation_type: 'Delete', params: { emails: [h(2)] } },
      { operation_type: 'Update', params: { users: [{ email: [h(3)] }] } },
    ];
    const answer = await signedRaw(emu, { method: 'POST', path: DNR_PATH, contentType: 'application/json', body: body(ops) });
    expect(answer.status).toBe(400);
    expect(answer.text).toBe(
      JSON.stringify({
        operation_errors: [
          [{ code: 'MISSING_PARAMETER', message: 'expires_at is required with emails', parameter: 'expires_at' }],
          [{ code: 'MISSING_PARAMETER', message: 'expires_at is required with emails', parameter: 'expires_at' }],
          null,
        ],
        request: { params: { account_id: 'emu-account', do_not_reach_list_id: 'emu-dnr' } },
      }),
    );
    expect(members('do_not_reach_lists', 'emu-dnr').email).toEqual([]);
  });

  it('takes expires_at in UTC only (ads-api.md: "expires_at (ISO 8601 UTC, ...)"); a custom audience takes any offset', async () => {
    const ops = (expiresAt: string) => [{ operation_type: 'Update', params: { users: [{ email: [h(1)] }], expires_at: expiresAt } }];
    const offset = await signedRaw(emu, { method: 'POST', path: DNR_PATH, contentType: 'application/json', body: body(ops('2030-01-31T00:00:00+02:00')) });
    expect(offset.status).toBe(400);
    expect(offset.text).toBe(
      JSON.stringify({
        operation_errors: [[{ code: 'INVALID_PARAMETER', message: 'expires_at must be in UTC, e.g. 2030-01-31T00:00:00Z', parameter: 'expires_at' }]],
        request: { params: { account_id: 'emu-account', do_not_reach_list_id: 'emu-dnr' } },
      }),
    );
    expect(members('do_not_reach_lists', 'emu-dnr').email).toEqual([]);
    for (const utc of ['2030-01-31T00:00:00Z', '2030-01-31T00:00:00.250Z', '2030-01-31T00:00:00+00:00']) {
      await expect(postAudienceUsers(client, DNR, body(ops(utc)), 1)).resolves.toEqual({ successCount: 1, totalCount: 1 });
    }
    await expect(postAudienceUsers(client, AUDIENCE, body(ops('2030-01-31T00:00:00+02:00')), 1)).resolves.toEqual({ successCount: 1, totalCount: 1 });
  });

  it('refuses fields a do-not-reach list does not take, and a past expires_at', async () => {
    const ops = [
      { operation_type: 'Update', params: { users: [{ handle: [h(1)] }] } },
      { operation_type: 'Update', params: { users: [{ email: [h(1)] }], expires_at: new Date(clock - 1).toISOString() } },
      { operation_type: 'Update', params: { users: [{ email: [h(1)] }], effective_at: new Date(clock).toISOString() } },
      { operation_type: 'Update', params: {} },
    ];
    const error = await postAudienceUsers(client, DNR, body(ops), 4).catch((e: unknown) => e);
    expect((error as ApiValidationError).operationErrors).toEqual([
      { index: 0, errors: [{ code: 'INVALID_PARAMETER', message: 'unknown identifier field "handle"; a user holds email, phone_number', parameter: 'users[0].handle' }] },
      { index: 1, errors: [{ code: 'INVALID_PARAMETER', message: 'expires_at must be later than now', parameter: 'expires_at' }] },
      { index: 2, errors: [{ code: 'INVALID_PARAMETER', message: 'unknown parameter "effective_at"; params takes users, expires_at, emails', parameter: 'effective_at' }] },
      { index: 3, errors: [{ code: 'MISSING_PARAMETER', message: 'users (or emails) is required', parameter: 'users' }] },
    ]);
  });

  it('soft-deletes the list: deleted true, then 404 NOT_FOUND, visible with with_deleted', async () => {
    expect(await deleteDoNotReachList(client, 'emu-account', 'emu-dnr')).toMatchObject({ id: 'emu-dnr', deleted: true });
    const error = await postAudienceUsers(client, DNR, body([update([{ email: [h(1)] }])]), 1).catch((e: unknown) => e);
    expect((error as NotFoundError).serviceErrors).toEqual([{ code: 'NOT_FOUND', message: 'do-not-reach list emu-dnr was not found in account emu-account' }]);
    expect((await signedRaw(emu, { method: 'GET', path: '/12/accounts/emu-account/do_not_reach_lists/emu-dnr' })).status).toBe(404);
    expect(await getRecord(client, '/12/accounts/emu-account/do_not_reach_lists/emu-dnr', { with_deleted: true })).toMatchObject({
      id: 'emu-dnr',
      deleted: true,
      list_size: 0,
    });
    await expect(deleteDoNotReachList(client, 'emu-account', 'emu-dnr')).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('tailored audience permissions (version 5)', () => {
  async function otherAccount(): Promise<string> {
    return (await createSandboxAccount(client)).id;
  }
  async function listAll(query: Record<string, string | number | boolean> = {}): Promise<{ id: string; deleted?: boolean }[]> {
    return (await listPage(client, '/5/accounts/emu-account/tailored_audiences/emu-audience/permissions', query)).data;
  }

  it('grants, lists, filters and revokes', async () => {
    const a = await otherAccount();
    const b = await otherAccount();
    const pa = await grantAudiencePermission(client, 'emu-account', 'emu-audience', a, 'READ_ONLY');
    expect(pa).toMatchObject({ tailored_audience_id: 'emu-audience', granted_account_id: a, permission_level: 'READ_ONLY', deleted: false });
    const pb = await grantAudiencePermission(client, 'emu-account', 'emu-audience', b, 'READ_WRITE');

    const listed: string[] = [];
    for await (const page of listAudiencePermissions(client, 'emu-account', 'emu-audience')) listed.push(...page.map((p) => p.id));
    expect(listed).toEqual([pa.id, pb.id]);
    expect((await listAll({ granted_account_ids: b })).map((p) => p.id)).toEqual([pb.id]);
    expect((await listAll({ tailored_audience_permission_ids: pa.id })).map((p) => p.id)).toEqual([pa.id]);
    expect((await listAll({ count: 1 })).map((p) => p.id)).toEqual([pa.id]);
    expect((await listPage(client, '/5/accounts/emu-account/tailored_audiences/emu-audience/permissions', { with_total_count: true })).total_count).toBe(2);

    const revoked = await revokeAudiencePermission(client, 'emu-account', 'emu-audience', pa.id);
    expect(revoked).toMatchObject({ id: pa.id, deleted: true });
    expect((await listAll()).map((p) => p.id)).toEqual([pb.id]);
    expect((await listAll({ with_deleted: true })).map((p) => [p.id, p.deleted])).toEqual([[pa.id, true], [pb.id, false]]);
    await expect(revokeAudiencePermission(client, 'emu-account', 'emu-audience', pa.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('enforces the parameters and the sharing rules', async () => {
    const a = await otherAccount();
    const post = (query: string) => signedRaw(emu, { method: 'POST', path: `/5/accounts/emu-account/tailored_audiences/emu-audience/permissions${query}` });
    const errorOf = async (query: string) => ((await post(query)).json as { errors: unknown[] }).errors;
    expect(await errorOf(`?granted_account_id=${a}`)).toEqual([{ code: 'MISSING_PARAMETER', message: 'permission_level is required', parameter: 'permission_level' }]);
    expect(await errorOf(`?granted_account_id=${a}&permission_level=ADMIN`)).toEqual([
      { code: 'INVALID_PARAMETER', message: 'permission_level must be one of READ_ONLY, READ_WRITE, got "ADMIN"', parameter: 'permission_level' },
    ]);
    expect(await errorOf('?permission_level=READ_ONLY')).toEqual([{ code: 'MISSING_PARAMETER', message: 'granted_account_id is required', parameter: 'granted_account_id' }]);
    expect(await errorOf('?granted_account_id=emu-account&permission_level=READ_ONLY')).toEqual([
      { code: 'INVALID_PARAMETER', message: 'an audience cannot be shared with the account that owns it', parameter: 'granted_account_id' },
    ]);
    expect(await errorOf('?granted_account_id=outsider&permission_level=READ_ONLY')).toEqual([
      {
        code: 'INVALID_PARAMETER',
        message: 'account outsider is not in the business of account emu-account; sharing outside the business needs the account feature SHARE_AUDIENCE_OUTSIDE_BUSINESS',
        parameter: 'granted_account_id',
      },
    ]);
    expect((await post(`?granted_account_id=${a}&permission_level=READ_ONLY`)).status).toBe(200);
    expect((await post(`?granted_account_id=${a}&permission_level=READ_WRITE`)).status).toBe(400);
    for (const [count, status] of [['1000', 200], ['1001', 400], ['0', 400]] as const) {
      const answer = await signedRaw(emu, { method: 'GET', path: `/5/accounts/emu-account/tailored_audiences/emu-audience/permissions?count=${count}` });
      expect(answer.status).toBe(status);
    }
    const unknown = await signedRaw(emu, { method: 'GET', path: '/5/accounts/emu-account/tailored_audiences/nope/permissions' });
    expect(unknown.json).toMatchObject({ errors: [{ code: 'TAILORED_AUDIENCE_NOT_FOUND' }] });
  });
});
