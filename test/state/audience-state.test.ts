import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { IdentifierType } from '../../src/hash/types.js';
import { FIELD_CODES, IdentifierList } from '../../src/state/identifier-list.js';
import { openStateStore, type AudiencePlanOptions, type AudienceScan, type StateStore } from '../../src/state/index.js';

type Id = { field: IdentifierType; value: string; row?: number };

function listOf(ids: readonly Id[]): IdentifierList {
  const list = new IdentifierList();
  for (const id of ids) list.pushText(FIELD_CODES[id.field], id.value, id.row ?? 0);
  return list;
}

function idsOf(list: IdentifierList, withRow: boolean): Id[] {
  const out: Id[] = [];
  for (let i = 0; i < list.length; i++) out.push(withRow ? { field: list.field(i), value: list.text(i), row: list.row(i) } : { field: list.field(i), value: list.text(i) });
  return out;
}

const h = (n: number): string => n.toString(16).padStart(64, '0');
const DAY = 86_400_000;
let store: StateStore | undefined;

function open(): StateStore {
  store = openStateStore(join(mkdtempSync(join(tmpdir(), 'adsync-state-')), 'state.sqlite'));
  return store;
}

afterEach(async () => {
  await store?.close();
  store = undefined;
});

async function collect(gen: AsyncGenerator<IdentifierList>, withRow = true): Promise<Id[]> {
  const out: Id[] = [];
  for await (const batch of gen) out.push(...idsOf(batch, withRow));
  return out;
}

const mirror = (now: number, full = false): AudiencePlanOptions => ({ mode: 'mirror', refreshBefore: now - 330 * DAY, full });

async function scanOf(s: StateStore, key: string, ids: [IdentifierType, string, number][]): Promise<AudienceScan> {
  const scan = await s.audience(key).scan();
  await scan.add(listOf(ids.map(([field, value, row]) => ({ field, value, row }))));
  return scan;
}

const commitOf = (ids: Id[]) => listOf(ids);

