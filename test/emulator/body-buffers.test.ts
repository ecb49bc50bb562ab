/**
 * Request bodies read into reused buffers (http-body.ts, BodyBufferPool): the user batches,
 * whose handlers keep nothing of the body, get a pooled Buffer back from request to request;
 * every batch must still be applied exactly as sent, one after the other, concurrently, a
 * shorter one after a longer one. A product PUT keeps its body (the stored attributes are read
 * from it) and must never get a pooled Buffer.
 */
import http from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BodyBufferPool } from '../../src/emulator/http-body.js';
import type { EmulatorHandle } from '../../src/emulator/index.js';
import { authorizationFor, product, sha256, signedRaw, start } from './helpers.js';

let emu: EmulatorHandle;

beforeAll(async () => {
  emu = await start({ rateLimits: 'off' });
});
afterAll(() => emu.close());
beforeEach(() => emu.reset());

const USERS_PATH = '/12/accounts/emu-account/custom_audiences/emu-audience/users';
const h = (n: number) => sha256(`user-${n}`);

/** A batch adding emails h(from)..h(to - 1) and partner ids crm-from..; padded with spaces to about `bytes`. */
function batch(from: number, to: number, bytes = 0): Buffer {
  const users = [];
  for (let i = from; i < to; i++) users.push({ email: [h(i)], partner_user_id: [`crm-${i}`] });
  const json = JSON.stringify([{ operation_type: 'Update', params: { users } }]);
  return Buffer.from(json.slice(0, -1) + ' '.repeat(Math.max(0, bytes - json.length)) + ']');
}

/** Sends the body in pieces of `piece` bytes, each written after the previous one was flushed (so it arrives in several chunks). */
function postInPieces(path: string, body: Buffer, piece: number, method = 'POST'): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${emu.url}${path}`, {
      method,
      agent: false,
      headers: { authorization: authorizationFor(emu, { method, path }), 'content-type': 'application/json', 'content-length': String(body.length) },
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown }));
    });
    req.on('error', reject);
    const write = (at: number): void => {
      if (at >= body.length) {
        req.end();
        return;
      }
      req.write(body.subarray(at, at + piece), () => setImmediate(() => write(at + piece)));
    };
    write(0);
  });
}

function members(): Record<string, string[]> {
  return emu.state().custom_audiences['emu-audience']?.members ?? {};
}

describe('user batches read into reused buffers', () => {
  it('applies each batch exactly as sent: a long one, a shorter one after it, several at once', async () => {
    const long = await postInPieces(USERS_PATH, batch(0, 300, 1_500_000), 100_000);
    expect(long).toMatchObject({ status: 200, json: { data: { success_count: 300, total_count: 300 } } });
    // Shorter than the first: what the first left in the buffer past its end must not be read.
    const short = await postInPieces(USERS_PATH, batch(300, 310), 1000);
    expect(short).toMatchObject({ status: 200, json: { data: { success_count: 10, total_count: 10 } } });
    const together = await Promise.all([postInPieces(USERS_PATH, batch(310, 400, 400_000), 50_000), postInPieces(USERS_PATH, batch(400, 500, 300_000), 30_000), postInPieces(USERS_PATH, batch(500, 520), 700)]);
    expect(together.map((a) => a.status)).toEqual([200, 200, 200]);
    const all = Array.from({ length: 520 }, (_, i) => i);
    expect(members().email).toEqual(all.map(h).sort());
    expect(members().partner_user_id).toEqual(all.map((i) => `crm-${i}`).sort());
  });

  it('answers a bad batch in a reused buffer with its own error, and the next batch normally', async () => {
    await postInPieces(USERS_PATH, batch(0, 100, 1_000_000), 100_000);
    const bad = Buffer.from(JSON.stringify([{ operation_type: 'Update', params: { users: [{ email: ['not-a-hash'] }] } }]));
    const answer = await postInPieces(USERS_PATH, bad, 10);
    expect(answer).toMatchObject({ status: 400, json: { operation_errors: [[{ code: 'INVALID_PARAMETER', parameter: 'users[0].email[0]' }]] } });
    expect(await postInPieces(USERS_PATH, batch(100, 101), 50)).toMatchObject({ status: 200 });
    expect(members().email).toHaveLength(101);
  });

  it('leaves a product PUT its own body: the stored attributes stay as sent after user batches', async () => {
    const path = '/12/product_catalogs/emu-catalog/products';
    const products = Array.from({ length: 25 }, (_, i) => product(`sku-${i}`, { title: `Title ${i}` }));
    // Spaces make it ~200 KB, so that it arrives in several chunks.
    const json = JSON.stringify({ products });
    const put = await postInPieces(path, Buffer.from(`${json.slice(0, -1)}${' '.repeat(200_000)}}`), 5000, 'PUT');
    expect(put).toMatchObject({ status: 200, json: { data: { products_response: products.map(() => ({ status: 'CREATE_SUCCESS' })) } } });
    for (let i = 0; i < 3; i++) await postInPieces(USERS_PATH, batch(i * 100, i * 100 + 100, 600_000), 60_000);
    const list = await signedRaw(emu, { method: 'GET', path: `${path}?count=100` });
    const titles = (list.json as { data: { title: string }[] }).data.map((p) => p.title);
    expect(titles.sort()).toEqual(products.map((p) => String(p.title)).sort());
  });
});

describe('BodyBufferPool', () => {
  it('hands a released buffer out again, keeps at most `keep`, and gives a fresh one to a body past its capacity', () => {
    const pool = new BodyBufferPool(1000, 1);
    const a = pool.take(10);
    const b = pool.take(20);
    expect(a.body.buffer).not.toBe(b.body.buffer);
    a.release();
    a.release();
    b.release();
    const c = pool.take(1000);
    expect(c.body.buffer).toBe(a.body.buffer);
    expect(c.body.length).toBe(1000);
    expect(pool.take(5).body.buffer).not.toBe(b.body.buffer);
    const big = pool.take(1001);
    expect(big.body.length).toBe(1001);
    big.release();
    c.release();
    expect(pool.take(1).body.buffer).toBe(a.body.buffer);
  });
});
