/**
 * Sends products to a catalog: PUTs of at most 25 (never the same id twice in one request:
 * the service ignores every instance), several at a time, and deletes by product_key. Each
 * product gets an outcome: created, updated, unchanged (NO_CHANGE; created when the PUT was
 * retried and the product is new to the state), rejected by the service (ERROR, with its
 * errors), or failed (the request could not be delivered).
 * Acknowledged products are handed to `onAcknowledged` (committed to the state store) as
 * each request completes. A product whose delete the service answers "not found" is already
 * gone from the catalog: it is handed to `onDeleted` and counted apart as deleted outside
 * adsync, unless the request was retried (then the first attempt, applied but unanswered,
 * deleted it, and it counts as deleted); any other delete failure is reported and the
 * product stays in the state. A product counts as deleted only when the answer lists its
 * product_key as deleted: one the answer does not mention failed, and stays in the state.
 */
import type { AdsApiClient } from '../api/client.js';
import { ApiRequestError, CallStoppedError } from '../api/errors.js';
import { deleteProducts, describeServiceMessage, putProducts, serviceMessageParts, type ProductResult } from '../api/resources/catalogs.js';
import { InternalError, toAdsyncError, type AdsyncError } from '../errors.js';
import type { ProductToDelete, ProductToSend } from '../state/store.js';
import { stopsUpload } from './stops-upload.js';
import { BoundedDispatch, sendInBatches } from './bounded-dispatch.js';

export const MAX_PRODUCTS_PER_REQUEST = 25;
export const MAX_KEYS_PER_DELETE = 100;
/** A delete failure that says the product_key is unknown to the catalog. */
const NOT_FOUND = /\bnot (?:be )?found\b|\bdoes not exist\b|\bunknown product/i;

/** One error the service gave for a product: the attribute it names ('' for none) and its code and message. */
export interface ServiceProblem {
  parameter: string;
  text: string;
}

export type ProductOutcome =
  | { kind: 'created' | 'updated' | 'unchanged'; product: ProductToSend; productKey: string | null; warnings: string[] }
  | { kind: 'rejected'; product: ProductToSend; errors: ServiceProblem[] };

export interface CatalogUploadResult {
  created: number;
  updated: number;
  unchanged: number;
  rejected: number;
  failed: number;
  /** Why the first request that failed was not delivered (the report names it). */
  firstFailure: AdsyncError | undefined;
  warnings: number;
  deleted: number;
  /** Products to delete that the service did not find: already gone from the catalog. */
  alreadyGone: number;
  /** Products the service refused to delete (not "not found"). */
  deleteFailed: number;
  /** The first MAX_DELETE_FAILURES_KEPT of them, in the order their answers came. */
  deleteFailures: { id: string; productKey: string; message: string }[];
  fatal: AdsyncError | undefined;
  stopped: boolean;
  /**
   * Products of requests that a stop cut off after an attempt went out without an answer that
   * settles it: the service may hold them as sent, which the state does not know.
   */
  stoppedAfterSending: number;
}

export interface CatalogUploadOptions {
  client: AdsApiClient;
  catalogId: string;
  concurrency: number;
  stop?: AbortSignal | undefined;
  /** `seq` is the request's 1-based order among the upserts. */
  onAcknowledged: (outcomes: ProductOutcome[], seq: number) => Promise<void>;
  onDeleted?: (ids: string[]) => Promise<void>;
  onFailed?: (count: number, error: AdsyncError) => void;
  /** Called when upsert request `seq` has ended, acknowledged or not. */
  onSettled?: (seq: number) => void;
}

/**
 * Refused deletes kept with their message: the report names the first, and a mirror run of a
 * large catalog whose every delete is refused must not hold one entry per product.
 */
export const MAX_DELETE_FAILURES_KEPT = 10;

export function emptyCatalogResult(): CatalogUploadResult {
  return { created: 0, updated: 0, unchanged: 0, rejected: 0, failed: 0, firstFailure: undefined, warnings: 0, deleted: 0, alreadyGone: 0, deleteFailed: 0, deleteFailures: [], fatal: undefined, stopped: false, stoppedAfterSending: 0 };
}

/**
 * A request the stop request kept from being sent (or sent again): the upload stops there, the
 * next run sends it. True when it was `error`.
 */
