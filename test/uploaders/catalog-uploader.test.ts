/**
 * The catalog uploader against a scripted server: the exact request bodies, one outcome per
 * product whatever order or shape the answers come in, what is retried, what fails a batch,
 * what stops the run; deletes; and the listing of a whole catalog (variants included) that a
 * rebuild of lost state reads.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { AdsApiClient } from '../../src/api/client.js';
import { Credentials } from '../../src/api/credentials.js';
import { AuthError } from '../../src/api/errors.js';
import { listAllProducts } from '../../src/api/resources/catalogs.js';
import type { ProductToDelete, ProductToSend } from '../../src/state/store.js';
import { MAX_DELETE_FAILURES_KEPT, removeProducts, upsertProducts, type ProductOutcome } from '../../src/uploaders/catalog-uploader.js';
import { json, startScriptedServer, type RecordedRequest, type Script, type ScriptedServer } from '../helpers/scripted-server.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function clientFor(script: Script): Promise<{ client: AdsApiClient; server: ScriptedServer }> {
  server = await startScriptedServer(script);
  const client = new AdsApiClient({
    credentials: new Credentials('test', 'ck', 'cs', 'at', 'ats'),
    adsUrl: server.url,
    retry: { retries: 3, minDelayMs: 1, maxDelayMs: 5, budgetMs: 5000 },
  });
  return { client, server };
}

function product(id: string, i: number): ProductToSend {
  const payload = JSON.stringify({ id, title: `T ${id}` });
  return { id, row: i + 1, line: 10 * (i + 1), contentHash: `h-${id}`, payload, isNew: true };
}

async function* pages<T>(items: readonly T[], size = 7): AsyncGenerator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

function bodyOf(req: RecordedRequest): { products?: { id: string }[]; product_keys?: string[] } {
  return JSON.parse(req.body.toString('utf8')) as { products?: { id: string }[]; product_keys?: string[] };
}

/** Answers each PUT with CREATE_SUCCESS for every product it carries. */
const createAll: Script = (req, res) => {
  const products = bodyOf(req).products ?? [];
  json(res, 200, { request: {}, data: { products_response: products.map((p) => ({ id: p.id, product_key: `k-${p.id}`, status: 'CREATE_SUCCESS', errors: [], warnings: [] })) } });
};

