/**
 * The scan of one export: its identifiers sorted and deduplicated outside SQLite, then joined
 * with the audience's members to make the plan.
 *
 * add() feeds an external sort (src/state/external-sort): identifiers are sorted in runs of
 * 131,072 in memory and written to a temporary spool file, so a 10-million-row export costs
 * disk, not memory. The plan is made once, in one pass: the runs are merged into the export's
 * distinct identifiers in (field, value) order (the first row kept) and, in the same order,
 * walked together with the members table (or, when the export is much smaller than the
 * audience and nothing is to be removed, each looked up). The additions and removals are
 * written to spool files and read back page by page: the additions twice, in (field, value)
 * order to be staged into the members' B-tree in order (stageAdds, staged-adds.ts), and by
 * bucket of rows (row-buckets.ts) for the upload, which sends each row's identifiers as one
 * user record; removals in (field, value) order, committed as they are acknowledged.
 *
 * It replaced a temporary SQLite table indexed after the last add: for 3.3M identifiers the
 * index build and the plan's reads took ~4 s of the run's main thread.
 */
import type { AudiencePlanCounts, AudiencePlanOptions, AudienceScan } from '../store.js';
import { FieldTally, IdentifierList } from '../identifier-list.js';
import { InternalError } from '../../errors.js';
import { SpoolFile } from '../spool-file.js';
import { compareValues, prefixKey, RecordCursor, RecordWriter, type RecordRange } from '../external-sort/packed-records.js';
import { SortedRuns } from '../external-sort/sorted-runs.js';
import { mergeDistinct, reduceRuns } from '../external-sort/merge-distinct.js';
import { RowBucketWriter, type RowBucket } from '../external-sort/row-buckets.js';
import { ABSENT, hasPendingMarkers, MemberLookup, OrderedMembers, PRESENT_FRESH, presentMembersByField, STAGED_UNCONFIRMED, TOMBSTONE } from './audience-members-reader.js';
import type { AudienceCommits } from './audience-commits.js';
import type { Db } from './database.js';
import { SENT_AGAIN } from './member-status.js';
import { SqliteStagedAdds } from './staged-adds.js';

/** Members are looked up one by one (instead of all read in order) when they outnumber the export's identifiers this many times. */
const LOOKUP_WHEN_MEMBERS_PER_IDENTIFIER = 4;

interface Plan {
  key: string;
  counts: AudiencePlanCounts;
  /** Additions in (field, value) order; codes of members sent again carry SENT_AGAIN. */
  adds: RecordRange;
  /** The same additions by bucket of rows (plain codes). */
  addsByRow: RowBucket[];
  removes: RecordRange;
}

function planKey(options: AudiencePlanOptions): string {
  return JSON.stringify([options.mode, options.refreshBefore, options.full]);
}

