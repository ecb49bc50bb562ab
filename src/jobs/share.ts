/**
 * Shares of a whole, as the guards compare them with their ratios (max_delete_ratio,
 * max_remove_ratio, max_reject_ratio) and as their messages print them.
 */

/** Whether `part` of `whole` is more than `ratio` of it (exactly the ratio is within it). */
export function moreThanShare(part: number, whole: number, ratio: number): boolean {
  // A division, not `part > ratio * whole`: 57 of 100 at 0.57 would be over (0.57 * 100 = 56.99...).
  return whole > 0 && part / whole > ratio;
}

/** The percentage of `part` in `whole`, as messages give it. */
export function percentOf(part: number, whole: number): string {
  return `${((part / whole) * 100).toFixed(1)}%`;
}
