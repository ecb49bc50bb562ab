/**
 * Worker thread of a catalog run against a saved state: computes the raw fingerprints of the
 * items the main thread cut out of the feed and finds the products saved with them, through a
 * read-only connection of its own, batch by batch in the order they come. See
 * catalog-fingerprint-thread.ts.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { StateError } from '../errors.js';
import { openFingerprintLookup } from '../state/fingerprint-lookup.js';
import type { FingerprintLookup } from '../state/store.js';
import { contextKeyBytes, rawFingerprintOf } from './catalog-raw-fingerprint.js';
import { matchSlotLayout, type FromFingerprintWorker, type MatchMessage, type ToFingerprintWorker, type FingerprintWorkerData } from './catalog-fingerprint-messages.js';

const { address } = workerData as FingerprintWorkerData;
const keys = new Map<number, Buffer>();
const slots = new Map<number, Buffer>();

function post(message: FromFingerprintWorker): void {
  parentPort?.postMessage(message);
}

function match(lookup: FingerprintLookup, message: MatchMessage): void {
  const { count } = message;
  const slot = slots.get(message.slot);
  if (slot === undefined) throw new Error(`no slot ${message.slot}`);
  if (message.once) slots.delete(message.slot);
  const layout = matchSlotLayout(count);
  const ends = new Int32Array(slot.buffer, slot.byteOffset, count);
  const contexts = new Int32Array(slot.buffer, slot.byteOffset + layout.contexts, count);
  const idLengths = new Int32Array(slot.buffer, slot.byteOffset + layout.idLengths, count);
  const fingerprints: Buffer[] = new Array<Buffer>(count);
  let start = layout.bytes;
  for (let i = 0; i < count; i++) {
    const end = layout.bytes + (ends[i] ?? 0);
    const key = keys.get(contexts[i] ?? 0);
    if (key === undefined) throw new Error(`no key for item context ${contexts[i]}`);
    const at = layout.fingerprints + i * 32;
    rawFingerprintOf(key, slot.subarray(start, end)).copy(slot, at);
    fingerprints[i] = slot.subarray(at, at + 32);
    start = end;
  }
  const found = lookup.find(fingerprints);
  let ids = '';
  const warnings: [number, readonly string[]][] = [];
  for (let i = 0; i < count; i++) {
    const product = found[i];
    idLengths[i] = product === undefined ? -1 : product.id.length;
    if (product === undefined) continue;
    ids += product.id;
    if (product.warnings.length > 0) warnings.push([i, product.warnings]);
  }
  post({ type: 'matched', batch: message.batch, ids, warnings });
}

/** The thread's failure, for the main thread: a StateError keeps its message and hint. */
function failed(error: unknown): FromFingerprintWorker {
  if (error instanceof StateError) return { type: 'failed', state: true, message: error.message, hint: error.hint };
  return { type: 'failed', state: false, message: error instanceof Error ? (error.stack ?? error.message) : String(error) };
}

let lookup: FingerprintLookup | undefined;
try {
  lookup = openFingerprintLookup(address);
  post({ type: 'ready' });
} catch (error) {
  post(failed(error));
}

parentPort?.on('message', (message: ToFingerprintWorker) => {
  if (lookup === undefined) return;
  try {
    if (message.type === 'context') keys.set(message.id, contextKeyBytes(message.key));
    else if (message.type === 'slot') slots.set(message.id, Buffer.from(message.buffer));
    else match(lookup, message);
  } catch (error) {
    post(failed(error));
  }
});
