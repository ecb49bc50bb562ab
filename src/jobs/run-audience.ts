/**
 * An audience run: read the CRM export, normalize and hash every identifier, collect them
 * (deduplicated, on disk), diff against what the audience holds, and upload exactly the
 * difference: additions as Update operations, removals as Delete operations. State is
 * committed per acknowledged batch.
 *
 * Removals happen only when the source was read completely and looks sound: never for an
 * export with no valid identifier, one that would remove more than max_remove_ratio of the
 * members (or of the members of one identifier type), one with more rejected rows than
 * max_reject_ratio, or one with more invalid values of an identifier type than max_reject_ratio
 * (identifier-type-guards.ts).
 */
import { membershipExpiry } from './membership-expiry.js';
import type { AudienceTarget } from '../api/resources/audiences.js';
import { StateError } from '../errors.js';
import { readCsvSource } from '../sources/read-source.js';
import { IdentifierList, addCountsByField, type CountsByField } from '../state/identifier-list.js';
import type { AudiencePlanCounts, AudiencePlanOptions, AudienceScan, AudienceState } from '../state/store.js';
import { BucketConfirmations } from './bucket-confirmations.js';
import { AudienceRowMapper, EXPORT_HEADER_OPTIONS, mapCsvBatch } from '../transform/audience-records.js';
import { invalidValuesMessage, typeRemovalsMessage, typesLosingTooManyMembers, typesWithTooManyInvalidValues } from './identifier-type-guards.js';
import { moreThanShare, percentOf } from './share.js';
import { readExportInParallel, type ExportCounts } from './parallel-export-read.js';
import type { BuiltBatch } from '../uploaders/audience-batch-builder.js';
import { uploadAudienceUsers, type AudienceUploadResult, type RefusedIdentifier, type UserGrouping } from '../uploaders/audience-uploader.js';
import { audienceKey, type AudienceJob } from './job.js';
import type { RunContext } from './run-context.js';

const DAY_MS = 86_400_000;
/**
 * Identifiers per page of the plan. Pages are read from the scan's spool file into one reused
 * list (audience-scan.ts) and the uploader copies what it takes, so the size only sets how
 * often the plan hands over identifiers; 1,500 is ~60 KB.
 */
const PLAN_PAGE = 1_500;

export function audienceTarget(job: AudienceJob): AudienceTarget {
  return job.kind === 'custom_audience'
    ? { kind: 'custom_audience', accountId: job.accountId, customAudienceId: job.customAudienceId }
    : { kind: 'do_not_reach', accountId: job.accountId, doNotReachListId: job.doNotReachListId };
}

/**
 * Reads the export into a new scan of `state`: on every core for a large local file
 * (parallel-export-read.ts), else on this thread. Fills read/valid counts and writes rejects.
 */
export async function scanExport(ctx: RunContext, job: AudienceJob, state: AudienceState): Promise<{ scan: AudienceScan } & ExportCounts> {
  let scan = await state.scan();
  try {
    const parallel = await readExportInParallel(ctx, job, scan);
    if (parallel) {
      ctx.displayRow = parallel.displayRow;
      return { scan, occurrences: parallel.occurrences, validIdentifiers: parallel.validIdentifiers, invalid: parallel.invalid };
    }
    if (ctx.summary.read > 0 || ctx.rejects.count > 0) {
      // The parallel read gave up part way: start over, on this thread.
      await scan.close();
      scan = await state.scan();
      ctx.restartReading();
    }
    return { scan, ...(await scanExportSequentially(ctx, job, scan)) };
  } catch (error) {
    await scan.close();
    throw error;
  }
}

