/**
 * What the reliability suites share: expected audiences and catalogs computed here (never by
 * the code under test), readings of the state database (its integrity, the members and
 * products it has committed), a seeded random generator, and the checks every CLI result
 * must pass (no stack trace); a lock row written as a run (live, dead or elsewhere) leaves it.
 *
 * The state database is read directly, read-only, through its documented tables
 * (audience_members, catalog_products); those readings are kept in this one file.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { openTestDatabase } from '../helpers/sqlite.js';
import { expect } from 'vitest';
import { IDENTIFIER_TYPES } from '../../src/hash/types.js';
import type { CliResult } from '../helpers/cli.js';
import { summaries, type Workspace } from '../helpers/e2e.js';
import { feedItem, rssFeed, type FeedItemValues } from '../fixtures/catalog/catalog-e2e.js';
export { seededRandom } from '../helpers/seeded-random.js';

export const sha = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function waitFor(condition: () => boolean, timeoutMs: number, what = 'a condition'): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

/** Never a stack trace, whatever happened. */
export function expectNoStackTrace(result: CliResult): void {
  expect(result.stderr).not.toMatch(/^\s+at .+\(?.+:\d+:\d+\)?$/m);
  expect(result.stdout).not.toMatch(/^\s+at .+\(?.+:\d+:\d+\)?$/m);
}

/** The one JSON summary of a `--json` run of one job. */
export function summaryOf(result: CliResult): Record<string, unknown> {
  const all = summaries(result);
  expect(all, `expected one JSON summary:\n${result.stdout}\n${result.stderr}`).toHaveLength(1);
  return all[0] ?? {};
}

export { errorLines } from '../helpers/e2e.js';

// ---------------------------------------------------------------------------------------
// Audiences: an export of rows `P<i>,User.<i>@Example.com`; members are the hashes of the
// normalized emails and the partner ids as they are.

export interface AudienceMembers {
  email: string[];
  partner_user_id: string[];
}

export const AUDIENCE_HEADER = 'Id,Email';

export function crmExport(rows: Iterable<number>): string {
  const lines = [AUDIENCE_HEADER];
  for (const i of rows) lines.push(`P${i},User.${i}@Example.com`);
  return `${lines.join('\n')}\n`;
}

export function audienceOf(rows: Iterable<number>): AudienceMembers {
  const email: string[] = [];
  const partner: string[] = [];
  for (const i of rows) {
    email.push(sha(`user.${i}@example.com`));
    partner.push(`P${i}`);
  }
  return { email: email.sort(), partner_user_id: partner.sort() };
}

export function range(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);
}

/** The members of a custom audience in the emulator (the two fields the tests use). */
export function emulatorAudience(ws: Workspace, audienceId = 'emu-audience'): AudienceMembers {
  const m = ws.emulator.state().custom_audiences[audienceId]?.members ?? {};
  for (const [field, values] of Object.entries(m)) {
    if (field !== 'email' && field !== 'partner_user_id') expect(values, `no ${field} members expected`).toEqual([]);
  }
  return { email: [...(m.email ?? [])].sort(), partner_user_id: [...(m.partner_user_id ?? [])].sort() };
}

function openState(path: string): Database.Database | undefined {
  if (!existsSync(path)) return undefined;
  return openTestDatabase(path, { readonly: true, fileMustExist: true });
}

/** PRAGMA integrity_check of the state database ('ok' when there is none yet). */
export function integrity(statePath: string): string {
  const db = openState(statePath);
  if (!db) return 'ok';
  try {
    return String(db.pragma('integrity_check', { simple: true }));
  } finally {
    db.close();
  }
}

