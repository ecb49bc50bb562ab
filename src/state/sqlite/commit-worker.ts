/**
 * Worker thread: commits large acknowledged chunks of an audience upload into the state
 * database through its own connection, so that SQLite's B-tree work (~0.5 µs per member, 1.8 s
 * for a million-row export) runs on another core than the one building and sending requests.
 * Chunks are applied one at a time, in the order they arrive; each is one transaction, as on
 * the main thread. The lists' arrays arrive transferred and are transferred back with the
 * answer: kept here, each chunk's ~3 MB would wait for this thread's next full garbage
 * collection (the process grew by ~70 MB over a million-row upload).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { IdentifierList, transferList } from '../identifier-list.js';
import { AudienceMembersWriter } from './audience-members-writer.js';
import type { CommitWorkerData, FromCommitWorker, ToCommitWorker } from './commit-worker-messages.js';
import { openDatabase } from './database.js';

const { path } = workerData as CommitWorkerData;
const port = parentPort;

/** Posts a message; the arrays of the lists in it go back to the main thread (moved, not copied). */
function post(message: FromCommitWorker): void {
  port?.postMessage(message, transferList(message.added, message.removed));
}

try {
  const db = openDatabase(path);
  // Chunks arrive in key order: their inserts walk the B-tree's right-hand pages, so a small
  // page cache does (the main connection keeps its 16 MB for reading).
  db.pragma('cache_size = -2000');
  const writer = new AudienceMembersWriter(db);
  port?.on('message', (message: ToCommitWorker) => {
    if (message.type === 'close') {
      db.close();
      port.close();
      return;
    }
    try {
      writer.commit(message.audienceId, {
        added: message.added ? IdentifierList.fromTransferable(message.added) : undefined,
        removed: message.removed ? IdentifierList.fromTransferable(message.removed) : undefined,
        sentAt: message.sentAt,
        mode: message.mode,
      });
      post({ type: 'done', id: message.id, added: message.added, removed: message.removed });
    } catch (error) {
      post({ type: 'failed', id: message.id, message: (error as Error).message, added: message.added, removed: message.removed });
    }
  });
} catch (error) {
  post({ type: 'failed', id: undefined, message: (error as Error).message });
}
