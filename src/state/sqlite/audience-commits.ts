/**
 * Where an audience's acknowledged chunks are committed. Small chunks, and every chunk of an
 * in-memory database, are written here, at once. A large chunk (a full 5 MB request carries
 * ~70,000 identifiers) of a database file goes to a commit worker thread with its own
 * connection (commit-worker.ts), so that the members' B-tree work runs on another core while
 * this thread builds and sends the next requests. Once the worker has started, every chunk
 * goes to it, so chunks are applied in the order they were committed. A commit's promise
 * settles when its transaction is in the database (or failed): the caller counts the batch
 * as done only then, exactly as with a commit made here.
 */
import { Worker } from 'node:worker_threads';
import { StateError } from '../../errors.js';
import { workerModuleUrl } from '../../worker-module.js';
import { RecordCursor, type RecordRange } from '../external-sort/packed-records.js';
import { transferList, type IdentifierList, type TransferableIdentifierList } from '../identifier-list.js';
import type { SpoolFile } from '../spool-file.js';
import { AudienceMembersWriter, type MembersChunk, type StageMarkers } from './audience-members-writer.js';
import type { CommitWorkerData, FromCommitWorker, ToCommitWorker } from './commit-worker-messages.js';
import type { Db } from './database.js';

/** A plan's additions to stage: `range` of `spool` (flushed; kept open until the staging is done). */
export interface StagingSource {
  spool: SpoolFile;
  range: RecordRange;
}

/** Chunks of at least this many identifiers are committed by the worker thread. */
export const OFF_THREAD_MIN_IDENTIFIERS = 20_000;

interface Pending {
  resolve: () => void;
  reject: (error: Error) => void;
  /** Gives the lent lists their arrays back (a list lost with a dead thread stays empty). */
  takeBack?: (returned: Returned) => void;
}

interface Returned {
  added?: TransferableIdentifierList | undefined;
  removed?: TransferableIdentifierList | undefined;
}

export class AudienceCommits {
  private readonly writer: AudienceMembersWriter;
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private readonly inFlight = new Set<Promise<void>>();
  private nextId = 1;
  /** Chunks of at least this many identifiers go to the worker (Infinity: none). */
  private readonly offThreadMin: number;

  constructor(
    db: Db,
    private readonly path: string,
    offThreadMin: number | null = OFF_THREAD_MIN_IDENTIFIERS,
  ) {
    this.offThreadMin = offThreadMin ?? Number.POSITIVE_INFINITY;
    this.writer = new AudienceMembersWriter(db);
  }

  commit(audienceId: number, chunk: MembersChunk): Promise<void> {
    const size = (chunk.added?.length ?? 0) + (chunk.removed?.length ?? 0);
    if (this.onThisThread(size)) return this.here(() => this.writer.commit(audienceId, chunk));
    return this.commitOffThread(audienceId, chunk);
  }

  /**
   * Stages a plan's additions (member-status.ts): on the commit thread when they are many (the
   * promise settles when all are written; confirmations asked for meanwhile are applied between
   * its chunks), else here, at once.
   */
  stage(audienceId: number, source: StagingSource, markers: StageMarkers): Promise<void> {
    if (this.onThisThread(source.range.count)) {
      return this.here(() => {
        const cursor = new RecordCursor(source.spool, source.range);
        while (this.writer.stage(audienceId, cursor, Number.MAX_SAFE_INTEGER, markers) > 0);
      });
    }
    source.spool.flush();
    const { buckets, sentAt } = markers;
    return this.send((id) => ({ type: 'stage', id, audienceId, fd: source.spool.descriptor, range: source.range, buckets: [...buckets], markers: [...markers.markers], sentAt }));
  }

  /** Confirms markers of staged additions, in order with the writes asked for before. */
  confirm(markers: readonly number[]): Promise<void> {
    if (this.onThisThread(0)) return this.here(() => this.writer.confirm(markers));
    return this.send((id) => ({ type: 'confirm', id, markers: [...markers] }));
  }

  /** Withdraws staged identifiers (under a marker never confirmed), in order with the writes asked for before. */
  withdraw(audienceId: number, ids: IdentifierList, marker: number): Promise<void> {
    if (this.onThisThread(0)) return this.here(() => this.writer.withdraw(audienceId, ids, marker));
    const copy = ids.toTransferable();
    return this.send((id) => ({ type: 'withdraw', id, audienceId, ids: copy, marker }), transferList(copy));
  }

  /** Whether a write of `size` identifiers is made here: the commit thread is not running, and it is small or the database in memory. */
  private onThisThread(size: number): boolean {
    return !this.worker && (this.path === ':memory:' || this.path === '' || size < this.offThreadMin);
  }

