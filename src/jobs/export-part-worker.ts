/**
 * Worker thread: reads one part of a CRM export (a byte range of the file the main thread
 * opened, the header record prepended for parts after the first), normalizes and hashes its
 * identifiers, and posts them to the main thread in batches, a few at a time (the main thread
 * grants credits as it stores them), so the queue between the threads stays short and memory
 * flat.
 */
import { Readable } from 'node:stream';
import { parentPort, workerData } from 'node:worker_threads';
import { readCsv } from '../sources/csv.js';
import { FileRange } from '../sources/file-range.js';
import { IdentifierList, transferList } from '../state/identifier-list.js';
import { AudienceRowMapper, EXPORT_HEADER_OPTIONS, mapCsvBatch } from '../transform/audience-records.js';
import { partFailureOf, type ExportPartTask, type FromPartWorker, type ToPartWorker } from './export-part-messages.js';

const task = workerData as ExportPartTask;
const port = parentPort;
let credits = 0;
let waiting: (() => void) | undefined;

/** Lists posted (lent) and not yet returned, oldest first; lists returned, ready for reuse. */
const lent: IdentifierList[] = [];
const free: IdentifierList[] = [];

port?.on('message', (message: ToPartWorker) => {
  if (message.type === 'credit') {
    credits += message.credits;
    waiting?.();
    waiting = undefined;
  } else {
    // Any list lent and not yet returned can hold them: it holds no arrays while lent.
    const list = lent.shift() ?? new IdentifierList(1);
    list.takeBack(message.ids);
    free.push(list);
  }
});

function post(message: FromPartWorker): void {
  port?.postMessage(message);
}

async function credit(): Promise<void> {
  while (credits <= 0) await new Promise<void>((resolve) => (waiting = resolve));
  credits -= 1;
}

/**
 * Bytes read at a time: a batch of rows per read, posted to the main thread. Larger than the
 * main thread's reads (parallel-export-read.ts): each batch costs a message and a credit, and
 * this thread's small young generation is collected often anyway (32 KB reads here were ~10%
 * slower for the 1M-row benchmark, for no memory gained).
 */
const PART_READ_BYTES = 256 * 1024;

/** The part; its bytesRead does not count the header record given to it. */
const part = new FileRange(task.fd, task.start, task.end, PART_READ_BYTES);

async function* partBytes(): AsyncGenerator<Buffer> {
  if (task.headerBytes) yield Buffer.from(task.headerBytes);
  yield* part.chunks();
}

async function run(): Promise<void> {
  const reader = readCsv(
    { name: task.name, stream: Readable.from(partBytes()), format: task.format },
    { ...EXPORT_HEADER_OPTIONS, delimiter: task.delimiter, encoding: task.encoding },
  );
  const mapper = new AudienceRowMapper(await reader.header(), task.audience, task.name);
  let lastRow = 0;
  for await (const batch of reader.batches()) {
    const ids = free.pop() ?? new IdentifierList(Math.max(64, batch.rows.length * 4));
    ids.clear();
    const mapped = mapCsvBatch(batch, mapper, ids, task.withValues);
    for (const r of batch.rows) lastRow = Math.max(lastRow, r.row);
    for (const r of batch.rejects) lastRow = Math.max(lastRow, r.row);
    // Lines counted in this part (behind the header record it was given) become lines of the file.
    if (task.lineOffset !== 0) {
      for (const entries of mapped.rejects) for (const e of entries) e.line += task.lineOffset;
      for (const u of mapped.unreadable) u.line += task.lineOffset;
    }
    await credit();
    // Lent without a copy when the list owns its arrays; the main thread returns them.
    const arrays = ids.lend();
    if (arrays) lent.push(ids);
    else free.push(ids);
    const message: FromPartWorker = { ...mapped, type: 'batch', ids: arrays ?? ids.toTransferable(), bytesRead: part.bytesRead };
    port?.postMessage(message, arrays ? transferList(arrays) : []);
  }
  post({ type: 'done', lastRow, bytesRead: part.bytesRead });
}

run().catch((error: unknown) => {
  post({ type: 'error', ...partFailureOf(error) });
});
