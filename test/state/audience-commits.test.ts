/**
 * Commits of acknowledged audience chunks on the commit worker thread: the same members as
 * commits made on the main thread, applied in the order they were made even when the caller
 * does not wait between them, and a failure that reaches the caller as a StateError.
 */
import { openTestDatabase } from '../helpers/sqlite.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StateError } from '../../src/errors.js';
import { FIELD_CODES, IdentifierList } from '../../src/state/identifier-list.js';
import { openStateStore, type StateStore } from '../../src/state/index.js';
import { AudienceCommits } from '../../src/state/sqlite/audience-commits.js';

const h = (n: number): string => n.toString(16).padStart(64, '0');
const emails = (from: number, to: number): IdentifierList => {
  const list = new IdentifierList(4);
  for (let n = from; n < to; n++) list.pushText(FIELD_CODES.email, h(n), n);
  return list;
};

const stores: StateStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

function open(path: string, offThreadCommitMin: number): StateStore {
  const store = openStateStore(path, { offThreadCommitMin });
  stores.push(store);
  return store;
}

/** The members of an audience as (hex value, present) pairs, read with a connection of its own. */
function membersOf(path: string): [string, number][] {
  const db = openTestDatabase(path, { readonly: true });
  try {
    return (db.prepare('SELECT hex(value) AS v, present FROM audience_members ORDER BY field, value').all() as { v: string; present: number }[]).map((r) => [r.v.toLowerCase(), r.present]);
  } finally {
    db.close();
  }
}

async function history(store: StateStore, concurrent: boolean): Promise<void> {
  const audience = store.audience('custom_audience:a:1');
  const now = Date.now();
  const commits = [
    () => audience.commit({ added: emails(0, 300), sentAt: now, mode: 'mirror' }),
    // A mirror run's removals are forgotten, a remove-mode run's become tombstones.
    () => audience.commit({ removed: emails(0, 50), sentAt: now, mode: 'mirror' }),
    () => audience.commit({ removed: emails(50, 80), sentAt: now, mode: 'remove' }),
    () => audience.commit({ added: emails(60, 70), sentAt: now, mode: 'mirror' }),
  ];
  if (concurrent) await Promise.all(commits.map((c) => c()));
  else for (const c of commits) await c();
}

describe('audience commits on the commit thread', () => {
  it('leave the same members as commits made on the main thread, in commit order', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'adsync-commits-'));
    const here = join(dir, 'here.sqlite');
    const there = join(dir, 'there.sqlite');
    await history(open(here, Number.POSITIVE_INFINITY), false);
    const store = open(there, 1);
    await history(store, true);
    expect(await store.audience('custom_audience:a:1').memberCount()).toBe(300 - 50 - 30 + 10);
    const expected = membersOf(here);
    expect(expected).toHaveLength(250);
    expect(membersOf(there)).toEqual(expected);
    await store.close();
    // Closed: the thread is gone and the database is whole.
    const reopened = open(there, 1);
    expect(await reopened.integrityCheck()).toBe('ok');
    expect(await reopened.audience('custom_audience:a:1').memberCount()).toBe(230);
  });

  it('give a lent list its identifiers back, and copy a list that shares memory with other Buffers', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'adsync-commits-')), 'state.sqlite');
    const audience = open(path, 1).audience('custom_audience:a:1');
    const big = emails(0, 5000);
    const before = Array.from({ length: big.length }, (_, i) => `${big.row(i)}:${big.text(i)}`);
    // Small enough to come from Node's shared Buffer pool: it cannot be lent.
    const small = new IdentifierList(1);
    small.pushText(FIELD_CODES.email, h(90_001), 7);
    expect(Buffer.from(small.bytes(0).buffer).byteLength).toBeGreaterThan(small.bytes(0).byteLength);
    await Promise.all([audience.commit({ added: big, sentAt: Date.now(), mode: 'mirror' }), audience.commit({ added: small, sentAt: Date.now(), mode: 'mirror' })]);
    expect(Array.from({ length: big.length }, (_, i) => `${big.row(i)}:${big.text(i)}`)).toEqual(before);
    expect(small.text(0)).toBe(h(90_001));
    expect(await audience.memberCount()).toBe(5001);
  });

  it.each([
    ['on the main thread', Number.POSITIVE_INFINITY],
    ['on the commit thread', 1],
  ])('%s: a failed commit leaves nothing behind for the next one', async (_, min) => {
    const path = join(mkdtempSync(join(tmpdir(), 'adsync-commits-')), 'state.sqlite');
    const audience = open(path, min).audience('custom_audience:a:1');
    await audience.commit({ added: emails(0, 100), sentAt: Date.now(), mode: 'mirror' });
    const rename = (from: string, to: string): void => {
      const other = openTestDatabase(path);
      other.exec(`ALTER TABLE ${from} RENAME TO ${to}`);
      other.close();
    };
    rename('audience_members', 'audience_members_gone');
    // 130 rows: two full statements of 64 and two rows waiting when the transaction fails.
    await expect(audience.commit({ added: emails(1000, 1130), sentAt: Date.now(), mode: 'mirror' })).rejects.toBeInstanceOf(StateError);
    rename('audience_members_gone', 'audience_members');
    await audience.commit({ added: emails(2000, 2010), sentAt: Date.now(), mode: 'mirror' });
    const members = membersOf(path);
    expect(members).toHaveLength(110);
    expect(members.every(([v]) => v.length === 64)).toBe(true);
  });

  it('recover from a commit thread that could not start: the commit fails, close() returns', async () => {
    // The thread cannot create the database's folder (a file is in the way); the main
    // connection is an in-memory one, so only the thread fails.
    const dir = mkdtempSync(join(tmpdir(), 'adsync-commits-'));
    writeFileSync(join(dir, 'not-a-folder'), '');
    const db = openTestDatabase(':memory:');
    const commits = new AudienceCommits(db, join(dir, 'not-a-folder', 'state.sqlite'), 1);
    await expect(commits.commit(1, { added: emails(0, 10), sentAt: Date.now(), mode: 'mirror' })).rejects.toThrow(/cannot commit to the state database .*not-a-folder/);
    // The thread is gone; the next commit starts another (which fails the same way), and
    // closing does not wait for a thread that has already ended.
    await expect(commits.commit(1, { added: emails(0, 10), sentAt: Date.now(), mode: 'mirror' })).rejects.toBeInstanceOf(StateError);
    await commits.close();
    db.close();
  });

  it('reject a commit that could not be written with a StateError naming the database', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'adsync-commits-')), 'state.sqlite');
    const store = open(path, 1);
    const audience = store.audience('custom_audience:a:1');
    const other = openTestDatabase(path);
    other.exec('ALTER TABLE audience_members RENAME TO audience_members_gone');
    other.close();
    const failed = audience.commit({ added: emails(0, 10), sentAt: Date.now(), mode: 'mirror' });
    await expect(failed).rejects.toBeInstanceOf(StateError);
    await expect(failed).rejects.toThrow(`cannot commit to the state database ${path}: no such table: audience_members`);
  });
});
