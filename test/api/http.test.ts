/**
 * sendHttp on the run's stop signal: every request, answered or failed, takes its abort
 * listener off the signal again (a run's signal lives as long as the run, and a scheduler's
 * runs retry many requests).
 */
import { createServer, type Server } from 'node:http';
import { getEventListeners } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendHttp } from '../../src/api/http.js';

let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    if (request.url === '/hang-up') request.socket.destroy();
    else if (request.url === '/slow') setTimeout(() => response.end('late'), 2000);
    else response.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("sendHttp and the run's stop signal", () => {
  it('leaves no listener on it after an answer, a hang-up, a timeout or a refused connection', async () => {
    const stop = new AbortController();
    const send = (url: string, timeoutMs = 5000): Promise<unknown> =>
      sendHttp({ method: 'GET', url: new URL(url), headers: {}, timeoutMs, signal: stop.signal }).catch((error: unknown) => error);
    await send(`${base}/ok`);
    await send(`${base}/hang-up`);
    await send(`${base}/slow`, 100);
    await send('http://127.0.0.1:1/refused');
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
  });
});
