/**
 * Catalog products found by the raw fingerprint saved for them (the index
 * catalog_products_by_fp): for the main connection (SqliteCatalogState.productsByFingerprint)
 * and for another thread's own read-only connection (openFingerprintLookup), where a catalog
 * run looks its feed's items up while the main thread cuts the feed
 * (src/jobs/catalog-fingerprint-thread.ts).
 */
import type { Statement } from 'better-sqlite3';
import type { FingerprintLookup, FingerprintLookupAddress, FingerprintMatch } from '../store.js';
import { openReader, readFailure, type Db } from './database.js';
import { rawStatement } from './kept-wrappers.js';

function warningsOf(json: string | null): string[] {
  return json === null ? [] : (JSON.parse(json) as string[]);
}

export class SqliteFingerprintLookup {
  private statement: Statement | undefined;

  constructor(
    private readonly db: Db,
    private readonly catalog: number,
  ) {}

  find(fingerprints: readonly Buffer[]): (FingerprintMatch | undefined)[] {
    // One seek per fingerprint, all in one read transaction: outside a transaction every
    // statement takes and drops SQLite's file locks (a few system calls, each dear here), which
    // cost more than the seek. Of several products with the fingerprint (none in practice: the
    // item's bytes hold its id), the last in the index's order is taken.
    this.statement ??= rawStatement(this.db, 'SELECT id, feed_warnings FROM catalog_products WHERE catalog = ? AND raw_fp = ?');
    const stmt = this.statement;
    const matches = new Array<FingerprintMatch | undefined>(fingerprints.length);
    this.db.transaction(() => {
      for (let i = 0; i < fingerprints.length; i++) {
        const rows = stmt.all(this.catalog, fingerprints[i]) as [id: string, warnings: string | null][];
        const last = rows[rows.length - 1];
        matches[i] = last === undefined ? undefined : { id: last[0], warnings: warningsOf(last[1]) };
      }
    })();
    return matches;
  }
}

/** What another thread needs to open a lookup of `catalog` (the catalogs row) of the database `db`; undefined for an in-memory one. */
export function fingerprintLookupAddress(db: Db, catalog: number): FingerprintLookupAddress | undefined {
  return db.memory ? undefined : { database: db.name, catalog };
}

/**
 * A lookup through a read-only connection of this thread's own (see openReader); close() closes
 * that connection. Its failures are StateErrors that name the file.
 */
export function openSqliteFingerprintLookup(address: FingerprintLookupAddress): FingerprintLookup {
  const db = openReader(address.database);
  const lookup = new SqliteFingerprintLookup(db, address.catalog);
  return {
    find: (fingerprints) => {
      try {
        return lookup.find(fingerprints);
      } catch (error) {
        throw readFailure(db, error);
      }
    },
    close: () => {
      if (db.open) db.close();
    },
  };
}