/** Every row of every table of the state database, as sorted JSON lines per table: to compare before and after. */
export function dumpState(statePath: string): Record<string, string[]> {
  const db = openState(statePath);
  const out: Record<string, string[]> = {};
  if (!db) return out;
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[];
    for (const { name } of tables) {
      out[name] = (db.prepare(`SELECT * FROM "${name}"`).all() as Record<string, unknown>[])
        .map((row) => JSON.stringify(row))
        .sort();
    }
  } finally {
    db.close();
  }
  return out;
}

/**
 * The identifiers the state counts as present members (every audience of the file): what its
 * view audience_membership lists (additions a run staged count only once confirmed).
 */
export function committedAudience(statePath: string): AudienceMembers {
  const db = openState(statePath);
  const out: AudienceMembers = { email: [], partner_user_id: [] };
  if (!db) return out;
  try {
    const views = db.prepare("SELECT name FROM sqlite_master WHERE type = 'view' AND name = 'audience_membership'").all();
    if (views.length === 0) return out;
    const rows = db.prepare('SELECT field, value FROM audience_membership').all() as { field: number; value: Buffer }[];
    for (const r of rows) {
      const field = IDENTIFIER_TYPES[r.field];
      if (field === 'email') out.email.push(r.value.toString('hex'));
      else if (field === 'partner_user_id') out.partner_user_id.push(r.value.toString('utf8'));
      else throw new Error(`unexpected identifier field ${String(field)} in the state`);
    }
  } finally {
    db.close();
  }
  out.email.sort();
  out.partner_user_id.sort();
  return out;
}

const minus = (a: readonly string[], b: readonly string[]): string[] => {
  const set = new Set(b);
  return a.filter((x) => !set.has(x));
};
const intersect = (a: readonly string[], b: readonly string[]): string[] => {
  const set = new Set(b);
  return a.filter((x) => set.has(x));
};

/**
 * After a run that did not finish (failed, killed), the committed state may lag behind the
 * service, never run ahead of it: an identifier the run committed as added is in the
 * audience, and one it committed as removed is not.
 */
export function expectAudienceStateBehindService(before: AudienceMembers, committed: AudienceMembers, service: AudienceMembers): void {
  for (const field of ['email', 'partner_user_id'] as const) {
    expect(minus(minus(committed[field], before[field]), service[field]), `${field}: committed as added but not in the audience`).toEqual([]);
    expect(intersect(minus(before[field], committed[field]), service[field]), `${field}: committed as removed but still in the audience`).toEqual([]);
  }
}

// ---------------------------------------------------------------------------------------
// Catalogs: RSS feeds of generated products (test/fixtures/catalog/catalog-e2e.ts).

export const CATALOG = 'emu-catalog';

export interface ProductSpec {
  n: number;
  price: string;
}

export function productId(n: number): string {
  return `P-${String(n).padStart(3, '0')}`;
}

export function feedOf(products: readonly ProductSpec[]): string {
  return rssFeed(products.map(productItem));
}

export function productItem(p: ProductSpec): FeedItemValues {
  return feedItem(productId(p.n), { price: p.price });
}

/** The same products as a CSV feed (the values hold no comma or quote). */
export function csvFeedOf(products: readonly ProductSpec[]): string {
  const items = products.map(productItem);
  const columns = Object.keys(items[0] ?? feedItem('x'));
  return `${[columns.join(','), ...items.map((item) => columns.map((c) => item[c] ?? '').join(','))].join('\n')}\n`;
}

/** The catalog the emulator holds: id -> the product's attributes without product_key. */
export function emulatorCatalog(ws: Workspace): Map<string, Record<string, unknown>> {
  const products = ws.emulator.state().catalogs[CATALOG]?.products ?? [];
  return new Map(products.map(({ product_key: _key, ...rest }) => [String(rest.id), rest]));
}

export function emulatorProductKeys(ws: Workspace): Map<string, string> {
  const products = ws.emulator.state().catalogs[CATALOG]?.products ?? [];
  return new Map(products.map((p) => [String(p.id), String(p.product_key)]));
}

