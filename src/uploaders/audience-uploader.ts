/**
 * Sends audience users in full requests, several at a time, and reports an outcome for
 * every user record: acknowledged (the service counted it), rejected by the service (its
 * operation failed validation), or failed (the request could not be delivered).
 *
 * - Each acknowledged batch is handed to `onAcknowledged` (the runner commits it to the
 *   state store) before the batch counts as done, so a crash re-sends at most the batches
 *   in flight.
 * - A 400 with operation_errors, or a 2xx with them (the batch failed as a whole all the
 *   same): the failing operations' users are rejected with the service's reason and the rest
 *   of the batch is sent again. Operation errors that all say to retry (a 2xx: the client
 *   retries the batch; an operation of a 400: sent again with the rest) refuse no one.
 * - Authentication, permission and not-found errors stop the upload at once; so does a
 *   retryable error that outlived its retries (the service is down: the next run repairs),
 *   and a commit the state database refused (what the service acknowledged but the state does
 *   not hold is sent again by the next run).
 * - Stopping (the signal) lets the batches in flight finish; a batch built but not started
 *   is not sent.
 */
import type { AdsApiClient } from '../api/client.js';
import { ApiValidationError, CallStoppedError, describeServiceErrors, isRetryableOperation } from '../api/errors.js';
import { postAudienceUsers, type AudienceTarget } from '../api/resources/audiences.js';
import { toAdsyncError, type AdsyncError } from '../errors.js';
import type { IdentifierType } from '../hash/types.js';
import { IdentifierList } from '../state/identifier-list.js';
import { AudienceBatchBuilder, BatchMemoryPool, MAX_BYTES_PER_REQUEST, operationRange, userRange, type BatchBuilderOptions, type BuiltBatch } from './audience-batch-builder.js';
import { stopsUpload } from './stops-upload.js';
import { BoundedDispatch } from './bounded-dispatch.js';

export interface AcknowledgedBatch {
  /** 1-based order in which the batch was built. */
  seq: number;
  batch: BuiltBatch;
}

/** One identifier the service refused, for the rejects file. */
export interface RefusedIdentifier {
  row: number;
  field: IdentifierType;
}

/**
 * How identifiers become user records: `identifier` makes one user of each; `row` makes one
 * user of each run of consecutive identifiers from the same source row.
 */
export type UserGrouping = 'identifier' | 'row';

export interface AudienceUploadOptions {
  client: AdsApiClient;
  target: AudienceTarget;
  builder: BatchBuilderOptions;
  grouping: UserGrouping;
  concurrency: number;
  /** Stops building new batches; the ones in flight finish. */
  stop?: AbortSignal | undefined;
  onAcknowledged: (ack: AcknowledgedBatch) => Promise<void>;
  /** Users the service refused: each identifier's row and type, and the identifiers themselves (a list of their own). */
  onRejected: (identifiers: readonly RefusedIdentifier[], reason: string, refused: IdentifierList) => void;
  /**
   * Batch `seq` ended without anything left to acknowledge: the service refused every operation
   * of it (onRejected told which), so no acknowledgement will come for it.
   */
  onRefusedWhole?: (seq: number) => void;
  /**
   * Batch `seq` ended without an acknowledgement: it failed, or a stop or another batch's fatal
   * error kept it from being sent (for a batch sent again without the operations the service
   * refused, `batch` is what was sent again). Its identifiers are valid during the call.
   */
  onUnacknowledged?: (seq: number, batch: BuiltBatch) => void;
  onFailed?: (users: number, error: AdsyncError) => void;
  /** Called when batch `seq` is built, before it is sent (backfills track their resume point). */
  onBuilt?: (seq: number, batch: BuiltBatch) => void;
}

export interface AudienceUploadResult {
  acknowledgedUsers: number;
  acknowledgedIdentifiers: number;
  rejectedUsers: number;
  failedUsers: number;
  /** Why the first batch that failed was not delivered (the report names it). */
  firstFailure: AdsyncError | undefined;
  batches: number;
  /** Set when the upload stopped early because of this error. */
  fatal: AdsyncError | undefined;
  /** True when the stop signal ended the upload before its input did. */
  stopped: boolean;
}

