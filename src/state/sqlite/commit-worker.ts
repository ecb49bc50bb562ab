/**
 * Worker thread: writes an audience's large chunks into the state database through its own
 * connection, so that SQLite's B-tree work (~0.5 µs per member, 1.8 s for a million-row
 * export) runs on another core than the one building and sending requests.
 *
 * - A run's staged additions (member-status.ts): read from the scan's spool file by its
 *   descriptor and written in chunks, one transaction each, yielding between chunks so that
 *   the confirmations of acknowledged buckets, which arrive meanwhile, are applied at once
 *   (each is one small transaction): a run killed half way keeps what was acknowledged. Any
 *   other message that arrives while staging waits until it is done, and so does everything
 *   after it: a withdrawal must find the rows it changes already written.
 * - Acknowledged chunks of backfills and removals: one transaction each, in the order they
 *   arrive. The lists' arrays arrive transferred and are transferred back with the answer:
 *   kept here, each chunk's ~3 MB would wait for this thread's next full garbage collection
 *   (the process grew by ~70 MB over a million-row upload).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { RecordCursor } from '../external-sort/packed-records.js';
import { IdentifierList, transferList } from '../identifier-list.js';
import { SpoolDescriptorReader } from '../spool-file.js';
import { AudienceMembersWriter, type StageMarkers } from './audience-members-writer.js';
import type { CommitWorkerData, FromCommitWorker, ToCommitWorker } from './commit-worker-messages.js';
import { openDatabase } from './database.js';

/** Staged additions per transaction: ~50 transactions for the 3.3M identifiers of a 1M-row export. */
const STAGE_CHUNK = 65_536;

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
  /** Messages not applied yet, in arrival order (they wait while a staging is in progress). */
  const queue: ToCommitWorker[] = [];
  let staging = false;

  const apply = (message: Exclude<ToCommitWorker, { type: 'stage' }>): void => {
    if (message.type === 'close') {
      db.close();
      port?.close();
      return;
    }
    try {
      if (message.type === 'confirm') {
        writer.confirm(message.markers);
        post({ type: 'done', id: message.id });
      } else if (message.type === 'withdraw') {
        writer.withdraw(message.audienceId, IdentifierList.fromTransferable(message.ids), message.marker);
        post({ type: 'done', id: message.id });
      } else {
        writer.commit(message.audienceId, {
          added: message.added ? IdentifierList.fromTransferable(message.added) : undefined,
          removed: message.removed ? IdentifierList.fromTransferable(message.removed) : undefined,
          sentAt: message.sentAt,
          mode: message.mode,
        });
        post({ type: 'done', id: message.id, added: message.added, removed: message.removed });
      }
    } catch (error) {
      const added = message.type === 'commit' ? message.added : undefined;
      const removed = message.type === 'commit' ? message.removed : undefined;
      post({ type: 'failed', id: message.id, message: (error as Error).message, added, removed });
    }
  };

  /** Applies the queued messages in order, until one starts a staging (the rest wait for its end). */
  const pump = (): void => {
    while (!staging && queue.length > 0) {
      const message = queue.shift() as ToCommitWorker;
      if (message.type === 'stage') stage(message);
      else apply(message);
    }
  };

  const stage = (message: Extract<ToCommitWorker, { type: 'stage' }>): void => {
    staging = true;
    const cursor = new RecordCursor(new SpoolDescriptorReader(message.fd), message.range);
    const markers: StageMarkers = { buckets: message.buckets, markers: message.markers, sentAt: message.sentAt };
    const finish = (failure?: Error): void => {
      staging = false;
      post(failure ? { type: 'failed', id: message.id, message: failure.message } : { type: 'done', id: message.id });
      pump();
    };
    const step = (): void => {
      try {
        if (writer.stage(message.audienceId, cursor, STAGE_CHUNK, markers) < STAGE_CHUNK) finish();
        else setImmediate(step);
      } catch (error) {
        finish(error as Error);
      }
    };
    step();
  };

  port?.on('message', (message: ToCommitWorker) => {
    // A confirmation goes between two chunks of a staging, unless something waits before it.
    if (staging && message.type === 'confirm' && queue.length === 0) apply(message);
    else {
      queue.push(message);
      pump();
    }
  });
} catch (error) {
  post({ type: 'failed', id: undefined, message: (error as Error).message });
}
