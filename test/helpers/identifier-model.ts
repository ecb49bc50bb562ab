/**
 * Identifiers as the state tests' models hold them: plain objects, ordered and compared the
 * obvious way (Buffer.compare: SQLite's BLOB order), turned into and out of IdentifierLists.
 */
import { IDENTIFIER_TYPES } from '../../src/hash/types.js';
import { IdentifierList } from '../../src/state/identifier-list.js';

export interface Id {
  code: number;
  value: Buffer;
  row: number;
}

export const keyOf = (id: { code: number; value: Buffer }): string => `${id.code}:${id.value.toString('hex')}`;
export const byKey = (a: Id, b: Id): number => a.code - b.code || Buffer.compare(a.value, b.value);
export const show = (ids: readonly Id[]): string[] => ids.map((id) => `${IDENTIFIER_TYPES[id.code]}:${id.value.toString('hex')}:${id.row}`);

export function listOf(ids: readonly Id[]): IdentifierList {
  const list = new IdentifierList(4);
  for (const id of ids) list.pushBytes(id.code, id.value, id.row);
  return list;
}

export function idsOf(list: IdentifierList): Id[] {
  const out: Id[] = [];
  for (let i = 0; i < list.length; i++) out.push({ code: list.code(i), value: Buffer.from(list.bytes(i)), row: list.row(i) });
  return out;
}

export async function collect(pages: AsyncIterable<IdentifierList>): Promise<Id[]> {
  const out: Id[] = [];
  for await (const page of pages) out.push(...idsOf(page));
  return out;
}
