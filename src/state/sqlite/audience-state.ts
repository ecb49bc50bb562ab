/**
 * Audience membership in SQLite. The scan of one export, and its plan, are in audience-scan.ts.
 */
import type { AudienceMode, AudienceScan, AudienceState } from '../store.js';
import { IDENTIFIER_TYPES, type IdentifierType } from '../../hash/types.js';
import type { IdentifierList } from '../identifier-list.js';
import { SqliteAudienceScan } from './audience-scan.js';
import { BulkInsert } from './bulk-insert.js';
import type { Db } from './database.js';

export class SqliteAudienceState implements AudienceState {
  private readonly audienceId: number;

  constructor(
    private readonly db: Db,
    key: string,
  ) {
    db.prepare('INSERT OR IGNORE INTO audiences (key) VALUES (?)').run(key);
    const row = db.prepare('SELECT id FROM audiences WHERE key = ?').get(key) as { id: number };
    this.audienceId = row.id;
  }

  scan(): Promise<AudienceScan> {
    return Promise.resolve(new SqliteAudienceScan(this.db, this.audienceId));
  }

  private statements:
    | { upsert: BulkInsert; tombstone: BulkInsert; forget: import('better-sqlite3').Statement }
    | undefined;

  /** Prepared once per audience: a run commits a hundred batches or more. */
  private commitStatements(): { upsert: BulkInsert; tombstone: BulkInsert; forget: import('better-sqlite3').Statement } {
    const insertHead = 'INSERT INTO audience_members (audience, field, value, present, sent_at) VALUES';
    this.statements ??= {
      upsert: new BulkInsert(this.db, insertHead, '(?, ?, ?, 1, ?)', 'ON CONFLICT (audience, field, value) DO UPDATE SET present = 1, sent_at = excluded.sent_at', 4),
      // A remove-mode run keeps a tombstone so the same identifier is not deleted again; a
      // mirror run forgets removed members entirely.
      tombstone: new BulkInsert(this.db, insertHead, '(?, ?, ?, 0, ?)', 'ON CONFLICT (audience, field, value) DO UPDATE SET present = 0, sent_at = excluded.sent_at', 4),
      forget: this.db.prepare('DELETE FROM audience_members WHERE audience = ? AND field = ? AND value = ?'),
    };
    return this.statements;
  }

  commit(chunk: { added?: IdentifierList | undefined; removed?: IdentifierList | undefined; sentAt: number; mode: AudienceMode }): Promise<void> {
    const { upsert, tombstone, forget } = this.commitStatements();
    const { added, removed } = chunk;
    this.db.transaction(() => {
      if (added) {
        for (let i = 0; i < added.length; i++) upsert.add(this.audienceId, added.code(i), added.bytes(i), chunk.sentAt);
        upsert.flush();
      }
      if (removed) {
        for (let i = 0; i < removed.length; i++) {
          if (chunk.mode === 'remove') tombstone.add(this.audienceId, removed.code(i), removed.bytes(i), chunk.sentAt);
          else forget.run(this.audienceId, removed.code(i), removed.bytes(i));
        }
        tombstone.flush();
      }
    })();
    return Promise.resolve();
  }

  memberCount(): Promise<number> {
    const row = this.db.prepare('SELECT COUNT(*) AS n FROM audience_members WHERE audience = ? AND present = 1').get(this.audienceId) as { n: number };
    return Promise.resolve(row.n);
  }

  memberCounts(): Promise<Partial<Record<IdentifierType, number>>> {
    const rows = this.db
      .prepare('SELECT field, COUNT(*) AS n FROM audience_members WHERE audience = ? AND present = 1 GROUP BY field')
      .all(this.audienceId) as { field: number; n: number }[];
    return Promise.resolve(Object.fromEntries(rows.map((r) => [IDENTIFIER_TYPES[r.field] ?? String(r.field), r.n])));
  }
}
