/**
 * Product catalogs: GET /12/product_catalogs, POST (name), PUT /:product_catalog_id (name),
 * DELETE /:product_catalog_id (permanent; answered with deleted: true). One user holds one
 * catalog: creating a second while one exists is refused.
 */
import { invalidParameter } from '../errors.js';
import { dataAnswer } from '../envelope.js';
import type { ProductCatalog } from '../product-catalog.js';
import { requireCatalog } from '../record-lookup.js';
import type { RouteContext } from '../route-context.js';
import type { ApiRequest, RouteDefinition } from '../routing.js';

export function catalogJson(catalog: ProductCatalog): Record<string, unknown> {
  return { id: catalog.id, name: catalog.name, created_at: catalog.createdAt, updated_at: catalog.updatedAt, deleted: catalog.deleted };
}

function checkUserId(req: ApiRequest): void {
  const userId = req.params.get('user_id');
  if (userId !== undefined && !/^\d+$/.test(userId)) throw invalidParameter('user_id', 'user_id must be a number');
}

export function catalogRoutes(ctx: RouteContext): RouteDefinition[] {
  const { store } = ctx;
  const liveCatalogs = (): ProductCatalog[] => [...store.catalogs.values()].filter((c) => !c.deleted);
  return [
    {
      method: 'GET',
      pattern: '/12/product_catalogs',
      auth: 'access_token',
      handle(req) {
        checkUserId(req);
        return dataAnswer(req, liveCatalogs().map(catalogJson));
      },
    },
    {
      method: 'POST',
      pattern: '/12/product_catalogs',
      auth: 'access_token',
      handle(req) {
        const name = req.params.required('name');
        checkUserId(req);
        const existing = liveCatalogs()[0];
        if (existing) {
          throw invalidParameter('name', `a user holds one product catalog, and ${existing.id} exists; delete it first or add products to it`);
        }
        return dataAnswer(req, catalogJson(store.createCatalog(name)));
      },
    },
    {
      method: 'PUT',
      pattern: '/12/product_catalogs/:product_catalog_id',
      auth: 'access_token',
      handle(req) {
        const catalog = requireCatalog(store, req.pathParams.product_catalog_id);
        catalog.name = req.params.required('name');
        catalog.updatedAt = store.timestamp();
        return dataAnswer(req, catalogJson(catalog));
      },
    },
    {
      method: 'DELETE',
      pattern: '/12/product_catalogs/:product_catalog_id',
      auth: 'access_token',
      handle(req) {
        const catalog = requireCatalog(store, req.pathParams.product_catalog_id);
        catalog.deleted = true;
        catalog.updatedAt = store.timestamp();
        catalog.removeAll();
        for (const [id, set] of store.productSets) if (set.catalogId === catalog.id) store.productSets.delete(id);
        return dataAnswer(req, catalogJson(catalog));
      },
    },
  ];
}
