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
import { checkProduct, type ProductAttributes } from '../product-attributes.js';
import { sameAttributes, type AttributesSource, type ProductCatalog, type StoredProduct } from '../product-catalog.js';
import { ProductsBody } from '../products-body.js';
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

/** How many products of the request carry each string id (an id sent twice voids every instance). */
function countIds(products: readonly unknown[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const p of products) {
    const id = typeof p === 'object' && p !== null && 'id' in p && typeof p.id === 'string' ? p.id : undefined;
    if (id !== undefined) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

function groupOf(attributes: ProductAttributes): string | undefined {
  const g = attributes.item_group_id;
  return typeof g === 'string' ? g : undefined;
}

/**
 * `products`: the body's products array as parsed from `body`. A product stored exactly as
 * parsed is kept as its place in the body (products-body.ts), any other as its own attributes.
 */
function putProducts(store: EmulatorStore, catalog: ProductCatalog, products: readonly unknown[], body: Buffer): ProductResult[] {
  const idCounts = countIds(products);
  const now = store.timestamp();
  let keptBody: ProductsBody | undefined;
  const results: ProductResult[] = [];
  for (let index = 0; index < products.length; index++) {
    const raw = products[index];
    const check = checkProduct(raw);
    const id = check.id;
    const existing = id === undefined ? undefined : catalog.getById(id);
    const result: ProductResult = {
      warnings: check.warnings,
      errors: check.errors,
      product_key: existing?.productKey ?? null,
      id: id ?? null,
      status: 'ERROR',
    };
    results.push(result);
    const instances = id === undefined ? 0 : (idCounts.get(id) ?? 0);
    if (instances > 1) {
      result.errors = [
        { code: 'INVALID_PARAMETER', message: `id "${id ?? ''}" appears ${instances} times in this request; every instance is ignored`, parameter: 'id' },
        ...check.errors,
      ];
      continue;
    }
    const attributes = check.attributes;
    if (attributes === undefined || id === undefined) continue;
    if (existing && sameAttributes(existing.attributes, attributes)) {
      result.status = 'NO_CHANGE';
      continue;
    }
    const source: AttributesSource = attributes === raw ? { body: (keptBody ??= new ProductsBody(body)), index } : { attributes };
    if (!existing) {
      result.product_key = catalog.create(store.nextSeq(), id, source, groupOf(attributes), now).productKey;
      result.status = 'CREATE_SUCCESS';
    } else {
      catalog.update(existing, source, groupOf(attributes), now);
      result.status = 'UPDATE_SUCCESS';
    }
  }
  return results;
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
        return dataAnswer(req, { products_response: putProducts(store, catalog, products, req.body) });
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
