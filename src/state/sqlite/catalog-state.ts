/**
 * Catalog state in SQLite: per product id, the content hash of what was last sent, the
 * service's product_key and when it was sent; and the scan of one feed in a temporary table
 * (last occurrence of an id wins), read back page by page with keyset pagination.
 */
import type { Statement } from 'better-sqlite3';
import { tmpdir } from 'node:os';
import { InternalError } from '../../errors.js';
import type {
  CatalogPlanCounts,
  CatalogScan,
  CatalogState,
  CommittedProduct,
  FingerprintLookupAddress,
  FingerprintMatch,
  ProductToDelete,
  ProductToSend,
  ScannedOccurrence,
  ServiceProduct,
} from '../store.js';
import { fingerprintLookupAddress, SqliteFingerprintLookup } from './catalog-fingerprint-lookup.js';
import { writeState, type Db } from './database.js';
import { rawStatement } from './kept-wrappers.js';
import { SpoolFile, temporaryFolderFailure } from '../spool-file.js';

/**
 * The products a mirror run of the job `$owner` may delete, of the state table aliased p: its
 * own and those of no job (all of them when $owner is null).
 */
const DELETABLE = '(p.job IS NULL OR p.job = $owner OR $owner IS NULL)';

/** Most rows of one commit statement (a PUT holds at most 25 products). */
const COMMIT_ROWS = 25;

function warningsJson(warnings: readonly string[] | undefined): string | null {
  return warnings === undefined || warnings.length === 0 ? null : JSON.stringify(warnings);
}

let tableCounter = 0;
/**
 * Numbers of the temporary tables dropped, given to the next ones: the statements prepared on a
 * table's name are kept for the connection's life (kept-wrappers.ts), so the names a long-lived
 * scheduler uses must not grow with every run.
 */
const freeTableNumbers: number[] = [];
const liveTableNumbers = new Set<number>();

/** A name for a temporary table of this connection, unique in the process until it is dropped. */
function tempTableName(kind: string): string {
  const n = freeTableNumbers.pop() ?? ++tableCounter;
  liveTableNumbers.add(n);
  return `catalog_${kind}_${process.pid}_${n}`;
}

/** Drops a temporary table named by tempTableName (with its schema), and frees its name. */
function dropTempTable(db: Db, table: string): void {
  db.exec(`DROP TABLE IF EXISTS ${table}`);
  const n = Number(/_(\d+)$/.exec(table)?.[1]);
  if (liveTableNumbers.delete(n)) freeTableNumbers.push(n);
}

/**
 * Collects the listed products in a temporary table (id, product_key), one transaction per
 * page, then gives its name to `use`; the table is dropped afterwards, also when listing fails
 * half way (which leaves everything else as it was).
 */
/**
 * Writes a temporary table. SQLite keeps them in the system's temporary folder (temp_store =
 * FILE): a full one fails the run with where and what to do, not as an internal error.
 */
function inTemporaryTable(write: () => void): void {
  try {
    write();
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'SQLITE_FULL') throw error;
    throw temporaryFolderFailure('cannot write a temporary table', process.env.SQLITE_TMPDIR ?? tmpdir(), error);
  }
}

async function withServiceList<T>(db: Db, kind: string, products: AsyncIterable<readonly ServiceProduct[]>, use: (table: string) => T): Promise<T> {
  const table = `temp.${tempTableName(kind)}`;
  db.exec(`CREATE TABLE ${table} (id TEXT PRIMARY KEY, product_key TEXT NOT NULL)`);
  try {
    const insert = db.prepare(`INSERT OR REPLACE INTO ${table} (id, product_key) VALUES (?, ?)`);
    for await (const page of products) {
      inTemporaryTable(
        db.transaction(() => {
          for (const p of page) insert.run(p.id, p.productKey);
        }),
      );
    }
    return use(table);
  } finally {
    dropTempTable(db, table);
  }
}

export class SqliteCatalogState implements CatalogState {
  private readonly catalog: number;
  /** Commit statements by row count, prepared once. */
  private readonly commitStatements = new Map<number, Statement>();
  private deleteStatement: Statement | undefined;
  private forgetStatement: Statement | undefined;
  private lookup: SqliteFingerprintLookup | undefined;

