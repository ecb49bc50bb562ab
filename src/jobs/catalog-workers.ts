/**
 * Reading catalog feed items on every core: the main thread cuts the items out of the feed
 * (src/sources/xml-cut-feed.ts), skips the unchanged ones and stores the scan; worker threads
 * (catalog-read-worker.ts) parse, validate, hash and fingerprint the others, a batch (the items
 * of one chunk of the feed; on a re-run, of a few: see catalog-feed-scan.ts) at a time. Parsing an XML item costs far more than copying its
 * bytes to a worker, so this scales with the cores.
 *
 * Results come back per batch and are used in the order the batches were sent (the caller
 * keeps a few in flight), so rows, lines, the rejects file and "the last occurrence of an id
 * wins" are exactly those of a read on one thread. Small feeds (and the first items of any)
 * are read on the main thread: starting a worker costs more than a few thousand items.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { InternalError } from '../errors.js';
import { workerModuleUrl } from '../worker-module.js';
import type { CutItem } from '../sources/xml-cut-feed.js';
import { CutItemParser } from '../sources/xml-item-parser.js';
import type { CatalogFeedReaderFactory, CutItemReader, ReadItemResult } from './catalog-feed-scan.js';
import { readCutItem } from './catalog-feed-scan.js';
import type { FromReadWorker, ItemResultTuple, ReadResultMessage, ReadWorkerData, ToReadWorker } from './catalog-read-messages.js';
import type { CatalogJob } from './job.js';
import type { RunContext } from './run-context.js';

/** Items read on the main thread before worker threads are started. */
export const WORKER_THRESHOLD_ITEMS = 2000;

export interface ItemReaderOptions {
  /** Worker threads (0: none). The main thread reads one batch in `2 * threads + 1` itself. */
  threads: number;
  /**
   * Items read on the main thread first; workers start after that many, and only when the
   * items read are at least a tenth of those cut (not on a re-run that skips nearly all).
   */
  threshold: number;
}


function resultOf(tuple: ItemResultTuple | undefined, item: CutItem, message: ReadResultMessage, fingerprints: Buffer, payloads: Buffer, index: number): ReadItemResult {
  if (tuple === undefined) return { doubt: 'a worker gave no result' };
  const { row, line } = item;
  switch (tuple[0]) {
    case 'p': {
      const payload = payloads.subarray(index === 0 ? 0 : (message.payloadEnds[index - 1] ?? 0), message.payloadEnds[index] ?? 0);
      return {
        outcome: { kind: 'product', row, line, id: tuple[2], contentHash: tuple[3], payload, warnings: tuple[4], fingerprint: fingerprints.subarray(index * 32, index * 32 + 32) },
        problems: tuple[1],
      };
    }
    case 'i':
      return { outcome: { kind: 'invalid', row, line, id: tuple[2] ?? undefined, reasons: tuple[3].map(([field, reason]) => ({ field, reason })) }, problems: tuple[1] };
    case 'u':
      return { outcome: { kind: 'unreadable', row, line, reason: tuple[2] }, problems: tuple[1] };
    default:
      return { doubt: tuple[1] };
  }
}

interface PendingBatch {
  items: readonly CutItem[];
  resolve: (results: ReadItemResult[]) => void;
  reject: (error: Error) => void;
}

interface PoolWorker {
  worker: Worker;
  contexts: Set<number>;
  inFlight: number;
}

/** Worker threads reading batches of cut items. */
class ReadPool {
  private readonly workers: PoolWorker[] = [];
  private readonly pending = new Map<number, PendingBatch>();
  private batches = 0;
  private failure: Error | undefined;

  constructor(threads: number, data: ReadWorkerData) {
    const url = workerModuleUrl('./catalog-read-worker.js', import.meta.url);
    for (let i = 0; i < threads; i++) {
      const worker = new Worker(url, { workerData: data });
      const entry: PoolWorker = { worker, contexts: new Set(), inFlight: 0 };
      worker.on('message', (message: FromReadWorker) => {
        if (message.type === 'failed') {
          this.fail(new InternalError(`a catalog read worker failed: ${message.message}`));
          return;
        }
        entry.inFlight -= 1;
        const batch = this.pending.get(message.batch);
        if (batch === undefined) return;
        this.pending.delete(message.batch);
        const fingerprints = Buffer.from(message.fingerprints);
        const payloads = Buffer.from(message.payloads);
        batch.resolve(batch.items.map((item, index) => resultOf(message.results[index], item, message, fingerprints, payloads, index)));
      });
      worker.on('error', (error) => this.fail(error));
      worker.on('exit', (code) => {
        if (this.pending.size > 0) this.fail(new InternalError(`a catalog read worker exited (code ${code}) with work in flight`));
      });
      this.workers.push(entry);
    }
  }

