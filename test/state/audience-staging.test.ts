/**
 * Staged additions (src/state/sqlite/member-status.ts) against a model written the obvious way:
 * a plan's additions are staged, read back in row order, confirmed by bucket of rows, some
 * withdrawn (refused, or not sent), and the next plan must see exactly the members the model
 * says: an addition counts once its bucket is confirmed and it was not withdrawn; a member sent
 * again whose bucket was not confirmed stays a member, with an unknown sent time (sent again).
 * Plans large enough to be staged by the commit thread (more than 20,000 identifiers, a
 * database file) and small ones staged on the main thread; values longer than the staging
 * buffers of the row buckets; buckets that a stop leaves half sent (withdrawRowsAfter).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStateStore, type AudiencePlanOptions, type StateStore } from '../../src/state/index.js';
import { bucketOfRow } from '../../src/state/external-sort/row-buckets.js';
import { openTestDatabase } from '../helpers/sqlite.js';
import { byKey, collect, idsOf, keyOf, listOf, show, type Id } from '../helpers/identifier-model.js';
import { seededRandom as prng } from '../helpers/seeded-random.js';

type Status = 'fresh' | 'stale' | 'tombstone';

const DAY = 86_400_000;

function value(rnd: () => number, i: number): { code: number; value: Buffer } {
  if (rnd() < 0.25) {
    // Partner ids, a few far longer than a row bucket's 16 KB staging buffer.
    const long = rnd() < 0.001 ? 'x'.repeat(20_000) : '';
    return { code: 5, value: Buffer.from(`crm-${i}${long}`) };
  }
  const v = Buffer.alloc(32);
  for (let b = 0; b < 32; b++) v[b] = Math.floor(rnd() * 256);
  return { code: Math.floor(rnd() * 3), value: v };
}

let store: StateStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

interface Case {
  seed: number;
  members: number;
  rows: number;
  /** Share of the buckets confirmed. */
  confirm: number;
  /** Share of the additions of confirmed buckets withdrawn (refused, their request failed). */
  withdraw: number;
  /** A stop after this many rows of additions: the rest of that bucket withdrawn, the bucket confirmed. */
  stopAtRow?: number;
}

