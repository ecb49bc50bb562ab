/**
 * An ADSYNC_ADS_URL that names the service wrongly: the operator gets one line saying what is
 * wrong with the address and what to check, never an OpenSSL dump or a 404 that blames the
 * job's audience or catalog, and nothing is sent, removed or deleted.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorLines, summaries, workspacePerTest, type Workspace } from '../helpers/e2e.js';
import { startScriptedServer } from '../helpers/scripted-server.js';
import { catalogIds, catalogJob, feedItem, ids, productRequests, rssFeed } from '../fixtures/catalog/catalog-e2e.js';

const newWorkspace = workspacePerTest();

async function workspace(): Promise<Workspace> {
  const ws = await newWorkspace();
  ws.write('crm.yaml', 'name: crm\naccount_id: emu-account\nsource: { path: crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email }\n');
  ws.write('crm.csv', `Email\n${Array.from({ length: 20 }, (_, i) => `user${i}@example.com`).join('\n')}\n`);
  ws.write('shop.yaml', catalogJob({ source: 'feed.xml' }));
  ws.write('feed.xml', rssFeed(ids(30).map((id) => feedItem(id))));
  return ws;
}

describe('ADSYNC_ADS_URL mistakes', () => {
  it('https:// for a service that speaks http: one line naming the address and the likely cause, no retries, nothing lost', { timeout: 60_000 }, async () => {
    const ws = await workspace();
    // The catalog first gets a state, so that its next run PUTs (the upload) rather than lists.
    expect((await ws.cli(['run', 'shop.yaml'])).code).toBe(0);
    ws.write('feed.xml', rssFeed(ids(40).map((id) => feedItem(id))));
    const https = ws.emulator.url.replace(/^http:/, 'https:');
    const host = new URL(ws.emulator.url).host;
    const hint = `check the scheme (http or https) and the port of ADSYNC_ADS_URL and ADSYNC_API_URL, or of ads_url and api_url in the settings file`;

    const run = await ws.cli(['run', 'crm.yaml', 'shop.yaml', '--json'], { ADSYNC_ADS_URL: https });
    expect(run.code, run.stderr).toBe(1);
    const users = `POST /12/accounts/emu-account/custom_audiences/emu-audience/users failed: no TLS connection to ${host}: its answer is not TLS (wrong version number): the server there may speak http, not https (${hint})`;
    const products = `PUT /12/product_catalogs/emu-catalog/products failed: no TLS connection to ${host}: its answer is not TLS (wrong version number): the server there may speak http, not https (${hint})`;
    expect(errorLines(run.stderr)).toEqual([`adsync: job crm failed: ${users}`, `adsync: job shop failed: ${products}`]);
    expect(run.stderr).not.toMatch(/SSL routines|openssl|\n\s+at /);
    const [crm, shop] = summaries(run);
    expect(crm).toMatchObject({ status: 'failed', added: 0, requests: 1, retries: 0, exit_code: 1, error: users });
    expect(shop).toMatchObject({ status: 'failed', created: 0, deleted: 0, requests: 1, retries: 0, exit_code: 1, error: products });

    // Nothing reached the service; with the right address the next runs send everything.
    expect(productRequests(ws, 'PUT')).toBe(2);
    const fixed = await ws.cli(['run', 'crm.yaml', 'shop.yaml', '--json']);
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(summaries(fixed).map((s) => [s.added, s.created])).toEqual([
      [20, 0],
      [0, 10],
    ]);
    expect(ws.emulator.state().custom_audiences['emu-audience']?.members.email?.length).toBe(20);
    expect(catalogIds(ws)).toEqual(ids(40));
  });

  it('http:// for a service that speaks https: one line saying the server may want https, no retries, nothing lost', { timeout: 60_000 }, async () => {
    const ws = await workspace();
    const tls = await startHttpsServer();
    try {
      const hint = `check the scheme (http or https) and the port of ADSYNC_ADS_URL and ADSYNC_API_URL, or of ads_url and api_url in the settings file`;
      const run = await ws.cli(['run', 'crm.yaml', '--json'], { ADSYNC_ADS_URL: `http://${tls.host}` });
      expect(run.code, run.stderr).toBe(1);
      const error = `POST /12/accounts/emu-account/custom_audiences/emu-audience/users failed: ${tls.host} closed the connection without an answer, and it speaks TLS there: the server may want https, not http (${hint})`;
      expect(summaries(run)[0]).toMatchObject({ status: 'failed', added: 0, requests: 1, retries: 0, exit_code: 1, error });
      expect(errorLines(run.stderr)).toEqual([`adsync: job crm failed: ${error}`]);
      expect(run.stderr).not.toMatch(/socket hang up|retrying API call/);
      // The TLS server never saw an HTTP request (the probe sends nothing but a handshake).
      expect(tls.requests).toBe(0);
    } finally {
      await tls.close();
    }
    const fixed = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(summaries(fixed)[0]).toMatchObject({ status: 'success', added: 20 });
  });

  it('a port nothing listens on (a typo): retried as an outage, then one line saying nothing accepts connections there; nothing lost', { timeout: 60_000 }, async () => {
    const ws = await workspace();
    const closed = await freePort();
    const run = await ws.cli(['run', 'crm.yaml', '--json'], { ADSYNC_ADS_URL: `http://127.0.0.1:${closed}` });
    expect(run.code, run.stderr).toBe(1);
    const [summary] = summaries(run);
    expect(summary).toMatchObject({ status: 'failed', added: 0, requests: 7, retries: 6, exit_code: 1 });
    const error = String(summary?.error);
    expect(error).toMatch(
      new RegExp(
        `^POST /12/accounts/emu-account/custom_audiences/emu-audience/users failed: ECONNREFUSED: nothing accepts connections at 127\\.0\\.0\\.1:${closed} \\(the service is down, or the host or port of the address is wrong\\) \\(gave up after 7 attempts in \\d+\\.\\d s \\(retry\\.retries: 6\\); what was not acknowledged is sent by the next run\\)$`,
      ),
    );
    expect(errorLines(run.stderr)).toEqual([`adsync: job crm failed: ${error}`]);

    const fixed = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(summaries(fixed)[0]).toMatchObject({ status: 'success', added: 20 });
  });

  it('an address that redirects (http:// for an https service): the run stops at the first request with where it points; nothing lost', { timeout: 60_000 }, async () => {
    const ws = await workspace();
    expect((await ws.cli(['run', 'crm.yaml'])).code).toBe(0);
    // Users 0-4 leave, 20-24 join: an Update, then a Delete.
    ws.write('crm.csv', `Email\n${Array.from({ length: 20 }, (_, i) => `user${i + 5}@example.com`).join('\n')}\n`);
    const https = ws.emulator.url.replace(/^http:/, 'https:');
    const redirector = await startScriptedServer((req, res) => {
      res.writeHead(301, { location: `${https}${req.url}?token=not-for-logs`, 'content-type': 'text/html' });
      res.end('<html><body>Moved Permanently</body></html>');
    });
    try {
      const run = await ws.cli(['run', 'crm.yaml', '--json'], { ADSYNC_ADS_URL: redirector.url });
      expect(run.code, run.stderr).toBe(1);
      const error = `POST /12/accounts/emu-account/custom_audiences/emu-audience/users answered HTTP 301, a redirect to ${https} (adsync does not follow redirects: set ADSYNC_ADS_URL and ADSYNC_API_URL (or ads_url and api_url in the settings file) to the service's own address, ${https} here)`;
      expect(summaries(run)[0]).toMatchObject({ status: 'failed', added: 0, removed: 0, requests: 1, retries: 0, exit_code: 1, error });
      expect(errorLines(run.stderr)).toEqual([`adsync: job crm failed: ${error}`]);
      expect(run.stderr).not.toContain('not-for-logs');
      expect(redirector.requests).toHaveLength(1);
    } finally {
      await redirector.close();
    }
    const fixed = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(summaries(fixed)[0]).toMatchObject({ status: 'success', added: 5, removed: 5 });
    expect(ws.emulator.state().custom_audiences['emu-audience']?.members.email?.length).toBe(20);
  });
});

/** A port of 127.0.0.1 that nothing listens on (one just given up by a server of this process). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** An https server on 127.0.0.1 with a self-signed certificate made for the test (openssl); counts the requests it is sent. */
async function startHttpsServer(): Promise<{ host: string; requests: number; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'adsync-tls-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1'], { stdio: 'ignore' });
    const state = { requests: 0 };
    const server = createHttpsServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (_req, res) => {
      state.requests += 1;
      res.writeHead(500).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return {
      host: `127.0.0.1:${port}`,
      get requests() {
        return state.requests;
      },
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
