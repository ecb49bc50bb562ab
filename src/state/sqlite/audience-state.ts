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
} from '../store.js';
import { IDENTIFIER_TYPES, type IdentifierType } from '../../hash/types.js';
import { IdentifierList } from '../identifier-list.js';
import { InternalError } from '../../errors.js';
import { BulkInsert } from './bulk-insert.js';
import type { Db } from './database.js';

let scanCounter = 0;

/**
 * Reads a page of the plan as one packed string: each identifier as field (1 byte), row (4
 * bytes), value length (2 bytes) and value, in hex, aggregated in key order by SQLite.
 * A page of 20,000 identifiers is one string and one Buffer instead of 20,000 arrays and
 * strings: on a million-row export that garbage was the larger part of the process's memory.
 */
const PACKED_RECORD = "printf('%02X%08X%04X', field, row, length(value)) || hex(value)";

function readPackedPage(stmt: import('better-sqlite3').Statement, params: Record<string, number | Buffer>): { list: IdentifierList; count: number; last: [number, Buffer] | undefined } {
  const answer = stmt.get(params) as { n: number; data: string | null };
  const list = new IdentifierList(Math.max(1, answer.n));
  if (!answer.data) return { list, count: 0, last: undefined };
  const packed = Buffer.from(answer.data, 'hex');
  const end = list.pushPacked(packed);
  return { list, count: answer.n, last: end ? [end.code, Buffer.from(packed.subarray(end.valueStart, end.valueEnd))] : undefined };
}

