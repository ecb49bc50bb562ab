/**
 * Messages between the main thread and the catalog read workers (catalog-workers.ts,
 * catalog-read-worker.ts). Items travel as one buffer of bytes per batch (transferred, not
 * copied), results as arrays, fingerprints as one buffer per batch.
 */
import type { ItemContextSpec } from '../sources/xml-item-parser.js';

/** A context of items, sent once per worker before the first item that has it. */
export interface ContextMessage {
  type: 'context';
  id: number;
  spec: ItemContextSpec;
  /** The context's key: part of every item's raw fingerprint. */
  key: string;
}

export interface ReadMessage {
  type: 'read';
  batch: number;
  /** The items' bytes, one after the other. */
  bytes: ArrayBuffer;
  /** Item i is bytes[ends[i-1] (0 for the first) .. ends[i]). */
  ends: Int32Array;
  rows: Int32Array;
  lines: Int32Array;
  contexts: Int32Array;
}

export type ToReadWorker = ContextMessage | ReadMessage;

/**
 * One item's result:
 *   ['p', problems, id, contentHash, warnings]  a product (its canonical JSON is in `payloads`,
 *       its fingerprint in `fingerprints`)
 *   ['i', problems, id | null, reasons as [field, reason][]]  invalid (buildProduct's reasons)
 *   ['u', problems, reason]  unreadable (the reader's reject)
 *   ['d', reason]  doubt: read the feed again from this item with the full reader
 */
export type ItemResultTuple =
  | ['p', number, string, string, string[]]
  | ['i', number, string | null, [string, string][]]
  | ['u', number, string]
  | ['d', string];

export interface ReadResultMessage {
  type: 'read';
  batch: number;
  results: ItemResultTuple[];
  /** 32 bytes per item (raw fingerprint), products only meaningful. */
  fingerprints: ArrayBuffer;
  /** The products' canonical JSON (UTF-8), one after the other; item i ends at payloadEnds[i]. */
  payloads: ArrayBuffer;
  payloadEnds: Int32Array;
}

export interface WorkerFailureMessage {
  type: 'failed';
  message: string;
}

export type FromReadWorker = ReadResultMessage | WorkerFailureMessage;

/** What each worker needs to know of the job. */
export interface ReadWorkerData {
  /** The source's name, for messages. */
  name: string;
  /** The job's field mapping (product attribute -> source field). */
  fields: Record<string, string>;
}