export async function uploadAudienceUsers(lists: AsyncIterable<IdentifierList>, options: AudienceUploadOptions): Promise<AudienceUploadResult> {
  const result: AudienceUploadResult = {
    acknowledgedUsers: 0,
    acknowledgedIdentifiers: 0,
    rejectedUsers: 0,
    failedUsers: 0,
    firstFailure: undefined,
    batches: 0,
    fatal: undefined,
    stopped: false,
  };
  const dispatcher = new BoundedDispatch(options.concurrency, options.stop);
  // Bodies and lists in use at once: one per request in flight, one being built.
  const pool = new BatchMemoryPool(options.builder.maxBytes ?? MAX_BYTES_PER_REQUEST, options.concurrency + 1);
  const builder = new AudienceBatchBuilder(options.builder, pool);
  let seq = 0;

  const failed = (users: number, error: AdsyncError): void => {
    result.failedUsers += users;
    result.firstFailure ??= error;
    options.onFailed?.(users, error);
  };

  const send = async (batch: BuiltBatch, batchSeq: number, resent = false): Promise<void> => {
    try {
      await sendOnce(batch, batchSeq, resent);
    } finally {
      batch.release();
    }
  };

  const sendOnce = async (batch: BuiltBatch, batchSeq: number, resent: boolean): Promise<void> => {
    if (result.fatal) {
      // Another batch hit a fatal error: do not send more.
      failed(batch.userCount, result.fatal);
      options.onUnacknowledged?.(batchSeq, batch);
      return;
    }
    try {
      await postAudienceUsers(options.client, options.target, batch.body, batch.userCount);
      // Answered: the body can carry the next batch while this one is committed.
      batch.releaseBody();
      await options.onAcknowledged({ seq: batchSeq, batch });
      result.acknowledgedUsers += batch.userCount;
      result.acknowledgedIdentifiers += batch.ids.length;
    } catch (caught) {
      const error = toAdsyncError(caught);
      if (error instanceof CallStoppedError) {
        // Stopped while it waited to be sent (or sent again): not committed, the next run sends
        // it (an addition the service did apply is then answered as one; a removal was forgotten
        // before it was sent: see forgottenWhileRemoved).
        result.stopped = true;
        options.onUnacknowledged?.(batchSeq, batch);
        return;
      }
      if (error instanceof ApiValidationError && error.operationErrors.length > 0 && !resent) {
        // An index outside the batch names no operation of it, and an operation whose errors all
        // say to retry (503, 500, ...) is not wrong: their users are not refused, but sent again.
        const items = error.operationErrors.filter((o) => o.index >= 0 && o.index < batch.operationEnds.length && !isRetryableOperation(o));
        const failing = new Set(items.map((o) => o.index));
        for (const item of items) {
          const [from, to] = operationRange(batch, item.index);
          const refused: RefusedIdentifier[] = [];
          const refusedIds = new IdentifierList(16);
          for (let u = from; u < to; u++) {
            const [a, b] = userRange(batch, u);
            for (let i = a; i < b; i++) {
              refused.push({ row: batch.ids.row(i), field: batch.ids.field(i) });
              refusedIds.pushFrom(batch.ids, i);
            }
          }
          result.rejectedUsers += to - from;
          options.onRejected(refused, `the service refused the operation: ${describeServiceErrors(item.errors)}`, refusedIds);
        }
        const rebuilt = new AudienceBatchBuilder(options.builder, builder.pool);
        for (let o = 0; o < batch.operationEnds.length; o++) {
          if (failing.has(o)) continue;
          const [from, to] = operationRange(batch, o);
          for (let u = from; u < to; u++) {
            const [a, b] = userRange(batch, u);
            rebuilt.tryAddUser(batch.ids, a, b);
          }
        }
        if (!rebuilt.isEmpty) await send(rebuilt.build(), batchSeq, true);
        else options.onRefusedWhole?.(batchSeq);
        return;
      }
      failed(batch.userCount, error);
      options.onUnacknowledged?.(batchSeq, batch);
      if (stopsUpload(error) && !result.fatal) result.fatal = error;
    }
  };

  const dispatch = async (): Promise<void> => {
    const batch = builder.build();
    seq += 1;
    result.batches += 1;
    const batchSeq = seq;
    options.onBuilt?.(batchSeq, batch);
    // A batch built while a stop was requested is not sent: the next run sends it.
    if (!(await dispatcher.submit(() => send(batch, batchSeq)))) {
      options.onUnacknowledged?.(batchSeq, batch);
      batch.release();
      result.stopped = true;
    }
  };

  try {
    outer: for await (const list of lists) {
      let start = 0;
      while (start < list.length) {
        if (result.fatal) break outer;
        if (options.stop?.aborted) {
          result.stopped = true;
          break outer;
        }
        let end = start + 1;
        if (options.grouping === 'row') {
          const row = list.row(start);
          while (end < list.length && list.row(end) === row) end++;
        }
        if (!builder.tryAddUser(list, start, end)) {
          await dispatch();
          if (result.stopped || result.fatal) break outer;
          builder.tryAddUser(list, start, end);
        }
        start = end;
      }
    }
    if (!result.fatal && !result.stopped && !builder.isEmpty) await dispatch();
  } finally {
    await dispatcher.drain();
  }
  return result;
}
