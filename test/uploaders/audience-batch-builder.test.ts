import { describe, expect, it } from 'vitest';
import { AudienceBatchBuilder, userJson, type AudienceUser } from '../../src/uploaders/audience-batch-builder.js';

const h = (n: number): string => n.toString(16).padStart(64, '0');
const user = (row: number, ...ids: [AudienceUser['identifiers'][number]['field'], string][]): AudienceUser => ({
  row,
  identifiers: ids.map(([field, value]) => ({ field, value })),
});

describe('audience batch builder', () => {
  it('writes the exact request body: operations of users with identifier arrays', () => {
    const b = new AudienceBatchBuilder({ operationType: 'Update', usersPerOperation: 2 });
    expect(b.tryAdd(user(1, ['phone_number', h(2)], ['email', h(1)]))).toBe(true);
    expect(b.tryAdd(user(2, ['partner_user_id', 'crm "7"\n']))).toBe(true);
    expect(b.tryAdd(user(3, ['handle', h(3)]))).toBe(true);
    const built = b.build();
    expect(built.body.toString()).toBe(
      `[{"operation_type":"Update","params":{"users":[{"email":["${h(1)}"],"phone_number":["${h(2)}"]},{"partner_user_id":["crm \\"7\\"\\n"]}]}},` +
        `{"operation_type":"Update","params":{"users":[{"handle":["${h(3)}"]}]}}]`,
    );
    expect(JSON.parse(built.body.toString())).toHaveLength(2);
    expect(built.userCount).toBe(3);
    expect(built.operations.map((op) => op.map((u) => u.row))).toEqual([[1, 2], [3]]);
    expect(b.isEmpty).toBe(true);
  });

  it('writes extra params (expires_at of a do-not-reach list) into every operation', () => {
    const b = new AudienceBatchBuilder({ operationType: 'Delete', extraParams: { expires_at: '2027-12-01T00:00:00Z' } });
    b.tryAdd(user(0, ['email', h(1)]));
    expect(b.build().body.toString()).toBe(`[{"operation_type":"Delete","params":{"users":[{"email":["${h(1)}"]}],"expires_at":"2027-12-01T00:00:00Z"}}]`);
  });

  it('fills a request to exactly the byte limit and not one byte more', () => {
    const one = userJson(user(1, ['email', h(1)]));
    const envelope = '[{"operation_type":"Update","params":{"users":[]}}]'.length;
    const limit = envelope + one.length * 3 + 2; // three users and their two commas
    const b = new AudienceBatchBuilder({ operationType: 'Update', maxBytes: limit });
    expect(b.tryAdd(user(1, ['email', h(1)]))).toBe(true);
    expect(b.tryAdd(user(2, ['email', h(2)]))).toBe(true);
    expect(b.tryAdd(user(3, ['email', h(3)]))).toBe(true);
    expect(b.byteLength).toBe(limit);
    expect(b.tryAdd(user(4, ['email', h(4)]))).toBe(false);
    const built = b.build();
    expect(built.body.length).toBe(limit);
    expect(built.userCount).toBe(3);
    const smaller = new AudienceBatchBuilder({ operationType: 'Update', maxBytes: limit - 1 });
    for (let i = 1; i <= 2; i++) expect(smaller.tryAdd(user(i, ['email', h(i)]))).toBe(true);
    expect(smaller.tryAdd(user(3, ['email', h(3)]))).toBe(false);
  });

  it('counts multi-byte characters in bytes, not characters', () => {
    const b = new AudienceBatchBuilder({ operationType: 'Update' });
    b.tryAdd(user(1, ['partner_user_id', 'Zoë-😀']));
    const built = b.build();
    expect(built.body.length).toBe(Buffer.byteLength(built.body.toString()));
    expect(JSON.parse(built.body.toString())).toEqual([{ operation_type: 'Update', params: { users: [{ partner_user_id: ['Zoë-😀'] }] } }]);
  });

  it('stops at the operation limit', () => {
    const b = new AudienceBatchBuilder({ operationType: 'Update', usersPerOperation: 1, maxOperations: 3 });
    for (let i = 0; i < 3; i++) expect(b.tryAdd(user(i, ['email', h(i)]))).toBe(true);
    expect(b.tryAdd(user(9, ['email', h(9)]))).toBe(false);
    expect(b.build().operations).toHaveLength(3);
  });

  it('puts ~30,000 email+phone users in one 5,000,000-byte request', () => {
    const b = new AudienceBatchBuilder({ operationType: 'Update' });
    let n = 0;
    while (b.tryAdd(user(n, ['email', h(n)], ['phone_number', h(n + 1e9)]))) n++;
    const built = b.build();
    expect(built.body.length).toBeLessThanOrEqual(5_000_000);
    expect(built.body.length).toBeGreaterThan(4_999_000);
    expect(n).toBeGreaterThan(29_000);
    expect(built.operations.length).toBeLessThanOrEqual(2500);
    expect(JSON.parse(built.body.toString())).toHaveLength(built.operations.length);
  });
});
