/**
 * The first half of an external sort of an export's identifiers: they are collected in a
 * buffer of `runSize`, and each full buffer is sorted by (field, value), deduplicated (the
 * first row kept) and appended to a spool file as one sorted run. Memory is the buffer
 * (~40 bytes per identifier), whatever the size of the export; merge-distinct.ts reads the
 * runs back as one sorted stream.
 */
import { IdentifierList } from '../identifier-list.js';
import type { SpoolFile } from '../spool-file.js';
import { compareValues, RecordWriter, type RecordRange } from './packed-records.js';
import { MAX_SORT_BATCH, sortedOrder } from './sort-identifiers.js';

/** 131,072 identifiers (~5 MB of values) per run: 26 runs for a 1M-row export of 3.3M identifiers. */
export const DEFAULT_RUN_SIZE = 2 ** 17;

export class SortedRuns {
  /** Identifiers waiting for the next run; released by finish(). */
  private buffer: IdentifierList | undefined;
  private readonly writer: RecordWriter;
  readonly runs: RecordRange[] = [];
  /** Identifiers added (duplicates included). */
  added = 0;

  constructor(
    spool: SpoolFile,
    private readonly runSize = DEFAULT_RUN_SIZE,
  ) {
    if (runSize < 1 || runSize > MAX_SORT_BATCH) throw new RangeError(`run size ${runSize}: 1 to ${MAX_SORT_BATCH}`);
    this.buffer = new IdentifierList(Math.min(runSize, 4096));
    this.writer = new RecordWriter(spool);
  }

  add(list: IdentifierList): void {
    const buffer = this.buffer;
    if (!buffer) throw new RangeError('identifiers added to sorted runs after finish()');
    this.added += list.length;
    for (let i = 0; i < list.length; ) {
      const take = Math.min(this.runSize - buffer.length, list.length - i);
      buffer.pushRange(list, i, i + take);
      i += take;
      if (buffer.length === this.runSize) this.flush(buffer);
    }
  }

  /** Writes the identifiers still in the buffer as a last run, and lets the buffer go. */
  finish(): RecordRange[] {
    if (this.buffer) this.flush(this.buffer);
    this.buffer = undefined;
    return this.runs;
  }

  private flush(buffer: IdentifierList): void {
    const ids = buffer.view();
    if (ids.length === 0) return;
    const order = sortedOrder(ids);
    const { codes, rows, ends, data } = ids;
    const writer = this.writer;
    writer.start();
    let k = 0;
    while (k < order.length) {
      const i = order[k] ?? 0;
      const code = codes[i] ?? 0;
      const start = i === 0 ? 0 : (ends[i - 1] ?? 0);
      const end = ends[i] ?? 0;
      let row = rows[i] ?? 0;
      // Identical values are next to each other: keep the first row.
      let m = k + 1;
      for (; m < order.length; m++) {
        const j = order[m] ?? 0;
        const jStart = j === 0 ? 0 : (ends[j - 1] ?? 0);
        const jEnd = ends[j] ?? 0;
        if (codes[j] !== code || compareValues(data, jStart, jEnd, data, start, end) !== 0) break;
        row = Math.min(row, rows[j] ?? 0);
      }
      writer.write(code, data, start, end, row);
      k = m;
    }
    this.runs.push(writer.finish());
    buffer.clear();
  }
}
