/**
 * A webhook receiver on 127.0.0.1 for the alert tests: records every request as it arrives and
 * answers 204 (or `answer`: a webhook that redirects, or fails), after `hold` has settled when
 * one is given (a webhook slow to answer).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';

export interface HookCall {
  method: string | undefined;
  url: string | undefined;
  type: string | undefined;
  userAgent: string | undefined;
  body: string;
}

export interface Hook {
  /** The webhook address with this path (and query). */
  url(path: string): string;
  calls: HookCall[];
  /** Waits until `count` requests have arrived (or fails, listing those that did). */
  waitForCalls(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startHook(options: { hold?: Promise<void>; answer?: { status: number; headers?: Record<string, string> } } = {}): Promise<Hook> {
  const calls: HookCall[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      calls.push({ method: req.method, url: req.url, type: req.headers['content-type'], userAgent: req.headers['user-agent'], body });
      void (options.hold ?? Promise.resolve()).then(() => res.writeHead(options.answer?.status ?? 204, options.answer?.headers).end());
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    calls,
    async waitForCalls(count, timeoutMs = 15_000) {
      const until = Date.now() + timeoutMs;
      while (calls.length < count && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(calls.length, `${count} webhook calls; got:\n${calls.map((c) => `${c.url ?? ''} ${c.body}`).join('\n')}`).toBeGreaterThanOrEqual(count);
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A port on 127.0.0.1 nothing listens on (connection refused): a webhook that is down. */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}
