/**
 * The rejects file of a run: one CSV line per rejected row or item, with its row number,
 * line, id (feeds), field and reason; also one per invalid identifier that a kept row dropped
 * (not counted as a rejected row). Raw values are personal data, so they are written
 * only when asked (--rejects-with-values). The file is created on the first reject.
 */
import { closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { reportedText, StateError } from '../errors.js';

export interface RejectEntry {
  row: number;
  line: number;
  /** Product id, when known (catalogs). */
  id?: string | undefined;
  /** The field or attribute at fault; empty for the whole row. */
  field: string;
  reason: string;
  value?: string | undefined;
  /**
   * The row itself was kept (another of its identifiers is valid): only this value was
   * dropped. Written like any reject, not counted as a rejected row.
   */
  kept?: boolean | undefined;
}

function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

const FLUSH_AT = 64 * 1024;

export class RejectsFile {
  private fd: number | undefined;
  private opened = false;
  private pending: string[] = [];
  private pendingLength = 0;
  /** Rows or items rejected (one may have several entries). */
  count = 0;

  constructor(
    readonly path: string,
    private readonly withValues: boolean,
  ) {}

  /** True once anything was rejected (the file exists, or will after close). */
  get created(): boolean {
    return this.opened || this.pending.length > 0;
  }

  /** Writes every entry of one rejected row or item (or of the values a kept row dropped). */
  reject(entries: readonly RejectEntry[]): void {
    if (entries.length === 0) return;
    if (entries[0]?.kept !== true) this.count += 1;
    for (const e of entries) {
      // The field and reason may be the service's words, which can echo the request, and span lines.
      const fields = [String(e.row), String(e.line), e.id ?? '', reportedText(e.field), reportedText(e.reason)];
      if (this.withValues) fields.push(e.value ?? '');
      this.push(`${fields.map(csvField).join(',')}\n`);
    }
  }

  private push(line: string): void {
    if (this.fd === undefined && this.pending.length === 0) {
      const header = ['row', 'line', 'id', 'field', 'reason', ...(this.withValues ? ['value'] : [])].join(',');
      this.pending.push(`${header}\n`);
    }
    this.pending.push(line);
    this.pendingLength += line.length;
    if (this.pendingLength >= FLUSH_AT) this.flush();
  }

  /** Forgets everything written so far (a read that starts over). */
  reset(): void {
    this.pending = [];
    this.pendingLength = 0;
    this.count = 0;
    if (this.fd !== undefined) {
      closeSync(this.fd);
      this.fd = undefined;
      rmSync(this.path, { force: true });
    }
    this.opened = false;
  }

  /**
   * Writes the pending lines. A folder that cannot be made or written, or a full disk, is the
   * operator's to fix: a StateError that names the file, thrown once (the lines that could not
   * be written are dropped, so closing the file in the run's `finally` does not throw again).
   */
  flush(): void {
    if (this.pending.length === 0) return;
    const text = this.pending.join('');
    this.pending = [];
    this.pendingLength = 0;
    try {
      if (this.fd === undefined) {
        mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
        this.fd = openSync(this.path, 'w', 0o600);
        this.opened = true;
      }
      // A write may take only part of the bytes (a disk that fills, a file size limit): the
      // rest is written again, which then fails with the reason.
      const bytes = Buffer.from(text);
      for (let done = 0; done < bytes.length; ) done += writeSync(this.fd, bytes, done, bytes.length - done);
    } catch (error) {
      throw new StateError(`cannot write the rejects file ${this.path}: ${(error as Error).message}`, {
        cause: error,
        hint: 'rejects_dir (settings file) must be a folder the user running adsync can write, on a disk with room',
      });
    }
  }

  close(): void {
    this.flush();
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
