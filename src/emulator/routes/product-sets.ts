/**
 * Product sets: POST /12/product_catalogs/:id/product_sets (JSON: name, description, type
 * MANUAL with product_keys or FILTERED with filters) and GET .../product_sets/:product_set_id.
 * A set's product_ids are worked out when it is read: the products named by its keys, or
 * those matching every filter.
 */
import { invalidParameter, missingParameter, notFound } from '../errors.js';
import { dataAnswer } from '../envelope.js';
import { isPlainObject, readJsonObject } from '../json-body.js';
import { parseMoney, type ProductAttributes } from '../product-attributes.js';
import type { ProductCatalog } from '../product-catalog.js';
import { requireCatalog } from '../record-lookup.js';
import type { RouteContext } from '../route-context.js';
import type { RouteDefinition } from '../routing.js';
import type { ProductSetFilter, ProductSetRecord } from '../store.js';

export const FILTER_ATTRIBUTES = [
  'price',
  'product_type',
  'google_product_category',
  'sale_price',
  'inventory',
  'custom_label_0',
  'custom_label_1',
  'custom_label_2',
  'custom_label_3',
  'custom_label_4',
] as const;
export const FILTER_OPERATORS = ['GREATER_THAN', 'EQUAL_TO', 'LESS_THAN', 'MATCH', 'NOT_CONTAINS', 'CONTAINS'] as const;
const NUMERIC_ATTRIBUTES: ReadonlySet<string> = new Set(['price', 'sale_price', 'inventory']);
const NUMERIC_OPERATORS: ReadonlySet<string> = new Set(['GREATER_THAN', 'LESS_THAN']);
const BODY_MEMBERS: ReadonlySet<string> = new Set(['name', 'description', 'type', 'filters', 'product_keys']);

function numericValue(attributes: ProductAttributes, attribute: string): number | undefined {
  const value = attributes[attribute];
  if (typeof value === 'number') return value;
  if (typeof value !== 'string') return undefined;
  const money = parseMoney(value);
  return typeof money === 'object' ? money.amount : undefined;
}

function matches(attributes: ProductAttributes, filter: ProductSetFilter): boolean {
  if (NUMERIC_ATTRIBUTES.has(filter.attribute) && filter.operator !== 'MATCH' && !filter.operator.includes('CONTAINS')) {
    const actual = numericValue(attributes, filter.attribute);
    const wanted = Number(filter.value);
    if (actual === undefined) return false;
    if (filter.operator === 'GREATER_THAN') return actual > wanted;
    if (filter.operator === 'LESS_THAN') return actual < wanted;
    return actual === wanted;
  }
  const value = attributes[filter.attribute];
  if (value === undefined) return filter.operator === 'NOT_CONTAINS';
  const text = String(value).toLowerCase();
  const wanted = filter.value.toLowerCase();
  switch (filter.operator) {
    case 'CONTAINS':
      return text.includes(wanted);
    case 'NOT_CONTAINS':
      return !text.includes(wanted);
    default:
      return text === wanted;
  }
}

function readFilters(raw: unknown): ProductSetFilter[] {
  if (raw === undefined) throw missingParameter('filters', 'filters is required when type is FILTERED');
  if (!Array.isArray(raw) || raw.length === 0) throw invalidParameter('filters', 'filters must be a non-empty array');
  return raw.map((item: unknown, i): ProductSetFilter => {
    if (!isPlainObject(item)) throw invalidParameter(`filters[${i}]`, 'each filter must be an object {attribute, operator, value}');
    const { attribute, operator, value } = item;
    if (typeof attribute !== 'string' || !(FILTER_ATTRIBUTES as readonly string[]).includes(attribute)) {
      throw invalidParameter(`filters[${i}].attribute`, `attribute must be one of ${FILTER_ATTRIBUTES.join(', ')}`);
    }
    if (typeof operator !== 'string' || !(FILTER_OPERATORS as readonly string[]).includes(operator)) {
      throw invalidParameter(`filters[${i}].operator`, `operator must be one of ${FILTER_OPERATORS.join(', ')}`);
    }
    if ((typeof value !== 'string' || value === '') && typeof value !== 'number') {
      throw invalidParameter(`filters[${i}].value`, 'value must be a non-empty string or a number');
    }
    if (NUMERIC_OPERATORS.has(operator)) {
      if (!NUMERIC_ATTRIBUTES.has(attribute)) {
        throw invalidParameter(`filters[${i}].operator`, `${operator} applies to price, sale_price and inventory only`);
      }
      if (!Number.isFinite(Number(value))) throw invalidParameter(`filters[${i}].value`, `${operator} needs a numeric value`);
    }
    for (const key of Object.keys(item)) {
      if (key !== 'attribute' && key !== 'operator' && key !== 'value') throw invalidParameter(`filters[${i}].${key}`, `unknown member "${key}" of a filter`);
    }
    return { attribute, operator, value: String(value) };
  });
}

