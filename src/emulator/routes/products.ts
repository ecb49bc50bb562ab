/**
 * Products of a catalog:
 * - GET .../products: count 1-100 (default 100), cursor, item_group_key; the first-submitted
 *   member of each item group only (every member with item_group_key);
 * - PUT .../products: JSON {products: [at most 25]}; per product CREATE_SUCCESS,
 *   UPDATE_SUCCESS, NO_CHANGE (identical attributes) or ERROR with errors and warnings; every
 *   instance of an id sent twice in one request is ignored (ERROR);
 * - DELETE .../products: JSON {product_keys: [...]}; permanent.
 */
import { invalidParameter, missingParameter, type ServiceErrorItem } from '../errors.js';
import { dataAnswer, listAnswer } from '../envelope.js';
import { readJsonObject } from '../json-body.js';
import { readPaging } from '../pagination.js';
import { checkProduct } from '../product-attributes.js';
import { canonicalAttributes, type ProductCatalog, type StoredProduct } from '../product-catalog.js';
import { requireCatalog } from '../record-lookup.js';
import type { RouteContext } from '../route-context.js';
import type { RouteDefinition } from '../routing.js';
import type { EmulatorStore } from '../store.js';

export const MAX_PRODUCTS_PER_PUT = 25;

export type ProductStatus = 'CREATE_SUCCESS' | 'UPDATE_SUCCESS' | 'NO_CHANGE' | 'ERROR';

export interface ProductResult {
  warnings: ServiceErrorItem[];
  errors: ServiceErrorItem[];
  product_key: string | null;
  id: string | null;
  status: ProductStatus;
}

export function productJson(catalog: ProductCatalog, product: StoredProduct): Record<string, unknown> {
  return {
    ...product.attributes,
    product_key: product.productKey,
    ...(product.itemGroupId === undefined ? {} : { item_group_key: catalog.itemGroupKey(product.itemGroupId) }),
    created_at: product.createdAt,
    updated_at: product.updatedAt,
  };
}

function putProducts(store: EmulatorStore, catalog: ProductCatalog, products: unknown[]): ProductResult[] {
  const idCounts = new Map<string, number>();
  for (const p of products) {
    const id = typeof p === 'object' && p !== null && 'id' in p && typeof p.id === 'string' ? p.id : undefined;
    if (id !== undefined) idCounts.set(id, (idCounts.get(id) ?? 0) + 1);
  }
  const now = store.timestamp();
  return products.map((raw): ProductResult => {
    const check = checkProduct(raw);
    const existing = check.id === undefined ? undefined : catalog.getById(check.id);
    const result: ProductResult = {
      warnings: check.warnings,
      errors: check.errors,
      product_key: existing?.productKey ?? null,
      id: check.id ?? null,
      status: 'ERROR',
    };
    const instances = check.id === undefined ? 0 : (idCounts.get(check.id) ?? 0);
    if (instances > 1) {
      result.errors = [
        { code: 'INVALID_PARAMETER', message: `id "${check.id ?? ''}" appears ${instances} times in this request; every instance is ignored`, parameter: 'id' },
        ...check.errors,
      ];
      return result;
    }
    if (check.errors.length > 0 || check.id === undefined) return result;
    const canonical = canonicalAttributes(check.attributes);
    if (!existing) {
      const seq = store.nextSeq();
      const created = catalog.create(seq, `pk${seq.toString(36).padStart(8, '0')}`, check.id, check.attributes, now);
      return { ...result, product_key: created.productKey, status: 'CREATE_SUCCESS' };
    }
    if (existing.canonical === canonical) return { ...result, status: 'NO_CHANGE' };
    catalog.update(existing, check.attributes, canonical, now);
    return { ...result, status: 'UPDATE_SUCCESS' };
  });
}

export function productRoutes(ctx: RouteContext): RouteDefinition[] {
  const { store } = ctx;
  const pattern = '/12/product_catalogs/:product_catalog_id/products';
  return [
    {
      method: 'GET',
      pattern,
      auth: 'access_token',
      handle(req) {
        const catalog = requireCatalog(store, req.pathParams.product_catalog_id);
        const paging = readPaging(req.params, 100, 100, false);
        const page = catalog.page(paging.afterSeq, paging.count, req.params.get('item_group_key'));
        return listAnswer(req, page.items.map((p) => productJson(catalog, p)), page.nextCursor);
      },
    },
    {
      method: 'PUT',
      pattern,
      auth: 'access_token',
      handle(req) {
        const catalog = requireCatalog(store, req.pathParams.product_catalog_id);
        const body = readJsonObject(req);
        const products = body.products;
        if (products === undefined) throw missingParameter('products');
        if (!Array.isArray(products) || products.length === 0) throw invalidParameter('products', 'products must be a non-empty array');
        if (products.length > MAX_PRODUCTS_PER_PUT) {
          throw invalidParameter('products', `at most ${MAX_PRODUCTS_PER_PUT} products per request, got ${products.length}`);
        }
        for (const key of Object.keys(body)) if (key !== 'products') throw invalidParameter(key, `unknown member "${key}" of the body`);
        return dataAnswer(req, { products_response: putProducts(store, catalog, products) });
      },
    },
    {
      method: 'DELETE',
      pattern,
      auth: 'access_token',
      handle(req) {
        const catalog = requireCatalog(store, req.pathParams.product_catalog_id);
        const body = readJsonObject(req);
        const keys = body.product_keys;
        if (keys === undefined) throw missingParameter('product_keys');
        if (!Array.isArray(keys) || keys.length === 0 || keys.some((k) => typeof k !== 'string' || k === '')) {
          throw invalidParameter('product_keys', 'product_keys must be a non-empty array of product keys');
        }
        const results = (keys as string[]).map((key) => {
          const product = catalog.getByKey(key);
          if (!product) return { product_key: null, failed_product_key: key, message: `product key ${key} was not found in catalog ${catalog.id}` };
          catalog.remove(product);
          return { product_key: key, failed_product_key: null, message: null };
        });
        return dataAnswer(req, { delete_products: results });
      },
    },
  ];
}
