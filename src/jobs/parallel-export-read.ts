/**
 * Reading a large CRM export on every core: the file is cut at record boundaries
 * (src/sources/csv-split.ts); the main thread reads, normalizes and hashes the first part
 * itself and stores every part's identifiers, while worker threads (export-part-worker.ts)
 * read the other parts. The main thread also stores, so its part is the smaller one; and
 * each worker is a whole V8 heap, so there is one per extra core, not one per core. The
 * result is the same as a sequential read: the same identifiers, counts and rejects file,
 * in row order.
 *
 * Row numbers: a part after the first does not know how many rows came before it until the
 * parts before it are done. Its identifiers are stored with provisional rows (part k counts
 * from k * PART_ROW_BASE, so the order of rows across parts holds), `displayRow` turns them
 * into real ones; its rejects wait until the row count of the parts before it is known.
 *
 * Falls back (returns false, having undone everything) when the file cannot be cut, or when a
 * part reports a problem with the source: the sequential read then gives the one authoritative
 * answer, with the right line numbers.
 *
 * The file is opened once, before it is cut, and every part reads that open file: a new export
 * renamed over the path meanwhile (as an exporter should write it) is not read from where the
 * old one was cut, which mixed the two and lost the rows between. A file written in place while
 * it is read (its size or modification time changed, or a part read less than its range) is a
 * problem with the source: read sequentially, where it fails if it is still being written.
 */
import { availableParallelism } from 'node:os';
import { Readable } from 'node:stream';
import { Worker } from 'node:worker_threads';
import { closeSync, constants, fstatSync, openSync, statSync } from 'node:fs';
import { ConfigError, InternalError } from '../errors.js';
import { workerModuleUrl } from '../worker-module.js';
import { splitCsvFile } from '../sources/csv-split.js';
import { changedWhileRead, fileVersionOf } from '../sources/file-version.js';
import { FileRange } from '../sources/file-range.js';
import { readCsv } from '../sources/csv.js';
import { formatOfPath } from '../sources/source-format.js';
import { IdentifierList, addCountsByField, transferList, type CountsByField } from '../state/identifier-list.js';
import { SpoolFile } from '../state/spool-file.js';
import type { AudienceScan } from '../state/store.js';
import { AudienceRowMapper, EXPORT_HEADER_OPTIONS, mapCsvBatch, type MappedBatch, type RowRejectEntry } from '../transform/audience-records.js';
import { partFailureOf, type ExportPartTask, type FromPartWorker, type PartFailure, type ToPartWorker } from './export-part-messages.js';
import type { AudienceJob } from './job.js';
import type { RunContext } from './run-context.js';

/** Provisional rows of part k start at k * PART_ROW_BASE (rows are 32-bit in identifier lists). */
export const PART_ROW_BASE = 1 << 28;
/** Parts whose provisional rows fit a signed 32-bit row: 8 (more cores read with 8 threads). */
const MAX_PARTS = 2 ** 31 / PART_ROW_BASE;
/** Smaller files are read on one thread: starting workers would cost more than it saves. */
export const PARALLEL_MIN_BYTES = 16 * 1024 * 1024;
/** Larger files are read on one thread: their row numbers would not fit the provisional scheme. */
const PARALLEL_MAX_BYTES = 2 * 1024 * 1024 * 1024;
/**
 * The reading thread's young generation: bounded, since each thread is a whole V8 heap
 * (unbounded, two of them doubled the peak memory of a 1M-row run). 2 MB was too small for a
 * 256 KB batch in the making: its rows outlived the scavenges, were copied and promoted, and
 * the collector took ~23% of the thread's time. With 32 MB, interleaved against 2 MB (3 runs
 * each), an export of 1M four-identifier rows took 3-15% less wall time, an email-only one 8%
 * less, with the same peak memory and ~20% fewer page faults.
 */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 32 };
/** The main thread's part, relative to a worker's (it also stores every part's identifiers). */
const MAIN_THREAD_SHARE = 0.65;
/** Batches a worker may have posted and not yet stored. */
const CREDITS = 2;
/**
 * Bytes read at a time from the main thread's own part: a batch of rows per read. Small, so
 * that a batch is garbage before the main thread's young generation is collected twice: with
 * 256 KB reads (~10,000 rows of an email-only export) each batch was promoted to the old
 * generation, which grew to ~110 MB between full collections (peak RSS 290-310 MB for 1M
 * email-only rows; ~220 MB with 32 KB, and no slower).
 */
