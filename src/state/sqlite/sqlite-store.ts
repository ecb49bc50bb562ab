import type { AudienceState, CatalogState, StateStore } from '../store.js';
import { AudienceCommits } from './audience-commits.js';
import { SqliteAudienceState } from './audience-state.js';
import { SqliteCatalogState } from './catalog-state.js';
import { SqliteCheckpoints } from './checkpoints.js';
import { openDatabase, type Db } from './database.js';
import { SqliteJobLocks } from './job-locks.js';
import { SqliteRunHistory } from './run-history.js';

export interface SqliteStoreOptions {
  /** Audience chunks of at least this many identifiers are committed by a worker thread (default OFF_THREAD_MIN_IDENTIFIERS; null: never). */
  offThreadCommitMin?: number | null | undefined;
}

export class SqliteStateStore implements StateStore {
  readonly runs: SqliteRunHistory;
  readonly locks: SqliteJobLocks;
  readonly checkpoints: SqliteCheckpoints;
  private readonly db: Db;
  private readonly audienceCommits: AudienceCommits;

  constructor(
    readonly path: string,
    options: SqliteStoreOptions = {},
  ) {
    this.db = openDatabase(path);
    this.audienceCommits = new AudienceCommits(this.db, path, options.offThreadCommitMin);
    this.runs = new SqliteRunHistory(this.db);
    this.locks = new SqliteJobLocks(this.db);
    this.checkpoints = new SqliteCheckpoints(this.db);
  }

  audience(key: string): AudienceState {
    return new SqliteAudienceState(this.db, key, this.audienceCommits);
  }

  catalog(catalogId: string, job: string | null): CatalogState {
    return new SqliteCatalogState(this.db, catalogId, job);
  }

  integrityCheck(): Promise<string> {
    const rows = this.db.pragma('integrity_check') as { integrity_check: string }[];
    return Promise.resolve(rows.map((r) => r.integrity_check).join('\n'));
  }

  async close(): Promise<void> {
    await this.audienceCommits.close();
    if (this.db.open) this.db.close();
  }
}
