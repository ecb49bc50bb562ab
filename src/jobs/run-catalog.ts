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
import { createProductSet, getProductSet, listAllProducts, type ProductSet, type ProductSetInput } from '../api/resources/catalogs.js';
import { ApiValidationError, NotFoundError } from '../api/errors.js';
import { StateError } from '../errors.js';
import type { CatalogScan, CatalogState, CommittedProduct, ProductToSend, ScannedOccurrence, ServiceProduct } from '../state/store.js';
import { openCatalogFeed } from './catalog-feed-scan.js';
import { catalogItemMatcher } from './catalog-fingerprint-thread.js';
import { catalogItemReader } from './catalog-workers.js';
import { emptyCatalogResult, removeProducts, upsertProducts, type CatalogUploadResult, type ProductOutcome } from '../uploaders/catalog-uploader.js';
import type { CatalogJob, ProductSetSpec } from './job.js';
import { productSetDifference } from './product-set-difference.js';
import { moreThanShare, percentOf } from './share.js';
import type { RunContext } from './run-context.js';

/**
 * Products per page of the plan. A page's payloads are read from the scan's spool file in one
 * piece and held until its last request is answered: 1000 keeps that to ~1 MB.
 */
const PLAN_PAGE = 1000;

/** Distinct feed warnings remembered: 20 are logged, the rest only counted. */
export const MAX_DISTINCT_FEED_WARNINGS = 1000;

/**
 * The distinct feed warnings of a run (fields that are not sent, values adjusted), for one log
 * line. Bounded: a feed whose items each carry an element of their own name (one unknown
 * attribute per item) must not keep one string per item; past the bound, `more` is a lower bound.
 */
export class FeedWarnings {
  private readonly distinct = new Set<string>();
  private capped = false;

  add(warning: string): void {
    if (this.distinct.has(warning)) return;
    if (this.distinct.size < MAX_DISTINCT_FEED_WARNINGS) this.distinct.add(warning);
    else this.capped = true;
  }

  get size(): number {
    return this.distinct.size;
  }

  /** The log fields: the first 20 warnings, how many more (at least, once capped). */
  logFields(): { warnings: string[]; more: number; moreAtLeast?: true } {
    const warnings = [...this.distinct].slice(0, 20);
    return { warnings, more: this.distinct.size - warnings.length, ...(this.capped ? { moreAtLeast: true as const } : {}) };
  }
}

/**
 * Reads the feed into the scan; writes rejects, counts warnings. Items whose raw fingerprint
 * is saved for a product are not read at all (catalog-feed-scan.ts), unless `full` or the run
 * reconciles an interrupted upload. A stop
 * request aborts the read where it is (a download too) and ends it quietly.
 */
export async function scanFeed(ctx: RunContext, job: CatalogJob, scan: CatalogScan, skipRows = 0): Promise<void> {
  try {
    await readFeedInto(ctx, job, scan, skipRows);
  } catch (error) {
    ctx.rethrowUnlessStopped(error);
  }
}

