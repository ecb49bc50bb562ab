/**
 * When a bucket of rows of a run's staged additions (StagedAdds) may be confirmed: once no
 * batch will carry its rows any more, and every batch that did was acknowledged. The upload
 * sends rows in order, so a batch carries a few consecutive buckets, and a bucket is done with
 * once a batch starting after it was built, or the additions were read to their end.
 *
 * A batch that ended without an acknowledgement (it failed, or a stop kept it from being sent)
 * has its identifiers withdrawn (StagedAdds.withdraw: never confirmed), and then counts as
 * settled, as does a batch the service refused as a whole (its identifiers were withdrawn as
 * refused). When the upload stops before the end, the bucket it stopped in has its rows after
 * the last batch built withdrawn too, and is confirmed with the others it reached: a run
 * stopped (SIGTERM) or failed leaves the state listing exactly what the service acknowledged.
 * Only a kill leaves acknowledged buckets unconfirmed: the next run sends them again (harmless).
 */
import type { IdentifierList } from '../state/identifier-list.js';
import type { StagedAdds } from '../state/store.js';

export class BucketConfirmations {
  /** Batches built and not yet acknowledged, by bucket. */
  private readonly outstanding = new Map<number, number>();
  /** The buckets of each batch built and not yet acknowledged. */
  private readonly bucketsOfBatch = new Map<number, number[]>();
  /** Buckets below this one get no more batches (the first bucket of the last batch built). */
  private openFrom = Number.NEGATIVE_INFINITY;
  /** The additions were read to their end: no bucket gets another batch. */
  private allBuilt = false;
  /** The last row of the last batch built. */
  private lastRowBuilt: number | undefined;

  constructor(private readonly staged: StagedAdds) {}

  /** Batch `seq` was built with these identifiers (in row order). */
  built(seq: number, ids: IdentifierList): void {
    const buckets: number[] = [];
    for (let i = 0; i < ids.length; i++) {
      const bucket = this.staged.bucketOf(ids.row(i));
      if (buckets[buckets.length - 1] !== bucket) buckets.push(bucket);
    }
    if (buckets.length === 0) return;
    this.lastRowBuilt = ids.row(ids.length - 1);
    this.bucketsOfBatch.set(seq, buckets);
    for (const b of buckets) this.outstanding.set(b, (this.outstanding.get(b) ?? 0) + 1);
    const first = buckets[0] ?? 0;
    if (first > this.openFrom) {
      this.openFrom = first;
      this.confirmDone();
    }
  }

  /** Batch `seq` was acknowledged (or refused as a whole). */
  acknowledged(seq: number): void {
    const buckets = this.bucketsOfBatch.get(seq);
    if (!buckets) return;
    this.bucketsOfBatch.delete(seq);
    for (const b of buckets) this.outstanding.set(b, (this.outstanding.get(b) ?? 1) - 1);
    this.confirmDone();
  }

  /** Batch `seq` ended unacknowledged: its identifiers (`ids`) are withdrawn, and it is settled. */
  unacknowledged(seq: number, ids: IdentifierList): void {
    this.staged.withdraw(ids);
    this.acknowledged(seq);
  }

  /** The pages of `pages`, noting when they were all read (every bucket built). */
  async *reading(pages: AsyncIterable<IdentifierList>): AsyncGenerator<IdentifierList> {
    for await (const page of pages) yield page;
    this.allBuilt = true;
  }

  /**
   * The upload is over, every batch built settled: confirms the buckets it reached. Stopped
   * before the end, it withdraws the rows of the last bucket it reached that no batch carried.
   */
  finish(): void {
    if (this.allBuilt) this.openFrom = Number.POSITIVE_INFINITY;
    else if (this.lastRowBuilt !== undefined) {
      this.staged.withdrawRowsAfter(this.lastRowBuilt);
      this.openFrom = this.staged.bucketOf(this.lastRowBuilt) + 1;
    }
    this.confirmDone();
  }

  private confirmDone(): void {
    for (const [bucket, n] of this.outstanding) {
      if (n === 0 && bucket < this.openFrom) {
        this.outstanding.delete(bucket);
        this.staged.confirm(bucket);
      }
    }
  }
}