  constructor(
    private readonly db: Db,
    catalogId: string,
    /** The job whose products are committed here (null: none). */
    private readonly owner: string | null,
  ) {
    db.prepare('INSERT OR IGNORE INTO catalogs (catalog_id) VALUES (?)').run(catalogId);
    this.catalog = (db.prepare('SELECT id FROM catalogs WHERE catalog_id = ?').get(catalogId) as { id: number }).id;
  }

  scan(): Promise<CatalogScan> {
    return Promise.resolve(new SqliteCatalogScan(this.db, this.catalog, this.owner));
  }

  productCount(): Promise<number> {
    return Promise.resolve((this.db.prepare('SELECT COUNT(*) AS n FROM catalog_products WHERE catalog = ?').get(this.catalog) as { n: number }).n);
  }

  hasProducts(): Promise<boolean> {
    return Promise.resolve(this.db.prepare('SELECT 1 AS found FROM catalog_products WHERE catalog = ? LIMIT 1').get(this.catalog) !== undefined);
  }

  hasFingerprints(): Promise<boolean> {
    const row = this.db.prepare('SELECT 1 AS found FROM catalog_products WHERE catalog = ? AND raw_fp IS NOT NULL LIMIT 1').get(this.catalog);
    return Promise.resolve(row !== undefined);
  }

  productsByFingerprint(fingerprints: readonly Buffer[]): Promise<(FingerprintMatch | undefined)[]> {
    this.lookup ??= new SqliteFingerprintLookup(this.db, this.catalog);
    return Promise.resolve(this.lookup.find(fingerprints));
  }

  fingerprintLookupAddress(): FingerprintLookupAddress | undefined {
    return fingerprintLookupAddress(this.db, this.catalog);
  }

  commitUpserts(products: readonly CommittedProduct[], sentAt: number): Promise<void> {
    // A refused commit (a full disk) is a StateError that names the file: it stops the upload.
    return writeState(this.db, () => this.commitUpsertRows(products, sentAt));
  }

  private commitUpsertRows(products: readonly CommittedProduct[], sentAt: number): void {
    this.db.transaction(() => {
      for (let from = 0; from < products.length; from += COMMIT_ROWS) {
        const rows = Math.min(COMMIT_ROWS, products.length - from);
        const params: unknown[] = new Array<unknown>(rows * 6);
        for (let r = 0; r < rows; r++) {
          const p = products[from + r];
          if (p === undefined) continue;
          const at = r * 6;
          params[at] = this.catalog;
          params[at + 1] = p.id;
          params[at + 2] = p.contentHash;
          params[at + 3] = p.productKey;
          params[at + 4] = sentAt;
          params[at + 5] = this.owner;
        }
        this.commitStatement(rows).run(params);
      }
    })();
  }

  forgetContent(ids: readonly string[]): Promise<void> {
    this.forgetStatement ??= this.db.prepare('UPDATE catalog_products SET content_hash = NULL, raw_fp = NULL, feed_warnings = NULL WHERE catalog = ? AND id = ?');
    return this.runForEachId(this.forgetStatement, ids);
  }

  commitDeletes(ids: readonly string[]): Promise<void> {
    this.deleteStatement ??= this.db.prepare('DELETE FROM catalog_products WHERE catalog = ? AND id = ?');
    return this.runForEachId(this.deleteStatement, ids);
  }

  /** Runs `statement` (catalog, id) for each id, in one transaction. */
  private runForEachId(statement: Statement, ids: readonly string[]): Promise<void> {
    return writeState(this.db, () =>
      this.db.transaction(() => {
        for (const id of ids) statement.run(this.catalog, id);
      })(),
    );
  }

