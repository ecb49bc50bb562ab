/**
 * The raw fingerprints of a catalog run's cut items, and the products saved with them, computed
 * on a thread of their own (catalog-fingerprint-worker.ts, with its own read-only connection to
 * the state) while the main thread cuts the feed and stores the scan. On an unchanged re-run of
 * a large feed they were a third of the main thread's work: SHA-256 of every item's bytes
 * (~1.7 µs an item, mostly the cost of a call) and one index seek per item (~2.5 µs).
 *
 * The first items of a feed are looked up on the main thread (a small feed never starts the
 * thread), and so are all items until the thread has opened its connection. Answers are given
 * in the order asked. If the thread fails (its connection cannot be opened, a lookup throws, the
 * thread dies), the batches it held and all later ones fail with that error, and so does the
 * run: never a wait for an answer that cannot come, never an item taken as unchanged unseen.
 */
import { Worker } from 'node:worker_threads';
import { InternalError, StateError } from '../errors.js';
import { workerModuleUrl } from '../worker-module.js';
import type { CutItem } from '../sources/xml-cut-feed.js';
import type { CatalogState, FingerprintLookupAddress, FingerprintMatch } from '../state/store.js';
import { inThreadMatcher, type ItemMatcher, type ItemMatcherFactory, type ItemMatches } from './catalog-feed-scan.js';
import {
  matchSlotLayout,
  type FingerprintFailedMessage,
  type FromFingerprintWorker,
  type FingerprintWorkerData,
  type MatchedMessage,
  type ToFingerprintWorker,
} from './catalog-fingerprint-messages.js';
import { catalogReadThreads } from './catalog-workers.js';
import type { RunContext } from './run-context.js';

/** Items looked up on the main thread before the thread is started. */
export const FINGERPRINT_THREAD_MIN_ITEMS = 2000;

/** A slot holds a batch's items (a few 64 KiB chunks: see MIN_BATCH_ITEMS in catalog-feed-scan.ts) and their room: one size for all, used again. */
const SLOT_BYTES = 1024 * 1024;

/** A batch at the thread: its slot (free again once answered) and its promise. */
interface PendingMatch {
  slot: Slot;
  count: number;
  resolve: (matches: ItemMatches) => void;
  reject: (error: Error) => void;
}

interface Slot {
  id: number;
  bytes: Buffer;
  /** Given for one batch only (larger than SLOT_BYTES). */
  once: boolean;
}

const NO_WARNINGS: readonly string[] = [];

class FingerprintThread implements ItemMatcher {
  private readonly here: ItemMatcher;
  private worker: Worker | undefined;
  private ready = false;
  /** Why the thread cannot go on (it failed, or was closed): every later match fails with it. */
  private failure: Error | undefined;
  private seen = 0;
  private batches = 0;
  private readonly pending = new Map<number, PendingMatch>();
  private readonly contextsSent = new Set<number>();
  /** Slots the thread has and no batch uses. */
  private readonly free: Slot[] = [];
  private slots = 0;

  constructor(
    state: CatalogState,
    private readonly address: FingerprintLookupAddress,
    private readonly threshold: number,
    private readonly workerUrl: URL,
  ) {
    this.here = inThreadMatcher(state);
  }