describe('upsertProducts', () => {
  it('sends the serialized payloads as they are, at most 25 per PUT, every product once', async () => {
    const { client, server } = await clientFor(createAll);
    const products = Array.from({ length: 60 }, (_, i) => product(`P-${i}`, i));
    const seen: ProductOutcome[] = [];
    const result = await upsertProducts(pages(products), { client, catalogId: 'cat 1', concurrency: 3, onAcknowledged: async (o) => void seen.push(...o) });

    expect(result).toMatchObject({ created: 60, updated: 0, unchanged: 0, rejected: 0, failed: 0, fatal: undefined });
    expect(server.requests.map((r) => [r.method, r.url])).toEqual(Array.from({ length: 3 }, () => ['PUT', '/12/product_catalogs/cat%201/products']));
    expect(server.requests.map((r) => bodyOf(r).products?.length).sort()).toEqual([10, 25, 25]);
    const first = server.requests.find((r) => bodyOf(r).products?.[0]?.id === 'P-0');
    expect(first?.body.toString('utf8')).toBe(`{"products":[${products.slice(0, 25).map((p) => p.payload).join(',')}]}`);
    expect(first?.headers['content-type']).toBe('application/json');
    expect(seen.map((o) => o.product.id).sort()).toEqual(products.map((p) => p.id).sort());
  });

  it('gives every product its own outcome, matched by id whatever the order of the answers; one the answer leaves out failed', async () => {
    const { client } = await clientFor((_req, res) =>
      json(res, 200, {
        data: {
          products_response: [
            { id: 'D', product_key: 'k-d', status: 'NO_CHANGE', errors: null, warnings: null },
            { id: 'A', product_key: 'k-a', status: 'CREATE_SUCCESS', errors: [], warnings: [{ code: 'UNSUPPORTED_IMAGE_FORMAT', message: 'image_link ends in .svg', parameter: 'image_link' }] },
            { id: 'C', product_key: null, status: 'ERROR', errors: [{ code: 'INVALID_PARAMETER', message: 'description must be plain text', parameter: 'description' }, 'also this'], warnings: [] },
            { id: 'B', product_key: 'k-b', status: 'UPDATE_SUCCESS', errors: [], warnings: [] },
          ],
        },
      }),
    );
    const outcomes: ProductOutcome[] = [];
    const failures: string[] = [];
    const result = await upsertProducts(pages(['A', 'B', 'C', 'D', 'E'].map(product)), {
      client,
      catalogId: 'c',
      concurrency: 1,
      onAcknowledged: async (o) => void outcomes.push(...o),
      onFailed: (count, error) => failures.push(`${count}: ${error.message}`),
    });
    // E, which the answer does not mention, is not a refusal: it failed (the next run sends it again).
    expect(result).toMatchObject({ created: 1, updated: 1, unchanged: 1, rejected: 1, failed: 1, warnings: 1 });
    expect(failures).toEqual(["1: the service's answer has no result for 1 of the 5 products sent"]);
    expect(
      outcomes.map((o) => (o.kind === 'rejected' ? [o.product.id, o.kind, o.errors] : [o.product.id, o.kind, o.productKey, o.warnings])),
    ).toEqual([
      ['A', 'created', 'k-a', ['UNSUPPORTED_IMAGE_FORMAT image_link ends in .svg (image_link)']],
      ['B', 'updated', 'k-b', []],
      [
        'C',
        'rejected',
        [
          { parameter: 'description', text: 'INVALID_PARAMETER description must be plain text' },
          { parameter: '', text: 'also this' },
        ],
      ],
      ['D', 'unchanged', 'k-d', []],
    ]);
  });

  it('retries a 503 with the same body; a 400 fails its batch only; a 401 stops everything', async () => {
    let puts = 0;
    const { client, server } = await clientFor((req, res, index) => {
      if (index === 0) return json(res, 503, { errors: [{ code: 'SERVICE_UNAVAILABLE', message: 'later' }] });
      puts += 1;
      if (puts === 2) return json(res, 400, { errors: [{ code: 'INVALID_PARAMETER', message: 'bad batch' }] });
      if (puts === 4) return json(res, 401, { errors: [{ code: 'UNAUTHORIZED_ACCESS', message: 'no' }] });
      createAll(req, res, index);
    });
    const failures: string[] = [];
    const products = Array.from({ length: 150 }, (_, i) => product(`P-${String(i).padStart(3, '0')}`, i));
    const acknowledged: string[] = [];
    const result = await upsertProducts(pages(products, 50), {
      client,
      catalogId: 'c',
      concurrency: 1,
      onAcknowledged: async (o) => void acknowledged.push(...o.map((x) => x.product.id)),
      onFailed: (count, error) => failures.push(`${count}: ${error.code}`),
    });
    // 1st batch: 503 then created; 2nd: 400 (failed, the run goes on); 3rd: created; 4th: 401 (fatal, nothing after).
    expect(server.requests[0]?.body.equals(server.requests[1]?.body ?? Buffer.alloc(0))).toBe(true);
    expect(result).toMatchObject({ created: 50, failed: 50 });
    expect(result.fatal).toBeInstanceOf(AuthError);
    expect(failures).toEqual(['25: API_VALIDATION', '25: AUTH_FAILED']);
    expect(acknowledged).toEqual([...products.slice(0, 25), ...products.slice(50, 75)].map((p) => p.id));
    expect(server.requests).toHaveLength(5);
    expect(client.stats.retries).toBe(1);
  });
});

