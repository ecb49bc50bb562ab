/**
 * Writes acknowledged chunks into audience_members, one transaction per chunk: additions become
 * present members (sent now); removals become tombstones (remove mode, so the same identifier
 * is not deleted again) or are forgotten (mirror mode). Used on the main thread and, for large
 * chunks, by the commit worker (audience-commits.ts), each with its own connection.
 */
import type { Statement } from 'better-sqlite3';
import type { AudienceMode } from '../store.js';
import type { IdentifierList } from '../identifier-list.js';
import { BulkInsert } from './bulk-insert.js';
import type { Db } from './database.js';

export interface MembersChunk {
  added?: IdentifierList | undefined;
  removed?: IdentifierList | undefined;
  sentAt: number;
  mode: AudienceMode;
}

export class AudienceMembersWriter {
  private statements: { upsert: BulkInsert; tombstone: BulkInsert; forget: Statement } | undefined;

  constructor(private readonly db: Db) {}

  /** Prepared once per connection: a run commits a hundred batches or more. */
  private prepared(): { upsert: BulkInsert; tombstone: BulkInsert; forget: Statement } {
    const insertHead = 'INSERT INTO audience_members (audience, field, value, present, sent_at) VALUES';
    this.statements ??= {
      upsert: new BulkInsert(this.db, insertHead, '(?, ?, ?, 1, ?)', 'ON CONFLICT (audience, field, value) DO UPDATE SET present = 1, sent_at = excluded.sent_at', 4),
      tombstone: new BulkInsert(this.db, insertHead, '(?, ?, ?, 0, ?)', 'ON CONFLICT (audience, field, value) DO UPDATE SET present = 0, sent_at = excluded.sent_at', 4),
      forget: this.db.prepare('DELETE FROM audience_members WHERE audience = ? AND field = ? AND value = ?'),
    };
    return this.statements;
  }

  commit(audienceId: number, chunk: MembersChunk): void {
    const { upsert, tombstone, forget } = this.prepared();
    const { added, removed } = chunk;
    upsert.reset();
    tombstone.reset();
    this.db.transaction(() => {
      if (added) {
        for (let i = 0; i < added.length; i++) upsert.add(audienceId, added.code(i), added.bytes(i), chunk.sentAt);
        upsert.flush();
      }
      if (removed) {
        for (let i = 0; i < removed.length; i++) {
          if (chunk.mode === 'remove') tombstone.add(audienceId, removed.code(i), removed.bytes(i), chunk.sentAt);
          else forget.run(audienceId, removed.code(i), removed.bytes(i));
        }
        tombstone.flush();
      }
    })();
  }
}