async function readFeedInto(ctx: RunContext, job: CatalogJob, scan: CatalogScan, skipRows: number): Promise<void> {
  const { summary, counters, options } = ctx;
  const catalog = ctx.store.catalog(job.catalog.catalogId, job.name);
  // After an interrupted upload, a mirror run reconciles the state with the service after the
  // read and may forget products the service no longer holds: an item skipped as unchanged
  // could then not be sent. Such a run reads every item.
  const reconciles = job.catalog.mode === 'mirror' && !options.dryRun && (await catalog.uploadInterrupted());
  const skipKnown = !options.full && !options.validateOnly && !reconciles && (await catalog.hasFingerprints());
  const reader = await openCatalogFeed(job, {
    fingerprints: skipKnown ? catalog : undefined,
    itemMatcher: catalogItemMatcher(ctx),
    itemReader: catalogItemReader(ctx, job),
    onDoubt: (reason, rowsDone) => ctx.logger.info({ reason, rowsDone }, 'reading the rest of the feed with the full XML reader'),
    source: { signal: ctx.stop, timeoutMs: job.requestTimeoutMs },
  });
  counters.bytesTotal = reader.sizeBytes;
  const unsentFields = new FeedWarnings();
  let notRead = 0;
  for await (const outcomes of reader.outcomes) {
    // Reading has no effect outside: a stop request ends it at once (the input is released).
    if (ctx.stop.aborted) break;
    // Outcomes come in feed order, and so do the rejects file and the occurrences in the
    // scan (valid and rejected alike, so that the last occurrence of an id wins).
    const occurrences: ScannedOccurrence[] = [];
    for (const o of outcomes) {
      if (o.row <= skipRows) continue;
      switch (o.kind) {
        case 'unchanged':
        case 'product':
          // An unchanged product (not read) is a valid occurrence like any other.
          if (o.kind === 'unchanged') notRead += 1;
          summary.valid += 1;
          occurrences.push(o);
          for (const w of o.warnings) unsentFields.add(w);
          break;
        case 'invalid':
          ctx.rejects.reject(o.reasons.map((r) => ({ row: o.row, line: o.line, id: o.id, field: r.field, reason: r.reason })));
          if (o.id !== undefined) occurrences.push({ id: o.id, row: o.row, rejected: true });
          // Without a usable id, the item may be a product that is still current: like an
          // unreadable item, it must keep a mirror run from deleting.
          else ctx.unreadableRow(o.row, o.line, noIdReason(o.reasons));
          break;
        case 'unreadable':
          ctx.rejects.reject([{ row: o.row, line: o.line, field: '', reason: o.reason }]);
          ctx.unreadableRow(o.row, o.line, o.reason);
          break;
      }
    }
    summary.read += outcomes.length;
    counters.rowsRead = summary.read;
    counters.bytesRead = reader.bytesRead();
    if (occurrences.length > 0) await scan.add(occurrences);
  }
  ctx.logger.info({ items: summary.read, unchangedNotRead: notRead }, 'feed read');
  if (unsentFields.size > 0) ctx.logger.info(unsentFields.logFields(), 'feed warnings (fields that are not sent, values adjusted)');
}

/** Why an invalid item has no usable id, for the guard's message. */
function noIdReason(reasons: readonly { field: string; reason: string }[]): string {
  const idReason = reasons.find((r) => r.field === 'id');
  return idReason ? `the item has no usable id (id ${idReason.reason})` : 'the item has no usable id';
}

export function noteUploadProblems(ctx: RunContext, result: CatalogUploadResult): void {
  // Refused products are rejects like invalid items: max_reject_ratio decides whether the run fails.
  if (result.rejected > 0) {
    ctx.note(`the service refused ${result.rejected} product${result.rejected === 1 ? '' : 's'}; see the rejects file for the service's reasons`);
  }
  if (result.failed > 0 && !result.fatal) ctx.failDelivery(`${result.failed} products`, result.firstFailure);
  if (result.alreadyGone > 0) {
    ctx.note(`${result.alreadyGone} product${result.alreadyGone === 1 ? ' was' : 's were'} already gone from the catalog (deleted outside adsync); the state no longer lists them`);
  }
  if (result.deleteFailed > 0) {
    const first = result.deleteFailures[0];
    ctx.fail(`${result.deleteFailed} products could not be deleted (first: ${first?.id}: ${first?.message})`);
  }
  if (result.fatal) throw result.fatal;
}

/**
 * Marks the catalog as being uploaded to (CatalogState.beginUpload) until finish() is given
 * the upload's result: the mark is cleared when every answer was committed, unless an earlier
 * upload's mark was there and no reconcile has cleared it (`interruptedBefore`): then the
 * state may still lack products that upload left, and the next mirror run must reconcile.
 */
