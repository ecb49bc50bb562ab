/**
 * Catalog state in SQLite: per product id, the content hash of what was last sent, the
 * service's product_key and when it was sent; and the scan of one feed in a temporary table
 * (last occurrence of an id wins), read back page by page with keyset pagination.
 */
import type {
  CatalogPlanCounts,
  CatalogScan,
  CatalogState,
  ProductToDelete,
  ProductToSend,
  ScannedOccurrence,
  ServiceProduct,
} from '../store.js';
import type { Db } from './database.js';

let tableCounter = 0;

/** A name for a temporary table of this connection, unique in the process. */
function tempTableName(kind: string): string {
  tableCounter += 1;
  return `catalog_${kind}_${process.pid}_${tableCounter}`;
}

/** Fills `table` (id, product_key) with the listed products, one transaction per page. */
async function fillFromService(db: Db, table: string, products: AsyncIterable<readonly ServiceProduct[]>): Promise<void> {
  const insert = db.prepare(`INSERT OR REPLACE INTO ${table} (id, product_key) VALUES (?, ?)`);
  for await (const page of products) {
    db.transaction(() => {
      for (const p of page) insert.run(p.id, p.productKey);
    })();
  }
}

export class SqliteCatalogState implements CatalogState {
  private readonly catalog: number;

  constructor(
    private readonly db: Db,
    catalogId: string,
  ) {
    db.prepare('INSERT OR IGNORE INTO catalogs (catalog_id) VALUES (?)').run(catalogId);
    this.catalog = (db.prepare('SELECT id FROM catalogs WHERE catalog_id = ?').get(catalogId) as { id: number }).id;
  }

  scan(): Promise<CatalogScan> {
    return Promise.resolve(new SqliteCatalogScan(this.db, this.catalog));
  }

  productCount(): Promise<number> {
    return Promise.resolve((this.db.prepare('SELECT COUNT(*) AS n FROM catalog_products WHERE catalog = ?').get(this.catalog) as { n: number }).n);
  }

  commitUpserts(products: readonly { id: string; contentHash: string | null; productKey: string | null }[], sentAt: number): Promise<void> {
    const upsert = this.db.prepare(
      `INSERT INTO catalog_products (catalog, id, content_hash, product_key, sent_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (catalog, id) DO UPDATE SET content_hash = excluded.content_hash,
         product_key = COALESCE(excluded.product_key, catalog_products.product_key), sent_at = excluded.sent_at`,
    );
    this.db.transaction(() => {
      for (const p of products) upsert.run(this.catalog, p.id, p.contentHash, p.productKey, sentAt);
    })();
    return Promise.resolve();
  }

  commitDeletes(ids: readonly string[]): Promise<void> {
    const del = this.db.prepare('DELETE FROM catalog_products WHERE catalog = ? AND id = ?');
    this.db.transaction(() => {
      for (const id of ids) del.run(this.catalog, id);
    })();
    return Promise.resolve();
  }

