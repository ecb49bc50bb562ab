import type { AudienceState, CatalogState, StateStore } from '../store.js';
import { SqliteAudienceState } from './audience-state.js';
import { SqliteCatalogState } from './catalog-state.js';
import { SqliteCheckpoints } from './checkpoints.js';
import { openDatabase, type Db } from './database.js';
import { SqliteJobLocks } from './job-locks.js';
import { SqliteRunHistory } from './run-history.js';

export class SqliteStateStore implements StateStore {
  readonly runs: SqliteRunHistory;
  readonly locks: SqliteJobLocks;
  readonly checkpoints: SqliteCheckpoints;
  private readonly db: Db;

  constructor(readonly path: string) {
    this.db = openDatabase(path);
    this.runs = new SqliteRunHistory(this.db);
    this.locks = new SqliteJobLocks(this.db);
    this.checkpoints = new SqliteCheckpoints(this.db);
  }

  audience(key: string): AudienceState {
    return new SqliteAudienceState(this.db, key);
  }

  catalog(catalogId: string): CatalogState {
    return new SqliteCatalogState(this.db, catalogId);
  }

  integrityCheck(): Promise<string> {
    const rows = this.db.pragma('integrity_check') as { integrity_check: string }[];
    return Promise.resolve(rows.map((r) => r.integrity_check).join('\n'));
  }

  close(): Promise<void> {
    if (this.db.open) this.db.close();
    return Promise.resolve();
  }
}