export async function markUpload(catalog: CatalogState, interruptedBefore: boolean): Promise<{ finish(result: CatalogUploadResult): Promise<void> }> {
  await catalog.beginUpload();
  return {
    finish: async (result) => {
      if (!interruptedBefore && !result.fatal && result.failed === 0 && result.stoppedAfterSending === 0) await catalog.endUpload();
    },
  };
}

/** Products acknowledged by the service, committed together (see acknowledge). */
const COMMIT_EVERY_PRODUCTS = 1000;

/**
 * Commits acknowledged products and writes the service's refusals to the rejects file. With
 * `batched`, acknowledged products are committed a thousand at a time (and by flush()): one
 * transaction per PUT of 25 was most of the state's cost of a large first run. A product
 * acknowledged and not yet committed when the process dies is sent again by the next run
 * (the service answers NO_CHANGE): the state may lag behind the service, never run ahead.
 */
export function acknowledge(ctx: RunContext, job: CatalogJob, batched = false): ((outcomes: ProductOutcome[]) => Promise<void>) & { flush(): Promise<void> } {
  const catalog = ctx.store.catalog(job.catalog.catalogId, job.name);
  let pending: CommittedProduct[] = [];
  const flush = async (): Promise<void> => {
    if (pending.length === 0) return;
    const products = pending;
    pending = [];
    await catalog.commitUpserts(products, Date.now());
  };
  const commit = async (outcomes: ProductOutcome[]): Promise<void> => {
    const accepted: CommittedProduct[] = [];
    for (const o of outcomes) {
      if (o.kind === 'rejected') {
        const { row, line, id } = o.product;
        const errors = o.errors.length > 0 ? o.errors : [{ parameter: '', text: 'no reason given' }];
        ctx.rejects.reject(errors.map((e) => ({ row, line, id, field: e.parameter, reason: `refused by the service: ${e.text}` })));
      } else {
        accepted.push({ id: o.product.id, contentHash: o.product.contentHash, productKey: o.productKey });
        if (o.warnings.length > 0) ctx.logger.warn({ id: o.product.id, warnings: o.warnings }, 'the service accepted the product with warnings');
      }
    }
    if (batched) {
      pending.push(...accepted);
      if (pending.length >= COMMIT_EVERY_PRODUCTS) await flush();
    } else {
      await catalog.commitUpserts(accepted, Date.now());
    }
    ctx.counters.sent += outcomes.length;
  };
  return Object.assign(commit, { flush });
}

