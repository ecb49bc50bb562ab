/**
 * Audience membership in SQLite. The scan of one export, and its plan, are in audience-scan.ts;
 * commits of acknowledged chunks in audience-commits.ts.
 */
import type { Statement } from 'better-sqlite3';
import type { CountsByField, IdentifierList } from '../identifier-list.js';
import type { AudienceScan, AudienceState } from '../store.js';
import { presentMemberCount, presentMembersByField } from './audience-members-reader.js';
import { SqliteAudienceScan } from './audience-scan.js';
import type { AudienceCommits } from './audience-commits.js';
import type { MembersChunk } from './audience-members-writer.js';
import type { Db } from './database.js';

export class SqliteAudienceState implements AudienceState {
  private readonly audienceId: number;
  private forgetSentStatement: Statement | undefined;

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
    return Promise.resolve(new SqliteAudienceScan(this.db, this.audienceId, this.commits));
  }

  commit(chunk: MembersChunk): Promise<void> {
    return this.commits.commit(this.audienceId, chunk);
  }

  forgetSent(ids: IdentifierList): Promise<void> {
    this.forgetSentStatement ??= this.db.prepare('UPDATE audience_members SET sent_at = 0 WHERE audience = ? AND field = ? AND value = ? AND present <> 0');
    const stmt = this.forgetSentStatement;
    this.db.transaction(() => {
      for (let i = 0; i < ids.length; i++) stmt.run(this.audienceId, ids.code(i), ids.bytes(i));
    })();
    return Promise.resolve();
  }

  memberCount(): Promise<number> {
    return Promise.resolve(presentMemberCount(this.db, this.audienceId));
  }

  memberCounts(): Promise<CountsByField> {
    return Promise.resolve(presentMembersByField(this.db, this.audienceId).counts());
  }
}
