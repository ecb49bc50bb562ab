import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SourceError } from '../../src/errors.js';
import { readCsv } from '../../src/sources/csv.js';
import { readFeed } from '../../src/sources/index.js';
import { openSource } from '../../src/sources/open.js';
import { errorOf, fixturePath, readAllCsv, readAllFeed } from './helpers.js';

let server: Server;
let base: string;
let csv: Buffer;
let rss: Buffer;
const requests: { url: string; acceptEncoding: string | undefined }[] = [];
const openResponses = new Set<ServerResponse>();

function route(request: IncomingMessage, response: ServerResponse): void {
  const url = new URL(request.url ?? '/', 'http://localhost');
  requests.push({ url: url.pathname + url.search, acceptEncoding: request.headers['accept-encoding'] });
  const redirectsLeft = /^\/hops\/(\d+)$/.exec(url.pathname);
  if (redirectsLeft) {
    const left = Number(redirectsLeft[1]);
    response.writeHead(302, { location: left === 0 ? '/files/crm.csv' : `/hops/${left - 1}` }).end();
    return;
  }
  switch (url.pathname) {
    case '/files/crm.csv':
      response.writeHead(200, { 'content-type': 'text/csv', 'content-length': csv.length }).end(csv);
      return;
    case '/files/crm-gzip.csv': {
      const body = gzipSync(csv);
      response.writeHead(200, { 'content-type': 'text/csv', 'content-encoding': 'gzip', 'content-length': body.length }).end(body);
      return;
    }
    case '/files/crm.csv.gz': {
      const body = gzipSync(csv);
      response.writeHead(200, { 'content-type': 'application/gzip' });
      // Sent in small pieces, without a length: the reader must not need either.
      for (let at = 0; at < body.length; at += 100) response.write(body.subarray(at, at + 100));
      response.end();
      return;
    }
    case '/bad-location':
      // A Location header that is not a URL at all (a broken feed server or proxy).
      response.writeHead(302, { location: 'http://[bad' }).end();
      return;
    case '/moved':
      response.writeHead(301, { location: `${base}/files/crm.csv` }).end();
      return;
    case '/feeds/google':
      response.writeHead(200, { 'content-type': 'application/rss+xml; charset=utf-8' }).end(rss);
      return;
    case '/feeds/unknown':
      response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(csv);
      return;
    case '/session-expired.csv':
      // A sign-in page with status 200, as a feed host serves it once a session has expired.
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>Sign in</body></html>\n');
      return;
    case '/private.csv':
      response.writeHead(403, 'Forbidden').end('no');
      return;
    case '/stall.csv':
      openResponses.add(response);
      response.writeHead(200, { 'content-type': 'text/csv' });
      // More than the first bytes a reader looks at before it starts, then nothing.
      response.write(`email,name\n${'a@x.io,Ann\n'.repeat(1000)}b@x.io,Bob\n`);
      return; // never ends
    case '/cut.csv': {
      const body = Buffer.from(`email,n\n${'x@y.io,1\n'.repeat(20000)}`);
      response.writeHead(200, { 'content-type': 'text/csv', 'content-length': body.length });
      response.write(body.subarray(0, body.length / 2), () => response.destroy());
      return;
    }
    case '/hang.csv':
      openResponses.add(response);
      return; // never answers
    default:
      response.writeHead(404, 'Not Found').end();
  }
}