export class SqliteAudienceScan implements AudienceScan {
  private readonly spool = new SpoolFile('scan');
  /** Where removals go while additions are written to `spool` in the same pass. */
  private removalSpool: SpoolFile | undefined;
  /** Where the additions go by bucket of rows, in the same pass (segments: not in `spool`, whose writers append one range each). */
  private rowSpool: SpoolFile | undefined;
  private readonly sorted: SortedRuns;
  /** Set once the last identifier was added (the first plan or size). */
  private runs: RecordRange[] | undefined;
  /** Whether the audience had no members when the plan was first made (fixed for the run). */
  private emptyAtPlan = false;
  private distinctCount: number | undefined;
  private plan: Plan | undefined;
  private staged: SqliteStagedAdds | undefined;
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly audienceId: number,
    private readonly commits?: AudienceCommits,
    runSize?: number,
  ) {
    this.sorted = new SortedRuns(this.spool, runSize);
  }

  add(batch: IdentifierList): Promise<void> {
    if (this.runs) throw new InternalError('identifiers added to an audience scan after its plan was read');
    this.sorted.add(batch);
    return Promise.resolve();
  }

  private finish(): RecordRange[] {
    if (!this.runs) {
      this.runs = reduceRuns(this.spool, this.sorted.finish());
      this.emptyAtPlan = this.db.prepare('SELECT 1 FROM audience_members WHERE audience = ? LIMIT 1').get(this.audienceId) === undefined;
    }
    return this.runs;
  }

  size(): Promise<number> {
    this.distinctCount ??= mergeDistinct(this.spool, this.finish(), () => undefined);
    return Promise.resolve(this.distinctCount);
  }

  /** Makes the plan from the members as they are now; adds() and removes() then stream exactly this plan. */
  counts(options: AudiencePlanOptions): Promise<AudiencePlanCounts> {
    this.plan = this.readPlan(options, planKey(options));
    return Promise.resolve(this.plan.counts);
  }

  async *adds(options: AudiencePlanOptions, batchSize: number): AsyncGenerator<IdentifierList> {
    yield* this.pages(this.spool, this.planFor(options).adds, batchSize);
  }

  async *removes(options: AudiencePlanOptions, batchSize: number): AsyncGenerator<IdentifierList> {
    const plan = this.planFor(options);
    if (this.removalSpool) yield* this.pages(this.removalSpool, plan.removes, batchSize);
  }

  stageAdds(options: AudiencePlanOptions, runId: string): Promise<SqliteStagedAdds> {
    if (this.staged) throw new InternalError("an audience scan's additions were staged twice");
    if (!this.commits) throw new InternalError('an audience scan without a state to stage into');
    try {
      const plan = this.planFor(options);
      this.staged = new SqliteStagedAdds(this.db, this.commits, this.audienceId, runId, { spool: this.spool, range: plan.adds }, { spool: this.rowSpool ?? this.spool, buckets: plan.addsByRow });
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new InternalError(String(error)));
    }
    return Promise.resolve(this.staged);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      // The commit thread may still read the staged additions from the spool file.
      await this.staged?.close().catch(() => undefined);
    } finally {
      this.spool.close();
      this.rowSpool?.close();
      this.removalSpool?.close();
    }
  }

  /**
   * The records of `range` in lists of `batchSize`. One list is reused for every page (the
   * uploader copies what it takes): a new list per page left ~60 KB of native memory per page
   * for the garbage collector, which it freed late enough to grow the process by ~80 MB over the
   * upload of a million rows.
   */
  private *pages(spool: SpoolFile, range: RecordRange, batchSize: number): Generator<IdentifierList> {
    const cursor = new RecordCursor(spool, range);
    const list = new IdentifierList(Math.max(1, Math.min(batchSize, range.count)));
    while (cursor.next()) {
      list.pushSlice(cursor.code & ~SENT_AGAIN, cursor.buf, cursor.valueStart, cursor.valueEnd, cursor.row);
      if (list.length === batchSize) {
        yield list;
        list.clear();
      }
    }
    if (list.length > 0) yield list;
  }

  /** The plan counts() made last for these options (so what the guards approved is what is sent), or a new one. */
  private planFor(options: AudiencePlanOptions): Plan {
    const key = planKey(options);
    if (this.plan?.key !== key) this.plan = this.readPlan(options, key);
    return this.plan;
  }

  /**
   * The plan, made in one read transaction: outside one, each statement takes and releases
   * SQLite's file locks (a few system calls, dearer than a lookup of a member when the export is
   * looked up identifier by identifier), and the members are read as of one moment.
   */
  private readPlan(options: AudiencePlanOptions, key: string): Plan {
    return this.db.transaction(() => this.makePlan(options, key))();
  }

  /** One pass: the distinct identifiers, in order, against the members; writes adds and removes. */
  private makePlan(options: AudiencePlanOptions, key: string): Plan {
    const runs = this.finish();
    const { mode, full, refreshBefore } = options;
    const adds = new RecordWriter(this.spool);
    this.rowSpool ??= new SpoolFile('scan-rows');
    const addsByRow = new RowBucketWriter(this.rowSpool);
    this.removalSpool ??= new SpoolFile('scan-removals');
    const removes = new RecordWriter(this.removalSpool);
    adds.start();
    removes.start();
    let members = 0;
    // By field, in the same pass (the guards of a mirror run compare each type's removals with its members).
    let membersByField = new FieldTally();
    const removesByField = new FieldTally();

    let ordered: OrderedMembers | undefined;
    let lookup: MemberLookup | undefined;
    if (!this.emptyAtPlan) {
      const rows = (this.db.prepare('SELECT COUNT(*) AS n FROM audience_members WHERE audience = ?').get(this.audienceId) as { n: number }).n;
      const pending = hasPendingMarkers(this.db, this.audienceId);
      if (mode === 'mirror' || rows < this.sorted.added * LOOKUP_WHEN_MEMBERS_PER_IDENTIFIER) ordered = new OrderedMembers(this.db, this.audienceId, refreshBefore, pending);
      else lookup = new MemberLookup(this.db, this.audienceId, refreshBefore, pending);
    }
    let member = ordered?.next() ?? false;
    /** A member that is not in the export: removed by a mirror. */
    const passMember = (m: OrderedMembers): void => {
      if (m.status !== TOMBSTONE && m.status !== STAGED_UNCONFIRMED) {
        members += 1;
        membersByField.add(m.code);
        if (mode === 'mirror') {
          removes.write(m.code, m.buf, m.valueStart, m.valueEnd, 0);
          removesByField.add(m.code);
        }
      }
      member = m.next();
    };

    const distinct = mergeDistinct(this.spool, runs, (code, value, start, end, row) => {
      let status = ABSENT;
      if (ordered) {
        const k = prefixKey(code, value, start, end);
        while (member) {
          const order = ordered.key !== k ? ordered.key - k : compareValues(ordered.buf, ordered.valueStart, ordered.valueEnd, value, start, end);
          if (order < 0) {
            passMember(ordered);
            continue;
          }
          if (order === 0) {
            status = ordered.status === STAGED_UNCONFIRMED ? ABSENT : ordered.status;
            if (status !== TOMBSTONE && status !== ABSENT) {
              members += 1;
              membersByField.add(code);
            }
            member = ordered.next();
          }
          break;
        }
      } else if (lookup) {
        status = lookup.status(code, value, start, end);
      }
      if (mode !== 'remove') {
        if (full || status !== PRESENT_FRESH) {
          adds.write(status === ABSENT || status === TOMBSTONE ? code : code | SENT_AGAIN, value, start, end, row);
          addsByRow.write(code, value, start, end, row);
        }
      } else if (full || status !== TOMBSTONE) {
        removes.write(code, value, start, end, 0);
        removesByField.add(code);
      }
    });
    while (ordered && member) passMember(ordered);
    if (lookup) {
      membersByField = presentMembersByField(this.db, this.audienceId);
      members = membersByField.total();
    }
    this.distinctCount = distinct;

    const addRange = adds.finish();
    const addsInRowOrder = addsByRow.finish();
    const removeRange = removes.finish();
    this.spool.flush();
    this.rowSpool.flush();
    this.removalSpool.flush();
    const unchanged = mode === 'remove' ? distinct - removeRange.count : distinct - addRange.count;
    return {
      key,
      counts: { adds: addRange.count, removes: removeRange.count, unchanged, members, distinct, membersByField: membersByField.counts(), removesByField: removesByField.counts() },
      adds: addRange,
      addsByRow: addsInRowOrder,
      removes: removeRange,
    };
  }
}