  /** A write made on this thread, its failure a StateError naming the database. */
  private here(write: () => void): Promise<void> {
    try {
      write();
    } catch (error) {
      return Promise.reject(new StateError(`cannot commit to the state database ${this.path}: ${(error as Error).message}`, { cause: error }));
    }
    return Promise.resolve();
  }

  /** Waits for the commits in flight, then stops the worker (it closes its connection). */
  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    await Promise.allSettled(this.inFlight);
    // A worker that ended by itself (it could not open the database, it crashed) is gone already.
    if (this.worker !== worker) return;
    this.worker = undefined;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.ref();
    const message: ToCommitWorker = { type: 'close' };
    worker.postMessage(message);
    await exited;
  }

  private commitOffThread(audienceId: number, chunk: MembersChunk): Promise<void> {
    const worker = (this.worker ??= this.start());
    const id = this.nextId++;
    // The lists' arrays are lent to the worker (moved, not copied) and come back with its
    // answer; a list whose values share memory with other Buffers is copied instead.
    const lend = (list: MembersChunk['added']): { list: IdentifierList; lent: boolean; arrays: TransferableIdentifierList } | undefined => {
      if (!list) return undefined;
      const lent = list.lend();
      return { list, lent: lent !== undefined, arrays: lent ?? list.toTransferable() };
    };
    const added = lend(chunk.added);
    const removed = lend(chunk.removed);
    const message: ToCommitWorker = { type: 'commit', id, audienceId, added: added?.arrays, removed: removed?.arrays, sentAt: chunk.sentAt, mode: chunk.mode };
    return this.post(worker, message, transferList(message.added, message.removed), (returned) => {
      if (added?.lent && returned.added) added.list.takeBack(returned.added);
      if (removed?.lent && returned.removed) removed.list.takeBack(returned.removed);
    });
  }

  /** Sends a message made with its id to the commit thread (started if need be). */
  private send(message: (id: number) => ToCommitWorker, transfer: ArrayBuffer[] = []): Promise<void> {
    const worker = (this.worker ??= this.start());
    return this.post(worker, message(this.nextId++), transfer);
  }

  private post(worker: Worker, message: ToCommitWorker, transfer: ArrayBuffer[], takeBack?: (returned: Returned) => void): Promise<void> {
    const id = message.type === 'close' ? 0 : message.id;
    const done = new Promise<void>((resolve, reject) => {
      if (this.pending.size === 0) worker.ref();
      this.pending.set(id, takeBack ? { resolve, reject, takeBack } : { resolve, reject });
      worker.postMessage(message, transfer);
    });
    this.inFlight.add(done);
    const forget = (): void => void this.inFlight.delete(done);
    done.then(forget, forget);
    return done;
  }

  private start(): Worker {
    const data: CommitWorkerData = { path: this.path };
    // Its JavaScript is small and short-lived (a young generation of 2 MB is plenty); what it
    // keeps is SQLite's page cache (commit-worker.ts).
    const worker = new Worker(workerModuleUrl('./commit-worker.js', import.meta.url), { workerData: data, resourceLimits: { maxYoungGenerationSizeMb: 2 } });
    // The thread keeps the process alive only while commits are in flight (or it is closing):
    // a process that forgets to close the store can still exit.
    worker.unref();
    worker.on('message', (message: FromCommitWorker) => {
      if (message.type === 'done') this.settle(message.id, message);
      else if (message.type === 'failed') {
        const error = new StateError(`cannot commit to the state database ${this.path}: ${message.message}`);
        if (message.id === undefined) this.fail(error);
        else this.settle(message.id, message, error);
      }
    });
    worker.on('error', (error) => this.fail(new StateError(`the state database's commit thread failed: ${error.message}`, { cause: error })));
    worker.on('exit', (code) => {
      // The next large commit starts a new thread (the scheduler keeps one store for its life).
      if (this.worker === worker) this.worker = undefined;
      if (this.pending.size > 0) this.fail(new StateError(`the state database's commit thread stopped (exit code ${code}) with ${this.pending.size} commits in flight`));
    });
    return worker;
  }

  private settle(id: number, returned: Returned, error?: Error): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    p.takeBack?.(returned);
    if (this.pending.size === 0) this.worker?.unref();
    if (error) p.reject(error);
    else p.resolve();
  }

  /** Fails every commit in flight (their lists stay empty: lost with the thread). */
  private fail(error: StateError): void {
    const all = [...this.pending.values()];
    this.pending.clear();
    for (const p of all) p.reject(error);
  }
}