/** Exactly these products, with exactly these attributes. */
export function expectCatalog(ws: Workspace, products: readonly ProductSpec[]): void {
  const expected = new Map(products.map((p) => [productId(p.n), productItem(p) as Record<string, unknown>]));
  const actual = emulatorCatalog(ws);
  expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort());
  for (const [id, attributes] of expected) expect(actual.get(id), id).toEqual(attributes);
}

export interface CommittedProduct {
  contentHash: string | null;
  productKey: string | null;
}

/** The products the state has committed for the catalog. */
/**
 * Whether the state marks an upload to the catalog as unfinished (upload_started_at): set by a
 * run or backfill killed after it began sending, and kept until a mirror run reconciles.
 */
export function catalogUploadUnfinished(statePath: string): boolean {
  const db = openState(statePath);
  if (!db) return false;
  try {
    const row = db.prepare('SELECT upload_started_at AS at FROM catalogs WHERE catalog_id = ?').get(CATALOG) as { at: number | null } | undefined;
    return row?.at != null;
  } finally {
    db.close();
  }
}

export function committedCatalog(statePath: string): Map<string, CommittedProduct> {
  const db = openState(statePath);
  const out = new Map<string, CommittedProduct>();
  if (!db) return out;
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'catalog_products'").all();
    if (tables.length === 0) return out;
    const rows = db
      .prepare('SELECT p.id, p.content_hash, p.product_key FROM catalog_products p JOIN catalogs c ON c.id = p.catalog WHERE c.catalog_id = ?')
      .all(CATALOG) as { id: string; content_hash: string | null; product_key: string | null }[];
    for (const r of rows) out.set(r.id, { contentHash: r.content_hash, productKey: r.product_key });
  } finally {
    db.close();
  }
  return out;
}

/**
 * After a run that did not finish, the committed state may lag behind the catalog, never run
 * ahead of it: a product the run committed (new to the state) is in the catalog under the
 * product_key recorded, and a product the run dropped from the state (deleted) is gone. A
 * product listed before may be gone too: its delete was applied but never acknowledged.
 */
export function expectCatalogStateBehindService(ws: Workspace, before: ReadonlySet<string>): void {
  const committed = committedCatalog(ws.statePath);
  const keys = emulatorProductKeys(ws);
  for (const [id, p] of committed) {
    if (before.has(id) && !keys.has(id)) continue;
    expect(keys.has(id), `${id} is committed but not in the catalog`).toBe(true);
    if (p.productKey !== null && p.productKey !== '') expect(p.productKey, id).toBe(keys.get(id));
  }
  for (const id of before) if (!committed.has(id)) expect(keys.has(id), `${id} was committed as deleted but is still in the catalog`).toBe(false);
}

/** After a complete run: the state lists exactly the catalog's products, with their keys and a content hash. */
export function expectCatalogStateExact(ws: Workspace): void {
  const committed = committedCatalog(ws.statePath);
  const keys = emulatorProductKeys(ws);
  expect([...committed.keys()].sort()).toEqual([...keys.keys()].sort());
  for (const [id, p] of committed) {
    expect(p.productKey, id).toBe(keys.get(id));
    expect(p.contentHash, id).toMatch(/\S/);
  }
}

/** Writes a lock row (a job's or a target's) as a holder with `owner` leaves it, expiring in 10 minutes. */
export function putLock(statePath: string, key: string, owner: string): void {
  const db = openTestDatabase(statePath);
  try {
    const now = Date.now();
    db.prepare('INSERT OR REPLACE INTO locks (job, owner, acquired_at, heartbeat_at, expires_at) VALUES (?, ?, ?, ?, ?)').run(key, owner, now, now, now + 600_000);
  } finally {
    db.close();
  }
}

/** A pid that no process of this machine has. */
export function deadPid(): number {
  for (let pid = 4_000_000; ; pid--) {
    try {
      process.kill(pid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') return pid;
    }
  }
}