  /**
   * The upsert of `rows` acknowledged products (an id appears at most once per PUT), now the
   * job's own. The raw fingerprint is forgotten: it was that of the bytes of the previous
   * content. (Saving the new one here would cost a random write in its index per product and
   * request.)
   */
  private commitStatement(rows: number): Statement {
    let stmt = this.commitStatements.get(rows);
    if (stmt === undefined) {
      stmt = this.db.prepare(
        `INSERT INTO catalog_products (catalog, id, content_hash, product_key, sent_at, job)
         VALUES ${Array.from({ length: rows }, () => '(?, ?, ?, ?, ?, ?)').join(', ')}
         ON CONFLICT (catalog, id) DO UPDATE SET content_hash = excluded.content_hash,
           product_key = COALESCE(excluded.product_key, catalog_products.product_key), sent_at = excluded.sent_at,
           raw_fp = NULL, feed_warnings = NULL, job = excluded.job`,
      );
      this.commitStatements.set(rows, stmt);
    }
    return stmt;
  }

  rebuild(products: AsyncIterable<readonly ServiceProduct[]>): Promise<number> {
    // Collect first, then swap in one transaction: a failure while listing leaves the old
    // state untouched.
    return withServiceList(this.db, 'rebuild', products, (table) =>
      this.db.transaction(() => {
        this.db.prepare('DELETE FROM catalog_products WHERE catalog = ?').run(this.catalog);
        return this.db
          .prepare(`INSERT INTO catalog_products (catalog, id, content_hash, product_key, sent_at) SELECT ?, id, NULL, product_key, NULL FROM ${table}`)
          .run(this.catalog).changes;
      })(),
    );
  }

  reconcile(products: AsyncIterable<readonly ServiceProduct[]>): Promise<{ added: number; forgotten: number }> {
    return withServiceList(this.db, 'reconcile', products, (table) =>
      this.db.transaction(() => {
        const forgotten = this.db.prepare(`DELETE FROM catalog_products WHERE catalog = ? AND id NOT IN (SELECT id FROM ${table})`).run(this.catalog).changes;
        // The service's key wins: a product deleted outside adsync and created again by the
        // interrupted upload has a new one, and a delete by the old key would not find it.
        this.db
          .prepare(
            `UPDATE catalog_products AS p SET product_key = t.product_key FROM ${table} AS t
             WHERE p.catalog = ? AND t.id = p.id AND p.product_key IS NOT t.product_key`,
          )
          .run(this.catalog);
        // Those the state lacks were left by the marked upload: its job's (of no job when
        // uploads of several jobs were marked), so that another job's mirror run does not
        // delete them while they may still be in that job's feed.
        const added = this.db
          .prepare(
            `INSERT INTO catalog_products (catalog, id, content_hash, product_key, sent_at, job)
             SELECT ?, t.id, NULL, t.product_key, NULL, (SELECT upload_job FROM catalogs WHERE id = ?) FROM ${table} t
             WHERE NOT EXISTS (SELECT 1 FROM catalog_products p WHERE p.catalog = ? AND p.id = t.id)`,
          )
          .run(this.catalog, this.catalog, this.catalog).changes;
        return { added, forgotten };
      })(),
    );
  }

  uploadInterrupted(): Promise<boolean> {
    const row = this.db.prepare('SELECT upload_started_at AS at FROM catalogs WHERE id = ?').get(this.catalog) as { at: number | null } | undefined;
    return Promise.resolve(row?.at !== null && row?.at !== undefined);
  }

  beginUpload(): Promise<void> {
    // The job that marked it; NULL (unknown) once another job's upload is marked too.
    this.db
      .prepare(
        `UPDATE catalogs SET upload_started_at = COALESCE(upload_started_at, $now),
           upload_job = CASE WHEN upload_started_at IS NULL OR upload_job IS $owner THEN $owner ELSE NULL END WHERE id = $catalog`,
      )
      .run({ now: Date.now(), owner: this.owner, catalog: this.catalog });
    return Promise.resolve();
  }

  endUpload(): Promise<void> {
    this.db.prepare('UPDATE catalogs SET upload_started_at = NULL, upload_job = NULL WHERE id = ?').run(this.catalog);
    return Promise.resolve();
  }

  productKeys(ids: readonly string[]): Promise<Map<string, string>> {
    const stmt = this.db.prepare('SELECT product_key FROM catalog_products WHERE catalog = ? AND id = ? AND product_key IS NOT NULL');
    const out = new Map<string, string>();
    for (const id of ids) {
      const row = stmt.get(this.catalog, id) as { product_key: string } | undefined;
      if (row) out.set(id, row.product_key);
    }
    return Promise.resolve(out);
  }

