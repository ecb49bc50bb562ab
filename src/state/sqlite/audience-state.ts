/**
 * Audience membership in SQLite. The scan of one export, and its plan, are in audience-scan.ts;
 * commits of acknowledged chunks in audience-commits.ts.
 */
import type { AudienceScan, AudienceState } from '../store.js';
import { IDENTIFIER_TYPES, type IdentifierType } from '../../hash/types.js';
import { presentMemberCount } from './audience-members-reader.js';
import { SqliteAudienceScan } from './audience-scan.js';
import type { AudienceCommits } from './audience-commits.js';
import type { MembersChunk } from './audience-members-writer.js';
import type { Db } from './database.js';

export class SqliteAudienceState implements AudienceState {
  private readonly audienceId: number;

  constructor(
    private readonly db: Db,
    key: string,
    private readonly commits: AudienceCommits,
  ) {
    db.prepare('INSERT OR IGNORE INTO audiences (key) VALUES (?)').run(key);
    const row = db.prepare('SELECT id FROM audiences WHERE key = ?').get(key) as { id: number };
    this.audienceId = row.id;
  }

  scan(): Promise<AudienceScan> {
    return Promise.resolve(new SqliteAudienceScan(this.db, this.audienceId));
  }

  commit(chunk: MembersChunk): Promise<void> {
    return this.commits.commit(this.audienceId, chunk);
  }

  memberCount(): Promise<number> {
    return Promise.resolve(presentMemberCount(this.db, this.audienceId));
  }

  memberCounts(): Promise<Partial<Record<IdentifierType, number>>> {
    const rows = this.db
      .prepare('SELECT field, COUNT(*) AS n FROM audience_members WHERE audience = ? AND present = 1 GROUP BY field')
      .all(this.audienceId) as { field: number; n: number }[];
    return Promise.resolve(Object.fromEntries(rows.map((r) => [IDENTIFIER_TYPES[r.field] ?? String(r.field), r.n])));
  }
}
