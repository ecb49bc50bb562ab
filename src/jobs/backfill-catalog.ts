/**
 * `adsync backfill` of a catalog job: a one-off full upsert of a feed that may be far
 * larger than memory. Items stream straight into PUTs of 25 (no diff, never a delete);
 * every acknowledged request is committed to the state and moves the checkpoint, so a run
 * killed at any point resumes from the last acknowledged request and ends the same.
 *
 * An id never appears twice in one request (the service would ignore every copy: the last
 * occurrence replaces the earlier one), nor in two requests in flight at once (their order
 * of arrival would decide which version wins): a repeated id waits for the request that
 * carries its earlier version.
 */
import { readFeedSource } from '../sources/index.js';
import type { ProductToSend } from '../state/store.js';
import { buildProduct } from '../transform/index.js';
import { emptyCatalogResult, MAX_PRODUCTS_PER_REQUEST, upsertProductBatches } from '../uploaders/catalog-uploader.js';
import { backfillStart } from './backfill-checkpoint.js';
import { BackfillWatermark } from './backfill-watermark.js';
import type { CatalogJob } from './job.js';
import type { RunContext } from './run-context.js';
import { acknowledge, markUpload, noteUploadProblems } from './run-catalog.js';
import { feedFieldsOf } from './catalog-feed-scan.js';

export async function backfillCatalog(ctx: RunContext, job: CatalogJob): Promise<void> {
  const { summary, counters } = ctx;
  const { startRow, checkpoint, finish, reading, source: reader } = await backfillStart(ctx, () => readFeedSource(job.source));
  const fields = feedFieldsOf(job, reader.format);
  counters.bytesTotal = reader.sizeBytes;
  counters.phase = 'uploading';
  const watermark = new BackfillWatermark(startRow);
  let lastRowRead = startRow;
  let yielded = 0;
  const idsInFlight = new Map<string, number>();
  const requestIds = new Map<number, string[]>();
  const settledWaiters = new Map<number, () => void>();
  const settled = (seq: number): Promise<void> => (requestIds.has(seq) ? new Promise((resolve) => settledWaiters.set(seq, resolve)) : Promise.resolve());

  // Marks the catalog while products are sent: a killed backfill makes the next mirror run
  // reconcile the state with the service (run-catalog.ts).
  const catalog = ctx.store.catalog(job.catalog.catalogId, job.name);

  async function* requests(): AsyncGenerator<ProductToSend[]> {
    let current = new Map<string, ProductToSend>();
    // The content of a product the state holds is unknown once its request leaves, until the
    // answer is committed: a kill may leave the new content in the service (run-catalog.ts).
    const take = async (): Promise<ProductToSend[]> => {
      const batch = [...current.values()];
      current = new Map();
      yielded += 1;
      const ids = batch.map((p) => p.id);
      requestIds.set(yielded, ids);
      for (const id of ids) idsInFlight.set(id, yielded);
      watermark.dispatched(yielded, Math.max(...batch.map((p) => p.row)));
      await catalog.forgetContent(ids);
      return batch;
    };
    for await (const batch of reader.batches) {
      if (ctx.stop.aborted) break;
      for (const r of batch.rejects) {
        if (r.row <= startRow) continue;
        ctx.rejects.reject([{ row: r.row, line: r.line, field: '', reason: r.reason }]);
        summary.read += 1;
        lastRowRead = Math.max(lastRowRead, r.row);
      }
      for (const item of batch.items) {
        if (item.row <= startRow) continue;
        summary.read += 1;
        lastRowRead = Math.max(lastRowRead, item.row);
        const result = buildProduct(item, fields);
        if (!result.ok) {
          ctx.rejects.reject(result.reasons.map((r) => ({ row: item.row, line: item.line, id: result.id, field: r.field, reason: r.reason })));
          continue;
        }
        summary.valid += 1;
        const product: ProductToSend = { id: result.id, row: item.row, line: item.line, contentHash: result.contentHash, payload: result.json, isNew: false };
        if (current.has(result.id)) {
          summary.duplicates += 1;
          current.delete(result.id);
        } else {
          const inFlight = idsInFlight.get(result.id);
          if (inFlight !== undefined) {
            summary.duplicates += 1;
            if (current.size > 0) yield await take();
            await settled(inFlight);
          }
        }
        current.set(result.id, product);
        if (current.size === MAX_PRODUCTS_PER_REQUEST) yield await take();
      }
      counters.rowsRead = summary.read;
      counters.bytesRead = reader.bytesRead();
    }
    if (current.size > 0 && !ctx.stop.aborted) yield await take();
  }

  const commit = acknowledge(ctx, job);
  const mark = await markUpload(catalog, await catalog.uploadInterrupted());
  const result = await reading(upsertProductBatches(
    requests(),
    {
      client: ctx.client(),
      catalogId: job.catalog.catalogId,
      concurrency: job.concurrency,
      stop: ctx.stop,
      onAcknowledged: async (outcomes, seq) => {
        await commit(outcomes);
        // A product the answer leaves out was not delivered as far as adsync knows: the mark
        // stays before its request, so that a resumed backfill sends it again.
        if (outcomes.length < (requestIds.get(seq)?.length ?? 0)) return;
        if (watermark.acknowledged(seq)) await checkpoint(watermark.rowsDone);
      },
      onSettled: (seq) => {
        watermark.settled(seq);
        for (const id of requestIds.get(seq) ?? []) if (idsInFlight.get(id) === seq) idsInFlight.delete(id);
        requestIds.delete(seq);
        settledWaiters.get(seq)?.();
        settledWaiters.delete(seq);
      },
      onFailed: (count, error) => ctx.logger.error({ error: error.message, products: count }, 'a request could not be delivered'),
    },
    emptyCatalogResult(),
  ));
  summary.created = result.created;
  summary.updated = result.updated;
  summary.unchanged = result.unchanged;
  if (result.warnings > 0) summary.warnings = result.warnings;
  const complete = !result.stopped && !ctx.stop.aborted && result.failed === 0 && !result.fatal;
  await mark.finish(result);
  if (complete) watermark.finish(lastRowRead);
  else if (result.stopped || ctx.stop.aborted) ctx.interrupted = true;
  await finish(complete, watermark.rowsDone, 'items');
  noteUploadProblems(ctx, result);
}