  productSetId(name: string): Promise<string | undefined> {
    const row = this.db.prepare('SELECT id FROM catalog_product_sets WHERE catalog = ? AND name = ?').get(this.catalog, name) as { id: string } | undefined;
    return Promise.resolve(row?.id);
  }

  saveProductSet(name: string, id: string): Promise<void> {
    this.db.prepare('INSERT OR REPLACE INTO catalog_product_sets (catalog, name, id) VALUES (?, ?, ?)').run(this.catalog, name, id);
    return Promise.resolve();
  }
}

type UpsertRow = [seq: number, id: string, row: number, line: number, contentHash: string, payloadAt: number | null, payloadLength: number | null, isNew: number];

/** Rows per insert statement of the scan (one call into SQLite per 64 occurrences). */
const SCAN_ROWS_PER_STATEMENT = 64;
const SCAN_COLUMNS = 11;
/** Read a page's payloads in one piece when they lie this close together. */
const PAYLOAD_GAP_READ_BYTES = 64 * 1024;

class SqliteCatalogScan implements CatalogScan {
  private readonly table: string;
  private readonly insertMany: Statement;
  private readonly insertOne: Statement;
  private readonly params: unknown[] = new Array<unknown>(SCAN_ROWS_PER_STATEMENT * SCAN_COLUMNS);
  private filled = 0;
  private readonly payloads = new SpoolFile('payloads');
  /** What the plan compares with: the saved state, or a temporary copy of the service's list (dry run). */
  private known = 'main.catalog_products';
  private knownIsTemporary = false;
  private seq = 0;
  private occurrences = 0;
  /**
   * Occurrences added, by kind: skipped as unchanged (same = 1), read and valid (valid = 1,
   * same = 0; `fingerprinted` of them with a raw fingerprint), rejected (valid = 0). A later
   * occurrence of an id replaces the earlier row, so the table holds at most this many rows of
   * each kind: a query for rows of a kind never added is not run (a re-run of an unchanged feed
   * adds only unchanged ones, and its plan then reads nothing but counts).
   */
  private readonly added = { unchanged: 0, read: 0, fingerprinted: 0, rejected: 0 };
  /** Valid items read (not skipped as unchanged), once counts() has counted them. */
  private readValid: number | undefined;

  constructor(
    private readonly db: Db,
    private readonly catalog: number,
    private readonly owner: string | null,
  ) {
    const name = tempTableName('scan');
    this.table = `temp.${name}`;
    // valid = 0: the id is in the feed but its item was rejected; kept, never deleted.
    // same = 1: the item's raw fingerprint is the one saved for the product: unchanged, not
    // read (no content hash, no payload). payload_at, payload_len: where the payload is in
    // the spool file. fp, warnings: see ScannedProduct.
    // Rows in feed order (seq is the rowid): the plan is read in that order by ranges of seq.
    db.exec(`CREATE TABLE ${this.table} (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, row INTEGER NOT NULL,
      line INTEGER NOT NULL, valid INTEGER NOT NULL, same INTEGER NOT NULL, content_hash TEXT, payload_at INTEGER,
      payload_len INTEGER, fp BLOB, warnings TEXT)`);
    // A later occurrence of an id replaces the earlier one (REPLACE deletes the earlier row),
    // also within one statement: rows are inserted in order.
    const head = `INSERT OR REPLACE INTO ${this.table} (id, seq, row, line, valid, same, content_hash, payload_at, payload_len, fp, warnings) VALUES`;
    const row = `(${Array.from({ length: SCAN_COLUMNS }, () => '?').join(', ')})`;
    this.insertMany = db.prepare(`${head} ${Array.from({ length: SCAN_ROWS_PER_STATEMENT }, () => row).join(', ')}`);
    this.insertOne = db.prepare(`${head} ${row}`);
  }

