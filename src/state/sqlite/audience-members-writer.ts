/**
 * Writes audience_members, one transaction per chunk. Acknowledged chunks: additions become
 * present members (sent now); removals become tombstones (remove mode, so the same identifier
 * is not deleted again) or are forgotten (mirror mode). Staged additions (member-status.ts): a
 * run's plan written ahead of its upload under the markers of their buckets of rows, then
 * confirmed by marker, or withdrawn. Used on the main thread and, for large chunks, by the commit
 * worker (audience-commits.ts), each with its own connection.
 */
import type { Statement } from 'better-sqlite3';
import type { AudienceMode } from '../store.js';
import { IdentifierList } from '../identifier-list.js';
import type { RecordCursor } from '../external-sort/packed-records.js';
import { BUCKET_ROW_BITS, bucketOfRow } from '../external-sort/row-buckets.js';
import { BulkInsert } from './bulk-insert.js';
import type { Db } from './database.js';
import { SENT_AGAIN, stagedPresent } from './member-status.js';

/** Staged additions: which marker each bucket of rows has (parallel arrays, buckets ascending), and their sent time. */
export interface StageMarkers {
  buckets: readonly number[];
  markers: readonly number[];
  sentAt: number;
}

export interface MembersChunk {
  added?: IdentifierList | undefined;
  removed?: IdentifierList | undefined;
  sentAt: number;
  mode: AudienceMode;
}

export class AudienceMembersWriter {
  private statements: { upsert: BulkInsert; tombstone: BulkInsert; forget: Statement } | undefined;
  private stagingStatements: { stage: BulkInsert; confirm: Statement; withdraw: Statement } | undefined;
  /** The staged additions of the chunk being written (reused). */
  private chunk: IdentifierList | undefined;
  /** The lookup of the markers being staged (one staging at a time, in chunks). */
  private lookup: { markers: StageMarkers; lookup: MarkerLookup } | undefined;

  constructor(private readonly db: Db) {}

  private staging(): { stage: BulkInsert; confirm: Statement; withdraw: Statement } {
    this.stagingStatements ??= {
      stage: new BulkInsert(
        this.db,
        'INSERT INTO audience_members (audience, field, value, present, sent_at) VALUES',
        '(?, ?, ?, ?, ?)',
        'ON CONFLICT (audience, field, value) DO UPDATE SET present = excluded.present, sent_at = excluded.sent_at',
        5,
      ),
      confirm: this.db.prepare('DELETE FROM audience_pending WHERE id = ?'),
      // A withdrawn identifier keeps whether it was new (even) or sent again (odd), under a marker never confirmed.
      withdraw: this.db.prepare('UPDATE audience_members SET present = CASE WHEN (-present & 1) = 1 THEN ? ELSE ? END WHERE audience = ? AND field = ? AND value = ? AND present < 0'),
    };
    return this.stagingStatements;
  }

  /**
   * Writes up to `limit` staged additions from `cursor` (records in (field, value) order) in one
   * transaction; returns how many it wrote (fewer than `limit`: the cursor is done).
   */
  stage(audienceId: number, cursor: RecordCursor, limit: number, markers: StageMarkers): number {
    const { stage } = this.staging();
    if (this.lookup?.markers !== markers) this.lookup = { markers, lookup: new MarkerLookup(markers) };
    const markerOf = this.lookup.lookup;
    // Copied out of the cursor first: its buffer is refilled as it reads on, while the bulk
    // statement holds on to up to 64 rows' values before it runs.
    const chunk = (this.chunk ??= new IdentifierList(4096));
    chunk.clear();
    while (chunk.length < limit && cursor.next()) chunk.pushSlice(cursor.code, cursor.buf, cursor.valueStart, cursor.valueEnd, cursor.row);
    stage.reset();
    this.db.transaction(() => {
      for (let i = 0; i < chunk.length; i++) {
        const code = chunk.code(i);
        stage.add(audienceId, code & ~SENT_AGAIN, chunk.bytes(i), stagedPresent(markerOf.marker(chunk.row(i)), (code & SENT_AGAIN) !== 0), markers.sentAt);
      }
      stage.flush();
    })();
    return chunk.length;
  }

  /** Confirms markers: their staged additions are members from now on. */
  confirm(markers: readonly number[]): void {
    const { confirm } = this.staging();
    this.db.transaction(() => {
      for (const m of markers) confirm.run(m);
    })();
  }

  /** Puts staged identifiers under `marker`, never confirmed: they were not acknowledged. */
  withdraw(audienceId: number, ids: IdentifierList, marker: number): void {
    const { withdraw } = this.staging();
    this.db.transaction(() => {
      for (let i = 0; i < ids.length; i++) withdraw.run(stagedPresent(marker, true), stagedPresent(marker, false), audienceId, ids.code(i), ids.bytes(i));
    })();
  }

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

/** The marker of a row's bucket: one array slot per bucket (rows are 31-bit: 65,536 buckets, 256 KB). */
class MarkerLookup {
  private readonly byBucket = new Int32Array(2 ** (31 - BUCKET_ROW_BITS));

  constructor(markers: StageMarkers) {
    markers.buckets.forEach((bucket, i) => {
      this.byBucket[bucket] = markers.markers[i] ?? 0;
    });
  }

  marker(row: number): number {
    const marker = this.byBucket[bucketOfRow(row)] ?? 0;
    if (marker === 0) throw new Error(`a staged addition of row ${row} has no marker`);
    return marker;
  }
}
