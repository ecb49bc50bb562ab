/**
 * A catalog run: read the feed, validate every product, collect the valid ones (last
 * occurrence of an id wins, on disk), diff against what was last sent, and send exactly the
 * difference: new and changed products in PUTs of at most 25, products gone from the feed
 * deleted by product_key (mirror mode only). Product sets declared in the job are created
 * when missing.
 *
 * Deletes happen only when the feed was read completely and looks sound: never for a feed
 * without valid products, one that would delete more than max_delete_ratio of the catalog,
 * or one with more rejected items than max_reject_ratio. An empty or lost state is rebuilt
 * from the service (GET products) before anything is deleted.
 */
import { createProductSet, getProductSet, listProducts } from '../api/resources/catalogs.js';
import { NotFoundError } from '../api/errors.js';
import { readFeedSource } from '../sources/index.js';
import type { CatalogScan, ScannedProduct } from '../state/store.js';
import { buildProduct } from '../transform/index.js';
import { emptyCatalogResult, removeProducts, upsertProducts, type CatalogUploadResult, type ProductOutcome } from '../uploaders/catalog-uploader.js';
import type { CatalogJob } from './job.js';
import type { RunContext } from './run-context.js';

const PLAN_PAGE = 5000;

/** Reads the feed into the scan; writes rejects, counts warnings. */
export async function scanFeed(ctx: RunContext, job: CatalogJob, scan: CatalogScan, skipRows = 0): Promise<void> {
  const { summary, counters } = ctx;
  const reader = await readFeedSource(job.source, { signal: ctx.stop });
  counters.bytesTotal = reader.sizeBytes;
  const unsentFields = new Set<string>();
  for await (const batch of reader.batches) {
    for (const r of batch.rejects) {
      if (r.row > skipRows) ctx.rejects.reject([{ row: r.row, line: r.line, field: '', reason: r.reason }]);
    }
    const valid: ScannedProduct[] = [];
    const kept: string[] = [];
    for (const item of batch.items) {
      if (item.row <= skipRows) continue;
      const result = buildProduct(item, job.catalog.fields);
      if (result.ok) {
        summary.valid += 1;
        valid.push({ id: result.id, row: item.row, contentHash: result.contentHash, payload: JSON.stringify(result.product) });
        for (const w of result.warnings) unsentFields.add(w);
      } else {
        ctx.rejects.reject(result.reasons.map((r) => ({ row: item.row, line: item.line, id: result.id, field: r.field, reason: r.reason })));
        if (result.id !== undefined) kept.push(result.id);
      }
    }
    summary.read += batch.items.length + batch.rejects.length;
    counters.rowsRead = summary.read;
    counters.bytesRead = reader.bytesRead();
    if (valid.length > 0) await scan.add(valid);
    if (kept.length > 0) await scan.keep(kept);
  }
  if (unsentFields.size > 0) {
    const list = [...unsentFields].slice(0, 20);
    ctx.logger.info({ warnings: list, more: Math.max(0, unsentFields.size - list.length) }, 'feed warnings (fields that are not sent, values adjusted)');
  }
}

export function noteUploadProblems(ctx: RunContext, result: CatalogUploadResult): void {
  if (result.rejected > 0) ctx.fail(`the service refused ${result.rejected} products (see the rejects file)`);
  if (result.failed > 0 && !result.fatal) ctx.fail(`${result.failed} products could not be delivered; the next run sends them again`);
  if (result.deleteFailures.length > 0) {
    const first = result.deleteFailures[0];
    ctx.fail(`${result.deleteFailures.length} products could not be deleted (first: ${first?.id}: ${first?.message})`);
  }
  if (result.fatal) throw result.fatal;
}

/** Commits acknowledged products and writes the service's refusals to the rejects file. */
export function acknowledge(ctx: RunContext, job: CatalogJob) {
  const catalog = ctx.store.catalog(job.catalog.catalogId);
  return async (outcomes: ProductOutcome[]): Promise<void> => {
    const accepted: { id: string; contentHash: string; productKey: string | null }[] = [];
    for (const o of outcomes) {
      if (o.kind === 'rejected') {
        ctx.rejects.reject(
          (o.errors.length > 0 ? o.errors : ['refused by the service']).map((e) => ({ row: o.product.row, line: 0, id: o.product.id, field: '', reason: `service: ${e}` })),
        );
      } else {
        accepted.push({ id: o.product.id, contentHash: o.product.contentHash, productKey: o.productKey });
        if (o.warnings.length > 0) ctx.logger.warn({ id: o.product.id, warnings: o.warnings }, 'the service accepted the product with warnings');
      }
    }
    await catalog.commitUpserts(accepted, Date.now());
    ctx.counters.sent += outcomes.length;
  };
}