  add(batch: readonly ScannedOccurrence[]): Promise<void> {
    inTemporaryTable(this.db.transaction(() => {
      const params = this.params;
      const payloads = this.payloads;
      for (const p of batch) {
        const at = this.filled * SCAN_COLUMNS;
        params[at] = p.id;
        params[at + 1] = ++this.seq;
        params[at + 2] = p.row;
        if ('rejected' in p || 'unchanged' in p) {
          // Not read (rejected, or skipped as unchanged): no content, payload or fingerprint.
          const unchanged = 'unchanged' in p;
          if (unchanged) this.added.unchanged += 1;
          else this.added.rejected += 1;
          params[at + 3] = unchanged ? (p.line ?? 0) : 0;
          params[at + 4] = unchanged ? 1 : 0;
          params[at + 5] = unchanged ? 1 : 0;
          params.fill(null, at + 6, at + SCAN_COLUMNS);
        } else {
          params[at + 3] = p.line ?? 0;
          params[at + 4] = 1;
          params[at + 5] = 0;
          params[at + 6] = p.contentHash;
          params[at + 7] = payloads.append(p.payload);
          params[at + 8] = payloads.lastLength;
          params[at + 9] = p.fingerprint ?? null;
          this.added.read += 1;
          if (p.fingerprint !== undefined) this.added.fingerprinted += 1;
          params[at + 10] = warningsJson(p.warnings);
        }
        if (++this.filled === SCAN_ROWS_PER_STATEMENT) {
          this.insertMany.run(params);
          this.filled = 0;
        }
      }
      for (let r = 0; r < this.filled; r++) this.insertOne.run(params.slice(r * SCAN_COLUMNS, (r + 1) * SCAN_COLUMNS));
      this.filled = 0;
    }));
    this.occurrences += batch.length;
    return Promise.resolve();
  }

  keep(ids: readonly string[]): Promise<void> {
    return this.add(ids.map((id) => ({ id, row: 0, rejected: true })));
  }

  duplicates(): Promise<number> {
    return Promise.resolve(this.occurrences - this.distinctIds());
  }

  private distinctIds(): number {
    return (this.db.prepare(`SELECT COUNT(*) AS n FROM ${this.table}`).get() as { n: number }).n;
  }

  async compareWith(products: AsyncIterable<readonly ServiceProduct[]>): Promise<number> {
    const name = `temp.${tempTableName('known')}`;
    // The layout of catalog_products, so that the plan's queries read either.
    this.db.exec(`CREATE TABLE ${name} (catalog INTEGER NOT NULL, id TEXT NOT NULL, content_hash TEXT, product_key TEXT,
      sent_at INTEGER, job TEXT, PRIMARY KEY (catalog, id)) WITHOUT ROWID`);
    try {
      const n = await withServiceList(this.db, 'listed', products, (listed) =>
        this.db.prepare(`INSERT INTO ${name} (catalog, id, content_hash, product_key, sent_at) SELECT ?, id, NULL, product_key, NULL FROM ${listed}`).run(this.catalog).changes,
      );
      this.dropKnown();
      this.known = name;
      this.knownIsTemporary = true;
      return n;
    } catch (error) {
      dropTempTable(this.db, name);
      throw error;
    }
  }

