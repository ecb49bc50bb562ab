/**
 * Audience membership in SQLite, and the scan of one export.
 *
 * A scan collects the export's identifiers in a temporary table (on disk, deduplicated by
 * a unique index, the first row kept), so a 10-million-row export costs disk, not memory.
 * The plan is then read page by page with keyset pagination: no cursor stays open, so
 * acknowledged chunks can be committed while the plan is still being read.
 */
import type {
  AudienceMode,
  AudiencePlanCounts,
  AudiencePlanOptions,
  AudienceScan,
  AudienceState,
  IdentifierRef,
  ScannedIdentifier,
} from '../store.js';
import type { IdentifierType } from '../../hash/types.js';
import type { Db } from './database.js';
import { decodeValue, encodeValue, fieldCode, fieldOf } from './identifier-codec.js';

let scanCounter = 0;

interface MemberRow {
  field: number;
  value: Buffer;
}
interface ScanRow extends MemberRow {
  row: number;
  rid: number;
}

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

  commit(chunk: { added: readonly IdentifierRef[]; removed: readonly IdentifierRef[]; sentAt: number; mode: AudienceMode }): Promise<void> {
    const upsert = this.db.prepare(
      `INSERT INTO audience_members (audience, field, value, present, sent_at) VALUES (?, ?, ?, 1, ?)
       ON CONFLICT (audience, field, value) DO UPDATE SET present = 1, sent_at = excluded.sent_at`,
    );
    // A remove-mode run keeps a tombstone so the same identifier is not deleted again; a
    // mirror run forgets removed members entirely.
    const tombstone = this.db.prepare(
      `INSERT INTO audience_members (audience, field, value, present, sent_at) VALUES (?, ?, ?, 0, ?)
       ON CONFLICT (audience, field, value) DO UPDATE SET present = 0, sent_at = excluded.sent_at`,
    );
    const forget = this.db.prepare('DELETE FROM audience_members WHERE audience = ? AND field = ? AND value = ?');
    this.db.transaction(() => {
      for (const id of chunk.added) {
        const code = fieldCode(id.field);
        upsert.run(this.audienceId, code, encodeValue(code, id.value), chunk.sentAt);
      }
      for (const id of chunk.removed) {
        const code = fieldCode(id.field);
        if (chunk.mode === 'remove') tombstone.run(this.audienceId, code, encodeValue(code, id.value), chunk.sentAt);
        else forget.run(this.audienceId, code, encodeValue(code, id.value));
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
    return Promise.resolve(Object.fromEntries(rows.map((r) => [fieldOf(r.field), r.n])));
  }
}

class SqliteAudienceScan implements AudienceScan {
  private readonly table: string;
  private readonly insert: import('better-sqlite3').Statement;
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly audienceId: number,
  ) {
    scanCounter += 1;
    this.table = `temp.audience_scan_${process.pid}_${scanCounter}`;
    db.exec(`CREATE TABLE ${this.table} (field INTEGER NOT NULL, value BLOB NOT NULL, row INTEGER NOT NULL)`);
    db.exec(`CREATE UNIQUE INDEX ${this.table}_key ON ${this.table.replace('temp.', '')} (field, value)`);
    this.insert = db.prepare(`INSERT OR IGNORE INTO ${this.table} (field, value, row) VALUES (?, ?, ?)`);
  }

  add(batch: readonly ScannedIdentifier[]): Promise<void> {
    const insert = this.insert;
    this.db.transaction(() => {
      for (const id of batch) {
        const code = fieldCode(id.field);
        insert.run(code, encodeValue(code, id.value), id.row);
      }
    })();
    return Promise.resolve();
  }

  size(): Promise<number> {
    const row = this.db.prepare(`SELECT COUNT(*) AS n FROM ${this.table}`).get() as { n: number };
    return Promise.resolve(row.n);
  }

  /** SQL that selects the scan rows to add, given the mode. */
  private addsWhere(options: AudiencePlanOptions): string | undefined {
    if (options.mode === 'remove') return undefined;
    if (options.full) return '1';
    return `NOT EXISTS (SELECT 1 FROM audience_members m WHERE m.audience = $audience AND m.field = s.field AND m.value = s.value
              AND m.present = 1 AND m.sent_at >= $refreshBefore)`;
  }

  /** SQL selecting removals: from the members (mirror) or from the scan (remove mode). */
  private removesSql(options: AudiencePlanOptions): { from: 'members' | 'scan'; where: string } | undefined {
    if (options.mode === 'mirror') {
      return {
        from: 'members',
        where: `m.audience = $audience AND m.present = 1 AND NOT EXISTS (SELECT 1 FROM ${this.table} s WHERE s.field = m.field AND s.value = m.value)`,
      };
    }
    if (options.mode === 'remove') {
      return {
        from: 'scan',
        where: options.full
          ? '1'
          : `NOT EXISTS (SELECT 1 FROM audience_members m WHERE m.audience = $audience AND m.field = s.field AND m.value = s.value AND m.present = 0)`,
      };
    }
    return undefined;
  }

  counts(options: AudiencePlanOptions): Promise<AudiencePlanCounts> {
    const params = { audience: this.audienceId, refreshBefore: options.refreshBefore };
    const bind = (sql: string): Record<string, number> => Object.fromEntries(Object.entries(params).filter(([k]) => sql.includes(`$${k}`)));
    const scanSize = (this.db.prepare(`SELECT COUNT(*) AS n FROM ${this.table}`).get() as { n: number }).n;
    const addsWhere = this.addsWhere(options);
    let adds = 0;
    if (addsWhere !== undefined) {
      const sql = `SELECT COUNT(*) AS n FROM ${this.table} s WHERE ${addsWhere}`;
      adds = (this.db.prepare(sql).get(bind(sql)) as { n: number }).n;
    }
    const rem = this.removesSql(options);
    let removes = 0;
    if (rem) {
      const sql =
        rem.from === 'members'
          ? `SELECT COUNT(*) AS n FROM audience_members m WHERE ${rem.where}`
          : `SELECT COUNT(*) AS n FROM ${this.table} s WHERE ${rem.where}`;
      removes = (this.db.prepare(sql).get(bind(sql)) as { n: number }).n;
    }
    const membersSql = 'SELECT COUNT(*) AS n FROM audience_members WHERE audience = ? AND present = 1';
    const members = (this.db.prepare(membersSql).get(this.audienceId) as { n: number }).n;
    const unchanged = options.mode === 'remove' ? scanSize - removes : scanSize - adds;
    return Promise.resolve({ adds, removes, unchanged, members });
  }

  async *adds(options: AudiencePlanOptions, batchSize: number): AsyncGenerator<ScannedIdentifier[]> {
    const where = this.addsWhere(options);
    if (where === undefined) return;
    const sql = `SELECT s.rowid AS rid, s.field, s.value, s.row FROM ${this.table} s WHERE s.rowid > $after AND (${where}) ORDER BY s.rowid LIMIT $limit`;
    const stmt = this.db.prepare(sql);
    const needsMembers = where !== '1';
    let after = 0;
    for (;;) {
      const params: Record<string, number> = { after, limit: batchSize };
      if (needsMembers) {
        params.audience = this.audienceId;
        params.refreshBefore = options.refreshBefore;
      }
      const rows = stmt.all(params) as ScanRow[];
      if (rows.length === 0) return;
      after = rows[rows.length - 1]?.rid ?? after;
      yield rows.map((r) => ({ field: fieldOf(r.field), value: decodeValue(r.field, r.value), row: r.row }));
      if (rows.length < batchSize) return;
    }
  }

  async *removes(options: AudiencePlanOptions, batchSize: number): AsyncGenerator<IdentifierRef[]> {
    const rem = this.removesSql(options);
    if (!rem) return;
    const alias = rem.from === 'members' ? 'm' : 's';
    const table = rem.from === 'members' ? 'audience_members m' : `${this.table} s`;
    const sql = `SELECT ${alias}.field, ${alias}.value FROM ${table}
      WHERE (${alias}.field, ${alias}.value) > ($field, $value) AND (${rem.where})
      ORDER BY ${alias}.field, ${alias}.value LIMIT $limit`;
    const stmt = this.db.prepare(sql);
    const usesAudience = sql.includes('$audience');
    let field = -1;
    let value: Buffer = Buffer.alloc(0);
    for (;;) {
      const params: Record<string, number | Buffer> = { field, value, limit: batchSize };
      if (usesAudience) params.audience = this.audienceId;
      const rows = stmt.all(params) as MemberRow[];
      if (rows.length === 0) return;
      const last = rows[rows.length - 1];
      if (last) {
        field = last.field;
        value = last.value;
      }
      yield rows.map((r) => ({ field: fieldOf(r.field), value: decodeValue(r.field, r.value) }));
      if (rows.length < batchSize) return;
    }
  }

  close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      this.db.exec(`DROP TABLE IF EXISTS ${this.table}`);
    }
    return Promise.resolve();
  }
}