  read(items: readonly CutItem[]): Promise<ReadItemResult[]> {
    if (this.failure) return Promise.reject(this.failure);
    let target: PoolWorker | undefined;
    for (const w of this.workers) if (target === undefined || w.inFlight < target.inFlight) target = w;
    if (target === undefined) return Promise.reject(new InternalError('no catalog read worker'));
    const count = items.length;
    let total = 0;
    for (const item of items) total += item.bytes.length;
    const bytes = new Uint8Array(new ArrayBuffer(total));
    const ends = new Int32Array(count);
    const rows = new Int32Array(count);
    const lines = new Int32Array(count);
    const contexts = new Int32Array(count);
    let at = 0;
    for (let i = 0; i < count; i++) {
      const item = items[i];
      if (item === undefined) continue;
      bytes.set(item.bytes, at);
      at += item.bytes.length;
      ends[i] = at;
      rows[i] = item.row;
      lines[i] = item.line;
      contexts[i] = item.context.id;
      if (!target.contexts.has(item.context.id)) {
        const { id, key, depth, bindings, encoding, limits } = item.context;
        this.post(target, { type: 'context', id, key, spec: { depth, bindings, encoding, limits } });
        target.contexts.add(id);
      }
    }
    const batch = ++this.batches;
    target.inFlight += 1;
    const promise = new Promise<ReadItemResult[]>((resolve, reject) => this.pending.set(batch, { items, resolve, reject }));
    this.post(target, { type: 'read', batch, bytes: bytes.buffer, ends, rows, lines, contexts }, [bytes.buffer, ends.buffer, rows.buffer, lines.buffer, contexts.buffer]);
    return promise;
  }

  async close(): Promise<void> {
    const workers = this.workers.splice(0);
    await Promise.all(workers.map((w) => w.worker.terminate()));
    this.fail(new InternalError('the catalog read workers were stopped'));
  }

  private post(target: PoolWorker, message: ToReadWorker, transfer: ArrayBuffer[] = []): void {
    target.worker.postMessage(message, transfer);
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const batch of this.pending.values()) batch.reject(error);
    this.pending.clear();
  }
}

/**
 * Reads on the main thread until `threshold` items were read, then in `threads` workers.
 */
export function itemReaderFactory(job: CatalogJob, options: ItemReaderOptions): CatalogFeedReaderFactory {
  return (name: string): CutItemReader => {
    let parser: CutItemParser | undefined;
    let pool: ReadPool | undefined;
    let readHere = 0;
    let batches = 0;
    return {
      read(items, itemsCut) {
        if (pool === undefined && options.threads > 0 && readHere >= options.threshold && readHere * 10 >= itemsCut) {
          pool = new ReadPool(options.threads, { name, fields: job.catalog.fields });
        }
        // The main thread's share: it also cuts, looks up and stores every item.
        if (pool !== undefined && ++batches % (2 * options.threads + 1) !== 0) return pool.read(items);
        readHere += items.length;
        return Promise.resolve(
          items.map((item) => {
            parser ??= new CutItemParser(name, item.context.limits);
            return readCutItem(parser, item, job, undefined);
          }),
        );
      },
      close: async () => {
        await pool?.close();
      },
    };
  };
}

/** The threads a catalog run may read with, the main thread included: read_threads, at most the machine's cores. */
export function catalogReadThreads(ctx: RunContext): number {
  return Math.min(ctx.settings.readThreads, availableParallelism());
}

/**
 * The item reader of a catalog run: as many reading threads as the settings allow
 * (catalogReadThreads), the main thread being one of them.
 */
export function catalogItemReader(ctx: RunContext, job: CatalogJob): CatalogFeedReaderFactory {
  return itemReaderFactory(job, { threads: Math.max(0, catalogReadThreads(ctx) - 1), threshold: WORKER_THRESHOLD_ITEMS });
}
