/**
 * Product catalogs (list, create, rename, delete) and product sets (MANUAL and FILTERED),
 * through src/api/resources/catalogs.ts where it has a function.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AdsApiClient } from '../../src/api/client.js';
import { ApiValidationError, NotFoundError } from '../../src/api/errors.js';
import { createCatalog, createProductSet, getProductSet, listCatalogs, putProducts } from '../../src/api/resources/catalogs.js';
import type { EmulatorHandle } from '../../src/emulator/index.js';
import { deleteCatalog, renameCatalog } from './extra-resources.js';
import { clientFor, product, signedJson, signedRaw, start } from './helpers.js';

let emu: EmulatorHandle;
let client: AdsApiClient;

beforeAll(async () => {
  emu = await start({ rateLimits: 'off' });
  client = clientFor(emu);
});
afterAll(() => emu.close());
beforeEach(() => emu.reset());

const invalid = (parameter: string, message: string) => ({ code: 'INVALID_PARAMETER', message, parameter });

describe('product catalogs', () => {
  it('lists the seeded catalog', async () => {
    const catalogs = await listCatalogs(client);
    expect(catalogs).toEqual([{ id: 'emu-catalog', name: 'Emulator catalog', created_at: expect.any(String) as unknown, updated_at: expect.any(String) as unknown, deleted: false }]);
  });

  it('holds one catalog per user: create is refused until the existing one is deleted', async () => {
    const refused = await createCatalog(client, 'Second').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiValidationError);
    expect((refused as ApiValidationError).serviceErrors).toEqual([
      invalid('name', 'a user holds one product catalog, and emu-catalog exists; delete it first or add products to it'),
    ]);

    await putProducts(client, 'emu-catalog', [product('a')]);
    expect(await deleteCatalog(client, 'emu-catalog')).toMatchObject({ id: 'emu-catalog', name: 'Emulator catalog', deleted: true });

    // Permanent: gone from lists, its products gone, a second delete is a 404.
    expect(await listCatalogs(client)).toEqual([]);
    expect(emu.state().catalogs['emu-catalog']).toEqual({ name: 'Emulator catalog', deleted: true, products: [] });
    const products = await putProducts(client, 'emu-catalog', [product('b')]).catch((e: unknown) => e);
    expect(products).toBeInstanceOf(NotFoundError);
    expect((products as NotFoundError).serviceErrors).toEqual([{ code: 'NOT_FOUND', message: 'product catalog emu-catalog was not found' }]);
    await expect(deleteCatalog(client, 'emu-catalog')).rejects.toBeInstanceOf(NotFoundError);

    const created = await createCatalog(client, 'Second');
    expect(created).toMatchObject({ name: 'Second', deleted: false });
    expect((await listCatalogs(client)).map((c) => c.id)).toEqual([created.id]);
  });

  it('renames with PUT name, and requires the name', async () => {
    expect(await renameCatalog(client, 'emu-catalog', 'Spring range')).toMatchObject({ id: 'emu-catalog', name: 'Spring range' });
    const renamed = await signedRaw(emu, { method: 'PUT', path: '/12/product_catalogs/emu-catalog?name=Summer%20range' });
    expect(renamed.json).toMatchObject({ request: { params: { product_catalog_id: 'emu-catalog', name: 'Summer range' } }, data: { name: 'Summer range' } });
    const nameless = await signedRaw(emu, { method: 'PUT', path: '/12/product_catalogs/emu-catalog' });
    expect(nameless.status).toBe(400);
    expect(nameless.json).toEqual({
      errors: [{ code: 'MISSING_PARAMETER', message: 'name is required', parameter: 'name' }],
      request: { params: { product_catalog_id: 'emu-catalog' } },
    });
  });

  it('answers 404 NOT_FOUND for an unknown catalog', async () => {
    const answer = await signedRaw(emu, { method: 'GET', path: '/12/product_catalogs/nope/products' });
    expect(answer.status).toBe(404);
    expect(answer.json).toEqual({
      errors: [{ code: 'NOT_FOUND', message: 'product catalog nope was not found' }],
      request: { params: { product_catalog_id: 'nope' } },
    });
  });
});

describe('product sets', () => {
  async function seedProducts(): Promise<Record<string, string>> {
    const results = await putProducts(client, 'emu-catalog', [
      product('cheap', { price: '5.00 USD', product_type: 'Home > Kitchen', custom_label_0: 'summer' }),
      product('mid', { price: '20.00 USD', product_type: 'Home > Garden', custom_label_0: 'winter' }),
      product('dear', { price: '99.00 USD', product_type: 'Office', custom_label_0: 'summer sale' }),
    ]);
    return Object.fromEntries(results.map((r) => [r.id ?? '', r.product_key ?? '']));
  }

  it('creates a MANUAL set from product keys and reads it back', async () => {
    const keys = await seedProducts();
    const set = await createProductSet(client, 'emu-catalog', { name: 'Picks', type: 'MANUAL', product_keys: [keys.dear ?? '', keys.cheap ?? ''] });
    expect(set).toMatchObject({ name: 'Picks', type: 'MANUAL', product_ids: ['dear', 'cheap'], processing_status: 'DONE', filters: [] });
    await expect(getProductSet(client, 'emu-catalog', set.id)).resolves.toEqual(set);
  });

  it.each([
    ['price LESS_THAN 20', [{ attribute: 'price', operator: 'LESS_THAN', value: '20' }], ['cheap']],
    ['price GREATER_THAN 5', [{ attribute: 'price', operator: 'GREATER_THAN', value: '5' }], ['mid', 'dear']],
    ['price EQUAL_TO 20', [{ attribute: 'price', operator: 'EQUAL_TO', value: '20' }], ['mid']],
    ['product_type CONTAINS home', [{ attribute: 'product_type', operator: 'CONTAINS', value: 'home' }], ['cheap', 'mid']],
    ['product_type NOT_CONTAINS home', [{ attribute: 'product_type', operator: 'NOT_CONTAINS', value: 'home' }], ['dear']],
    ['custom_label_0 MATCH summer', [{ attribute: 'custom_label_0', operator: 'MATCH', value: 'summer' }], ['cheap']],
    [
      'two filters together',
      [
        { attribute: 'custom_label_0', operator: 'CONTAINS', value: 'summer' },
        { attribute: 'price', operator: 'GREATER_THAN', value: '10' },
      ],
      ['dear'],
    ],
  ])('creates a FILTERED set: %s', async (_name, filters, ids) => {
    await seedProducts();
    const set = await createProductSet(client, 'emu-catalog', { name: 'Filtered', type: 'FILTERED', filters });
    expect(set).toMatchObject({ type: 'FILTERED', filters, product_ids: ids });
  });

  it.each([
    ['no name', { type: 'MANUAL', product_keys: ['x'] }, { code: 'MISSING_PARAMETER', message: 'name is required', parameter: 'name' }],
    ['no type', { name: 'n' }, { code: 'MISSING_PARAMETER', message: 'type is required', parameter: 'type' }],
    ['a bad type', { name: 'n', type: 'SMART' }, invalid('type', 'type must be MANUAL or FILTERED')],
    ['MANUAL without keys', { name: 'n', type: 'MANUAL' }, { code: 'MISSING_PARAMETER', message: 'product_keys is required when type is MANUAL', parameter: 'product_keys' }],
    ['MANUAL with an unknown key', { name: 'n', type: 'MANUAL', product_keys: ['pk-nope'] }, invalid('product_keys', 'product key pk-nope was not found in catalog emu-catalog')],
    ['FILTERED without filters', { name: 'n', type: 'FILTERED' }, { code: 'MISSING_PARAMETER', message: 'filters is required when type is FILTERED', parameter: 'filters' }],
    [
      'a filter on an unknown attribute',
      { name: 'n', type: 'FILTERED', filters: [{ attribute: 'title', operator: 'MATCH', value: 'x' }] },
      invalid('filters[0].attribute', 'attribute must be one of price, product_type, google_product_category, sale_price, inventory, custom_label_0, custom_label_1, custom_label_2, custom_label_3, custom_label_4'),
    ],
    [
      'a filter with an unknown operator',
      { name: 'n', type: 'FILTERED', filters: [{ attribute: 'price', operator: 'BETWEEN', value: '1' }] },
      invalid('filters[0].operator', 'operator must be one of GREATER_THAN, EQUAL_TO, LESS_THAN, MATCH, NOT_CONTAINS, CONTAINS'),
    ],
    [
      'GREATER_THAN on a text attribute',
      { name: 'n', type: 'FILTERED', filters: [{ attribute: 'product_type', operator: 'GREATER_THAN', value: '1' }] },
      invalid('filters[0].operator', 'GREATER_THAN applies to price, sale_price and inventory only'),
    ],
    [
      'FILTERED with product keys',
      { name: 'n', type: 'FILTERED', filters: [{ attribute: 'price', operator: 'LESS_THAN', value: '1' }], product_keys: ['x'] },
      invalid('product_keys', 'product_keys apply to MANUAL product sets only'),
    ],
  ])('refuses %s with a 400', async (_name, body, error) => {
    const answer = await signedJson(emu, 'POST', '/12/product_catalogs/emu-catalog/product_sets', body);
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({ errors: [error], request: { params: { product_catalog_id: 'emu-catalog' } } });
  });

  it('answers 404 for an unknown set', async () => {
    await expect(getProductSet(client, 'emu-catalog', 'nope')).rejects.toBeInstanceOf(NotFoundError);
  });
});