const OWN_PART_READ_BYTES = 32 * 1024;
/**
 * Rejects of a later part held in memory while an earlier part is still being read, in
 * characters of their text (plus HELD_ENTRY_OVERHEAD per entry); beyond this they go to a
 * temporary file. A bound by rows alone (100,000) held ~150 MB of an export whose every row
 * is rejected, and without limit when rows carry long values (--rejects-with-values); making
 * the part wait instead made the read of a 10M-row export with 2% rejected rows sequential
 * for most of its second part (45 -> 60 s).
 */
export const HELD_REJECTS_SIZE = 4 * 1024 * 1024;
/** What one held entry costs beyond its text (the object, its fields), in the same unit. */
const HELD_ENTRY_OVERHEAD = 64;

type Unreadable = MappedBatch['unreadable'];

/**
 * The rejects of one part, held until the rows of the parts before it are known (then
 * written with their real row numbers): in memory up to HELD_REJECTS_SIZE, the rest in a
 * temporary file (one JSON line per batch), so that neither memory nor the read waits.
 */
export class HeldRejects {
  private rejects: RowRejectEntry[][] = [];
  private unreadable: Unreadable = [];
  private held = 0;
  private spool: SpoolFile | undefined;
  /** Where each spilled batch is in the spool, in arrival order. */
  private spilled: { at: number; length: number }[] = [];

  /** Holds a batch's rejects (in memory, or once the bound is reached in the temporary file). */
  hold(rejects: readonly RowRejectEntry[][], unreadable: Unreadable): void {
    if (rejects.length === 0 && unreadable.length === 0) return;
    if (this.spool !== undefined || this.held >= HELD_REJECTS_SIZE) {
      this.spool ??= new SpoolFile('held-rejects');
      const at = this.spool.append(JSON.stringify([rejects, unreadable]));
      this.spilled.push({ at, length: this.spool.lastLength });
      return;
    }
    for (const entries of rejects) {
      this.rejects.push(entries);
      for (const e of entries) this.held += HELD_ENTRY_OVERHEAD + e.field.length + e.reason.length + (e.value?.length ?? 0);
    }
    for (const u of unreadable) {
      this.unreadable.push(u);
      this.held += HELD_ENTRY_OVERHEAD + u.reason.length;
    }
  }

  /** The size held in memory, in the unit of HELD_REJECTS_SIZE. */
  get size(): number {
    return this.held;
  }

  /** Batches held in the temporary file. */
  get spilledBatches(): number {
    return this.spilled.length;
  }

  /** Hands everything held to `write`, in arrival order (memory first, then the file); empty afterwards. */
  release(write: (rejects: RowRejectEntry[][], unreadable: Unreadable) => void): void {
    const { rejects, unreadable } = this;
    this.rejects = [];
    this.unreadable = [];
    this.held = 0;
    if (rejects.length > 0 || unreadable.length > 0) write(rejects, unreadable);
    const spool = this.spool;
    if (spool === undefined) return;
    const spilled = this.spilled;
    this.spool = undefined;
    this.spilled = [];
    try {
      for (const { at, length } of spilled) {
        const [batchRejects, batchUnreadable] = JSON.parse(spool.read(at, length).toString('utf8')) as [RowRejectEntry[][], Unreadable];
        write(batchRejects, batchUnreadable);
      }
    } finally {
      spool.close();
    }
  }

  /** Drops what is held (a read that failed or was stopped), the temporary file too. */
  discard(): void {
    this.spool?.close();
    this.spool = undefined;
    this.spilled = [];
    this.rejects = [];
    this.unreadable = [];
    this.held = 0;
  }
}

/** What reading an export counted, beyond the summary's rows. */
export interface ExportCounts {
  /** Valid identifiers stored (repeated ones each time). */
  occurrences: number;
  /** Valid identifier values by type (MappedBatch.validIdentifiers). */
  validIdentifiers: CountsByField;
  /** Invalid identifier values by type (MappedBatch.invalid). */
  invalid: CountsByField;
}

