/**
 * http(s) sources through the real CLI: a feed or export whose server stalls or never answers.
 * The job's request_timeout_ms is the time the server has to answer and to send more data.
 * SIGTERM stops such a run at once (it ends `interrupted`, nothing is sent), instead of waiting
 * for the download's timeouts.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../helpers/cli.js';
import { collect, createWorkspace, type Workspace } from '../helpers/e2e.js';
import { crmExport, expectNoStackTrace, feedOf, range, summaryOf, waitFor } from '../reliability/support.js';

let ws: Workspace;
let server: Server;
let base: string;
const held = new Set<ServerResponse>();
const requested: string[] = [];

beforeAll(async () => {
  ws = await createWorkspace();
  server = createServer((req, res) => {
    requested.push(req.url ?? '');
    held.add(res);
    switch (req.url) {
      case '/stall/feed.xml': {
        // The first half of a feed, then nothing: the server stalls.
        const feed = feedOf(range(1, 40).map((n) => ({ n, price: '10.00 USD' })));
        res.writeHead(200, { 'content-type': 'application/rss+xml' });
        res.write(feed.slice(0, feed.length / 2));
        return;
      }
      case '/stall/crm.csv': {
        const csv = crmExport(range(1, 400));
        res.writeHead(200, { 'content-type': 'text/csv' });
        res.write(csv.slice(0, csv.length / 2));
        return;
      }
      default:
        return; // never answers
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const res of held) res.destroy();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await ws.close();
});

const catalogJob = (path: string): string => `account_id: emu-account\nsource: { path: "${base}${path}" }\ncatalog:\n  product_catalog_id: emu-catalog\n`;
const audienceJob = (path: string): string =>
  `account_id: emu-account\nsource: { path: "${base}${path}" }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email, partner_user_id: Id }\n`;

/** Starts `adsync run <job> --json`, sends SIGTERM once the server has the request, and waits (at most 10 s) for the exit. */
async function stopWhileDownloading(job: string, path: string): Promise<{ result: CliResult; ms: number }> {
  const child = ws.spawn(['run', job, '--json']);
  const done = collect(child);
  await waitFor(() => requested.includes(path), 10_000, `the request for ${path}`);
  // Let the run get to waiting for the data.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const signalled = Date.now();
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  const result = await done;
  clearTimeout(timer);
  return { result, ms: Date.now() - signalled };
}

describe('an http(s) source whose server stalls: SIGTERM stops the run at once', () => {
  for (const [name, path] of [
    ['a catalog feed stalled in the middle of its body', '/stall/feed.xml'],
    ['an audience export stalled in the middle of its body', '/stall/crm.csv'],
    ['a catalog feed whose server never answers', '/silent/feed.xml'],
    ['an audience export whose server never answers', '/silent/crm.csv'],
  ] as const) {
    it(name, { timeout: 30_000 }, async () => {
      const file = `${path.split('/')[1] ?? ''}-${path.endsWith('.xml') ? 'feed' : 'crm'}.yaml`;
      ws.write(file, path.endsWith('.xml') ? catalogJob(path) : audienceJob(path));
      const before = ws.emulator.stateSummary().requests.total;
      const { result, ms } = await stopWhileDownloading(file, path);
      expect(result.signal, 'still running 10 s after SIGTERM').toBeNull();
      expect(ms).toBeLessThan(5000);
      expectNoStackTrace(result);
      expect(result.code).toBe(1);
      expect(summaryOf(result)).toMatchObject({ status: 'interrupted', created: 0, deleted: 0, added: 0, removed: 0 });
      const read = Number(summaryOf(result).read);
      expect(summaryOf(result).error).toBe(`stopped by a signal while reading the source (${read.toLocaleString('en-US')} ${path.endsWith('.xml') ? 'items' : 'rows'} read); nothing was sent`);
      expect(ws.emulator.stateSummary().requests.total).toBe(before);
    });
  }
});

describe('an http(s) source whose server stalls: request_timeout_ms is its time limit', () => {
  for (const [name, path, message] of [
    ['a catalog feed whose server never answers', '/silent/timeout.xml', '/silent/timeout.xml did not answer within 1000 ms'],
    ['an audience export stalled in the middle of its body', '/stall/crm.csv', '/stall/crm.csv sent no data for 1000 ms after '],
  ] as const) {
    it(name, { timeout: 30_000 }, async () => {
      const file = path.endsWith('.xml') ? 'timeout-feed.yaml' : 'timeout-crm.yaml';
      ws.write(file, `${path.endsWith('.xml') ? catalogJob(path) : audienceJob(path)}request_timeout_ms: 1000\n`);
      const started = Date.now();
      const result = await ws.cli(['run', file, '--json']);
      expect(Date.now() - started).toBeLessThan(10_000);
      expectNoStackTrace(result);
      expect(result.code).toBe(1);
      const summary = summaryOf(result);
      expect(summary.status).toBe('failed');
      expect(String(summary.error)).toContain(base + message);
      expect(String(summary.error)).toMatch(/request_timeout_ms/);
    });
  }
});