export async function runCatalog(ctx: RunContext, job: CatalogJob): Promise<void> {
  const { summary, counters, options } = ctx;
  const catalog = ctx.store.catalog(job.catalog.catalogId, job.name);
  const mirror = job.catalog.mode === 'mirror';
  const scan = await catalog.scan();
  try {
    await scanFeed(ctx, job, scan);
    summary.duplicates = await scan.duplicates();
    if (ctx.stop.aborted) ctx.interrupted = true;
    if (ctx.stop.aborted) return;
    if (options.validateOnly) {
      // What a run would refuse whatever the state holds: a mirror feed without a valid
      // product; and items that could not be read would stop its deletes.
      if ((await deletesAllowed(ctx, job, summary.valid, 0, 0, () => Promise.resolve(0))) && mirror) ctx.allowsDestructiveChanges('deletes');
      return;
    }

    counters.phase = 'planning';
    // An upload that was killed, or lost answers, may have left products in the catalog that
    // the state does not list: a mirror run could never delete them. It reconciles first.
    let interrupted = await catalog.uploadInterrupted();
    // Before anything can be deleted, the state must know every product of the catalog.
    if (mirror && !(await catalog.hasProducts())) {
      if (options.dryRun) {
        const listed = await scan.compareWith(serviceProducts(ctx, job, `the saved state of catalog ${job.catalog.catalogId} is empty: this dry run plans against them`));
        if (listed > 0) ctx.note(`the saved state of catalog ${job.catalog.catalogId} is empty: planned against the ${listed} products the service holds (a real run rebuilds the state from them)`);
      } else {
        const rebuilt = await catalog.rebuild(serviceProducts(ctx, job, `the saved state of catalog ${job.catalog.catalogId} is empty: it is rebuilt from them`));
        if (rebuilt > 0) ctx.note(`the saved state of catalog ${job.catalog.catalogId} was empty: rebuilt it from the ${rebuilt} products the service holds`);
        await catalog.endUpload();
        interrupted = false;
      }
    } else if (mirror && interrupted) {
      if (options.dryRun) {
        ctx.note(`the last upload to catalog ${job.catalog.catalogId} did not finish: a real run first compares the saved state with the products the service holds`);
      } else {
        const { added, forgotten } = await catalog.reconcile(
          serviceProducts(ctx, job, `the last upload to catalog ${job.catalog.catalogId} did not finish (killed, or answers lost): the saved state is compared with them`),
        );
        await catalog.endUpload();
        interrupted = false;
        ctx.note(
          `the last upload to catalog ${job.catalog.catalogId} did not finish (killed, or answers lost): compared the saved state with the products the service holds; ${added} it did not list (sent again while in the feed, deleted once not), ${forgotten} no longer there`,
        );
      }
    }
    const counts = await scan.counts({ mirror, full: options.full });
    // Products of other jobs, for the guards' messages only (the state's, not a dry run's list of the service's: all of no job).
    const othersProducts = async (): Promise<number> => Math.max(0, (await catalog.productCount()) - counts.known);
    const allowDeletes = await deletesAllowed(ctx, job, counts.products, counts.deletes, counts.known, othersProducts);
    summary.unchanged = counts.unchanged;
    ctx.logger.info({ ...counts, deletesAllowed: allowDeletes }, 'plan');
    if (options.dryRun) {
      summary.created = counts.creates;
      summary.updated = counts.updates;
      summary.deleted = allowDeletes ? counts.deletes : 0;
      await ensureProductSets(ctx, job, true);
      return;
    }

    // The feed's products are this job's from now on: another job's mirror run on the catalog
    // no longer deletes them. Taking them from another job means both feeds hold them.
    for (const [other, n] of await scan.claim()) {
      ctx.note(
        `${n} ${n === 1 ? 'product' : 'products'} of this feed ${n === 1 ? 'was' : 'were'} job ${other}'s (in its feed too, or moved from it to this one): now this job's, so a mirror run of ${other} no longer deletes ${n === 1 ? 'it' : 'them'}`,
      );
    }
    counters.phase = 'uploading';
    counters.toSend = counts.creates + counts.updates + (allowDeletes ? counts.deletes : 0);
    const mark = counters.toSend > 0 ? await markUpload(catalog, interrupted) : undefined;
    const result = emptyCatalogResult();
    const commits = acknowledge(ctx, job, true);
    const uploadOptions = {
      client: ctx.client(),
      catalogId: job.catalog.catalogId,
      concurrency: job.concurrency,
      stop: ctx.stop,
      onAcknowledged: commits,
      onDeleted: async (ids: string[]) => {
        await catalog.commitDeletes(ids);
        counters.sent += ids.length;
      },
      onFailed: (count: number, error: Error) =>
        ctx.logger.error(
          { error: error.message, products: count },
          // A state error comes from committing products the service did acknowledge.
          error instanceof StateError ? 'products the service acknowledged could not be committed to the state (the next run sends them again)' : 'a request could not be delivered',
        ),
    };
    try {
      try {
        await upsertProducts(forgottenWhileSent(catalog, scan.upserts({ full: options.full }, PLAN_PAGE)), uploadOptions, result);
      } finally {
        await commits.flush();
      }
      if (allowDeletes && counts.deletes > 0 && !result.fatal && !ctx.stop.aborted) {
        await removeProducts(withKnownKeys(ctx, scan.deletes(PLAN_PAGE)), uploadOptions, result);
      }
    } finally {
      // Also when the upload ends in an error (a commit refused): what the service did is counted.
      summary.created = result.created;
      summary.updated = result.updated;
      summary.unchanged += result.unchanged;
      summary.deleted = result.deleted;
      if (result.warnings > 0) summary.warnings = result.warnings;
    }
    // Work left undone by a stop request (the next run does it).
    if (result.stopped || (allowDeletes && counts.deletes > 0 && ctx.stop.aborted) || (ctx.stop.aborted && job.catalog.productSets.length > 0)) ctx.interrupted = true;
    // The products the service now has as the feed gives them: their items' bytes are known.
    await scan.saveFingerprints();
    await mark?.finish(result);
    noteUploadProblems(ctx, result);
    if (!ctx.stop.aborted) await ensureProductSets(ctx, job, false);
    counters.phase = 'finishing';
  } finally {
    await scan.close();
  }
}

