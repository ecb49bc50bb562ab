/** Messages between the main thread and the commit worker (commit-worker.ts). */
import type { AudienceMode } from '../store.js';
import type { TransferableIdentifierList } from '../identifier-list.js';

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
  /** Close the connection and end the thread. */
  | { type: 'close' };

/** `done` and `failed` of a commit hand its lists' arrays back (transferred), for reuse. */
export type FromCommitWorker =
  | { type: 'done'; id: number; added: TransferableIdentifierList | undefined; removed: TransferableIdentifierList | undefined }
  | { type: 'failed'; id: number | undefined; message: string; added?: TransferableIdentifierList | undefined; removed?: TransferableIdentifierList | undefined };
