/**
 * Product catalogs, products and product sets. Paths are not under accounts/:
 * /12/product_catalogs/:product_catalog_id/products.
 */
import { z } from 'zod';
import { InternalError } from '../../errors.js';
import type { AdsApiClient } from '../client.js';
import { seg } from './path.js';

const MAX_PRODUCTS_PER_PUT = 25;

const catalogSchema = z.looseObject({ id: z.string(), name: z.string().optional(), deleted: z.boolean().optional() });
export type ProductCatalog = z.infer<typeof catalogSchema>;

/** A product as sent: attribute name -> value (strings, except inventory). */
export type ProductPayload = Record<string, string | number>;

const serviceMessageSchema = z.union([
  z.string(),
  z.looseObject({ code: z.union([z.string(), z.number()]).optional(), message: z.string().optional(), parameter: z.string().optional() }),
]);

const productResultSchema = z.looseObject({
  id: z.string().nullable().optional(),
  product_key: z.string().nullable().optional(),
  status: z.enum(['CREATE_SUCCESS', 'UPDATE_SUCCESS', 'NO_CHANGE', 'ERROR']),
  errors: z.array(serviceMessageSchema).nullable().optional(),
  warnings: z.array(serviceMessageSchema).nullable().optional(),
});
export type ProductResult = z.infer<typeof productResultSchema>;

const putResponseSchema = z.looseObject({ products_response: z.array(productResultSchema) });

const deleteResultSchema = z.looseObject({
  product_key: z.string().nullable().optional(),
  failed_product_key: z.string().nullable().optional(),
  message: z.string().nullable().optional(),
});
export type DeleteResult = z.infer<typeof deleteResultSchema>;
const deleteResponseSchema = z.looseObject({ delete_products: z.array(deleteResultSchema) });

const productSchema = z.looseObject({ id: z.string(), product_key: z.string(), item_group_key: z.string().nullable().optional() });
export type StoredProduct = z.infer<typeof productSchema>;

const productSetSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  type: z.enum(['MANUAL', 'FILTERED']),
  processing_status: z.string().optional(),
});
export type ProductSet = z.infer<typeof productSetSchema>;

export type ServiceMessage = z.infer<typeof serviceMessageSchema>;

/** Renders a service error or warning item as one line. */
export function describeServiceMessage(m: ServiceMessage): string {
  if (typeof m === 'string') return m;
  return [m.code, m.message, m.parameter ? `(${m.parameter})` : undefined].filter((p) => p !== undefined && p !== '').join(' ');
}

/** A service error or warning item split into the attribute it names ('' when none) and the rest. */
export function serviceMessageParts(m: ServiceMessage): { parameter: string; text: string } {
  if (typeof m === 'string') return { parameter: '', text: m };
  const text = [m.code, m.message].filter((p) => p !== undefined && p !== '').join(' ');
  return { parameter: m.parameter ?? '', text: text === '' ? 'no reason given' : text };
}

export async function listCatalogs(client: AdsApiClient): Promise<ProductCatalog[]> {
  const env = await client.call({ method: 'GET', path: '/12/product_catalogs', family: 'catalog_read' }, (d) => z.array(catalogSchema).parse(d));
  return env.data;
}

export async function createCatalog(client: AdsApiClient, name: string): Promise<ProductCatalog> {
  const env = await client.call(
    { method: 'POST', path: '/12/product_catalogs', query: { name }, family: 'catalog_write' },
    (d) => catalogSchema.parse(d),
  );
  return env.data;
}

function productsPath(catalogId: string): string {
  return `/12/product_catalogs/${seg(catalogId)}/products`;
}

/** Creates or updates at most 25 products; returns one result per product, in order. */
export async function putProducts(
  client: AdsApiClient,
  catalogId: string,
  products: readonly ProductPayload[] | Buffer,
  count?: number,
  onRetry?: () => void,
): Promise<ProductResult[]> {
  const n = Buffer.isBuffer(products) ? (count ?? 0) : products.length;
  if (n > MAX_PRODUCTS_PER_PUT) throw new InternalError(`at most ${MAX_PRODUCTS_PER_PUT} products per PUT, got ${n}`);
  const env = await client.call(
    {
      method: 'PUT',
      path: productsPath(catalogId),
      json: Buffer.isBuffer(products) ? products : { products },
      family: 'catalog_write',
      onRetry,
    },
    (d) => putResponseSchema.parse(d).products_response,
  );
  return env.data;
}

export async function deleteProducts(client: AdsApiClient, catalogId: string, productKeys: readonly string[], onRetry?: () => void): Promise<DeleteResult[]> {
  const env = await client.call(
    { method: 'DELETE', path: productsPath(catalogId), json: { product_keys: productKeys }, family: 'catalog_write', onRetry },
    (d) => deleteResponseSchema.parse(d).delete_products,
  );
  return env.data;
}

/**
 * The products of the catalog, 100 per page. Without `itemGroupKey` the service lists only the
 * first-submitted member of each item group; with it, every member of that group.
 */
export async function* listProducts(client: AdsApiClient, catalogId: string, itemGroupKey?: string): AsyncGenerator<StoredProduct[]> {
  yield* client.paginate(
    { method: 'GET', path: productsPath(catalogId), query: { count: 100, item_group_key: itemGroupKey }, family: 'catalog_read' },
    (d) => z.array(productSchema).parse(d),
  );
}

/**
 * Every product of the catalog, variants included: the plain list (which shows one member per
 * item group), then the other members of each group seen, listed by item_group_key. Each
 * product is yielded once. Memory: one entry per item group.
 */
export async function* listAllProducts(client: AdsApiClient, catalogId: string): AsyncGenerator<StoredProduct[]> {
  /** item_group_key -> product_key of the member the plain list showed. */
  const groups = new Map<string, string>();
  for await (const page of listProducts(client, catalogId)) {
    for (const p of page) {
      if (p.item_group_key !== undefined && p.item_group_key !== null && p.item_group_key !== '' && !groups.has(p.item_group_key)) {
        groups.set(p.item_group_key, p.product_key);
      }
    }
    yield page;
  }
  for (const [groupKey, listedKey] of groups) {
    for await (const page of listProducts(client, catalogId, groupKey)) {
      const others = page.filter((p) => p.product_key !== listedKey);
      if (others.length > 0) yield others;
    }
  }
}

export interface ProductSetFilter {
  attribute: string;
  operator: string;
  value: string;
}

export type ProductSetInput =
  | { name: string; description?: string | undefined; type: 'MANUAL'; product_keys: string[] }
  | { name: string; description?: string | undefined; type: 'FILTERED'; filters: ProductSetFilter[] };

export async function createProductSet(client: AdsApiClient, catalogId: string, input: ProductSetInput): Promise<ProductSet> {
  const env = await client.call(
    { method: 'POST', path: `/12/product_catalogs/${seg(catalogId)}/product_sets`, json: input, family: 'catalog_write' },
    (d) => productSetSchema.parse(d),
  );
  return env.data;
}

export async function getProductSet(client: AdsApiClient, catalogId: string, productSetId: string): Promise<ProductSet> {
  const env = await client.call(
    { method: 'GET', path: `/12/product_catalogs/${seg(catalogId)}/product_sets/${seg(productSetId)}`, family: 'catalog_read' },
    (d) => productSetSchema.parse(d),
  );
  return env.data;
}
