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
});
