import { describe, expect, it } from 'vitest';
import type { IdentifierType } from '../../src/hash/types.js';
import { FIELD_CODES, IdentifierList } from '../../src/state/identifier-list.js';
import { AudienceBatchBuilder, operationRange, userJson, userRange } from '../../src/uploaders/audience-batch-builder.js';

const h = (n: number): string => n.toString(16).padStart(64, '0');

/** A list holding one user's identifiers (in field order), tagged with its row. */
function user(row: number, ...ids: [IdentifierType, string][]): IdentifierList {
  const list = new IdentifierList();
  for (const [field, value] of ids) list.pushText(FIELD_CODES[field], value, row);
  return list;
}

function add(b: AudienceBatchBuilder, u: IdentifierList): boolean {
  return b.tryAddUser(u, 0, u.length);
}

describe('audience batch builder', () => {
  it('writes the exact request body: operations of users with identifier arrays', () => {
    const b = new AudienceBatchBuilder({ operationType: 'Update', usersPerOperation: 2 });
    expect(add(b, user(1, ['email', h(1)], ['phone_number', h(2)]))).toBe(true);
    expect(add(b, user(2, ['partner_user_id', 'crm "7"\n']))).toBe(true);
    expect(add(b, user(3, ['handle', h(3)]))).toBe(true);
    const built = b.build();
    expect(built.body.toString()).toBe(
      `[{"operation_type":"Update","params":{"users":[{"email":["${h(1)}"],"phone_number":["${h(2)}"]},{"partner_user_id":["crm \\"7\\"\\n"]}]}},` +
        `{"operation_type":"Update","params":{"users":[{"handle":["${h(3)}"]}]}}]`,
    );
    expect(JSON.parse(built.body.toString())).toHaveLength(2);
    expect(built.userCount).toBe(3);
    expect(built.userEnds).toEqual([2, 3, 4]);
    expect(built.operationEnds).toEqual([2, 3]);
    expect(operationRange(built, 1)).toEqual([2, 3]);
    expect(userRange(built, 0)).toEqual([0, 2]);
    expect([0, 1, 2, 3].map((i) => [built.ids.field(i), built.ids.row(i)])).toEqual([
      ['email', 1],
      ['phone_number', 1],
      ['partner_user_id', 2],
      ['handle', 3],
    ]);
    expect(b.isEmpty).toBe(true);
  });

  it('groups values of one field in one array', () => {
    expect(userJson(user(1, ['email', h(1)], ['email', h(2)], ['handle', h(3)]))).toBe(`{"email":["${h(1)}","${h(2)}"],"handle":["${h(3)}"]}`);
  });

  it('writes extra params (expires_at of a do-not-reach list) into every operation', () => {
    const b = new AudienceBatchBuilder({ operationType: 'Delete', extraParams: { expires_at: '2027-12-01T00:00:00Z' } });
    add(b, user(0, ['email', h(1)]));
    expect(b.build().body.toString()).toBe(`[{"operation_type":"Delete","params":{"users":[{"email":["${h(1)}"]}],"expires_at":"2027-12-01T00:00:00Z"}}]`);
  });

  it('fills a request to exactly the byte limit and not one byte more', () => {
    const one = userJson(user(1, ['email', h(1)]));
    const envelope = '[{"operation_type":"Update","params":{"users":[]}}]'.length;
    const limit = envelope + one.length * 3 + 2; // three users and their two commas
    const b = new AudienceBatchBuilder({ operationType: 'Update', maxBytes: limit });
    for (let i = 1; i <= 3; i++) expect(add(b, user(i, ['email', h(i)]))).toBe(true);
    expect(b.byteLength).toBe(limit);
    expect(add(b, user(4, ['email', h(4)]))).toBe(false);
    const built = b.build();
    expect(built.body.length).toBe(limit);
    expect(built.userCount).toBe(3);
    const smaller = new AudienceBatchBuilder({ operationType: 'Update', maxBytes: limit - 1 });
    for (let i = 1; i <= 2; i++) expect(add(smaller, user(i, ['email', h(i)]))).toBe(true);
    expect(add(smaller, user(3, ['email', h(3)]))).toBe(false);
  });

  it('counts multi-byte characters in bytes, not characters', () => {
    const b = new AudienceBatchBuilder({ operationType: 'Update' });
    add(b, user(1, ['partner_user_id', 'Zoë-😀']));
    const built = b.build();
    expect(built.body.length).toBe(Buffer.byteLength(built.body.toString()));
    expect(JSON.parse(built.body.toString())).toEqual([{ operation_type: 'Update', params: { users: [{ partner_user_id: ['Zoë-😀'] }] } }]);
  });

  it('stops at the operation limit', () => {
    const b = new AudienceBatchBuilder({ operationType: 'Update', usersPerOperation: 1, maxOperations: 3 });
    for (let i = 0; i < 3; i++) expect(add(b, user(i, ['email', h(i)]))).toBe(true);
    expect(add(b, user(9, ['email', h(9)]))).toBe(false);
    expect(b.build().operationEnds).toEqual([1, 2, 3]);
  });

  it('puts ~30,000 email+phone users in one 5,000,000-byte request', () => {
    const b = new AudienceBatchBuilder({ operationType: 'Update' });
    let n = 0;
    while (add(b, user(n, ['email', h(n)], ['phone_number', h(n + 1e9)]))) n++;
    const built = b.build();
    expect(built.body.length).toBeLessThanOrEqual(5_000_000);
    expect(built.body.length).toBeGreaterThan(4_999_000);
    expect(n).toBeGreaterThan(29_000);
    expect(built.operationEnds.length).toBeLessThanOrEqual(2500);
    expect(JSON.parse(built.body.toString())).toHaveLength(built.operationEnds.length);
  });
});
