/**
 * Messages between the main thread and the catalog fingerprint thread
 * (catalog-fingerprint-thread.ts, catalog-fingerprint-worker.ts). A batch of cut items travels
 * in a slot: a SharedArrayBuffer given to the thread once and used again for later batches, so
 * that a batch costs two small messages (a transferred buffer cost ~60 µs a message here, a
 * slot ~7 µs, copy included). A batch of `count` items fills its slot so (matchSlotLayout):
 *
 *   Int32 ends[count] | Int32 contexts[count] | Int32 idLengths[count] | fingerprints (32 bytes each) | the items' bytes
 *
 * item i being bytes[ends[i-1] (0 for the first) .. ends[i]) of the last part. The thread
 * writes each item's raw fingerprint in its place and the length of the id of the product found
 * (-1: none), and answers with the ids, end to end, in one string: one string and one small
 * array cost far less to pass between threads than an object per item.
 */
import type { FingerprintLookupAddress } from '../state/store.js';

/** A context's key (part of every raw fingerprint), sent once before the first item that has it. */
export interface FingerprintContextMessage {
  type: 'context';
  id: number;
  key: string;
}

/** A slot for batches, given once (see MatchMessage.once). */
export interface SlotMessage {
  type: 'slot';
  id: number;
  buffer: SharedArrayBuffer;
}

export interface MatchMessage {
  type: 'match';
  batch: number;
  slot: number;
  count: number;
  /** The slot is forgotten after this batch (a one-off slot for a large batch). */
  once: boolean;
}

export type ToFingerprintWorker = FingerprintContextMessage | SlotMessage | MatchMessage;

/** The lookup is open: batches may be sent. */
export interface FingerprintReadyMessage {
  type: 'ready';
}

export interface MatchedMessage {
  type: 'matched';
  batch: number;
  /** The ids of the products found, end to end (their lengths are in the slot). */
  ids: string;
  /** [item, its saved feed warnings] for the items found whose product has any. */
  warnings: [number, readonly string[]][];
}

/** The thread cannot go on (the lookup could not be opened, a lookup failed). */
export interface FingerprintFailedMessage {
  type: 'failed';
  message: string;
  /** The state database failed (a StateError there, with its hint), not the thread's own code. */
  state: boolean;
  hint?: string | undefined;
}

export type FromFingerprintWorker = FingerprintReadyMessage | MatchedMessage | FingerprintFailedMessage;

export interface FingerprintWorkerData {
  address: FingerprintLookupAddress;
}

/** Where the parts of a slot holding a batch of `count` items begin (bytes); `bytes`: also the room needed besides the items' bytes. */
export function matchSlotLayout(count: number): { contexts: number; idLengths: number; fingerprints: number; bytes: number } {
  return { contexts: count * 4, idLengths: count * 8, fingerprints: count * 12, bytes: count * 44 };
}