function readProductKeys(raw: unknown, catalog: ProductCatalog): string[] {
  if (raw === undefined) throw missingParameter('product_keys', 'product_keys is required when type is MANUAL');
  if (!Array.isArray(raw) || raw.length === 0 || raw.some((k) => typeof k !== 'string')) {
    throw invalidParameter('product_keys', 'product_keys must be a non-empty array of product keys');
  }
  const keys = raw as string[];
  const unknown = keys.find((k) => !catalog.getByKey(k));
  if (unknown !== undefined) throw invalidParameter('product_keys', `product key ${unknown} was not found in catalog ${catalog.id}`);
  return keys;
}

function productSetJson(set: ProductSetRecord, catalog: ProductCatalog): Record<string, unknown> {
  const productIds: string[] = [];
  if (set.type === 'MANUAL') {
    for (const key of set.productKeys) {
      const product = catalog.getByKey(key);
      if (product) productIds.push(product.id);
    }
  } else {
    for (const product of catalog.products()) {
      if (set.filters.every((f) => matches(product.attributes, f))) productIds.push(product.id);
    }
  }
  return {
    id: set.id,
    name: set.name,
    description: set.description,
    type: set.type,
    filters: set.type === 'FILTERED' ? set.filters : [],
    product_ids: productIds,
    processing_status: 'DONE',
    created_at: set.createdAt,
    updated_at: set.updatedAt,
    deleted: false,
  };
}

export function productSetRoutes(ctx: RouteContext): RouteDefinition[] {
  const { store } = ctx;
  return [
    {
      method: 'POST',
      pattern: '/12/product_catalogs/:product_catalog_id/product_sets',
      auth: 'access_token',
      handle(req) {
        const catalog = requireCatalog(store, req.pathParams.product_catalog_id);
        const body = readJsonObject(req);
        for (const key of Object.keys(body)) if (!BODY_MEMBERS.has(key)) throw invalidParameter(key, `unknown member "${key}" of a product set`);
        const { name, description, type } = body;
        if (name === undefined) throw missingParameter('name');
        if (typeof name !== 'string' || name === '') throw invalidParameter('name', 'name must be a non-empty string');
        if (description !== undefined && typeof description !== 'string') throw invalidParameter('description', 'description must be a string');
        if (type === undefined) throw missingParameter('type');
        if (type !== 'MANUAL' && type !== 'FILTERED') throw invalidParameter('type', 'type must be MANUAL or FILTERED');
        if (type === 'MANUAL' && body.filters !== undefined) throw invalidParameter('filters', 'filters apply to FILTERED product sets only');
        if (type === 'FILTERED' && body.product_keys !== undefined) {
          throw invalidParameter('product_keys', 'product_keys apply to MANUAL product sets only');
        }
        const t = store.timestamp();
        const set: ProductSetRecord = {
          seq: store.nextSeq(),
          id: store.newId(),
          catalogId: catalog.id,
          name,
          description: description ?? null,
          type,
          filters: type === 'FILTERED' ? readFilters(body.filters) : [],
          productKeys: type === 'MANUAL' ? readProductKeys(body.product_keys, catalog) : [],
          createdAt: t,
          updatedAt: t,
        };
        store.productSets.set(set.id, set);
        return dataAnswer(req, productSetJson(set, catalog));
      },
    },
    {
      method: 'GET',
      pattern: '/12/product_catalogs/:product_catalog_id/product_sets/:product_set_id',
      auth: 'access_token',
      handle(req) {
        const catalog = requireCatalog(store, req.pathParams.product_catalog_id);
        const set = store.productSets.get(req.pathParams.product_set_id ?? '');
        if (!set || set.catalogId !== catalog.id) throw notFound(`product set ${req.pathParams.product_set_id ?? ''} was not found in catalog ${catalog.id}`);
        return dataAnswer(req, productSetJson(set, catalog));
      },
    },
  ];
}
