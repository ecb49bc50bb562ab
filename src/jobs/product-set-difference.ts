/**
 * How a product set the service holds differs from the job's definition of it. The service has
 * no update of product sets, so a set is never changed once created; when the job's definition
 * changes (other filters, other product ids), or a MANUAL set lost products (a product deleted
 * and sent again gets a new product_key, which the set does not hold), the run says so in a
 * note instead of reporting success in silence.
 */
import type { ProductSet } from '../api/resources/catalogs.js';
import type { CatalogState } from '../state/store.js';
import type { ProductSetSpec } from './job.js';

const LISTED = 5;

function listed(ids: readonly string[]): string {
  return `${ids.slice(0, LISTED).join(', ')}${ids.length > LISTED ? ', ...' : ''}`;
}

function filterKey(filter: unknown): string {
  if (typeof filter !== 'object' || filter === null) return JSON.stringify(filter);
  const { attribute, operator, value } = filter as Record<string, unknown>;
  return JSON.stringify([attribute, operator, typeof value === 'number' ? String(value) : value]);
}

function sameFilters(service: unknown, job: Extract<ProductSetSpec, { type: 'FILTERED' }>['filters']): boolean {
  if (!Array.isArray(service)) return true; // not told: nothing to compare
  const a = service.map(filterKey).sort();
  const b = job.map(filterKey).sort();
  return a.length === b.length && a.every((key, i) => key === b[i]);
}

/** What differs, in words ("" when the set is as the job defines it, or the service does not say). */
export async function productSetDifference(existing: ProductSet, spec: ProductSetSpec, catalog: CatalogState): Promise<string> {
  if (existing.type !== spec.type) return `is ${existing.type} in the service but ${spec.type} in the job`;
  if (spec.type === 'FILTERED') return sameFilters(existing.filters, spec.filters) ? '' : 'has other filters in the service than in the job';
  const held: unknown = existing.product_ids;
  if (existing.processing_status === 'PROCESSING' || !Array.isArray(held)) return '';
  const inSet = new Set(held.filter((id): id is string => typeof id === 'string'));
  const wanted = new Set(spec.productIds);
  const inCatalog = await catalog.productKeys(spec.productIds);
  const lacking = spec.productIds.filter((id) => inCatalog.has(id) && !inSet.has(id));
  const extra = [...inSet].filter((id) => !wanted.has(id));
  const parts: string[] = [];
  if (lacking.length > 0) parts.push(`lacks ${lacking.length} of the job's products that are in the catalog (${listed(lacking)})`);
  if (extra.length > 0) parts.push(`holds ${extra.length} ${extra.length === 1 ? 'product' : 'products'} the job does not list (${listed(extra)})`);
  return parts.join(' and ');
}