describe('removeProducts', () => {
  it('deletes by product_key, 100 per request; a key not found is already gone, other failures are reported and kept', async () => {
    const { client, server } = await clientFor((req, res) => {
      const keys = bodyOf(req).product_keys ?? [];
      const answer = (k: string) =>
        k === 'k-7'
          ? { product_key: null, failed_product_key: k, message: `product key ${k} was not found in catalog c` }
          : k === 'k-8'
            ? { product_key: null, failed_product_key: k, message: 'the product is locked by a running export' }
            : { product_key: k, failed_product_key: null, message: null };
      json(res, 200, { data: { delete_products: keys.map(answer) } });
    });
    const toDelete: ProductToDelete[] = Array.from({ length: 130 }, (_, i) => ({ id: `P-${i}`, productKey: `k-${i}` }));
    const forgotten: string[] = [];
    const result = await removeProducts(pages(toDelete, 40), {
      client,
      catalogId: 'c',
      concurrency: 2,
      onAcknowledged: async () => undefined,
      onDeleted: async (ids) => void forgotten.push(...ids),
    });
    expect(server.requests.map((r) => [r.method, bodyOf(r).product_keys?.length]).sort()).toEqual([
      ['DELETE', 100],
      ['DELETE', 30],
    ]);
    expect(result).toMatchObject({ deleted: 128, alreadyGone: 1, deleteFailed: 1, deleteFailures: [{ id: 'P-8', productKey: 'k-8', message: 'the product is locked by a running export' }] });
    expect(forgotten.sort()).toEqual(toDelete.filter((p) => p.id !== 'P-8').map((p) => p.id).sort());
  });
  it('counts every refused delete but keeps only the first 10 with their message (a catalog whose every delete is refused)', async () => {
    const { client } = await clientFor((req, res) => {
      const keys = bodyOf(req).product_keys ?? [];
      json(res, 200, { data: { delete_products: keys.map((k) => ({ product_key: null, failed_product_key: k, message: `product ${k} is locked by a running export` })) } });
    });
    const toDelete: ProductToDelete[] = Array.from({ length: 5000 }, (_, i) => ({ id: `P-${i}`, productKey: `k-${i}` }));
    const forgotten: string[] = [];
    const result = await removeProducts(pages(toDelete, 1000), {
      client,
      catalogId: 'c',
      concurrency: 1,
      onAcknowledged: async () => undefined,
      onDeleted: async (ids) => void forgotten.push(...ids),
    });
    expect(result.deleteFailed).toBe(5000);
    expect(result.deleteFailures).toHaveLength(MAX_DELETE_FAILURES_KEPT);
    expect(MAX_DELETE_FAILURES_KEPT).toBe(10);
    expect(result.deleteFailures[0]).toEqual({ id: 'P-0', productKey: 'k-0', message: 'product k-0 is locked by a running export' });
    expect(result.deleteFailures[9]).toEqual({ id: 'P-9', productKey: 'k-9', message: 'product k-9 is locked by a running export' });
    expect(result).toMatchObject({ deleted: 0, alreadyGone: 0, failed: 0 });
    expect(forgotten).toEqual([]);
  });
  it('keeps in the state a product whose product_key the answer does not mention: it may still be in the catalog', async () => {
    const { client } = await clientFor((_req, res) => {
      // The answer lists k-0 as deleted, k-1 as not found, and says nothing of k-2 and k-3.
      json(res, 200, {
        data: {
          delete_products: [
            { product_key: 'k-0', failed_product_key: null, message: null },
            { product_key: null, failed_product_key: 'k-1', message: 'product key k-1 was not found in catalog c' },
          ],
        },
      });
    });
    const toDelete: ProductToDelete[] = Array.from({ length: 4 }, (_, i) => ({ id: `P-${i}`, productKey: `k-${i}` }));
    const forgotten: string[] = [];
    const failures: string[] = [];
    const result = await removeProducts(pages(toDelete), {
      client,
      catalogId: 'c',
      concurrency: 1,
      onAcknowledged: async () => undefined,
      onDeleted: async (ids) => void forgotten.push(...ids),
      onFailed: (count, error) => failures.push(`${count}: ${error.message}`),
    });
    expect(result).toMatchObject({ deleted: 1, alreadyGone: 1, failed: 2, deleteFailed: 0, deleteFailures: [] });
    expect(forgotten).toEqual(['P-0', 'P-1']);
    expect(failures).toEqual(["2: the service's answer has no result for 2 of the 4 product keys sent"]);
  });
});

describe('listAllProducts (the rebuild of lost state)', () => {
  it('follows the cursor, then lists each item group by item_group_key, yielding every product once', async () => {
    const { client, server } = await clientFor((req, res) => {
      const url = new URL(req.url, 'http://x');
      const group = url.searchParams.get('item_group_key');
      const cursor = url.searchParams.get('cursor');
      expect(url.searchParams.get('count')).toBe('100');
      if (group === 'g-1') {
        if (cursor === null) return json(res, 200, { data: [{ id: 'A1', product_key: 'k-a1', item_group_key: 'g-1' }, { id: 'A2', product_key: 'k-a2', item_group_key: 'g-1' }], next_cursor: 'm' });
        return json(res, 200, { data: [{ id: 'A3', product_key: 'k-a3', item_group_key: 'g-1' }], next_cursor: null });
      }
      if (group === 'g-2') return json(res, 200, { data: [{ id: 'B1', product_key: 'k-b1', item_group_key: 'g-2' }, { id: 'B2', product_key: 'k-b2', item_group_key: 'g-2' }], next_cursor: null });
      if (group !== null) return json(res, 404, { errors: [{ code: 'NOT_FOUND', message: 'no such group' }] });
      if (cursor === null) return json(res, 200, { data: [{ id: 'P1', product_key: 'k-p1' }, { id: 'A1', product_key: 'k-a1', item_group_key: 'g-1' }], next_cursor: 'c2' });
      return json(res, 200, { data: [{ id: 'B1', product_key: 'k-b1', item_group_key: 'g-2' }, { id: 'P2', product_key: 'k-p2', item_group_key: null }], next_cursor: null });
    });
    const listed: string[] = [];
    for await (const page of listAllProducts(client, 'cat')) listed.push(...page.map((p) => `${p.id}=${p.product_key}`));
    expect(listed).toEqual(['P1=k-p1', 'A1=k-a1', 'B1=k-b1', 'P2=k-p2', 'A2=k-a2', 'A3=k-a3', 'B2=k-b2']);
    expect(server.requests.map((r) => r.url.replace(/^\/12\/product_catalogs\/cat\/products\?/, ''))).toEqual([
      'count=100',
      'count=100&cursor=c2',
      'count=100&item_group_key=g-1',
      'count=100&item_group_key=g-1&cursor=m',
      'count=100&item_group_key=g-2',
    ]);
  });
});