beforeAll(async () => {
  csv = await readFile(fixturePath('crm-messy.csv'));
  rss = await readFile(fixturePath('merchant-rss.xml'));
  server = createServer(route);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const response of openResponses) response.destroy();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('openSource on http:// URLs (a local server)', () => {
  it('gives the same rows as the file, for a plain body, a gzip Content-Encoding, a redirect, and a .gz body', async () => {
    const fromFile = await readAllCsv(readCsv(await openSource({ path: fixturePath('crm-messy.csv') })));
    for (const path of ['/files/crm.csv', '/files/crm-gzip.csv', '/hops/0', '/moved', '/files/crm.csv.gz']) {
      const opened = await openSource({ path: base + path });
      expect(opened.format).toBe('csv');
      const result = await readAllCsv(readCsv(opened));
      expect({ path, ...result }).toEqual({ path, ...fromFile });
    }
  });

  it('reports raw (compressed) bytes for progress', async () => {
    const opened = await openSource({ path: `${base}/files/crm-gzip.csv` });
    expect(opened.sizeBytes).toBe(gzipSync(csv).length);
    await readAllCsv(readCsv(opened));
    expect(opened.bytesRead()).toBe(opened.sizeBytes);
    const plain = await openSource({ path: `${base}/files/crm.csv` });
    expect(plain.sizeBytes).toBe(csv.length);
  });

  it('asks for gzip', async () => {
    await readAllCsv(readCsv(await openSource({ path: `${base}/files/crm.csv` })));
    expect(requests.at(-1)?.acceptEncoding).toContain('gzip');
  });

  it('follows up to 5 redirects and refuses a sixth', async () => {
    const five = await openSource({ path: `${base}/hops/4` });
    expect((await readAllCsv(readCsv(five))).rows).toHaveLength(6);
    const error = await errorOf(() => openSource({ path: `${base}/hops/5` }));
    expect(error).toBeInstanceOf(SourceError);
    expect(error.message).toBe(`${base}/hops/5 redirects more than 5 times`);
  });

  it('refuses a redirect to a Location that is not a URL with a SourceError that names no secret of the feed URL', async () => {
    const port = new URL(base).port;
    const error = await errorOf(() => openSource({ path: `http://user:hunter2@127.0.0.1:${port}/bad-location?token=s3cr3t` }));
    expect(error).toBeInstanceOf(SourceError);
    expect(error.message).toBe(`http://***:***@127.0.0.1:${port}/bad-location?token=*** redirects to a Location that is not a valid URL`);
    // Not even in the cause, which a debug log would show.
    expect(JSON.stringify(error, Object.getOwnPropertyNames(error))).not.toMatch(/hunter2|s3cr3t/);
    expect(error.cause).toBeUndefined();
  });

  it('refuses a source.path that is not a valid URL without repeating it (it may hold a password or a token)', async () => {
    for (const path of ['https://feeds:pass/word@shop.example.com/feed.xml?token=s3cr3t', 'http://user:hunter2@127.0.0.1:99999/feed.xml?token=s3cr3t']) {
      const error = await errorOf(() => openSource({ path }));
      expect(error).toBeInstanceOf(SourceError);
      expect(error.message).toBe('source.path is not a valid URL (not repeated here: it may hold a password or a token)');
      expect(JSON.stringify(error, Object.getOwnPropertyNames(error))).not.toMatch(/hunter2|pass\/word|s3cr3t/);
    }
  });

  it('names the URL and the status of a non-2xx answer', async () => {
    const missing = await errorOf(() => openSource({ path: `${base}/gone.csv` }));
    expect(missing).toBeInstanceOf(SourceError);
    expect(missing.message).toBe(`${base}/gone.csv answered HTTP 404 Not Found`);
    const redirected = await errorOf(() => openSource({ path: `${base}/hops/0`.replace('/hops/0', '/moved-to-missing') }));
    expect(redirected.message).toContain('answered HTTP 404');
  });

  it('keeps credentials and query values out of messages', async () => {
    const error = await errorOf(() => openSource({ path: `http://user:hunter2@127.0.0.1:${new URL(base).port}/private.csv?token=s3cr3t&x=1` }));
    expect(error).toBeInstanceOf(SourceError);
    expect(error.message).toBe(`http://***:***@127.0.0.1:${new URL(base).port}/private.csv?token=***&x=*** answered HTTP 403 Forbidden`);
    expect(error.message).not.toContain('s3cr3t');
    expect(error.message).not.toContain('hunter2');
  });

  it('refuses an HTML page answered with 200 (a sign-in or error page) with a SourceError naming the URL, not a header "<!DOCTYPE html>"', async () => {
    const error = await errorOf(async () => readAllCsv(readCsv(await openSource({ path: `${base}/session-expired.csv?key=secret` }))));
    expect(error).toBeInstanceOf(SourceError);
    expect(error.message).toBe(`${base}/session-expired.csv?key=*** is an HTML page, not a CSV, TSV or XML file (a login or error page instead of the export?)`);
  });

  it('takes the format from the Content-Type when the URL has no extension', async () => {
    const opened = await openSource({ path: `${base}/feeds/google` });
    expect(opened.format).toBe('xml');
    const result = await readAllFeed(readFeed(opened));
    expect(result.error).toBeUndefined();
    expect(result.items.map((item) => item.fields.id)).toEqual(['00123', '0000000042', 'minimal-1']);
    const unknown = await errorOf(() => openSource({ path: `${base}/feeds/unknown` }));
    expect(unknown).toBeInstanceOf(SourceError);
    expect(unknown.message).toBe(`cannot tell the format of ${base}/feeds/unknown: it has no extension`);
  });

  it('times out a server that does not answer', async () => {
    const started = Date.now();
    const error = await errorOf(() => openSource({ path: `${base}/hang.csv` }, { timeoutMs: 200 }));
    expect(error).toBeInstanceOf(SourceError);
    expect(error.message).toBe(`${base}/hang.csv did not answer within 200 ms`);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('times out a body that stalls while the reader waits for it, after the rows that came', async () => {
    const reader = readCsv(await openSource({ path: `${base}/stall.csv` }, { timeoutMs: 200 }));
    let rows = 0;
    const error = await errorOf(async () => {
      for await (const batch of reader) rows += batch.rows.length;
    });
    expect(error).toBeInstanceOf(SourceError);
    expect(error.message).toMatch(new RegExp(`^${base}/stall.csv sent no data for 200 ms after \\d+ bytes$`));
    // The last row is still waiting for the byte after its line break, which never comes.
    expect(rows).toBe(1000);
  });

  it('ends a body cut short by the server with a SourceError after the rows that came', async () => {
    const reader = readCsv(await openSource({ path: `${base}/cut.csv` }));
    let rows = 0;
    const error = await errorOf(async () => {
      for await (const batch of reader) rows += batch.rows.length;
    });
    expect(error).toBeInstanceOf(SourceError);
    expect(error.message).toMatch(new RegExp(`^the connection broke while reading ${base}/cut.csv after line \\d+ \\(aborted\\)$`));
    expect(rows).toBeGreaterThan(0);
    expect(rows).toBeLessThan(20000);
  });

  it('stops with a SourceError when the signal aborts', async () => {
    const controller = new AbortController();
    const reader = readCsv(await openSource({ path: `${base}/stall.csv` }, { signal: controller.signal }));
    const error = await errorOf(async () => {
      for await (const batch of reader) if (batch.rows.length > 0) controller.abort();
    });
    expect(error).toBeInstanceOf(SourceError);
    expect(error.message).toMatch(new RegExp(`^reading ${base}/stall.csv was aborted after line \\d+$`));
  });

  it('refuses a connection that cannot be made', async () => {
    const error = await errorOf(() => openSource({ path: 'http://127.0.0.1:1/feed.xml' }));
    expect(error).toBeInstanceOf(SourceError);
    expect(error.message).toMatch(/^cannot read http:\/\/127\.0\.0\.1:1\/feed\.xml: .*ECONNREFUSED/);
  });
});