async function scanExportSequentially(ctx: RunContext, job: AudienceJob, scan: AudienceScan): Promise<ExportCounts> {
  const { counters, summary } = ctx;
  const validIdentifiers: CountsByField = {};
  const invalid: CountsByField = {};
  let occurrences = 0;
  try {
    // The stop signal aborts the read where it is, a download waiting on its server too.
    const reader = await readCsvSource(job.source, { ...EXPORT_HEADER_OPTIONS, signal: ctx.stop, timeoutMs: job.requestTimeoutMs });
    counters.bytesTotal = reader.sizeBytes;
    const mapper = new AudienceRowMapper(reader.header, job.audience, reader.name);
    // One list for every batch: the scan copies what it is given.
    const ids = new IdentifierList(1 << 12);
    for await (const batch of reader.batches) {
      // Reading has no effect outside: a stop request ends it at once.
      if (ctx.stop.aborted) break;
      ids.clear();
      const mapped = mapCsvBatch(batch, mapper, ids, ctx.options.rejectsWithValues);
      for (const entries of mapped.rejects) ctx.rejects.reject(entries);
      for (const u of mapped.unreadable) ctx.unreadableRow(u.row, u.line, u.reason);
      addCountsByField(validIdentifiers, mapped.validIdentifiers);
      addCountsByField(invalid, mapped.invalid);
      summary.read += mapped.read;
      summary.valid += mapped.valid;
      counters.rowsRead = summary.read;
      counters.bytesRead = reader.bytesRead();
      occurrences += ids.length;
      await scan.add(ids);
    }
  } catch (error) {
    ctx.rethrowUnlessStopped(error);
  }
  return { occurrences, validIdentifiers, invalid };
}

/**
 * How the identifiers the service refused go to the rejects file. `rows`: a backfill sends each
 * row whole as one user record, so a refused record is a rejected row. `values`: a run sends a
 * row's new identifiers as one user record, and the row's others may be members already, or
 * sent with an earlier row (a duplicate), so they are written as values a kept row dropped, not
 * counted (the run fails on its own: "the service refused N user records").
 */
export type RefusedAs = 'rows' | 'values';

/** Writes the identifiers the service refused to the rejects file, one reject per row. */
function rejectRefused(ctx: RunContext, refused: readonly RefusedIdentifier[], reason: string, refusedAs: RefusedAs): void {
  const kept = refusedAs === 'values';
  for (let i = 0; i < refused.length; ) {
    const row = refused[i]?.row ?? 0;
    const entries = [];
    for (; i < refused.length && refused[i]?.row === row; i++) entries.push({ row: ctx.displayRow(row), line: 0, field: refused[i]?.field ?? '', reason, kept });
    ctx.rejects.reject(entries);
  }
}

/**
 * The pages of a removal, the sent time of each page's members forgotten (AudienceState.forgetSent)
 * before any of them is sent: a kill or a lost answer may leave them removed from the service,
 * and an export that then has them again must send them again.
 */
export async function* forgottenWhileRemoved(state: AudienceState, lists: AsyncIterable<IdentifierList>): AsyncGenerator<IdentifierList> {
  for await (const ids of lists) {
    if (ids.length > 0) await state.forgetSent(ids);
    yield ids;
  }
}

export interface SendHooks {
  /** Commits an acknowledged batch (its identifiers, in body order). */
  onAck: (identifiers: IdentifierList, seq: number) => Promise<void>;
  onBuilt?: (seq: number, batch: BuiltBatch) => void;
  /** The service refused these identifiers (they are in the rejects file too). */
  onRefused?: (identifiers: IdentifierList) => void;
  /** Batch `seq` was refused as a whole: no acknowledgement will come for it. */
  onRefusedWhole?: (seq: number) => void;
  /** Batch `seq` ended unacknowledged (failed, or not sent): `batch` is valid during the call. */
  onUnacknowledged?: (seq: number, batch: BuiltBatch) => void;
}

/**
 * Uploads identifiers, commits each acknowledged batch through `hooks.onAck`, records failures
 * on the run. Additions go in row order, each row's identifiers as one user record (a run's
 * staged plan, a backfill's rows); removals, which have no row, one user record per
 * identifier, in (field, value) order.
 */