  match(items: readonly CutItem[]): Promise<ItemMatches> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    this.seen += items.length;
    if (this.worker === undefined && this.seen > this.threshold) this.worker = this.start();
    const worker = this.worker;
    if (worker === undefined || !this.ready) return this.here.match(items);
    return this.send(worker, items);
  }

  async close(): Promise<void> {
    this.fail(new InternalError('the catalog fingerprint thread was stopped'));
    const worker = this.worker;
    this.worker = undefined;
    if (worker !== undefined) await worker.terminate();
  }

  private start(): Worker {
    const data: FingerprintWorkerData = { address: this.address };
    // Its JavaScript is small and short-lived; what it keeps is SQLite's page cache.
    const worker = new Worker(this.workerUrl, { workerData: data, resourceLimits: { maxYoungGenerationSizeMb: 2 } });
    worker.on('message', (message: FromFingerprintWorker) => {
      if (message.type === 'ready') this.ready = true;
      else if (message.type === 'matched') this.matched(message);
      else this.fail(failureOf(message));
    });
    worker.on('error', (error) => this.fail(new InternalError(`the catalog fingerprint thread failed: ${error.message}`, { cause: error })));
    worker.on('exit', (code) => this.fail(new InternalError(`the catalog fingerprint thread exited (code ${code}) before the feed was read`)));
    return worker;
  }

  private send(worker: Worker, items: readonly CutItem[]): Promise<ItemMatches> {
    const count = items.length;
    const layout = matchSlotLayout(count);
    let total = 0;
    for (const item of items) total += item.bytes.length;
    const slot = this.slotFor(worker, layout.bytes + total);
    const { bytes } = slot;
    const ends = new Int32Array(bytes.buffer, bytes.byteOffset, count);
    const contexts = new Int32Array(bytes.buffer, bytes.byteOffset + layout.contexts, count);
    let at = layout.bytes;
    for (let i = 0; i < count; i++) {
      const item = items[i] as CutItem;
      bytes.set(item.bytes, at);
      at += item.bytes.length;
      ends[i] = at - layout.bytes;
      const context = item.context;
      contexts[i] = context.id;
      if (!this.contextsSent.has(context.id)) {
        this.post(worker, { type: 'context', id: context.id, key: context.key });
        this.contextsSent.add(context.id);
      }
    }
    const batch = ++this.batches;
    const answer = new Promise<ItemMatches>((resolve, reject) => this.pending.set(batch, { slot, count, resolve, reject }));
    this.post(worker, { type: 'match', batch, slot: slot.id, count, once: slot.once });
    return answer;
  }

  private matched(message: MatchedMessage): void {
    const pending = this.pending.get(message.batch);
    if (pending === undefined) return;
    this.pending.delete(message.batch);
    const { slot, count } = pending;
    const layout = matchSlotLayout(count);
    const idLengths = new Int32Array(slot.bytes.buffer, slot.bytes.byteOffset + layout.idLengths, count);
    const matches = new Array<FingerprintMatch | undefined>(count);
    const fingerprints = new Array<Buffer | undefined>(count);
    const { ids } = message;
    let at = 0;
    for (let i = 0; i < count; i++) {
      const length = idLengths[i] ?? -1;
      if (length >= 0) {
        matches[i] = { id: ids.slice(at, at + length), warnings: NO_WARNINGS };
        at += length;
      } else {
        // Kept with the item's product: copied out of the slot, which is used again.
        const from = layout.fingerprints + i * 32;
        fingerprints[i] = Buffer.from(slot.bytes.subarray(from, from + 32));
      }
    }
    for (const [i, warnings] of message.warnings) {
      const match = matches[i];
      if (match !== undefined) matches[i] = { id: match.id, warnings };
    }
    if (!slot.once) this.free.push(slot);
    pending.resolve({ matches, fingerprints });
  }

  /** The thread is gone or stopped: what it held, and every later match, fails with `error`. */
  private fail(error: Error): void {
    if (this.failure !== undefined) return;
    this.failure = error;
    const held = [...this.pending.values()];
    this.pending.clear();
    for (const { reject } of held) reject(error);
    const worker = this.worker;
    if (worker !== undefined) void worker.terminate();
  }

  /** A free slot with room for `bytes`, given to the thread first when new. */
  private slotFor(worker: Worker, bytes: number): Slot {
    const once = bytes > SLOT_BYTES;
    if (!once) {
      const free = this.free.pop();
      if (free !== undefined) return free;
    }
    const buffer = new SharedArrayBuffer(once ? bytes : SLOT_BYTES);
    const slot: Slot = { id: ++this.slots, bytes: Buffer.from(buffer), once };
    this.post(worker, { type: 'slot', id: slot.id, buffer });
    return slot;
  }

  private post(worker: Worker, message: ToFingerprintWorker): void {
    worker.postMessage(message);
  }
}

/**
 * What the thread said when it could not go on: the state database's failure (it could not be
 * opened or read) as the StateError it was there, anything else as an internal error.
 */
function failureOf(message: FingerprintFailedMessage): Error {
  if (!message.state) return new InternalError(`the catalog fingerprint thread failed: ${message.message}`);
  return new StateError(message.message, { hint: message.hint });
}

const WORKER_URL = workerModuleUrl('./catalog-fingerprint-worker.js', import.meta.url);

/**
 * Looks items up on a thread of its own after `threshold` items, when the state can be read
 * from another thread. `workerUrl`: the thread's module (another one only in tests of failures).
 */
export function fingerprintThreadMatcher(threshold: number, workerUrl: URL = WORKER_URL): ItemMatcherFactory {
  return (state) => {
    const address = state.fingerprintLookupAddress();
    return address === undefined ? inThreadMatcher(state) : new FingerprintThread(state, address, threshold, workerUrl);
  };
}

/**
 * The item matcher of a catalog run: on its own thread when the settings allow a second
 * reading thread (read_threads, at most the machine's cores); else on the main thread.
 */
export function catalogItemMatcher(ctx: RunContext): ItemMatcherFactory | undefined {
  return catalogReadThreads(ctx) > 1 ? fingerprintThreadMatcher(FINGERPRINT_THREAD_MIN_ITEMS) : undefined;
}