  async rebuild(products: AsyncIterable<readonly ServiceProduct[]>): Promise<number> {
    // Collect first (in a temporary table), then swap in one transaction: a failure while
    // listing leaves the old state untouched.
    const table = `temp.${tempTableName('rebuild')}`;
    this.db.exec(`CREATE TABLE ${table} (id TEXT PRIMARY KEY, product_key TEXT NOT NULL)`);
    try {
      await fillFromService(this.db, table, products);
      let n = 0;
      this.db.transaction(() => {
        this.db.prepare('DELETE FROM catalog_products WHERE catalog = ?').run(this.catalog);
        n = this.db
          .prepare(`INSERT INTO catalog_products (catalog, id, content_hash, product_key, sent_at) SELECT ?, id, NULL, product_key, NULL FROM ${table}`)
          .run(this.catalog).changes;
      })();
      return n;
    } finally {
      this.db.exec(`DROP TABLE IF EXISTS ${table}`);
    }
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

interface UpsertRow {
  seq: number;
  id: string;
  row: number;
  line: number;
  content_hash: string;
  payload: string;
  is_new: number;
}

class SqliteCatalogScan implements CatalogScan {
  private readonly table: string;
  private readonly upsert: import('better-sqlite3').Statement;
  /** What the plan compares with: the saved state, or a temporary copy of the service's list (dry run). */
  private known = 'main.catalog_products';
  private knownIsTemporary = false;
  private seq = 0;
  private occurrences = 0;

  constructor(
    private readonly db: Db,
    private readonly catalog: number,
  ) {
    const name = tempTableName('scan');
    this.table = `temp.${name}`;
    // valid = 0: the id is in the feed but its item was rejected; kept, never deleted.
    db.exec(`CREATE TABLE ${this.table} (id TEXT PRIMARY KEY, seq INTEGER NOT NULL, row INTEGER NOT NULL,
      line INTEGER NOT NULL, valid INTEGER NOT NULL, content_hash TEXT, payload TEXT) WITHOUT ROWID`);
    db.exec(`CREATE INDEX ${name}_seq ON ${name} (seq)`);
    this.upsert = db.prepare(
      `INSERT INTO ${this.table} (id, seq, row, line, valid, content_hash, payload) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, row = excluded.row, line = excluded.line, valid = excluded.valid,
         content_hash = excluded.content_hash, payload = excluded.payload`,
    );
  }

  add(batch: readonly ScannedOccurrence[]): Promise<void> {
    this.db.transaction(() => {
      for (const p of batch) {
        if ('rejected' in p) this.upsert.run(p.id, ++this.seq, p.row, 0, 0, null, null);
        else this.upsert.run(p.id, ++this.seq, p.row, p.line ?? 0, 1, p.contentHash, p.payload);
      }
    })();
    this.occurrences += batch.length;
    return Promise.resolve();
  }

  keep(ids: readonly string[]): Promise<void> {
    return this.add(ids.map((id) => ({ id, row: 0, rejected: true })));
  }

  duplicates(): Promise<number> {
    const distinct = (this.db.prepare(`SELECT COUNT(*) AS n FROM ${this.table}`).get() as { n: number }).n;
    return Promise.resolve(this.occurrences - distinct);
  }

  async compareWith(products: AsyncIterable<readonly ServiceProduct[]>): Promise<number> {
    const name = `temp.${tempTableName('known')}`;
    // The layout of catalog_products, so that the plan's queries read either.
    this.db.exec(`CREATE TABLE ${name} (catalog INTEGER NOT NULL, id TEXT NOT NULL, content_hash TEXT, product_key TEXT,
      sent_at INTEGER, PRIMARY KEY (catalog, id)) WITHOUT ROWID`);
    const listed = `temp.${tempTableName('listed')}`;
    this.db.exec(`CREATE TABLE ${listed} (id TEXT PRIMARY KEY, product_key TEXT NOT NULL)`);
    try {
      await fillFromService(this.db, listed, products);
      const n = this.db.prepare(`INSERT INTO ${name} (catalog, id, content_hash, product_key, sent_at) SELECT ?, id, NULL, product_key, NULL FROM ${listed}`).run(this.catalog).changes;
      this.dropKnown();
      this.known = name;
      this.knownIsTemporary = true;
      return n;
    } catch (error) {
      this.db.exec(`DROP TABLE IF EXISTS ${name}`);
      throw error;
    } finally {
      this.db.exec(`DROP TABLE IF EXISTS ${listed}`);
    }
  }

  counts(options: { mirror: boolean; full: boolean }): Promise<CatalogPlanCounts> {
    const row = this.db
      .prepare(
        `SELECT COUNT(*) AS products,
           SUM(CASE WHEN p.id IS NULL THEN 1 ELSE 0 END) AS creates,
           SUM(CASE WHEN p.id IS NOT NULL AND ($full OR p.content_hash IS NULL OR p.content_hash != s.content_hash) THEN 1 ELSE 0 END) AS updates
         FROM ${this.table} s LEFT JOIN ${this.known} p ON p.catalog = $catalog AND p.id = s.id
         WHERE s.valid = 1`,
      )
      .get({ catalog: this.catalog, full: options.full ? 1 : 0 }) as { products: number; creates: number | null; updates: number | null };
    const known = (this.db.prepare(`SELECT COUNT(*) AS n FROM ${this.known} WHERE catalog = ?`).get(this.catalog) as { n: number }).n;
    const deletes = options.mirror
      ? (
          this.db
            .prepare(`SELECT COUNT(*) AS n FROM ${this.known} p WHERE p.catalog = ? AND NOT EXISTS (SELECT 1 FROM ${this.table} s WHERE s.id = p.id)`)
            .get(this.catalog) as { n: number }
        ).n
      : 0;
    const creates = row.creates ?? 0;
    const updates = row.updates ?? 0;
    return Promise.resolve({ products: row.products, creates, updates, unchanged: row.products - creates - updates, deletes, known });
  }

  async *upserts(options: { full: boolean }, batchSize: number): AsyncGenerator<ProductToSend[]> {
    const stmt = this.db.prepare(
      `SELECT s.seq, s.id, s.row, s.line, s.content_hash, s.payload, (p.id IS NULL) AS is_new
       FROM ${this.table} s LEFT JOIN ${this.known} p ON p.catalog = $catalog AND p.id = s.id
       WHERE s.valid = 1 AND s.seq > $after AND ($full OR p.id IS NULL OR p.content_hash IS NULL OR p.content_hash != s.content_hash)
       ORDER BY s.seq LIMIT $limit`,
    );
    let after = 0;
    for (;;) {
      const rows = stmt.all({ catalog: this.catalog, after, full: options.full ? 1 : 0, limit: batchSize }) as UpsertRow[];
      if (rows.length === 0) return;
      after = rows[rows.length - 1]?.seq ?? after;
      yield rows.map((r) => ({ id: r.id, row: r.row, line: r.line, contentHash: r.content_hash, payload: r.payload, isNew: r.is_new === 1 }));
      if (rows.length < batchSize) return;
    }
  }

  async *deletes(batchSize: number): AsyncGenerator<ProductToDelete[]> {
    const stmt = this.db.prepare(
      `SELECT p.id, p.product_key FROM ${this.known} p
       WHERE p.catalog = $catalog AND p.id > $after AND NOT EXISTS (SELECT 1 FROM ${this.table} s WHERE s.id = p.id)
       ORDER BY p.id LIMIT $limit`,
    );
    let after = '';
    for (;;) {
      const rows = stmt.all({ catalog: this.catalog, after, limit: batchSize }) as { id: string; product_key: string | null }[];
      if (rows.length === 0) return;
      after = rows[rows.length - 1]?.id ?? after;
      yield rows.map((r) => ({ id: r.id, productKey: r.product_key ?? '' }));
      if (rows.length < batchSize) return;
    }
  }

  close(): Promise<void> {
    this.db.exec(`DROP TABLE IF EXISTS ${this.table}`);
    this.dropKnown();
    return Promise.resolve();
  }

  private dropKnown(): void {
    if (this.knownIsTemporary) this.db.exec(`DROP TABLE IF EXISTS ${this.known}`);
    this.knownIsTemporary = false;
    this.known = 'main.catalog_products';
  }
}