export interface ExportReadResult extends ExportCounts {
  /** Turns a stored (possibly provisional) row into the row of the file. */
  displayRow: (row: number) => number;
}

interface PartState {
  /** Absent for the main thread's own part. */
  worker: Worker | undefined;
  done: boolean;
  lastRow: number;
  held: HeldRejects;
}

function isLocalFile(path: string): boolean {
  return !/^https?:\/\//i.test(path);
}

/** Whether the reader finds a header row in `bytes`, read as the whole file. */
async function holdsHeader(bytes: Buffer, job: AudienceJob, delimiter: string, format: 'csv' | 'tsv'): Promise<boolean> {
  const reader = readCsv({ name: job.source.path, stream: Readable.from([bytes]), format }, { ...EXPORT_HEADER_OPTIONS, delimiter, encoding: job.source.encoding });
  try {
    await reader.header();
    return true;
  } catch {
    return false; // no header there, or one the reader refuses: the sequential read says why
  } finally {
    await reader.close();
  }
}

/** Reads the export on several threads; false when it should be read sequentially instead. */
export async function readExportInParallel(ctx: RunContext, job: AudienceJob, scan: AudienceScan): Promise<ExportReadResult | false> {
  const threads = Math.min(ctx.settings.readThreads, availableParallelism(), MAX_PARTS);
  if (threads < 2 || !isLocalFile(job.source.path)) return false;
  const format = job.source.format ?? formatOfPath(job.source.path);
  if (format !== 'csv' && format !== 'tsv') return false;
  let fd: number;
  try {
    // Only a regular file large enough is opened here, on the main thread: opening a FIFO
    // waits for a writer, which blocked the whole process (the stop signals too), and closing
    // it again broke that writer's pipe. O_NONBLOCK: a path replaced by one meanwhile.
    const stats = statSync(job.source.path);
    if (!stats.isFile() || stats.size < PARALLEL_MIN_BYTES) return false;
    fd = openSync(job.source.path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return false; // unreadable here: the sequential read reports why
  }
  try {
    return await readOpenExportInParallel(ctx, job, scan, { fd, threads, format });
  } finally {
    closeSync(fd);
  }
}

/** readExportInParallel once the export is open (`fd`, closed by the caller once every part is done). */
async function readOpenExportInParallel(
  ctx: RunContext,
  job: AudienceJob,
  scan: AudienceScan,
  { fd, threads, format }: { fd: number; threads: number; format: 'csv' | 'tsv' },
): Promise<ExportReadResult | false> {
  let split;
  let opened;
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) return false;
    opened = fileVersionOf(stats);
    const mainShare = MAIN_THREAD_SHARE / (MAIN_THREAD_SHARE + (threads - 1));
    const shares = [mainShare, ...Array.from({ length: threads - 2 }, () => (1 - mainShare) / (threads - 1))];
    split = splitCsvFile(job.source.path, { parts: threads, shares, delimiter: job.source.delimiter, preferTab: format === 'tsv', minBytes: PARALLEL_MIN_BYTES, fd });
  } catch {
    return false; // unreadable here: the sequential read reports why
  }
  if (!split || (split.parts.at(-1)?.end ?? 0) > PARALLEL_MAX_BYTES) return false;
  // The parts after the first read their header from these bytes: if the reader finds none in
  // them (the cutter took a line for the header that the reader skips), a part would take its
  // first row for the header. Read on one thread instead.
  if (!(await holdsHeader(split.headerBytes, job, split.delimiter, format))) return false;
  const { summary, counters } = ctx;
  counters.bytesTotal = split.parts.at(-1)?.end;
  const headerLines = split.headerBytes.filter((b) => b === 0x0a).length;
  const validIdentifiers: CountsByField = {};
  const invalid: CountsByField = {};
  let occurrences = 0;
  let failure: PartFailure | undefined;
  const workerUrl = workerModuleUrl('./export-part-worker.js', import.meta.url);
  ctx.logger.info({ parts: split.parts.map((p) => [p.start, p.end]) }, `reading the export in ${split.parts.length} parts, one thread each`);

  const parts: PartState[] = split.parts.map((part, k) => {
    const task: ExportPartTask = {
      name: job.source.path,
      fd,
      start: part.start,
      end: part.end,
      headerBytes: k === 0 ? undefined : split.headerBytes,
      format,
      delimiter: split.delimiter,
      encoding: job.source.encoding,
      audience: job.audience,
      withValues: ctx.options.rejectsWithValues,
      lineOffset: k === 0 ? 0 : part.linesBefore - headerLines,
    };
    const worker = k === 0 ? undefined : new Worker(workerUrl, { workerData: task, resourceLimits: WORKER_LIMITS });
    return { worker, done: false, lastRow: 0, held: new HeldRejects() };
  });

  /** Rows of the parts before part k, when all of them are done. */
  const rowsBefore = (k: number): number | undefined => {
    let total = 0;
    for (let j = 0; j < k; j++) {
      const p = parts[j];
      if (!p?.done) return undefined;
      total += p.lastRow;
    }
    return total;
  };
  const displayRow = (row: number): number => {
    const k = Math.floor(row / PART_ROW_BASE);
    return k === 0 ? row : (rowsBefore(k) ?? 0) + (row - k * PART_ROW_BASE);
  };

  const writeRejects = (k: number, rejects: RowRejectEntry[][], unreadable: { row: number; line: number; reason: string }[]): void => {
    const before = rowsBefore(k) ?? 0;
    for (const entries of rejects) ctx.rejects.reject(before === 0 ? entries : entries.map((e) => ({ ...e, row: e.row + before })));
    for (const u of unreadable) ctx.unreadableRow(u.row + before, u.line, u.reason);
  };

  /** Writes held rejects of parts whose predecessors are all done, in part order. */
  const releaseHeld = (): void => {
    for (let k = 1; k < parts.length; k++) {
      const p = parts[k];
      if (!p || rowsBefore(k) === undefined) break;
      p.held.release((rejects, unreadable) => writeRejects(k, rejects, unreadable));
    }
  };

  /** Bytes read of each part, for the progress display. */
  const partBytesRead = parts.map(() => 0);
  /** Stores a batch of part k (its rejects written, or held until the rows before the part are known). */
  const store = async (k: number, batch: MappedBatch, bytesRead: number): Promise<void> => {
    const part = parts[k];
    if (!part) return;
    partBytesRead[k] = bytesRead;
    counters.bytesRead = partBytesRead.reduce((a, b) => a + b, 0);
    await scan.add(batch.ids);
    occurrences += batch.ids.length;
    summary.read += batch.read;
    summary.valid += batch.valid;
    addCountsByField(validIdentifiers, batch.validIdentifiers);
    addCountsByField(invalid, batch.invalid);
    counters.rowsRead = summary.read;
    if (rowsBefore(k) !== undefined) {
      writeRejects(k, batch.rejects, batch.unreadable);
      return;
    }
    part.held.hold(batch.rejects, batch.unreadable);
  };

  /** Bytes of each part read by the end of it: its whole range, unless the file shrank meanwhile. */
  const partBytesAtEnd = parts.map(() => 0);
  const finishPart = (k: number, lastRow: number, bytesRead: number): void => {
    const part = parts[k];
    if (!part) return;
    part.done = true;
    part.lastRow = lastRow;
    partBytesAtEnd[k] = bytesRead;
    releaseHeld();
  };

  /** The main thread's own part: the start of the file, header included. */
  const readOwnPart = async (): Promise<void> => {
    const first = split.parts[0];
    if (!first) return;
    const range = new FileRange(fd, 0, first.end, OWN_PART_READ_BYTES);
    const reader = readCsv({ name: job.source.path, stream: range.stream(), format }, { ...EXPORT_HEADER_OPTIONS, delimiter: split.delimiter, encoding: job.source.encoding });
    const mapper = new AudienceRowMapper(await reader.header(), job.audience, job.source.path);
    let lastRow = 0;
    // One list for every batch: the scan copies what it is given.
    const ids = new IdentifierList(1 << 12);
    for await (const batch of reader.batches()) {
      if (failure || ctx.stop.aborted) {
        await reader.close();
        return;
      }
      ids.clear();
      const mapped = mapCsvBatch(batch, mapper, ids, ctx.options.rejectsWithValues);
      for (const r of batch.rows) lastRow = Math.max(lastRow, r.row);
      for (const r of batch.rejects) lastRow = Math.max(lastRow, r.row);
      await store(0, mapped, range.bytesRead);
    }
    finishPart(0, lastRow, range.bytesRead);
  };

  // Worker messages are handled one at a time, in arrival order: storing a batch is async.
  let queue = Promise.resolve();
  const workersSettled = parts.map(
    (part, k) =>
      new Promise<void>((resolve) => {
        const worker = part.worker;
        if (!worker) {
          resolve();
          return;
        }
        let settled = false;
        const settle = (): void => {
          if (!settled) {
            settled = true;
            resolve();
          }
        };
        worker.on('message', (message: FromPartWorker) => {
          queue = queue.then(async () => {
            if (failure) return settle();
            if (message.type === 'batch') {
              // The part's rows become provisional rows of the file, in place.
              const rows = message.ids.rows;
              for (let i = 0; i < message.ids.length; i++) rows[i] = (rows[i] ?? 0) + k * PART_ROW_BASE;
              await store(k, { ...message, ids: IdentifierList.fromTransferable(message.ids) }, message.bytesRead);
              // Stored (copied): the arrays go back to the worker for its next batch, so neither
              // thread allocates a list per batch (the freed lists stayed in the worker's malloc
              // arena, ~10 MB of resident memory for the rest of the run).
              worker.postMessage({ type: 'return', ids: message.ids } satisfies ToPartWorker, transferList(message.ids));
              worker.postMessage({ type: 'credit', credits: 1 } satisfies ToPartWorker);
            } else if (message.type === 'done') {
              finishPart(k, message.lastRow, message.bytesRead);
              settle();
            } else {
              failure ??= { kind: message.kind, message: message.message, hint: message.hint };
              settle();
            }
          });
        });
        worker.on('error', (error) => {
          failure ??= { kind: 'internal', message: error.message, hint: undefined };
          settle();
        });
        worker.on('exit', () => settle());
        worker.postMessage({ type: 'credit', credits: CREDITS } satisfies ToPartWorker);
      }),
  );

  const own = readOwnPart().catch((error: unknown) => {
    failure ??= partFailureOf(error);
  });
  const all = Promise.all([own, ...workersSettled]);
  // The listener is removed once the parts are done: the run's stop signal (AbortSignal.any)
  // is kept alive by Node while it has an abort listener and has not aborted, and this one
  // held the whole run (its scan, its 1 MB spool buffers) for the life of the scheduler.
  let onStop = (): void => undefined;
  const stopped = new Promise<void>((resolve) => {
    onStop = resolve;
    ctx.stop.addEventListener('abort', onStop, { once: true });
  });
  try {
    await Promise.race([all, stopped]);
  } finally {
    ctx.stop.removeEventListener('abort', onStop);
  }
  await Promise.all(parts.flatMap((p) => (p.worker ? [p.worker.terminate()] : [])));
  await own;
  await queue;
  if (ctx.stop.aborted || failure) for (const p of parts) p.held.discard();
  if (ctx.stop.aborted) return { occurrences, validIdentifiers, invalid, displayRow };
  if (failure) {
    if (failure.kind === 'config') throw new ConfigError(failure.message, { hint: failure.hint });
    if (failure.kind === 'internal') throw new InternalError(`reading ${job.source.path} in parallel failed: ${failure.message}`);
    // A problem with the source (or with where it was cut): read it again, sequentially.
    ctx.logger.info({ reason: failure.message }, 'reading the export again on one thread');
    return false;
  }
  if (parts.some((p) => !p.done)) throw new InternalError(`reading ${job.source.path} in parallel stopped before the end of a part`);
  const changed = changedWhileRead(job.source.path, opened, fileVersionOf(fstatSync(fd)), partBytesAtEnd.reduce((a, b) => a + b, 0));
  if (changed) {
    for (const p of parts) p.held.discard();
    ctx.logger.info({ reason: changed.message }, 'reading the export again on one thread');
    return false;
  }
  releaseHeld();
  return { occurrences, validIdentifiers, invalid, displayRow };
}
