/** What the main thread and the export part workers say to each other. */
import { isAdsyncError } from '../errors.js';
import type { SourceFormat } from '../sources/types.js';
import type { TransferableIdentifierList } from '../state/identifier-list.js';
import type { AudienceColumnsSpec, MappedBatch } from '../transform/audience-records.js';

export interface ExportPartTask {
  name: string;
  /** The export, opened by the main thread (left open for it to close): every part reads the same file. */
  fd: number;
  /** Byte range [start, end) of the file. */
  start: number;
  end: number;
  /** The header record, for parts after the first (they start in the middle of the file). */
  headerBytes: Uint8Array | undefined;
  format: SourceFormat;
  delimiter: string;
  encoding: 'utf8' | 'latin1' | undefined;
  audience: AudienceColumnsSpec;
  withValues: boolean;
  /** Added to the line numbers the part's reader counts (behind the header it was given). */
  lineOffset: number;
}

/** `credit`: batches the worker may post; `return`: the arrays of a batch the main thread has stored, for the worker to reuse (in the order it posted them). */
export type ToPartWorker = { type: 'credit'; credits: number } | { type: 'return'; ids: TransferableIdentifierList };

/** Why a part could not be read: `source` and `config` make the caller read sequentially. */
export interface PartFailure {
  kind: 'config' | 'source' | 'internal';
  message: string;
  hint: string | undefined;
}

/** The failure an error thrown while reading a part stands for (in a worker or on the main thread). */
export function partFailureOf(error: unknown): PartFailure {
  if (isAdsyncError(error)) {
    return { kind: error.code === 'CONFIG_ERROR' ? 'config' : error.code === 'SOURCE_ERROR' ? 'source' : 'internal', message: error.message, hint: error.hint };
  }
  return { kind: 'internal', message: error instanceof Error ? error.message : String(error), hint: undefined };
}

export type FromPartWorker =
  | ({ type: 'batch'; ids: TransferableIdentifierList; /** Bytes of the part read so far (progress). */ bytesRead: number } & Omit<MappedBatch, 'ids'>)
  | { type: 'done'; lastRow: number; /** Bytes of the part read: its whole range, unless the file shrank. */ bytesRead: number }
  | ({ type: 'error' } & PartFailure);