export async function runCatalog(ctx: RunContext, job: CatalogJob): Promise<void> {
  const { summary, counters, options } = ctx;
  const catalog = ctx.store.catalog(job.catalog.catalogId);
  const mirror = job.catalog.mode === 'mirror';
  const scan = await catalog.scan();
  try {
    await scanFeed(ctx, job, scan);
    summary.duplicates = await scan.duplicates();
    if (ctx.stop.aborted || options.validateOnly) return;

    counters.phase = 'planning';
    if (mirror && (await catalog.productCount()) === 0) {
      const rebuilt = await catalog.rebuild(serviceProducts(ctx, job));
      if (rebuilt > 0) ctx.note(`the saved state of catalog ${job.catalog.catalogId} was empty: rebuilt it from the ${rebuilt} products the service holds`);
    }
    const counts = await scan.counts({ mirror, full: options.full });
    const allowDeletes = deletesAllowed(ctx, job, counts.products, counts.deletes, counts.known);
    summary.unchanged = counts.unchanged;
    ctx.logger.info({ ...counts, deletesAllowed: allowDeletes }, 'plan');
    if (options.dryRun) {
      summary.created = counts.creates;
      summary.updated = counts.updates;
      summary.deleted = allowDeletes ? counts.deletes : 0;
      return;
    }

    counters.phase = 'uploading';
    counters.toSend = counts.creates + counts.updates + (allowDeletes ? counts.deletes : 0);
    const result = emptyCatalogResult();
    const uploadOptions = {
      client: ctx.client(),
      catalogId: job.catalog.catalogId,
      concurrency: job.concurrency,
      stop: ctx.stop,
      onAcknowledged: acknowledge(ctx, job),
      onDeleted: async (ids: string[]) => {
        await catalog.commitDeletes(ids);
        counters.sent += ids.length;
      },
      onFailed: (count: number, error: Error) => ctx.logger.error({ error: error.message, products: count }, 'a request could not be delivered'),
    };
    await upsertProducts(scan.upserts({ full: options.full }, PLAN_PAGE), uploadOptions, result);
    if (allowDeletes && counts.deletes > 0 && !result.fatal && !ctx.stop.aborted) {
      await removeProducts(withKnownKeys(ctx, scan.deletes(PLAN_PAGE)), uploadOptions, result);
    }
    summary.created = result.created;
    summary.updated = result.updated;
    summary.unchanged += result.unchanged;
    summary.deleted = result.deleted;
    if (result.warnings > 0) summary.warnings = result.warnings;
    noteUploadProblems(ctx, result);
    if (!ctx.stop.aborted) await ensureProductSets(ctx, job);
    counters.phase = 'finishing';
  } finally {
    await scan.close();
  }
}

async function* serviceProducts(ctx: RunContext, job: CatalogJob): AsyncGenerator<{ id: string; productKey: string }[]> {
  for await (const page of listProducts(ctx.client(), job.catalog.catalogId)) yield page.map((p) => ({ id: p.id, productKey: p.product_key }));
}

/** Products deleted by product_key; one whose key was never learned cannot be deleted. */
async function* withKnownKeys(ctx: RunContext, pages: AsyncGenerator<{ id: string; productKey: string }[]>): AsyncGenerator<{ id: string; productKey: string }[]> {
  for await (const page of pages) {
    const known = page.filter((p) => p.productKey !== '');
    if (known.length < page.length) ctx.note(`${page.length - known.length} products to delete have no known product_key; run with --full to relearn them`);
    yield known;
  }
}

function deletesAllowed(ctx: RunContext, job: CatalogJob, products: number, deletes: number, known: number): boolean {
  if (job.catalog.mode !== 'mirror') return true;
  const ratio = ctx.options.maxDeleteRatio ?? job.catalog.maxDeleteRatio;
  if (products === 0) {
    if (ctx.options.maxDeleteRatio === 1 && ctx.rejects.count === 0) {
      ctx.note(`the feed has no products and --max-delete-ratio 1 was given: emptying the catalog (${deletes} deletes)`);
      return true;
    }
    ctx.fail(
      `the feed has no valid products${deletes > 0 ? `: a mirror run would delete all ${deletes} products of the catalog` : ''}; nothing was deleted (check the feed; to empty the catalog on purpose, run once with --max-delete-ratio 1 and a feed without items)`,
    );
    return false;
  }
  if (deletes === 0) return true;
  const rejected = ctx.rejects.count;
  if (ctx.summary.read > 0 && rejected / ctx.summary.read > job.maxRejectRatio) {
    ctx.note(`too many rejected items to trust the feed: ${deletes} deletes were not made`);
    return false;
  }
  if (deletes > ratio * known) {
    ctx.fail(
      `the feed would delete ${deletes} of ${known} products (${((deletes / known) * 100).toFixed(1)}%, more than max_delete_ratio ${ratio}); nothing was deleted. If this is intended, raise catalog.max_delete_ratio in ${job.file} or run once with --max-delete-ratio 1`,
    );
    return false;
  }
  return true;
}

/** Creates the job's product sets that do not exist yet. */
async function ensureProductSets(ctx: RunContext, job: CatalogJob): Promise<void> {
  const catalog = ctx.store.catalog(job.catalog.catalogId);
  for (const spec of job.catalog.productSets) {
    const known = await catalog.productSetId(spec.name);
    if (known !== undefined) {
      try {
        await getProductSet(ctx.client(), job.catalog.catalogId, known);
        continue;
      } catch (error) {
        if (!(error instanceof NotFoundError)) throw error;
      }
    }
    let created;
    if (spec.type === 'MANUAL') {
      const keys = await catalog.productKeys(spec.productIds);
      const missing = spec.productIds.filter((id) => !keys.has(id));
      if (missing.length > 0) ctx.note(`product set "${spec.name}": ${missing.length} product ids are not in the catalog (${missing.slice(0, 5).join(', ')})`);
      if (keys.size === 0) {
        ctx.fail(`product set "${spec.name}" was not created: none of its products are in the catalog`);
        continue;
      }
      created = await createProductSet(ctx.client(), job.catalog.catalogId, {
        name: spec.name,
        description: spec.description,
        type: 'MANUAL',
        product_keys: [...keys.values()],
      });
    } else {
      created = await createProductSet(ctx.client(), job.catalog.catalogId, { name: spec.name, description: spec.description, type: 'FILTERED', filters: spec.filters });
    }
    await catalog.saveProductSet(spec.name, created.id);
    ctx.logger.info({ productSet: spec.name, id: created.id }, 'product set created');
  }
}
