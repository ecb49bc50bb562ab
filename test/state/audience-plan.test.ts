/**
 * An audience scan's plan against a model written the obvious way (Maps and a sort), on random
 * audiences and exports: every mode, with and without `full`, members fresh, stale (sent before
 * the refresh time) and tombstoned. The sizes are chosen so that both ways of reading the
 * members run: all of them in order (mirror mode, or an export about as large as the
 * audience), and one lookup per identifier (add and remove modes with an export much smaller
 * than the audience: fewer than a quarter as many identifiers as member rows). The counts by
 * type (members, removals) are checked against the model too.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { IDENTIFIER_TYPES } from '../../src/hash/types.js';
import { openStateStore, type AudienceMode, type AudiencePlanOptions, type StateStore } from '../../src/state/index.js';
import { byKey, collect, keyOf, listOf, show, type Id } from '../helpers/identifier-model.js';
import { seededRandom as prng } from '../helpers/seeded-random.js';

type Status = 'fresh' | 'stale' | 'tombstone';

const DAY = 86_400_000;

function universe(rnd: () => number, n: number): { code: number; value: Buffer }[] {
  const out: { code: number; value: Buffer }[] = [];
  for (let i = 0; i < n; i++) {
    // Partner ids of varied lengths, many a prefix of another ("crm-1", "crm-12", "crm-123"):
    // the join must order them as SQLite orders BLOBs (the shorter first).
    if (rnd() < 0.3) out.push({ code: 5, value: Buffer.from(rnd() < 0.5 ? `crm-${i}` : `crm-${String(i).padStart(6, '0')}`) });
    else {
      const v = Buffer.alloc(32);
      for (let b = 0; b < 32; b++) v[b] = Math.floor(rnd() * 256);
      out.push({ code: Math.floor(rnd() * 3), value: v });
    }
  }
  return out;
}

/** The model's counts by type, as the plan gives them (types without any left out). */
function byField(ids: readonly Id[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const id of ids) {
    const type = IDENTIFIER_TYPES[id.code] ?? String(id.code);
    counts[type] = (counts[type] ?? 0) + 1;
  }
  return counts;
}

let store: StateStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

interface Case {
  seed: number;
  members: number;
  exportIds: number;
}

async function check({ seed, members, exportIds }: Case, mode: AudienceMode, full: boolean): Promise<void> {
  const rnd = prng(seed);
  const all = universe(rnd, members + exportIds);
  store = openStateStore(join(mkdtempSync(join(tmpdir(), 'adsync-plan-')), 'state.sqlite'));
  const audience = store.audience('plan-test');
  const now = Date.now();
  const refreshBefore = now - 30 * DAY;

  // The audience: members fresh, stale or tombstoned.
  const status = new Map<string, Status>();
  const fresh: Id[] = [];
  const stale: Id[] = [];
  const tombstones: Id[] = [];
  for (const v of all.slice(0, members)) {
    const r = rnd();
    const s: Status = r < 0.6 ? 'fresh' : r < 0.85 ? 'stale' : 'tombstone';
    status.set(keyOf(v), s);
    (s === 'fresh' ? fresh : s === 'stale' ? stale : tombstones).push({ ...v, row: 0 });
  }
  if (fresh.length) await audience.commit({ added: listOf(fresh.sort(byKey)), sentAt: now - DAY, mode: 'mirror' });
  if (stale.length) await audience.commit({ added: listOf(stale.sort(byKey)), sentAt: now - 60 * DAY, mode: 'mirror' });
  if (tombstones.length) await audience.commit({ removed: listOf(tombstones.sort(byKey)), sentAt: now, mode: 'remove' });

  // The export: half of its values from the audience, with duplicates from other rows.
  const ids: Id[] = [];
  for (let row = 1; ids.length < exportIds; row++) {
    const from = rnd() < 0.5 && members > 0 ? all[Math.floor(rnd() * members)] : all[members + Math.floor(rnd() * exportIds)];
    if (from) ids.push({ ...from, row });
    if (rnd() < 0.1) ids.push({ ...(from ?? all[0] ?? { code: 0, value: Buffer.alloc(32) }), row: row + 1_000_000 });
  }
  const scan = await audience.scan();
  for (let i = 0; i < ids.length; i += 97) await scan.add(listOf(ids.slice(i, i + 97)));

  // The model.
  const first = new Map<string, Id>();
  for (const id of ids) {
    const seen = first.get(keyOf(id));
    if (!seen || id.row < seen.row) first.set(keyOf(id), id);
  }
  const distinct = [...first.values()].sort(byKey);
  const present = [...status.entries()].filter(([, s]) => s !== 'tombstone');
  let adds: Id[] = [];
  let removes: Id[] = [];
  if (mode !== 'remove') adds = distinct.filter((id) => full || status.get(keyOf(id)) !== 'fresh');
  if (mode === 'mirror') removes = [...fresh, ...stale].filter((m) => !first.has(keyOf(m))).sort(byKey);
  if (mode === 'remove') removes = distinct.filter((id) => full || status.get(keyOf(id)) !== 'tombstone').map((id) => ({ ...id, row: 0 }));

  const options: AudiencePlanOptions = { mode, refreshBefore, full };
  expect(await scan.counts(options)).toEqual({
    adds: adds.length,
    removes: removes.length,
    unchanged: distinct.length - (mode === 'remove' ? removes.length : adds.length),
    members: present.length,
    distinct: distinct.length,
    membersByField: byField([...fresh, ...stale]),
    removesByField: byField(removes),
  });
  expect(show(await collect(scan.adds(options, 37)))).toEqual(show(adds));
  expect(show(await collect(scan.removes(options, 37)))).toEqual(show(removes));
  expect(await scan.size()).toBe(distinct.length);
  await scan.close();
}

const cases: [string, Case][] = [
  ['a first run', { seed: 1, members: 0, exportIds: 3000 }],
  ['an export as large as the audience (members read in order)', { seed: 2, members: 2000, exportIds: 2000 }],
  ['an export much smaller than the audience (members looked up in add and remove modes)', { seed: 3, members: 3000, exportIds: 150 }],
  ['an empty export against an audience', { seed: 4, members: 500, exportIds: 0 }],
];

describe('audience plan against a model', () => {
  for (const [name, c] of cases) {
    for (const mode of ['mirror', 'add', 'remove'] as const) {
      for (const full of [false, true]) {
        it(`${name}: ${mode}${full ? ', full' : ''}`, () => check(c, mode, full));
      }
    }
  }
});