export async function sendIdentifiers(
  ctx: RunContext,
  job: AudienceJob,
  lists: AsyncIterable<IdentifierList>,
  operation: 'Update' | 'Delete',
  grouping: UserGrouping,
  refusedAs: RefusedAs,
  hooks: SendHooks,
): Promise<AudienceUploadResult> {
  const extraParams =
    // Memberships expire after 13 months by default; do-not-reach batches carry the date.
    job.kind === 'do_not_reach' ? { expires_at: membershipExpiry(Date.now()) } : undefined;
  let failureNoted = false;
  const result = await uploadAudienceUsers(lists, {
    client: ctx.client(),
    target: audienceTarget(job),
    builder: { operationType: operation, ...(extraParams ? { extraParams } : {}) },
    grouping,
    concurrency: job.concurrency,
    stop: ctx.stop,
    ...(hooks.onBuilt ? { onBuilt: hooks.onBuilt } : {}),
    ...(hooks.onRefusedWhole ? { onRefusedWhole: hooks.onRefusedWhole } : {}),
    ...(hooks.onUnacknowledged ? { onUnacknowledged: hooks.onUnacknowledged } : {}),
    onAcknowledged: async ({ seq, batch }) => {
      await hooks.onAck(batch.ids, seq);
      ctx.counters.sent += batch.ids.length;
    },
    onRejected: (refused, reason, ids) => {
      hooks.onRefused?.(ids);
      rejectRefused(ctx, refused, reason, refusedAs);
    },
    onFailed: (users, error) => {
      if (!failureNoted) {
        failureNoted = true;
        // A state error comes from committing a batch the service did acknowledge.
        ctx.logger.error(
          { error: error.message, users },
          error instanceof StateError ? 'a batch the service acknowledged could not be committed to the state (the next run sends it again)' : 'a batch could not be delivered',
        );
      }
    },
  });
  if (result.rejectedUsers > 0) ctx.fail(`the service refused ${result.rejectedUsers} user records (see the rejects file)`);
  if (result.failedUsers > 0 && !result.fatal) ctx.failDelivery(`${result.failedUsers} user records`, result.firstFailure);
  if (result.fatal) throw result.fatal;
  if (result.stopped) ctx.interrupted = true;
  return result;
}

export async function runAudience(ctx: RunContext, job: AudienceJob): Promise<void> {
  const { summary, counters, options } = ctx;
  const state = ctx.store.audience(audienceKey(job));
  const { scan, occurrences, validIdentifiers, invalid } = await scanExport(ctx, job, state);
  const values = { valid: validIdentifiers, invalid };
  try {
    if (Object.keys(invalid).length > 0) summary.invalid_identifiers = invalid;
    if (ctx.stop.aborted) {
      ctx.interrupted = true;
      return;
    }
    if (options.validateOnly) {
      const distinct = await scan.size();
      summary.duplicates = occurrences - distinct;
      // What a run would refuse whatever the state holds: a mirror export without a valid
      // identifier, or with too many invalid values of a type; and rows that could not be read
      // would stop its removals.
      const nothingKnown: AudiencePlanCounts = { adds: 0, removes: 0, unchanged: 0, members: 0, distinct, membersByField: {}, removesByField: {} };
      if (removalsAllowed(ctx, job, nothingKnown, values) && job.audience.mode === 'mirror') ctx.allowsDestructiveChanges('removals');
      return;
    }

    counters.phase = 'planning';
    const plan: AudiencePlanOptions = { mode: job.audience.mode, refreshBefore: Date.now() - job.audience.refreshAfterDays * DAY_MS, full: options.full };
    const counts = await scan.counts(plan);
    const distinct = counts.distinct;
    summary.duplicates = occurrences - distinct;
    summary.unchanged = counts.unchanged;
    const allowRemoves = removalsAllowed(ctx, job, counts, values);
    ctx.logger.info({ adds: counts.adds, removes: counts.removes, unchanged: counts.unchanged, members: counts.members, removalsAllowed: allowRemoves }, 'plan');

    if (options.dryRun) {
      summary.added = counts.adds;
      summary.removed = allowRemoves ? counts.removes : 0;
      return;
    }
    counters.phase = 'uploading';
    counters.toSend = counts.adds + (allowRemoves ? counts.removes : 0);
    if (counts.adds > 0) await sendAdditions(ctx, job, scan, plan);
    if (allowRemoves && counts.removes > 0 && ctx.stop.aborted) ctx.interrupted = true;
    if (allowRemoves && counts.removes > 0 && !ctx.stop.aborted) {
      await sendIdentifiers(ctx, job, forgottenWhileRemoved(state, scan.removes(plan, PLAN_PAGE)), 'Delete', 'identifier', 'values', {
        onAck: async (ids) => {
          await state.commit({ removed: ids, sentAt: Date.now(), mode: job.audience.mode });
          summary.removed += ids.length;
        },
      });
    }
    counters.phase = 'finishing';
  } finally {
    await scan.close();
  }
}

