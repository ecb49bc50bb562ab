/**
 * What a row of audience_members says about its identifier (schema 8), in one place: the SQL
 * that reads it and the values that write it.
 *
 * A run uploads its additions in row order (each row's identifiers as one user record) but
 * writes them to the members ahead of the upload, in (field, value) order, the order in which
 * the B-tree takes millions of them at ~0.5 µs each (in row order every request would touch
 * every page of the table: 2.6x the work). Each staged addition carries the marker of its bucket
 * of rows (row-buckets.ts), and a marker counts only once the run has confirmed it, that is
 * deleted it from audience_pending, which it does when every request carrying rows of the
 * bucket was acknowledged. So the state never counts as sent what the service did not
 * acknowledge, whatever happens to the run, and nothing has to be rewritten to confirm.
 *
 * present:
 * - 1: a member, sent at sent_at;
 * - 0: a tombstone (a remove-mode run removed it; it is not removed again);
 * - -2m: staged as a new member under marker m: a member sent at sent_at once m is confirmed;
 *   while m is pending, not a member (its upload was not acknowledged);
 * - -(2m + 1): a member staged to be sent again (a refresh, --full) under marker m: sent at
 *   sent_at once m is confirmed; while m is pending, a member whose sent time is unknown (so
 *   the next run sends it again).
 *
 * Markers are allocated from audience_pending's AUTOINCREMENT key: unique across audiences, and never
 * given twice.
 */

/**
 * In the field code of a staged addition (the plan's records in key order): the identifier is a
 * member already, sent again (a refresh, --full). Field codes are below 0x80.
 */
export const SENT_AGAIN = 0x80;

/** present of an addition staged under `marker`: a new member, or one sent again. */
export function stagedPresent(marker: number, again: boolean): number {
  return again ? -(2 * marker + 1) : -2 * marker;
}

/** A staged row whose marker is still pending (SQL over audience_members' columns). */
const PENDING = '(present < 0 AND (-present >> 1) IN (SELECT id FROM audience_pending))';

/**
 * The status of a member for a plan, `$refreshBefore` bound: 0 a tombstone, 1 a member last
 * sent before the refresh time (or when unknown), 2 a member sent since, 3 not a member (staged,
 * not confirmed). `pending` false: no marker is pending anywhere (checked first: the common
 * case, where the lookup of every staged row's marker is left out).
 */
export function statusSql(pending: boolean): string {
  const confirmed = `CASE WHEN sent_at >= $refreshBefore THEN 2 ELSE 1 END`;
  if (!pending) return `CASE WHEN present = 0 THEN 0 ELSE ${confirmed} END`;
  return `CASE WHEN present = 0 THEN 0 WHEN ${PENDING} THEN CASE WHEN (-present & 1) = 1 THEN 1 ELSE 3 END ELSE ${confirmed} END`;
}

/** Whether the row is a member (SQL): present, or staged and either confirmed or sent again. */
export function isMemberSql(pending: boolean): string {
  if (!pending) return 'present <> 0';
  return `(present = 1 OR (present < 0 AND ((-present & 1) = 1 OR NOT ${PENDING})))`;
}

/** The status statusSql() gives a staged row whose marker is pending and that was new: not a member. */
export const STAGED_UNCONFIRMED = 3;
