import { describe, expect, it } from 'vitest';
import { BackfillWatermark } from '../../src/jobs/backfill-watermark.js';

describe('backfill watermark', () => {
  it('moves only over a contiguous prefix of acknowledged batches', () => {
    const w = new BackfillWatermark(0);
    w.dispatched(1, 100);
    w.dispatched(2, 200);
    w.dispatched(3, 300);
    expect(w.acknowledged(2)).toBe(false);
    expect(w.rowsDone).toBe(0);
    expect(w.acknowledged(1)).toBe(true);
    expect(w.rowsDone).toBe(200);
    w.dispatched(4, 400);
    expect(w.acknowledged(4)).toBe(false);
    expect(w.rowsDone).toBe(200);
    expect(w.acknowledged(3)).toBe(true);
    expect(w.rowsDone).toBe(400);
  });

  it('starts from a resumed position and counts trailing rejected rows once nothing is in flight', () => {
    const w = new BackfillWatermark(5000);
    w.dispatched(1, 6000);
    w.finish(6100);
    expect(w.rowsDone).toBe(5000);
    w.acknowledged(1);
    w.finish(6100);
    expect(w.rowsDone).toBe(6100);
  });

  it('keeps no entry per batch once a batch ended without an acknowledgement (a catalog backfill goes on past a refused PUT)', () => {
    const w = new BackfillWatermark(0);
    w.dispatched(1, 25);
    w.dispatched(2, 50);
    w.dispatched(3, 75);
    w.settled(2); // refused: never acknowledged
    expect(w.acknowledged(3)).toBe(false);
    w.settled(3);
    // 400,000 more batches (a 10M-item feed in PUTs of 25), each acknowledged.
    for (let seq = 4; seq <= 400_003; seq++) {
      w.dispatched(seq, seq * 25);
      w.acknowledged(seq);
      w.settled(seq);
    }
    expect(w.pending).toBe(2);
    expect(w.rowsDone).toBe(0);
    // The batch before the refused one still moves the mark, up to the refused one.
    expect(w.acknowledged(1)).toBe(true);
    w.settled(1);
    expect(w.rowsDone).toBe(25);
    expect(w.pending).toBe(1);
    w.finish(10_000_075);
    expect(w.rowsDone).toBe(25);
  });

  it('forgets nothing when every batch is acknowledged, whatever order they settle in', () => {
    const w = new BackfillWatermark(0);
    w.dispatched(1, 10);
    w.dispatched(2, 20);
    w.acknowledged(2);
    w.settled(2);
    expect(w.pending).toBe(2);
    w.acknowledged(1);
    w.settled(1);
    expect(w.rowsDone).toBe(20);
    expect(w.pending).toBe(0);
  });
});