/**
 * Sends the plan's additions: staged into the state first (written ahead, in key order, not yet
 * counted as sent), then uploaded in row order, each row's new identifiers as one user record,
 * and confirmed by bucket of rows as the requests carrying them are acknowledged.
 */
async function sendAdditions(ctx: RunContext, job: AudienceJob, scan: AudienceScan, plan: AudiencePlanOptions): Promise<void> {
  const staged = await scan.stageAdds(plan, ctx.runId);
  const buckets = new BucketConfirmations(staged);
  try {
    await sendIdentifiers(ctx, job, buckets.reading(staged.pages(PLAN_PAGE)), 'Update', 'row', 'values', {
      onBuilt: (seq, batch) => buckets.built(seq, batch.ids),
      onAck: (ids, seq) => {
        // A staging the state could not write stops the upload as a failed commit does.
        staged.throwIfFailed();
        buckets.acknowledged(seq);
        ctx.summary.added += ids.length;
        return Promise.resolve();
      },
      onRefused: (ids) => staged.withdraw(ids),
      onRefusedWhole: (seq) => buckets.acknowledged(seq),
      onUnacknowledged: (seq, batch) => buckets.unacknowledged(seq, batch.ids),
    });
    buckets.finish();
  } catch (error) {
    await staged.close().catch(() => undefined);
    throw error;
  }
  try {
    await staged.close();
  } catch (error) {
    ctx.logger.error({ error: (error as Error).message }, 'acknowledged additions could not be recorded in the state (the next run sends them again)');
    throw error;
  }
}

/**
 * The guards against a destructive mirror. Records why removals were refused. `values`: the
 * export's identifier values by type, valid and invalid (an empty cell is neither).
 */
function removalsAllowed(ctx: RunContext, job: AudienceJob, counts: AudiencePlanCounts, values: { valid: CountsByField; invalid: CountsByField }): boolean {
  if (job.audience.mode !== 'mirror') return true;
  const ratio = ctx.options.maxDeleteRatio ?? job.audience.maxRemoveRatio;
  const { summary } = ctx;
  const { removes, members, distinct } = counts;
  const rejected = ctx.rejects.count;
  if (distinct === 0) {
    // An export without a single usable identifier is almost always a broken export: fail
    // loudly even when there is nothing to remove yet.
    ctx.fail(
      members > 0
        ? `the export has no valid identifier: a mirror run would remove all ${members} members; nothing was removed (check the file, or use mode: remove to empty the audience on purpose)`
        : 'the export has no valid identifier; nothing was sent (check the file and the column names in audience.identifiers)',
    );
    return false;
  }
  const tooManyRejectedRows = moreThanShare(rejected, summary.read, job.maxRejectRatio);
  // A column gone bad is a broken export whatever the state holds, like one without identifiers.
  // (Rows rejected beyond max_reject_ratio already fail the run, and their invalid values would
  // only say the same per column: that message is the one given.)
  const broken = tooManyRejectedRows ? [] : typesWithTooManyInvalidValues(values.valid, values.invalid, job.maxRejectRatio);
  if (broken.length > 0) {
    ctx.fail(invalidValuesMessage(broken, job.audience.identifiers, job.maxRejectRatio, job.file));
    return false;
  }
  if (removes === 0) return true;
  if (!ctx.allowsDestructiveChanges('removals')) return false;
  if (tooManyRejectedRows) {
    ctx.note(`too many rejected rows to trust the export: ${removes} ${removes === 1 ? 'removal was' : 'removals were'} not made`);
    return false;
  }
  if (moreThanShare(removes, members, ratio)) {
    ctx.fail(
      `the export would remove ${removes} of ${members} members (${percentOf(removes, members)}, more than max_remove_ratio ${ratio}); nothing was removed. If this is intended, raise audience.max_remove_ratio in ${job.file} or run once with --max-delete-ratio 1`,
    );
    return false;
  }
  const emptied = typesLosingTooManyMembers(counts.membersByField, counts.removesByField, ratio);
  if (emptied.length > 0) {
    ctx.fail(typeRemovalsMessage(emptied, job.audience.identifiers, ratio, job.file));
    return false;
  }
  return true;
}