/**
 * The plan's pages, the content of each page's products that the state holds forgotten
 * before any of them is sent: a kill or a lost answer may leave the new content in the
 * service, and a feed that then went back to the old content must still be sent.
 */
async function* forgottenWhileSent(catalog: CatalogState, pages: AsyncIterable<ProductToSend[]>): AsyncGenerator<ProductToSend[]> {
  for await (const page of pages) {
    const known = page.filter((p) => !p.isNew).map((p) => p.id);
    if (known.length > 0) await catalog.forgetContent(known);
    yield page;
  }
}

/**
 * Every product the service holds, item-group variants included, listed in the phase `listing`
 * (back to `planning` once listed). `why`: what the list is for, logged when it starts: against
 * the service it takes a GET per 100 products and one per item group (minutes for a large
 * catalog with variants), and the progress display shows how many were listed meanwhile.
 */
async function* serviceProducts(ctx: RunContext, job: CatalogJob, why: string): AsyncGenerator<ServiceProduct[]> {
  const { counters } = ctx;
  ctx.logger.info({ catalog: job.catalog.catalogId }, `listing the products the service holds (a GET per 100 products and one per item group): ${why}`);
  counters.phase = 'listing';
  try {
    for await (const page of listAllProducts(ctx.client(), job.catalog.catalogId)) {
      counters.listed += page.length;
      yield page.map((p) => ({ id: p.id, productKey: p.product_key }));
    }
  } finally {
    counters.phase = 'planning';
  }
}

/** Products deleted by product_key; one whose key was never learned cannot be deleted. */
async function* withKnownKeys(ctx: RunContext, pages: AsyncGenerator<{ id: string; productKey: string }[]>): AsyncGenerator<{ id: string; productKey: string }[]> {
  for await (const page of pages) {
    const known = page.filter((p) => p.productKey !== '');
    if (known.length < page.length) {
      ctx.note(`${page.length - known.length} products gone from the feed were not deleted: the service never gave their product_key (${page.filter((p) => p.productKey === '').slice(0, 5).map((p) => p.id).join(', ')})`);
    }
    yield known;
  }
}

/**
 * Whether the plan's deletes may be made. `known`: the products the job may delete (its own and
 * those of no job); `others()`: how many of the catalog's other jobs (only counted for a message:
 * they are neither deleted nor part of the share).
 */