function stoppedBy(error: AdsyncError, products: number, result: CatalogUploadResult): boolean {
  if (!(error instanceof CallStoppedError)) return false;
  result.stopped = true;
  if (error.sent) result.stoppedAfterSending += products;
  return true;
}

/** Products of a request that was not delivered (or that its answer left out): counted, the first cause kept, reported. */
function noteFailed(result: CatalogUploadResult, options: CatalogUploadOptions, count: number, error: AdsyncError): void {
  result.failed += count;
  result.firstFailure ??= error;
  options.onFailed?.(count, error);
}

/**
 * `retried`: the request was sent more than once. A new product (not in the state) answered
 * NO_CHANGE then was most likely created by an earlier attempt of this request, applied but
 * unanswered (a timeout, a dropped connection): it counts as created by this run.
 */
function outcomeOf(product: ProductToSend, result: ProductResult, retried: boolean): ProductOutcome {
  const warnings = (result.warnings ?? []).map(describeServiceMessage);
  switch (result.status) {
    case 'CREATE_SUCCESS':
      return { kind: 'created', product, productKey: result.product_key ?? null, warnings };
    case 'UPDATE_SUCCESS':
      return { kind: 'updated', product, productKey: result.product_key ?? null, warnings };
    case 'NO_CHANGE':
      return { kind: retried && product.isNew ? 'created' : 'unchanged', product, productKey: result.product_key ?? null, warnings };
    default:
      return { kind: 'rejected', product, errors: (result.errors ?? []).map(serviceMessageParts) };
  }
}

const BODY_START = Buffer.from('{"products":[');
const BODY_END = Buffer.from(']}');

/** The PUT body from the products' serialized payloads, each copied once. */
export function productsBody(products: readonly ProductToSend[]): Buffer {
  let length = BODY_START.length + BODY_END.length + Math.max(0, products.length - 1);
  for (const p of products) {
    if (!Buffer.isBuffer(p.payload)) return Buffer.from(`{"products":[${products.map((q) => q.payload.toString()).join(',')}]}`);
    length += p.payload.length;
  }
  const body = Buffer.allocUnsafe(length);
  let at = BODY_START.copy(body, 0);
  products.forEach((p, i) => {
    if (i > 0) body[at++] = 0x2c;
    at += (p.payload as Buffer).copy(body, at);
  });
  BODY_END.copy(body, at);
  return body;
}

/**
 * Sends each batch of `batches` as one PUT (at most 25 products, distinct ids: the caller
 * forms them), `concurrency` at a time, in order of the batches.
 */
export async function upsertProductBatches(
  batches: AsyncIterable<readonly ProductToSend[]>,
  options: CatalogUploadOptions,
  result = emptyCatalogResult(),
): Promise<CatalogUploadResult> {
  const send = async (products: readonly ProductToSend[], seq: number): Promise<void> => {
    try {
      // Another request hit a fatal error: this one is not sent (but it has ended).
      if (result.fatal) return;
      let retried = false;
      const results = await putProducts(options.client, options.catalogId, productsBody(products), products.length, () => {
        retried = true;
      });
      const outcomes: ProductOutcome[] = [];
      let unanswered = 0;
      products.forEach((p, i) => {
        const r = results[i];
        // Results come in request order; an id that does not match means the order cannot be trusted.
        const matched = r && (r.id === undefined || r.id === null || r.id === p.id) ? r : results.find((x) => x.id === p.id);
        if (matched) outcomes.push(outcomeOf(p, matched, retried));
        else unanswered += 1;
      });
      await options.onAcknowledged(outcomes, seq);
      // A product the answer does not mention may or may not have been applied: not delivered
      // as far as adsync knows (not a refusal); the next run sends it again.
      if (unanswered > 0) {
        noteFailed(result, options, unanswered, new ApiRequestError({ method: 'PUT', path: `/12/product_catalogs/${options.catalogId}/products` }, `the service's answer has no result for ${unanswered} of the ${products.length} products sent`));
      }
      for (const o of outcomes) {
        if (o.kind === 'rejected') result.rejected += 1;
        else {
          result[o.kind] += 1;
          result.warnings += o.warnings.length;
        }
      }
    } catch (caught) {
      const error = toAdsyncError(caught);
      if (stoppedBy(error, products.length, result)) return;
      noteFailed(result, options, products.length, error);
      if (stopsUpload(error) && !result.fatal) result.fatal = error;
    } finally {
      options.onSettled?.(seq);
    }
  };
  const dispatcher = new BoundedDispatch(options.concurrency, options.stop);
  let seq = 0;
  try {
    for await (const batch of batches) {
      if (result.fatal) break;
      if (batch.length === 0) continue;
      if (batch.length > MAX_PRODUCTS_PER_REQUEST) throw new InternalError(`a batch of ${batch.length} products is more than ${MAX_PRODUCTS_PER_REQUEST}`);
      seq += 1;
      const batchSeq = seq;
      if (!(await dispatcher.submit(() => send(batch, batchSeq)))) {
        result.stopped = true;
        break;
      }
    }
  } finally {
    await dispatcher.drain();
  }
  return result;
}