describe('audience state', () => {
  it('plans a first run as all adds, deduplicated, in (field, value) order, keeping the first row', async () => {
    const s = open();
    const now = Date.now();
    const scan = await scanOf(s, 'custom_audience:a:1', [
      ['email', h(2), 1],
      ['phone_number', h(3), 1],
      ['email', h(1), 2],
      ['email', h(2), 3],
      ['partner_user_id', 'crm-7 é', 4],
    ]);
    expect(await scan.size()).toBe(4);
    expect(await scan.counts(mirror(now))).toEqual({ adds: 4, removes: 0, unchanged: 0, members: 0, distinct: 4, membersByField: {}, removesByField: {} });
    expect(await collect(scan.adds(mirror(now), 2))).toEqual([
      { field: 'email', value: h(1), row: 2 },
      { field: 'email', value: h(2), row: 1 },
      { field: 'phone_number', value: h(3), row: 1 },
      { field: 'partner_user_id', value: 'crm-7 é', row: 4 },
    ]);
    await scan.close();
  });

  it('diffs at the identifier level: an email shared by two rows stays when one row goes', async () => {
    const s = open();
    const aud = s.audience('custom_audience:a:1');
    const now = Date.now();
    await aud.commit({ added: commitOf([{ field: 'email', value: h(1) }, { field: 'email', value: h(2) }, { field: 'handle', value: h(9) }]), sentAt: now, mode: 'mirror' });
    // Next export: email 1 still on another row, email 2 and the handle gone, email 3 new.
    const scan = await scanOf(s, 'custom_audience:a:1', [
      ['email', h(1), 5],
      ['email', h(3), 6],
    ]);
    expect(await scan.counts(mirror(now))).toEqual({
      adds: 1,
      removes: 2,
      unchanged: 1,
      members: 3,
      distinct: 2,
      membersByField: { email: 2, handle: 1 },
      removesByField: { email: 1, handle: 1 },
    });
    expect(await collect(scan.adds(mirror(now), 10))).toEqual([{ field: 'email', value: h(3), row: 6 }]);
    expect(await collect(scan.removes(mirror(now), 1), false)).toEqual([
      { field: 'email', value: h(2) },
      { field: 'handle', value: h(9) },
    ]);
  });

  it('re-sends members last sent before the refresh time, and everything with full', async () => {
    const s = open();
    const aud = s.audience('k');
    const now = Date.now();
    await aud.commit({ added: commitOf([{ field: 'email', value: h(1) }]), sentAt: now - 331 * DAY, mode: 'mirror' });
    await aud.commit({ added: commitOf([{ field: 'email', value: h(2) }]), sentAt: now - 10 * DAY, mode: 'mirror' });
    const scan = await scanOf(s, 'k', [
      ['email', h(1), 1],
      ['email', h(2), 2],
    ]);
    expect((await collect(scan.adds(mirror(now), 10))).map((i) => i.value)).toEqual([h(1)]);
    expect((await collect(scan.adds(mirror(now, true), 10))).map((i) => i.value)).toEqual([h(1), h(2)]);
  });

  it('add mode never removes; remove mode removes the export, once, even identifiers it never added', async () => {
    const s = open();
    const aud = s.audience('k');
    const now = Date.now();
    await aud.commit({ added: commitOf([{ field: 'email', value: h(1) }, { field: 'email', value: h(2) }]), sentAt: now, mode: 'mirror' });
    const scan = await scanOf(s, 'k', [
      ['email', h(2), 1],
      ['email', h(5), 2],
    ]);
    const add: AudiencePlanOptions = { mode: 'add', refreshBefore: 0, full: false };
    expect(await scan.counts(add)).toEqual({ adds: 1, removes: 0, unchanged: 1, members: 2, distinct: 2, membersByField: { email: 2 }, removesByField: {} });
    const remove: AudiencePlanOptions = { mode: 'remove', refreshBefore: 0, full: false };
    expect(await scan.counts(remove)).toEqual({ adds: 0, removes: 2, unchanged: 0, members: 2, distinct: 2, membersByField: { email: 2 }, removesByField: { email: 2 } });
    const removed = await collect(scan.removes(remove, 10), false);
    expect(removed).toEqual([{ field: 'email', value: h(2) }, { field: 'email', value: h(5) }]);
    await aud.commit({ removed: listOf(removed), sentAt: now, mode: 'remove' });
    expect(await aud.memberCount()).toBe(1);
    expect(await scan.counts(remove)).toEqual({ adds: 0, removes: 0, unchanged: 2, members: 1, distinct: 2, membersByField: { email: 1 }, removesByField: {} });
    expect(await scan.counts({ ...remove, full: true })).toMatchObject({ removes: 2 });
  });

  it('keeps reading the plan correctly while chunks are committed between pages', async () => {
    const s = open();
    const aud = s.audience('k');
    const now = Date.now();
    const ids: [IdentifierType, string, number][] = [];
    for (let i = 0; i < 1000; i++) ids.push(['email', h(i), i + 1]);
    const scan = await scanOf(s, 'k', ids);
    const seen: string[] = [];
    for await (const page of scan.adds(mirror(now), 64)) {
      seen.push(...idsOf(page, false).map((p) => p.value));
      await aud.commit({ added: page, sentAt: now, mode: 'mirror' });
    }
    expect(seen).toEqual(ids.map(([, v]) => v).sort());
    expect(await aud.memberCount()).toBe(1000);
    const second = await scanOf(s, 'k', ids.slice(0, 500));
    const removed: string[] = [];
    for await (const page of second.removes(mirror(now), 64)) {
      removed.push(...idsOf(page, false).map((p) => p.value));
      await aud.commit({ removed: page, sentAt: now, mode: 'mirror' });
    }
    expect(removed).toEqual(ids.slice(500).map(([, v]) => v));
    expect(await aud.memberCounts()).toEqual({ email: 500 });
  });

  it('keeps audiences apart', async () => {
    const s = open();
    const now = Date.now();
    await s.audience('one').commit({ added: commitOf([{ field: 'email', value: h(1) }]), sentAt: now, mode: 'mirror' });
    expect(await s.audience('two').memberCount()).toBe(0);
    const scan = await scanOf(s, 'two', [['email', h(1), 1]]);
    expect(await scan.counts(mirror(now))).toEqual({ adds: 1, removes: 0, unchanged: 0, members: 0, distinct: 1, membersByField: {}, removesByField: {} });
  });
});
