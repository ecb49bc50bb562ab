import { describe, expect, it } from 'vitest';
import { FeedWarnings, MAX_DISTINCT_FEED_WARNINGS } from '../../src/jobs/run-catalog.js';

describe('FeedWarnings (the feed warnings of a catalog run, for one log line)', () => {
  it('logs the first 20 distinct warnings and counts the others', () => {
    const w = new FeedWarnings();
    for (let i = 1; i <= 25; i++) {
      w.add(`unknown attribute "a${i}" is not sent`);
      w.add(`unknown attribute "a${i}" is not sent`);
    }
    const fields = w.logFields();
    expect(fields.warnings).toHaveLength(20);
    expect(fields.warnings[0]).toBe('unknown attribute "a1" is not sent');
    expect(fields).toEqual({ warnings: fields.warnings, more: 5 });
  });

  it('keeps at most MAX_DISTINCT_FEED_WARNINGS however many distinct warnings the feed has (one unknown element name per item)', () => {
    const w = new FeedWarnings();
    for (let i = 1; i <= 200_000; i++) w.add(`unknown attribute "extra_${i}" is not sent`);
    expect(MAX_DISTINCT_FEED_WARNINGS).toBe(1000);
    expect(w.size).toBe(1000);
    const fields = w.logFields();
    expect(fields.warnings[19]).toBe('unknown attribute "extra_20" is not sent');
    expect(fields).toEqual({ warnings: fields.warnings, more: 980, moreAtLeast: true });
    // A warning already kept is not a new one.
    const again = new FeedWarnings();
    for (let i = 0; i < 5000; i++) again.add('g:shipping is not sent');
    expect(again.logFields()).toEqual({ warnings: ['g:shipping is not sent'], more: 0 });
  });
});
