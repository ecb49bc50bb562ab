/**
 * A plan's additions staged in SQLite (member-status.ts): markers allocated, one per bucket of
 * rows and one for identifiers withdrawn (not acknowledged); the additions written in (field, value) order, on the
 * commit thread for a large plan; then confirmed by bucket as the upload's requests are
 * acknowledged. The upload reads the additions back in row order from the scan's row buckets.
 *
 * Before it allocates its own, it settles the markers an earlier run left pending (it was
 * killed, or some of its requests were not acknowledged): their new members are deleted, their
 * members sent again are kept with an unknown sent time. The plan already read them so, and
 * the run holds the target's lock: no other writer has markers of this audience pending.
 */
import { StateError } from '../../errors.js';
import { IdentifierList } from '../identifier-list.js';
import { bucketOfRow, rowOrderedPages, type RowBucket } from '../external-sort/row-buckets.js';
import type { SpoolReader } from '../spool-file.js';
import type { StagedAdds } from '../store.js';
import type { AudienceCommits, StagingSource } from './audience-commits.js';
import { hasPendingMarkers } from './audience-members-reader.js';
import type { Db } from './database.js';

/** Deletes the additions left unconfirmed by earlier runs (keeps their members sent again, sent time unknown), and their markers. */
export function settlePendingMarkers(db: Db, audienceId: number): void {
  if (!hasPendingMarkers(db, audienceId)) return;
  const pendingOfAudience = '(-present >> 1) IN (SELECT id FROM audience_pending WHERE audience = $audience)';
  db.transaction(() => {
    db.prepare(`DELETE FROM audience_members WHERE audience = $audience AND present < 0 AND (-present & 1) = 0 AND ${pendingOfAudience}`).run({ audience: audienceId });
    db.prepare(`UPDATE audience_members SET present = 1, sent_at = 0 WHERE audience = $audience AND present < 0 AND (-present & 1) = 1 AND ${pendingOfAudience}`).run({ audience: audienceId });
    db.prepare('DELETE FROM audience_pending WHERE audience = ?').run(audienceId);
  })();
}

export class SqliteStagedAdds implements StagedAdds {
  private readonly markerOfBucket = new Map<number, number>();
  private readonly withdrawnMarker: number;
  private withdrawn = 0;
  private readonly writes = new Set<Promise<void>>();
  private failure: StateError | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly commits: AudienceCommits,
    private readonly audienceId: number,
    runId: string,
    source: StagingSource,
    private readonly rows: { spool: SpoolReader; buckets: readonly RowBucket[] },
  ) {
    const sentAt = Date.now();
    const buckets = rows.buckets.map((b) => b.bucket);
    let markers: number[];
    try {
      markers = db.transaction(() => {
        settlePendingMarkers(db, audienceId);
        const insert = db.prepare('INSERT INTO audience_pending (audience, run_id, created_at) VALUES (?, ?, ?)');
        return [...buckets, -1].map(() => Number(insert.run(audienceId, runId, sentAt).lastInsertRowid));
      })();
    } catch (error) {
      throw new StateError(`cannot write to the state database ${db.name}: ${(error as Error).message}`, { cause: error });
    }
    this.withdrawnMarker = markers.pop() ?? 0;
    buckets.forEach((bucket, i) => this.markerOfBucket.set(bucket, markers[i] ?? 0));
    this.track(commits.stage(audienceId, source, { buckets, markers, sentAt }));
  }

  bucketOf(row: number): number {
    return bucketOfRow(row);
  }

  // Read on this thread from the scan's file: async like the plan's other streams.
  async *pages(pageSize: number): AsyncGenerator<IdentifierList> {
    yield* rowOrderedPages(this.rows.spool, this.rows.buckets, pageSize);
  }

  confirm(bucket: number): void {
    const marker = this.markerOfBucket.get(bucket);
    if (marker === undefined) return;
    this.markerOfBucket.delete(bucket);
    this.track(this.commits.confirm([marker]));
  }

  withdraw(ids: IdentifierList): void {
    if (ids.length === 0) return;
    this.withdrawn += ids.length;
    this.track(this.commits.withdraw(this.audienceId, ids, this.withdrawnMarker));
  }

  withdrawRowsAfter(row: number): void {
    const bucket = this.rows.buckets.find((b) => b.bucket === bucketOfRow(row));
    if (!bucket) return;
    const after = new IdentifierList(1024);
    for (const page of rowOrderedPages(this.rows.spool, [bucket], 4096)) {
      for (let i = 0; i < page.length; i++) if (page.row(i) > row) after.pushFrom(page, i);
    }
    this.withdraw(after);
  }

  throwIfFailed(): void {
    if (this.failure) throw this.failure;
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      // With nothing withdrawn, the marker kept for it holds nothing: let it go, so that the next
      // plan finds nothing pending (and reads the members without looking markers up).
      if (this.withdrawn === 0) this.track(this.commits.confirm([this.withdrawnMarker]));
      while (this.writes.size > 0) await Promise.allSettled([...this.writes]);
      if (this.failure) throw this.failure;
    })();
    return this.closing;
  }

  private track(write: Promise<void>): void {
    const tracked = write.then(
      () => undefined,
      (error: unknown) => {
        this.failure ??= error instanceof StateError ? error : new StateError(`cannot write to the state database ${this.db.name}: ${(error as Error).message}`, { cause: error });
      },
    );
    this.writes.add(tracked);
    void tracked.finally(() => this.writes.delete(tracked));
  }
}