async function check(c: Case): Promise<void> {
  const rnd = prng(c.seed);
  const dir = mkdtempSync(join(tmpdir(), 'adsync-staging-'));
  store = openStateStore(join(dir, 'state.sqlite'));
  const audience = store.audience('staging-test');
  const now = Date.now();
  const options: AudiencePlanOptions = { mode: 'mirror', refreshBefore: now - 30 * DAY, full: false };

  // The audience before: members fresh, stale or tombstoned.
  const pool = Array.from({ length: c.members + c.rows * 3 }, (_, i) => value(rnd, i));
  const status = new Map<string, Status>();
  const groups: Record<Status, Id[]> = { fresh: [], stale: [], tombstone: [] };
  for (const v of pool.slice(0, c.members)) {
    const r = rnd();
    const s: Status = r < 0.5 ? 'fresh' : r < 0.85 ? 'stale' : 'tombstone';
    status.set(keyOf(v), s);
    groups[s].push({ ...v, row: 0 });
  }
  if (groups.fresh.length) await audience.commit({ added: listOf(groups.fresh.sort(byKey)), sentAt: now - DAY, mode: 'mirror' });
  if (groups.stale.length) await audience.commit({ added: listOf(groups.stale.sort(byKey)), sentAt: now - 60 * DAY, mode: 'mirror' });
  if (groups.tombstone.length) await audience.commit({ removed: listOf(groups.tombstone.sort(byKey)), sentAt: now, mode: 'remove' });

  // The export: 1 to 4 identifiers a row, some from the audience, some repeated from other rows.
  const ids: Id[] = [];
  let fresh = c.members;
  for (let row = 1; row <= c.rows; row++) {
    const n = 1 + Math.floor(rnd() * 4);
    for (let k = 0; k < n; k++) {
      const from = rnd() < 0.4 && c.members > 0 ? pool[Math.floor(rnd() * c.members)] : rnd() < 0.05 && ids.length > 0 ? ids[Math.floor(rnd() * ids.length)] : pool[fresh++];
      if (from) ids.push({ code: from.code, value: from.value, row });
    }
  }
  const first = new Map<string, Id>();
  for (const id of ids) if (!first.has(keyOf(id))) first.set(keyOf(id), id);
  const adds = [...first.values()].filter((id) => status.get(keyOf(id)) !== 'fresh');

  const scan = await audience.scan();
  for (let i = 0; i < ids.length; i += 997) await scan.add(listOf(ids.slice(i, i + 997)));
  expect((await scan.counts(options)).adds).toBe(adds.length);
  const staged = await scan.stageAdds(options, 'run-1');

  // Row order: rows ascending, a row's identifiers together in (field, value) order, a page
  // never ending inside a row.
  const inRowOrder = [...adds].sort((a, b) => a.row - b.row || byKey(a, b));
  const read: Id[] = [];
  for await (const page of staged.pages(500)) {
    const got = idsOf(page);
    expect(got.length).toBeGreaterThan(0);
    if (read.length > 0) expect(got[0]?.row).not.toBe(read[read.length - 1]?.row);
    read.push(...got);
  }
  expect(show(read)).toEqual(show(inRowOrder));

  // The upload, as the model has it: buckets confirmed or not, identifiers withdrawn, a stop.
  const buckets = [...new Set(adds.map((a) => bucketOfRow(a.row)))].sort((a, b) => a - b);
  const confirmed = new Set(buckets.filter(() => rnd() < c.confirm));
  const withdrawn = new Set<string>();
  const withdrawNow: Id[] = [];
  for (const a of inRowOrder) {
    if (confirmed.has(bucketOfRow(a.row)) && rnd() < c.withdraw) {
      withdrawn.add(keyOf(a));
      withdrawNow.push(a);
    }
  }
  staged.withdraw(listOf(withdrawNow));
  if (c.stopAtRow !== undefined) {
    staged.withdrawRowsAfter(c.stopAtRow);
    for (const a of inRowOrder) if (bucketOfRow(a.row) === bucketOfRow(c.stopAtRow) && a.row > c.stopAtRow) withdrawn.add(keyOf(a));
    confirmed.add(bucketOfRow(c.stopAtRow));
  }
  for (const b of confirmed) staged.confirm(b);
  await scan.close();

  // The model after the run.
  const sentNow = (a: Id): boolean => confirmed.has(bucketOfRow(a.row)) && !withdrawn.has(keyOf(a));
  for (const a of adds) {
    const before = status.get(keyOf(a));
    if (sentNow(a)) status.set(keyOf(a), 'fresh');
    else if (before === 'stale') status.set(keyOf(a), 'stale');
    else status.delete(keyOf(a));
  }
  const members = [...status.entries()].filter(([, s]) => s !== 'tombstone');
  expect(await audience.memberCount()).toBe(members.length);
  const db = openTestDatabase(join(dir, 'state.sqlite'), { readonly: true });
  const view = db.prepare('SELECT COUNT(*) AS n FROM audience_membership').get() as { n: number };
  db.close();
  expect(view.n).toBe(members.length);

  // The next plan of the same export: sends exactly what the model says was not sent.
  const again = await audience.scan();
  for (let i = 0; i < ids.length; i += 997) await again.add(listOf(ids.slice(i, i + 997)));
  const next = [...first.values()].filter((id) => status.get(keyOf(id)) !== 'fresh').sort(byKey);
  const counts = await again.counts(options);
  expect(counts).toMatchObject({ adds: next.length, removes: members.filter(([k]) => !first.has(k)).length, members: members.length });
  expect(show(await collect(again.adds(options, 1000)))).toEqual(show(next));
  // Its staging settles the markers the first run left pending, and confirming all leaves none.
  const stagedAgain = await again.stageAdds(options, 'run-2');
  for (const b of new Set(next.map((a) => bucketOfRow(a.row)))) stagedAgain.confirm(b);
  await again.close();
  const after = openTestDatabase(join(dir, 'state.sqlite'), { readonly: true });
  expect(after.prepare('SELECT COUNT(*) AS n FROM audience_pending').get()).toEqual({ n: 0 });
  expect(after.prepare('SELECT COUNT(*) AS n FROM audience_membership').get()).toEqual({ n: members.length + next.length - next.filter((a) => status.get(keyOf(a)) === 'stale').length });
  after.close();
}

describe('staged additions against a model', () => {
  it('a first run of a small export, every bucket confirmed (staged on the main thread)', () => check({ seed: 1, members: 0, rows: 3000, confirm: 1, withdraw: 0 }));
  it('an export against an audience, some buckets not confirmed, some identifiers withdrawn', () => check({ seed: 2, members: 4000, rows: 5000, confirm: 0.6, withdraw: 0.05 }));
  it('a large plan staged by the commit thread, a stop half way through a bucket', () => check({ seed: 3, members: 20_000, rows: 120_000, confirm: 0.5, withdraw: 0.01, stopAtRow: 70_000 }));
  it('nothing confirmed: the audience is as it was, members sent again keep being members', () => check({ seed: 4, members: 3000, rows: 70_000, confirm: 0, withdraw: 0 }));
});
