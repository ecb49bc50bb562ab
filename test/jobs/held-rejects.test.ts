import { describe, expect, it } from 'vitest';
import { HELD_REJECTS_SIZE, HeldRejects } from '../../src/jobs/parallel-export-read.js';
import type { RowRejectEntry } from '../../src/transform/audience-records.js';

const entry = (row: number, value?: string): RowRejectEntry => ({ row, line: row + 1, field: 'email', reason: 'not an email address', value });

describe('HeldRejects (the rejects a later part holds while an earlier part is read)', () => {
  it('asks the part to wait once the text it holds reaches the bound, whatever the number of rows', () => {
    const held = new HeldRejects();
    // A row of --rejects-with-values with a long value (a line of up to 1 MiB).
    const value = 'x'.repeat(1024 * 1024);
    let rows = 0;
    while (held.hold([[entry(rows + 1, value)]], [])) rows += 1;
    // 64 + 5 + 20 + value per row: the fourth row reaches 4 MiB; under a bound by rows alone
    // (100,000) this part would have held ~100 GB.
    expect(rows).toBe(3);
    expect(held.size).toBe(4 * (64 + 5 + 20 + value.length));
    expect(held.size).toBeGreaterThanOrEqual(HELD_REJECTS_SIZE);
  });

  it('bounds many small rejects too, counting each entry and each unreadable row', () => {
    const held = new HeldRejects();
    let rows = 0;
    while (held.hold([[entry(rows + 1), entry(rows + 1)]], [{ row: rows + 1, line: rows + 2, reason: 'row has 2 fields, header has 9' }])) rows += 1;
    const perRow = 2 * (64 + 5 + 20) + (64 + 30);
    expect(rows).toBe(Math.ceil(HELD_REJECTS_SIZE / perRow) - 1);
    expect(rows).toBeLessThan(20_000);
  });

  it('gives back everything in arrival order and is empty afterwards', () => {
    const held = new HeldRejects();
    expect(held.hold([[entry(1)], [entry(2), entry(2)]], [{ row: 3, line: 4, reason: 'bad' }])).toBe(true);
    expect(held.hold([[entry(5)]], [])).toBe(true);
    const taken = held.take();
    expect(taken.rejects.map((r) => r.map((e) => e.row))).toEqual([[1], [2, 2], [5]]);
    expect(taken.unreadable).toEqual([{ row: 3, line: 4, reason: 'bad' }]);
    expect(held.size).toBe(0);
    expect(held.take()).toEqual({ rejects: [], unreadable: [] });
  });
});
