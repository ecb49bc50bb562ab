/**
 * The members of one audience as the scan's plan reads them: in (field, value) order, each
 * with its status for this run, or looked up one at a time.
 *
 * Status: 0 a tombstone (removed by a remove-mode run), 1 present but last sent before the
 * refresh time, 2 present and fresh, 3 staged by a run whose upload of it was not
 * acknowledged: not a member (member-status.ts).
 */
import type { Statement } from 'better-sqlite3';
import { prefixKey } from '../external-sort/packed-records.js';
import { FieldTally } from '../identifier-list.js';
import type { Db } from './database.js';
import { isMemberSql, STAGED_UNCONFIRMED, statusSql } from './member-status.js';

export const TOMBSTONE = 0;
export const PRESENT_STALE = 1;
export const PRESENT_FRESH = 2;
/** Not a member: never one, or staged and not confirmed. */
export const ABSENT = -1;
export { STAGED_UNCONFIRMED };

/**
 * Whether any addition staged to this audience is still pending (a run uploads them now, or one
 * stopped before its upload was acknowledged): when none, reading a member's status needs no
 * lookup of its marker.
 */
export function hasPendingMarkers(db: Db, audienceId: number): boolean {
  return db.prepare('SELECT 1 FROM audience_pending WHERE audience = ? LIMIT 1').get(audienceId) !== undefined;
}

/**
 * Members per page. A page is one packed hex string (~74 characters per member), read with
 * keyset pagination (no cursor stays open): 1,500 keep that string under V8's 128 KB limit for
 * ordinary objects, so it dies young.
 */
const PAGE = 1_500;

/** Members of an audience that are present (tombstones and unconfirmed additions not counted). */
export function presentMemberCount(db: Db, audienceId: number): number {
  const member = isMemberSql(hasPendingMarkers(db, audienceId));
  return (db.prepare(`SELECT COUNT(*) AS n FROM audience_members WHERE audience = ? AND ${member}`).get(audienceId) as { n: number }).n;
}

/** Members of an audience that are present, by field (tombstones and unconfirmed additions not counted): as costly as presentMemberCount. */
export function presentMembersByField(db: Db, audienceId: number): FieldTally {
  const member = isMemberSql(hasPendingMarkers(db, audienceId));
  const rows = db.prepare(`SELECT field, COUNT(*) AS n FROM audience_members WHERE audience = ? AND ${member} GROUP BY field`).all(audienceId) as { field: number; n: number }[];
  const tally = new FieldTally();
  for (const r of rows) tally.add(r.field, r.n);
  return tally;
}

/** Reads members in (field, value) order; after next() returns true the member is code/status/buf[valueStart, valueEnd). */
export class OrderedMembers {
  code = 0;
  status = 0;
  buf: Buffer = Buffer.alloc(0);
  valueStart = 0;
  valueEnd = 0;
  /** prefixKey of the member (orders it against scan records). */
  key = 0;
  private pos = 0;
  /** False once a page came back short: there is no page after it. */
  private more = true;
  private readonly stmt: Statement;
  private keyField = -1;
  private keyValue: Buffer = Buffer.alloc(0);

  constructor(
    db: Db,
    private readonly audienceId: number,
    private readonly refreshBefore: number,
    pending: boolean,
  ) {
    this.stmt = db.prepare(`SELECT COUNT(*) AS n, group_concat(printf('%02X%02X%04X', field, status, length(value)) || hex(value), '' ORDER BY field, value) AS data FROM (
        SELECT field, value, ${statusSql(pending)} AS status FROM audience_members
        WHERE audience = $audience AND (field, value) > ($field, $value) ORDER BY field, value LIMIT $limit)`);
  }

  next(): boolean {
    if (this.pos >= this.buf.length) {
      if (!this.more) return false;
      const answer = this.stmt.get({ audience: this.audienceId, refreshBefore: this.refreshBefore, field: this.keyField, value: this.keyValue, limit: PAGE }) as {
        n: number;
        data: string | null;
      };
      this.buf = answer.data ? Buffer.from(answer.data, 'hex') : Buffer.alloc(0);
      this.pos = 0;
      this.more = answer.n === PAGE;
      if (this.buf.length === 0) {
        this.more = false;
        return false;
      }
    }
    const b = this.buf;
    const p = this.pos;
    this.code = b[p] ?? 0;
    this.status = b[p + 1] ?? 0;
    const length = ((b[p + 2] ?? 0) << 8) | (b[p + 3] ?? 0);
    this.valueStart = p + 4;
    this.valueEnd = this.valueStart + length;
    this.key = prefixKey(this.code, b, this.valueStart, this.valueEnd);
    this.pos = this.valueEnd;
    if (this.pos >= b.length) {
      this.keyField = this.code;
      this.keyValue = Buffer.from(b.subarray(this.valueStart, this.valueEnd));
    }
    return true;
  }
}

/** Looks members up one at a time: cheaper than reading them all when the export is much smaller than the audience. */
export class MemberLookup {
  private readonly stmt: Statement;

  constructor(
    db: Db,
    private readonly audienceId: number,
    private readonly refreshBefore: number,
    pending: boolean,
  ) {
    this.stmt = db.prepare(`SELECT ${statusSql(pending)} AS status FROM audience_members WHERE audience = $audience AND field = $field AND value = $value`);
  }

  status(code: number, value: Buffer, start: number, end: number): number {
    const row = this.stmt.get({ audience: this.audienceId, refreshBefore: this.refreshBefore, field: code, value: value.subarray(start, end) }) as { status: number } | undefined;
    return row === undefined || row.status === STAGED_UNCONFIRMED ? ABSENT : row.status;
  }
}
