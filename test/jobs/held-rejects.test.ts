import { describe, expect, it } from 'vitest';
import { HELD_REJECTS_SIZE, HeldRejects } from '../../src/jobs/parallel-export-read.js';
import type { MappedBatch, RowRejectEntry } from '../../src/transform/audience-records.js';

const entry = (row: number, value?: string): RowRejectEntry => ({ row, line: row + 1, field: 'email', reason: 'not an email address', value });

/** Everything `release` hands over, batch by batch. */
function released(held: HeldRejects): { rejects: RowRejectEntry[][]; unreadable: MappedBatch['unreadable'] }[] {
  const out: { rejects: RowRejectEntry[][]; unreadable: MappedBatch['unreadable'] }[] = [];
  held.release((rejects, unreadable) => out.push({ rejects, unreadable }));
  return out;
}

describe('HeldRejects (the rejects a later part holds while an earlier part is read)', () => {
  it('keeps at most HELD_REJECTS_SIZE in memory, whatever the size of the rows; the rest goes to a temporary file', () => {
    const held = new HeldRejects();
    // Rows of --rejects-with-values with a long value (a line of up to 1 MiB).
    const value = 'x'.repeat(1024 * 1024);
    for (let row = 1; row <= 10; row++) held.hold([[entry(row, value)]], []);
    // 64 + 5 + 20 + value per row: the fourth row reaches 4 MiB; the six after it are spilled.
    expect(held.size).toBe(4 * (64 + 5 + 20 + value.length));
    expect(held.size).toBeGreaterThanOrEqual(HELD_REJECTS_SIZE);
    expect(held.spilledBatches).toBe(6);
    // Given back exactly, in arrival order.
    const out = released(held);
    expect(out.flatMap((b) => b.rejects.flatMap((r) => r.map((e) => e.row)))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(out.every((b) => b.rejects.every((r) => r.every((e) => e.value === value)))).toBe(true);
  });

  it('bounds many small rejects too, counting each entry and each unreadable row', () => {
    const held = new HeldRejects();
    const perRow = 2 * (64 + 5 + 20) + (64 + 30);
    const rows = Math.ceil(HELD_REJECTS_SIZE / perRow) + 500;
    for (let row = 1; row <= rows; row++) held.hold([[entry(row), entry(row)]], [{ row, line: row + 1, reason: 'row has 2 fields, header has 9' }]);
    expect(held.size).toBeLessThan(HELD_REJECTS_SIZE + perRow);
    expect(held.spilledBatches).toBe(500);
    const out = released(held);
    expect(out.flatMap((b) => b.rejects.map((r) => r[0]?.row))).toEqual(Array.from({ length: rows }, (_, i) => i + 1));
    expect(out.flatMap((b) => b.unreadable.map((u) => u.row))).toEqual(Array.from({ length: rows }, (_, i) => i + 1));
  });

  it('gives back everything in arrival order, values kept exactly (kept flags, lone surrogates), and is empty afterwards', () => {
    const held = new HeldRejects();
    held.hold([[entry(1)], [entry(2), { ...entry(2), kept: true }]], [{ row: 3, line: 4, reason: 'bad' }]);
    held.hold([[entry(5)]], []);
    expect(released(held)).toEqual([{ rejects: [[entry(1)], [entry(2), { ...entry(2), kept: true }], [entry(5)]], unreadable: [{ row: 3, line: 4, reason: 'bad' }] }]);
    expect(held.size).toBe(0);
    expect(released(held)).toEqual([]);

    const spilling = new HeldRejects();
    spilling.hold([[entry(1, 'y'.repeat(HELD_REJECTS_SIZE))]], []);
    const odd = { ...entry(2, 'a\uD800b "quoted"\n\u2028'), kept: true };
    spilling.hold([[odd]], [{ row: 9, line: 10, reason: 'r' }]);
    expect(spilling.spilledBatches).toBe(1);
    const out = released(spilling);
    expect(out[1]).toEqual({ rejects: [[odd]], unreadable: [{ row: 9, line: 10, reason: 'r' }] });
    expect(spilling.spilledBatches).toBe(0);
  });
});
