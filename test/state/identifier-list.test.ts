/**
 * The JSON an IdentifierList writes into request bodies is exactly what JSON.stringify gives,
 * for hashes and for partner ids of every kind (the plain ones are copied byte for byte).
 */
import { describe, expect, it } from 'vitest';
import { FIELD_CODES, IdentifierList, PARTNER_CODE } from '../../src/state/identifier-list.js';

const PARTNER_IDS = ['crm-00000001', '', 'a', ' padded ', 'say "hi"', 'back\\slash', 'tab\there', 'nl\n', 'del\u007f', 'café', '顧客-42', '🙂', '~!@#$%^&*()_+{}|:<>?'];

describe('IdentifierList JSON', () => {
  it('writes each value as JSON.stringify does, and says how long it is', () => {
    const list = new IdentifierList(2);
    for (const id of PARTNER_IDS) list.pushText(PARTNER_CODE, id, 1);
    list.pushText(FIELD_CODES.email, 'ab'.repeat(32), 2);
    const expected = [...PARTNER_IDS, 'ab'.repeat(32)];
    const target = Buffer.alloc(128);
    for (let i = 0; i < list.length; i++) {
      const json = JSON.stringify(expected[i]);
      expect(list.jsonLength(i)).toBe(Buffer.byteLength(json));
      target.fill(0);
      const n = list.writeJson(i, target, 3);
      expect(n).toBe(Buffer.byteLength(json));
      expect(target.subarray(3, 3 + n).toString('utf8')).toBe(json);
      expect(target[3 + n]).toBe(0);
    }
  });
});
