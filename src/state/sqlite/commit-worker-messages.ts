/** Messages between the main thread and the commit worker (commit-worker.ts). */
import type { AudienceMode } from '../store.js';
import type { TransferableIdentifierList } from '../identifier-list.js';
import type { RecordRange } from '../external-sort/packed-records.js';

export interface CommitWorkerData {
  /** The state database file. */
  path: string;
}

export type ToCommitWorker =
  | {
      type: 'commit';
      id: number;
      audienceId: number;
      added: TransferableIdentifierList | undefined;
      removed: TransferableIdentifierList | undefined;
      sentAt: number;
      mode: AudienceMode;
    }
  /**
   * Stage a plan's additions: the records of `range` of the spool file open as `fd` (the main
   * thread keeps it open, and flushed, until this is done), in chunks, one transaction each.
   * Confirmations that arrive meanwhile are applied between chunks; anything else waits until
   * the staging is done (a withdrawal must find the rows it changes written).
   */
  | { type: 'stage'; id: number; audienceId: number; fd: number; range: RecordRange; buckets: number[]; markers: number[]; sentAt: number }
  | { type: 'confirm'; id: number; markers: number[] }
  | { type: 'withdraw'; id: number; audienceId: number; ids: TransferableIdentifierList; marker: number }
  /** Close the connection and end the thread. */
  | { type: 'close' };

/** `done` and `failed` of a commit hand its lists' arrays back (transferred), for reuse. */
export type FromCommitWorker =
  | { type: 'done'; id: number; added?: TransferableIdentifierList | undefined; removed?: TransferableIdentifierList | undefined }
  | { type: 'failed'; id: number | undefined; message: string; added?: TransferableIdentifierList | undefined; removed?: TransferableIdentifierList | undefined };
