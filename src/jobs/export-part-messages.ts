/** What the main thread and the export part workers say to each other. */
import type { IdentifierType } from '../hash/types.js';
import type { SourceFormat } from '../sources/types.js';
import type { TransferableIdentifierList } from '../state/identifier-list.js';
import type { AudienceColumnsSpec, RowRejectEntry } from '../transform/audience-records.js';

export interface ExportPartTask {
  name: string;
  path: string;
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

export type ToPartWorker = { type: 'credit'; credits: number };

export type FromPartWorker =
  | {
      type: 'batch';
      ids: TransferableIdentifierList;
      read: number;
      valid: number;
      invalid: Partial<Record<IdentifierType, number>>;
      rejects: RowRejectEntry[][];
      unreadable: { row: number; line: number; reason: string }[];
    }
  | { type: 'done'; lastRow: number }
  | { type: 'error'; kind: 'config' | 'source' | 'internal'; message: string; hint: string | undefined };
