/**
 * Where a backfill may resume: the highest source row such that every batch up to it has
 * been acknowledged. Batches are sent several at a time and may be acknowledged out of
 * order, so the mark only moves over a contiguous prefix of acknowledged batches.
 */
export class BackfillWatermark {
  private readonly ranges = new Map<number, { lastRow: number; done: boolean }>();
  private nextToSettle = 1;
  /** The first batch that ended without being acknowledged: the mark never passes it. */
  private barrier = Number.POSITIVE_INFINITY;
  /** Every row up to here is acknowledged (or was rejected before it could be sent). */
  rowsDone: number;

  constructor(startRow: number) {
    this.rowsDone = startRow;
  }

  /** Registers batch `seq` (1, 2, 3, ... in the order built) covering rows up to `lastRow`. */
  dispatched(seq: number, lastRow: number): void {
    // Beyond a batch that failed, the mark cannot move in this run: nothing to remember.
    if (seq > this.barrier) return;
    this.ranges.set(seq, { lastRow, done: false });
  }

  /**
   * Batch `seq` has ended, acknowledged or not. One that was not holds the mark before it for
   * the rest of the run (the resumed backfill sends it again): the batches after it are
   * forgotten and no longer recorded, so a long backfill past a failed batch does not keep an
   * entry per batch (one per 25 products of a catalog feed).
   */
  settled(seq: number): void {
    const range = this.ranges.get(seq);
    if (!range || range.done || seq >= this.barrier) return;
    this.barrier = seq;
    for (const later of this.ranges.keys()) if (later > seq) this.ranges.delete(later);
  }

  /** Batches remembered: in flight, or acknowledged after one that is not yet. */
  get pending(): number {
    return this.ranges.size;
  }

  /** Marks batch `seq` acknowledged; returns true when the mark moved. */
  acknowledged(seq: number): boolean {
    const range = this.ranges.get(seq);
    if (range) range.done = true;
    let moved = false;
    for (let r = this.ranges.get(this.nextToSettle); r?.done; r = this.ranges.get(this.nextToSettle)) {
      this.rowsDone = Math.max(this.rowsDone, r.lastRow);
      this.ranges.delete(this.nextToSettle);
      this.nextToSettle += 1;
      moved = true;
    }
    return moved;
  }

  /** No batch in flight: rows read after the last batch (all rejected) count as done too. */
  finish(lastRowRead: number): void {
    if (this.ranges.size === 0) this.rowsDone = Math.max(this.rowsDone, lastRowRead);
  }
}