/** Wraps a page query (columns field, value, row) so that it answers one packed row. */
function packedPageSql(pageSql: string): string {
  return `SELECT COUNT(*) AS n, group_concat(${PACKED_RECORD}, '' ORDER BY field, value) AS data FROM (${pageSql})`;
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

/**
 * The scan of one export. Identifiers are appended without an index (sequential writes);
 * the index is built once, sorted, when the plan is first read. The plan is then read in
 * (field, value) order, so every lookup into the members table, and every commit of an
 * acknowledged batch, walks the B-trees in order instead of jumping around them: with
 * millions of members that is the difference between seconds and minutes.
 */
class SqliteAudienceScan implements AudienceScan {
  private readonly table: string;
  private readonly name: string;
  private readonly insert: BulkInsert;
  private indexed = false;
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly audienceId: number,
  ) {
    scanCounter += 1;
    this.name = `audience_scan_${process.pid}_${scanCounter}`;
    this.table = `temp.${this.name}`;
    db.exec(`CREATE TABLE ${this.table} (field INTEGER NOT NULL, value BLOB NOT NULL, row INTEGER NOT NULL)`);
    this.insert = new BulkInsert(db, `INSERT INTO ${this.table} (field, value, row) VALUES`, '(?, ?, ?)', '', 3);
  }

  add(batch: IdentifierList): Promise<void> {
    if (this.indexed) throw new InternalError('identifiers added to an audience scan after its plan was read');
    const insert = this.insert;
    this.db.transaction(() => {
      for (let i = 0; i < batch.length; i++) insert.add(batch.code(i), batch.bytes(i), batch.row(i));
      insert.flush();
    })();
    return Promise.resolve();
  }

  /** Whether the audience had no members when the plan was first read (fixed for the run). */
  private emptyAtPlan = false;

  /** Builds the (field, value, row) index once, after the last add. */
  private index(): void {
    if (this.indexed) return;
    // The index is built by one external sort: give it some room while it runs, then shrink
    // the cache back. 16 MB builds the index of 3.3M identifiers as fast as 64 MB did, and the
    // memory it takes stays with the process (malloc keeps it) until the run ends.
    const cache = this.db.pragma('temp.cache_size', { simple: true }) as number;
    this.db.pragma('temp.cache_size = -16384');
    try {
      this.db.exec(`CREATE INDEX temp.${this.name}_key ON ${this.name} (field, value, row)`);
    } finally {
      this.db.pragma(`temp.cache_size = ${cache}`);
    }
    this.indexed = true;
    this.emptyAtPlan = this.audienceIsEmpty();
  }

  /** Set by counts(); size() computes it only when asked first. */
  private distinctCount: number | undefined;

  size(): Promise<number> {
    this.index();
    this.distinctCount ??= (this.db.prepare(`SELECT COUNT(*) AS n FROM (SELECT 1 FROM ${this.table} GROUP BY field, value)`).get() as { n: number }).n;
    return Promise.resolve(this.distinctCount);
  }

  /** True when the audience has no row at all (a first run): nothing to look up. */
  private audienceIsEmpty(): boolean {
    return this.db.prepare('SELECT 1 FROM audience_members WHERE audience = ? LIMIT 1').get(this.audienceId) === undefined;
  }

  /** HAVING clause selecting the distinct scan identifiers to add, given the mode. */
  private addsHaving(options: AudiencePlanOptions): string | undefined {
    if (options.mode === 'remove') return undefined;
    if (options.full || this.emptyAtPlan) return '1';
    return `NOT EXISTS (SELECT 1 FROM audience_members m WHERE m.audience = $audience AND m.field = s.field AND m.value = s.value
              AND m.present = 1 AND m.sent_at >= $refreshBefore)`;
  }

  /** Removals: members missing from the scan (mirror), or the scan's identifiers not yet removed (remove mode). */
  private removesQuery(options: AudiencePlanOptions): { sql: string; keyset: string } | undefined {
    if (options.mode === 'mirror') {
      return {
        sql: `SELECT m.field AS field, m.value AS value, 0 AS row FROM audience_members m
              WHERE m.audience = $audience AND %KEYSET% AND m.present = 1
                AND NOT EXISTS (SELECT 1 FROM ${this.table} s WHERE s.field = m.field AND s.value = m.value)
              ORDER BY m.field, m.value`,
        keyset: '(m.field, m.value) > ($field, $value)',
      };
    }
    if (options.mode === 'remove') {
      const having = options.full
        ? '1'
        : 'NOT EXISTS (SELECT 1 FROM audience_members m WHERE m.audience = $audience AND m.field = s.field AND m.value = s.value AND m.present = 0)';
      return {
        sql: `SELECT s.field AS field, s.value AS value, 0 AS row FROM ${this.table} s WHERE %KEYSET% GROUP BY s.field, s.value HAVING ${having} ORDER BY s.field, s.value`,
        keyset: '(s.field, s.value) > ($field, $value)',
      };
    }
    return undefined;
  }

  private bind(sql: string, params: Record<string, number | Buffer>): Record<string, number | Buffer> {
    return Object.fromEntries(Object.entries(params).filter(([k]) => sql.includes(`$${k}`)));
  }

  /**
   * Everything the plan counts, in one pass over the scan's distinct identifiers joined to the
   * members, plus one count of the members (instead of a pass per number).
   */
  private tally(refreshBefore: number): { distinct: number; present: number; fresh: number; tombstoned: number; members: number } {
    this.index();
    if (this.emptyAtPlan) {
      // A first run: no member to look up.
      const distinct = (this.db.prepare(`SELECT COUNT(*) AS n FROM (SELECT 1 FROM ${this.table} GROUP BY field, value)`).get() as { n: number }).n;
      return { distinct, present: 0, fresh: 0, tombstoned: 0, members: 0 };
    }
    const row = this.db
      .prepare(
        `SELECT COUNT(*) AS distinct_ids,
           COALESCE(SUM(m.present = 1), 0) AS present,
           COALESCE(SUM(m.present = 1 AND m.sent_at >= $refreshBefore), 0) AS fresh,
           COALESCE(SUM(m.present = 0), 0) AS tombstoned
         FROM (SELECT field, value FROM ${this.table} GROUP BY field, value) s
         LEFT JOIN audience_members m ON m.audience = $audience AND m.field = s.field AND m.value = s.value`,
      )
      .get({ audience: this.audienceId, refreshBefore }) as { distinct_ids: number; present: number; fresh: number; tombstoned: number };
    const members = (this.db.prepare('SELECT COUNT(*) AS n FROM audience_members WHERE audience = ? AND present = 1').get(this.audienceId) as { n: number }).n;
    return { distinct: row.distinct_ids, present: row.present, fresh: row.fresh, tombstoned: row.tombstoned, members };
  }

  counts(options: AudiencePlanOptions): Promise<AudiencePlanCounts> {
    const t = this.tally(options.refreshBefore);
    let adds = 0;
    let removes = 0;
    if (options.mode === 'remove') removes = options.full ? t.distinct : t.distinct - t.tombstoned;
    else adds = options.full ? t.distinct : t.distinct - t.fresh;
    if (options.mode === 'mirror') removes = t.members - t.present;
    const unchanged = options.mode === 'remove' ? t.distinct - removes : t.distinct - adds;
    this.distinctCount = t.distinct;
    return Promise.resolve({ adds, removes, unchanged, members: t.members, distinct: t.distinct });
  }

  async *adds(options: AudiencePlanOptions, batchSize: number): AsyncGenerator<IdentifierList> {
    this.index();
    const having = this.addsHaving(options);
    if (having === undefined) return;
    const sql = packedPageSql(`SELECT s.field AS field, s.value AS value, MIN(s.row) AS row FROM ${this.table} s WHERE (s.field, s.value) > ($field, $value)
      GROUP BY s.field, s.value HAVING ${having} ORDER BY s.field, s.value LIMIT $limit`);
    const stmt = this.db.prepare(sql);
    let field = -1;
    let value: Buffer = Buffer.alloc(0);
    for (;;) {
      const page = readPackedPage(stmt, this.bind(sql, { audience: this.audienceId, refreshBefore: options.refreshBefore, field, value, limit: batchSize }));
      if (!page.last) return;
      [field, value] = page.last;
      yield page.list;
      if (page.count < batchSize) return;
    }
  }

  async *removes(options: AudiencePlanOptions, batchSize: number): AsyncGenerator<IdentifierList> {
    this.index();
    const rem = this.removesQuery(options);
    if (!rem) return;
    const sql = packedPageSql(`${rem.sql.replace('%KEYSET%', rem.keyset)} LIMIT $limit`);
    const stmt = this.db.prepare(sql);
    let field = -1;
    let value: Buffer = Buffer.alloc(0);
    for (;;) {
      const page = readPackedPage(stmt, this.bind(sql, { audience: this.audienceId, field, value, limit: batchSize }));
      if (!page.last) return;
      [field, value] = page.last;
      yield page.list;
      if (page.count < batchSize) return;
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