  counts(options: { mirror: boolean; full: boolean }): Promise<CatalogPlanCounts> {
    // The feed is read: its last payloads go to disk now (a full disk fails the run here, not
    // in the middle of the upload).
    this.payloads.flush();
    const owner = { catalog: this.catalog, owner: this.owner };
    // Products of other jobs are neither deleted nor counted in the share max_delete_ratio limits.
    const known = (this.db.prepare(`SELECT COUNT(*) AS n FROM ${this.known} p WHERE p.catalog = $catalog AND ${DELETABLE}`).get(owner) as { n: number }).n;
    // Items skipped as unchanged (same = 1) are products of the saved state by construction,
    // the job's own (the job is part of their fingerprint, and a product another job takes has
    // its fingerprint forgotten): counted without looking them up, unless the plan is against a
    // copy of the service's list.
    const skipped = this.knownIsTemporary ? 0 : this.unchangedRows();
    const read = skipped === 0 ? '' : 'AND s.same = 0';
    const added = this.added;
    const row =
      added.read === 0 && (skipped > 0 || added.unchanged === 0)
        ? { products: 0, creates: 0, updates: 0 }
        : (this.db
            .prepare(
              `SELECT COUNT(*) AS products,
                 SUM(CASE WHEN p.id IS NULL AND s.same = 0 THEN 1 ELSE 0 END) AS creates,
                 SUM(CASE WHEN p.id IS NOT NULL AND s.same = 0 AND ($full OR p.content_hash IS NULL OR p.content_hash != s.content_hash) THEN 1 ELSE 0 END) AS updates
               FROM ${this.table} s LEFT JOIN ${this.known} p ON p.catalog = $catalog AND p.id = s.id
               WHERE s.valid = 1 ${read}`,
            )
            .get({ catalog: this.catalog, full: options.full ? 1 : 0 }) as { products: number; creates: number | null; updates: number | null });
    let deletes = 0;
    if (options.mirror) {
      // Known products not in the feed: all known ones, less those the feed has (read or skipped).
      // With items skipped, only the rows read are joined, from the scan's side (CROSS JOIN keeps
      // that order): SQLite would otherwise walk every product of the catalog and look each up
      // in the scan (8x slower for an unchanged feed of 200,000 items). Without, it may choose.
      const inFeed =
        read !== '' && added.read + added.rejected === 0
          ? 0
          : (
              this.db
                .prepare(`SELECT COUNT(*) AS n FROM ${this.table} s ${read === '' ? 'JOIN' : 'CROSS JOIN'} ${this.known} p ON p.catalog = $catalog AND p.id = s.id WHERE ${DELETABLE} ${read}`)
                .get(owner) as { n: number }
            ).n;
      deletes = known - inFeed - skipped;
    }
    const creates = row.creates ?? 0;
    const updates = row.updates ?? 0;
    // Read and valid: all of them when none was skipped.
    this.readValid = row.products;
    const products = row.products + skipped;
    return Promise.resolve({ products, creates, updates, unchanged: products - creates - updates, deletes, known });
  }

  /** Rows skipped as unchanged (same = 1): counted as added when no id occurred twice. */
  private unchangedRows(): number {
    if (this.added.unchanged === 0) return 0;
    if (this.distinctIds() === this.occurrences) return this.added.unchanged;
    return (this.db.prepare(`SELECT COUNT(*) AS n FROM ${this.table} WHERE same = 1`).get() as { n: number }).n;
  }

  saveFingerprints(): Promise<number> {
    // Only against the saved state itself (not a dry run's copy of the service's list), and
    // only for the job's own products: another job's run (jobs have their own locks, so two
    // jobs of one catalog may run at once) may have taken one since this run's claim, and a
    // fingerprint of this job on it would skip the item as unchanged while the product is the
    // other job's (never taken back, and counted wrong in counts()).
    if (this.knownIsTemporary || this.added.fingerprinted === 0) return Promise.resolve(0);
    const changes = this.db
      .prepare(
        `UPDATE main.catalog_products AS p SET raw_fp = s.fp, feed_warnings = s.warnings
         FROM ${this.table} AS s
         WHERE p.catalog = ? AND p.id = s.id AND s.valid = 1 AND s.same = 0 AND s.fp IS NOT NULL
           AND p.content_hash = s.content_hash AND p.raw_fp IS NOT s.fp AND p.job IS ?`,
      )
      .run(this.catalog, this.owner).changes;
    return Promise.resolve(changes);
  }

  claim(): Promise<Map<string, number>> {
    const taken = new Map<string, number>();
    // Items skipped as unchanged (same = 1) are the job's own already (see counts): when every
    // item was (an unchanged feed), there is nothing to take, and nothing is looked at.
    if (this.knownIsTemporary || this.owner === null || this.readValid === 0) return Promise.resolve(taken);
    const params = { catalog: this.catalog, owner: this.owner };
    // From the items read to their products (CROSS JOIN keeps that order): not a pass over
    // every product of the catalog, other jobs' included, per run.
    const read = `SELECT s.id FROM ${this.table} AS s WHERE s.valid = 1 AND s.same = 0`;
    const others = this.db.prepare(
      `SELECT p.job AS job, COUNT(*) AS n FROM ${this.table} AS s CROSS JOIN main.catalog_products AS p
       ON p.catalog = $catalog AND p.id = s.id WHERE s.valid = 1 AND s.same = 0 AND p.job IS NOT NULL AND p.job IS NOT $owner GROUP BY p.job`,
    );
    for (const row of others.all(params) as { job: string; n: number }[]) taken.set(row.job, row.n);
    // A fingerprint saved by another job's run was made with that job in it: forgotten.
    return writeState(this.db, () => {
      this.db
        .prepare(`UPDATE main.catalog_products AS p SET job = $owner, raw_fp = NULL, feed_warnings = NULL WHERE p.catalog = $catalog AND p.job IS NOT $owner AND p.id IN (${read})`)
        .run(params);
      return taken;
    });
  }