async function deletesAllowed(ctx: RunContext, job: CatalogJob, products: number, deletes: number, known: number, others: () => Promise<number>): Promise<boolean> {
  if (job.catalog.mode !== 'mirror') return true;
  const ratio = ctx.options.maxDeleteRatio ?? job.catalog.maxDeleteRatio;
  if (products === 0) {
    if (ctx.options.maxDeleteRatio === 1 && ctx.rejects.count === 0) {
      const kept = await others();
      ctx.note(`the feed has no products and --max-delete-ratio 1 was given: emptying the catalog${kept > 0 ? ` but for the ${kept} products of other jobs` : ''} (${deletes} deletes)`);
      return true;
    }
    const kept = deletes > 0 ? await others() : 0;
    ctx.fail(
      `the feed has no valid products${deletes > 0 ? `: a mirror run would delete all ${deletes} products of the catalog${kept > 0 ? ` but the ${kept} of other jobs` : ''}` : ''}; nothing was deleted (check the feed; to empty the catalog on purpose, run once with --max-delete-ratio 1 and a feed without items)`,
    );
    return false;
  }
  if (deletes === 0) return true;
  if (!ctx.allowsDestructiveChanges('deletes')) return false;
  const rejected = ctx.rejects.count;
  if (ctx.summary.read > 0 && rejected / ctx.summary.read > job.maxRejectRatio) {
    ctx.note(`too many rejected items to trust the feed: ${deletes} ${deletes === 1 ? 'delete was' : 'deletes were'} not made`);
    return false;
  }
  if (moreThanShare(deletes, known, ratio)) {
    const kept = await others();
    ctx.fail(
      `the feed would delete ${deletes} of ${known} products${kept > 0 ? `, not counting the ${kept} of other jobs` : ''} (${percentOf(deletes, known)}, more than max_delete_ratio ${ratio}); nothing was deleted. If this is intended, raise catalog.max_delete_ratio in ${job.file} or run once with --max-delete-ratio 1`,
    );
    return false;
  }
  return true;
}

/** Creates the job's product sets that do not exist yet (a dry run only says which it would create). */
async function ensureProductSets(ctx: RunContext, job: CatalogJob, dryRun: boolean): Promise<void> {
  const catalog = ctx.store.catalog(job.catalog.catalogId, job.name);
  for (const spec of job.catalog.productSets) {
    const known = await catalog.productSetId(spec.name);
    if (known !== undefined) {
      let existing: ProductSet | undefined;
      try {
        existing = await getProductSet(ctx.client(), job.catalog.catalogId, known);
      } catch (error) {
        if (!(error instanceof NotFoundError)) throw error;
      }
      if (existing !== undefined) {
        const difference = await productSetDifference(existing, spec, catalog);
        if (difference !== '') {
          ctx.note(
            `product set "${spec.name}" (id ${existing.id}) ${difference}; product sets cannot be changed: delete it in Ads Manager and the next run creates it as the job defines it`,
          );
        }
        continue;
      }
    }
    if (dryRun) {
      ctx.note(`product set "${spec.name}" (${spec.type}) would be created`);
      continue;
    }
    const input = await productSetInput(ctx, catalog, spec);
    if (input === undefined) continue;
    let created;
    try {
      created = await createProductSet(ctx.client(), job.catalog.catalogId, input);
    } catch (error) {
      if (!(error instanceof ApiValidationError)) throw error;
      // One set refused: the others are still created, and the run fails naming it.
      const hint = spec.type === 'MANUAL' ? ' (products deleted in Ads Manager while still in the feed: run once with --full to send them again)' : '';
      ctx.fail(`product set "${spec.name}" was not created: ${error.message}${hint}`);
      continue;
    }
    await catalog.saveProductSet(spec.name, created.id);
    ctx.logger.info({ productSet: spec.name, id: created.id }, 'product set created');
  }
}

/** The body that creates a set of the job; undefined (and the run failed) for a MANUAL set none of whose products is in the catalog. */
async function productSetInput(ctx: RunContext, catalog: CatalogState, spec: ProductSetSpec): Promise<ProductSetInput | undefined> {
  if (spec.type === 'FILTERED') return { name: spec.name, description: spec.description, type: 'FILTERED', filters: spec.filters };
  const keys = await catalog.productKeys(spec.productIds);
  const missing = spec.productIds.filter((id) => !keys.has(id));
  if (missing.length > 0) {
    const are = missing.length === 1 ? 'is' : 'are';
    ctx.note(`product set "${spec.name}": ${missing.length} of its product ids ${are} not in the catalog (${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', ...' : ''})`);
  }
  if (keys.size === 0) {
    ctx.fail(`product set "${spec.name}" was not created: none of its products are in the catalog`);
    return undefined;
  }
  return { name: spec.name, description: spec.description, type: 'MANUAL', product_keys: [...keys.values()] };
}