/** Cuts pages of products (distinct ids, as a scan yields them) into PUTs of 25. */
async function* requestsOf(pages: AsyncIterable<readonly ProductToSend[]>): AsyncGenerator<ProductToSend[]> {
  let batch: ProductToSend[] = [];
  for await (const page of pages) {
    for (const p of page) {
      batch.push(p);
      if (batch.length === MAX_PRODUCTS_PER_REQUEST) {
        yield batch;
        batch = [];
      }
    }
  }
  if (batch.length > 0) yield batch;
}

export async function upsertProducts(pages: AsyncIterable<readonly ProductToSend[]>, options: CatalogUploadOptions, result = emptyCatalogResult()): Promise<CatalogUploadResult> {
  return upsertProductBatches(requestsOf(pages), options, result);
}

export async function removeProducts(pages: AsyncIterable<readonly ProductToDelete[]>, options: CatalogUploadOptions, result = emptyCatalogResult()): Promise<CatalogUploadResult> {
  const send = async (products: ProductToDelete[]): Promise<void> => {
    if (result.fatal) return;
    try {
      let retried = false;
      const answers = await deleteProducts(options.client, options.catalogId, products.map((p) => p.productKey), () => {
        retried = true;
      });
      const failed = new Map<string, string>();
      const confirmed = new Set<string>();
      for (const a of answers) {
        if (a.failed_product_key) failed.set(a.failed_product_key, a.message ?? 'not deleted');
        else if (a.product_key) confirmed.add(a.product_key);
      }
      // Gone from the catalog: deleted now, or already (not found). Either way the state forgets it.
      const gone: string[] = [];
      let deleted = 0;
      let alreadyGone = 0;
      let unanswered = 0;
      for (const p of products) {
        const message = failed.get(p.productKey);
        if (message === undefined) {
          // A key the answer does not mention may still be in the catalog: the state keeps it
          // and the next run deletes it again (a "not found" then makes the state forget it).
          if (!confirmed.has(p.productKey)) {
            unanswered += 1;
            continue;
          }
          gone.push(p.id);
          deleted += 1;
        } else if (NOT_FOUND.test(message)) {
          gone.push(p.id);
          // After a retry, "not found" is most likely this run's own earlier attempt, applied
          // but unanswered (a timeout): that delete was ours.
          if (retried) deleted += 1;
          else alreadyGone += 1;
        } else {
          result.deleteFailed += 1;
          if (result.deleteFailures.length < MAX_DELETE_FAILURES_KEPT) result.deleteFailures.push({ id: p.id, productKey: p.productKey, message });
        }
      }
      await options.onDeleted?.(gone);
      result.deleted += deleted;
      result.alreadyGone += alreadyGone;
      if (unanswered > 0) {
        noteFailed(result, options, unanswered, new ApiRequestError({ method: 'DELETE', path: `/12/product_catalogs/${options.catalogId}/products` }, `the service's answer has no result for ${unanswered} of the ${products.length} product keys sent`));
      }
    } catch (caught) {
      const error = toAdsyncError(caught);
      if (stoppedBy(error, products.length, result)) return;
      noteFailed(result, options, products.length, error);
      if (stopsUpload(error) && !result.fatal) result.fatal = error;
    }
  };
  const { stopped } = await sendInBatches(pages, MAX_KEYS_PER_DELETE, options.concurrency, send, () => result.fatal !== undefined, options.stop);
  result.stopped ||= stopped;
  return result;
}
