import { describe, expect, it } from 'vitest';
import { stoppedBySignal, type StoppedRun } from '../../src/jobs/stopped-by-signal.js';

const run = (over: Partial<StoppedRun>): StoppedRun => ({ kind: 'custom_audience', command: 'run', phase: 'reading', read: 0, counters: { listed: 0, sent: 0, toSend: 0 }, ...over });

describe('why a run a stop signal ended is interrupted', () => {
  it('names the phase the signal came in, and says nothing was sent before the upload', () => {
    expect(stoppedBySignal(run({ phase: 'reading', read: 1_234_567 }))).toBe('stopped by a signal while reading the source (1,234,567 rows read); nothing was sent');
    expect(stoppedBySignal(run({ kind: 'catalog', phase: 'reading', read: 25 }))).toBe('stopped by a signal while reading the source (25 items read); nothing was sent');
    expect(stoppedBySignal(run({ kind: 'catalog', phase: 'listing', counters: { listed: 14_800, sent: 0, toSend: 0 } }))).toBe(
      'stopped by a signal while listing the products the service holds (14,800 listed); nothing was sent, and the next run lists them again',
    );
    expect(stoppedBySignal(run({ phase: 'planning', read: 10 }))).toBe('stopped by a signal while planning; nothing was sent');
  });

  it('in the upload, says how much of it was acknowledged and that the next run sends the rest', () => {
    expect(stoppedBySignal(run({ kind: 'do_not_reach', phase: 'uploading', counters: { listed: 0, sent: 92_378, toSend: 120_000 } }))).toBe(
      'stopped by a signal after committing the work in flight: 92,378 of the 120,000 identifiers to send acknowledged; the next run sends the rest',
    );
    expect(stoppedBySignal(run({ kind: 'catalog', phase: 'uploading', counters: { listed: 0, sent: 25, toSend: 50 } }))).toBe(
      'stopped by a signal after committing the work in flight: 25 of the 50 products to send acknowledged; the next run sends the rest',
    );
  });

  it("a catalog stopped after its last product: its product sets are left to the next run", () => {
    for (const [sent, toSend] of [
      [50, 50],
      [0, 0],
    ] as const) {
      expect(stoppedBySignal(run({ kind: 'catalog', phase: 'uploading', counters: { listed: 0, sent, toSend } }))).toBe(
        `stopped by a signal after the upload (${sent} products acknowledged), before the product sets were brought up to date; the next run does it`,
      );
    }
  });

  it('a backfill: the same command resumes it', () => {
    for (const kind of ['catalog', 'custom_audience'] as const) {
      expect(stoppedBySignal(run({ kind, command: 'backfill', phase: 'uploading' }))).toBe(
        'stopped by a signal after committing the work in flight; run the same backfill command again: it resumes after the last acknowledged row',
      );
    }
  });
});