  async *upserts(options: { full: boolean }, batchSize: number): AsyncGenerator<ProductToSend[]> {
    const stmt = rawStatement(
      this.db,
      `SELECT s.seq, s.id, s.row, s.line, s.content_hash, s.payload_at, s.payload_len, (p.id IS NULL) AS is_new
       FROM ${this.table} s LEFT JOIN ${this.known} p ON p.catalog = $catalog AND p.id = s.id
       WHERE s.valid = 1 AND s.same = 0 AND s.seq > $after AND ($full OR p.id IS NULL OR p.content_hash IS NULL OR p.content_hash != s.content_hash)
       ORDER BY s.seq LIMIT $limit`,
    );
    let after = 0;
    for (;;) {
      const rows = stmt.all({ catalog: this.catalog, after, full: options.full ? 1 : 0, limit: batchSize }) as UpsertRow[];
      if (rows.length === 0) return;
      after = rows[rows.length - 1]?.[0] ?? after;
      const payloads = this.readPayloads(rows);
      const page: ProductToSend[] = [];
      for (let i = 0; i < rows.length; i++) {
        const [, id, row, line, contentHash, , , isNew] = rows[i] as UpsertRow;
        page.push({ id, row, line, contentHash, payload: payloads[i] as Buffer, isNew: isNew === 1 });
      }
      yield page;
      if (rows.length < batchSize) return;
    }
  }

  /** The payloads of a page of the plan: in one read when they lie close together (a first run), else one by one. */
  private readPayloads(rows: readonly UpsertRow[]): Buffer[] {
    let first = Infinity;
    let end = 0;
    let total = 0;
    for (const [, id, , , , at, length] of rows) {
      if (at === null || length === null) throw new InternalError(`product ${id} is to be sent but its payload is not in the scan`);
      first = Math.min(first, at);
      end = Math.max(end, at + length);
      total += length;
    }
    if (end - first <= total + PAYLOAD_GAP_READ_BYTES) {
      const bytes = this.payloads.read(first, end - first);
      return rows.map(([, , , , , at, length]) => bytes.subarray((at ?? 0) - first, (at ?? 0) - first + (length ?? 0)));
    }
    return rows.map(([, , , , , at, length]) => this.payloads.read(at ?? 0, length ?? 0));
  }

  async *deletes(batchSize: number): AsyncGenerator<ProductToDelete[]> {
    const stmt = this.db.prepare(
      `SELECT p.id, p.product_key FROM ${this.known} p
       WHERE p.catalog = $catalog AND p.id > $after AND ${DELETABLE} AND NOT EXISTS (SELECT 1 FROM ${this.table} s WHERE s.id = p.id)
       ORDER BY p.id LIMIT $limit`,
    );
    let after = '';
    for (;;) {
      const rows = stmt.all({ catalog: this.catalog, owner: this.owner, after, limit: batchSize }) as { id: string; product_key: string | null }[];
      if (rows.length === 0) return;
      after = rows[rows.length - 1]?.id ?? after;
      yield rows.map((r) => ({ id: r.id, productKey: r.product_key ?? '' }));
      if (rows.length < batchSize) return;
    }
  }

  close(): Promise<void> {
    this.payloads.close();
    dropTempTable(this.db, this.table);
    this.dropKnown();
    return Promise.resolve();
  }

  private dropKnown(): void {
    if (this.knownIsTemporary) dropTempTable(this.db, this.known);
    this.knownIsTemporary = false;
    this.known = 'main.catalog_products';
  }
}
