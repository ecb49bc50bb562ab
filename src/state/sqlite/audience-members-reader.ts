/**
 * The members of one audience as the scan's plan reads them: in (field, value) order, each
 * with its status for this run, or looked up one at a time.
 *
 * Status: 0 a tombstone (removed by a remove-mode run), 1 present but last sent before the
 * refresh time, 2 present and fresh, 3 staged by a run whose upload of it was not
 * acknowledged: not a member (member-status.ts).
 */
import type { Statement } from 'better-sqlite3';
import { compareValues, prefixKey } from '../external-sort/packed-records.js';
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

/** Bytes before a packed member's value: field, status, two bytes of value length. */
const MEMBER_HEADER_BYTES = 4;

/** Where the value of the packed member at `at` ends. */
function memberValueEnd(page: Uint8Array, at: number): number {
  return at + MEMBER_HEADER_BYTES + (((page[at + 2] ?? 0) << 8) | (page[at + 3] ?? 0));
}

/**
 * Whether a page of packed members (field, status, two bytes of length, value) is in strictly
 * ascending (field, value) order.
 */
export function pageInKeyOrder(page: Buffer): boolean {
  let previousCode = -1;
  let previousStart = 0;
  let previousEnd = 0;
  for (let p = 0; p < page.length; ) {
    const code = page[p] ?? 0;
    const start = p + MEMBER_HEADER_BYTES;
    const end = memberValueEnd(page, p);
    if (end > page.length) return false;
    if (code < previousCode || (code === previousCode && compareValues(page, previousStart, previousEnd, page, start, end) >= 0)) return false;
    previousCode = code;
    previousStart = start;
    previousEnd = end;
    p = end;
  }
  return true;
}

/**
 * A page of members as one packed hex string, `orderBy` in the aggregate. Without one, SQLite
 * concatenates the rows in the order the ordered subquery gives them: what it does, not what it
 * promises, so each page read so is checked (pageInKeyOrder) and read again with the order
 * given when it is not. Sorting each page again in the aggregate took ~40% of the time of
 * reading 3.3M members (2.3-2.8 s against 1.4-1.5 s), most of a re-run's plan.
 */
function pageSql(statusExpression: string, orderBy: string): string {
  return `SELECT COUNT(*) AS n, group_concat(printf('%02X%02X%04X%s', field, status, length(value), hex(value)), '' ${orderBy}) AS data FROM (
      SELECT field, value, ${statusExpression} AS status FROM audience_members
      WHERE audience = $audience AND (field, value) > ($field, $value) ORDER BY field, value LIMIT $limit)`;
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
  /** Pages as SQLite gives them, checked; and sorted by the aggregate, when one was not in order. */
  private readonly pages: Statement;
  private readonly sortedPages: Statement;
  /** Pages that came out of order and were read again sorted. */
  pagesReadAgain = 0;
  private keyField = -1;
  private keyValue: Buffer = Buffer.alloc(0);

  constructor(
    db: Db,
    private readonly audienceId: number,
    private readonly refreshBefore: number,
    pending: boolean,
    /** The order of the concatenation of unsorted pages (tests give one that is not the key's). */
    pageOrder = '',
  ) {
    this.pages = db.prepare(pageSql(statusSql(pending), pageOrder));
    this.sortedPages = db.prepare(pageSql(statusSql(pending), 'ORDER BY field, value'));
  }

  private page(statement: Statement): { n: number; buf: Buffer } {
    const answer = statement.get({ audience: this.audienceId, refreshBefore: this.refreshBefore, field: this.keyField, value: this.keyValue, limit: PAGE }) as {
      n: number;
      data: string | null;
    };
    return { n: answer.n, buf: answer.data ? Buffer.from(answer.data, 'hex') : Buffer.alloc(0) };
  }

  next(): boolean {
    if (this.pos >= this.buf.length) {
      if (!this.more) return false;
      let answer = this.page(this.pages);
      if (!pageInKeyOrder(answer.buf)) {
        answer = this.page(this.sortedPages);
        this.pagesReadAgain += 1;
      }
      this.buf = answer.buf;
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
    this.valueStart = p + MEMBER_HEADER_BYTES;
    this.valueEnd = memberValueEnd(b, p);
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
