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

export type FromCommitWorker = { type: 'ready' } | { type: 'done'; id: number } | { type: 'failed'; id: number | undefined; message: string };
