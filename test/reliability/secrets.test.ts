/**
 * Secrets stay secret. An emulator with its own distinctive credentials; every command of
 * adsync run against it at --log-level trace, on success and failure paths: validate, run
 * (audience and catalog, with rejects written with their values, --dry-run, --full, a 404
 * that sends an alert), backfill, runs, schedule (briefly, stopped by SIGTERM), unlock, auth
 * login in two steps with a wrong and a right PIN, a job using the stored profile, a
 * credentials file others can read, auth revoke, a run with the revoked token, a run with a
 * wrong token secret, and the demo. Then every byte they produced is searched for the
 * secrets: stdout, stderr, every file under the workspace (rejects files, the state
 * database, its -wal and -shm), every file under HOME but the credentials file, and the
 * bodies the alert webhook received. None is found.
 *
 * The secrets: the consumer secret, the access token and its secret, a wrong token secret,
 * and those the PIN flow creates (the request token secret, the new access token and its
 * secret). The consumer key is not a secret (it identifies the app). `adsync emulator` is
 * not among those commands: it is the service, and its banner prints its own seeded credentials
 * by design (its request log, --log-requests, is checked apart); nor is `auth login --print`,
 * whose purpose is to print the new tokens (checked apart: on stdout only).
 */
import { chmodSync, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseEnv, startCli, type CliResult } from '../helpers/cli.js';
import { collect, createWorkspace, summaries, type Workspace } from '../helpers/e2e.js';
import { crmExport, expectNoStackTrace, feedOf, range, waitFor } from './support.js';

const CREDENTIALS = {
  consumerKey: 'ck-reliability-app-key',
  consumerSecret: 'CsSecret0reliabilityZ9q4W1x',
  accessToken: 'AtSecret0reliabilityB7m2K8p',
  accessTokenSecret: 'AtsSecret0reliabilityN5v3J6r',
};
const WRONG_TOKEN_SECRET = 'WrongSecret0reliabilityH2d8L1';
/** A feed behind basic auth and a query token: the job file holds them, nothing else may. */
const FEED_PASSWORD = 'FeedPassword0reliabilityQ4z7';
const FEED_TOKEN = 'FeedToken0reliabilityM3c9T2';

let ws: Workspace;
let hook: http.Server;
let hookUrl: string;
let feedUrl: string;
let feedDown = true;
const hookBodies: string[] = [];
const outputs: { args: string[]; result: CliResult }[] = [];
/** Secrets made during the test (the PIN flow's). */
const madeSecrets: string[] = [];

beforeAll(async () => {
  ws = await createWorkspace({ credentials: CREDENTIALS });
  hook = http.createServer((req, res) => {
    // An Ads API (or a proxy before it) that echoes the request, its Authorization header
    // included, in the error message of every operation.
    if (req.url?.startsWith('/12/')) {
      const echo = `request was ${req.method ?? ''} ${req.url} with ${req.headers.authorization ?? ''}`;
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ errors: [], operation_errors: [[{ code: 'INVALID_PARAMETER', message: `bad user; ${echo}` }]] }));
      return;
    }
    if (req.url?.startsWith('/feed.xml')) {
      if (feedDown) res.writeHead(503).end('down');
      else res.writeHead(200, { 'content-type': 'application/rss+xml' }).end(feedOf(range(1, 5).map((n) => ({ n, price: '10.00 USD' }))));
      return;
    }
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      hookBodies.push(body);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
  const port = (hook.address() as AddressInfo).port;
  hookUrl = `http://127.0.0.1:${port}/hooks/adsync`;
  feedUrl = `http://feeds:${FEED_PASSWORD}@127.0.0.1:${port}/feed.xml?token=${FEED_TOKEN}`;
});
afterAll(async () => {
  await ws.close();
  await new Promise<void>((resolve) => hook.close(() => resolve()));
});

async function adsync(args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  const result = await ws.cli(['--log-level', 'trace', ...args], env);
  outputs.push({ args, result });
  expectNoStackTrace(result);
  return result;
}

const credentialsFile = (): string => join(ws.env.XDG_CONFIG_HOME ?? '', 'adsync', 'credentials.json');
const storedProfile = (name: string): Record<string, string> =>
  (JSON.parse(readFileSync(credentialsFile(), 'utf8')) as { profiles: Record<string, Record<string, string>> }).profiles[name] ?? {};

function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    const st = statSync(path);
    return st.isDirectory() ? listFiles(path) : st.isFile() ? [path] : [];
  });
}

/** Every form a secret could be written in: as is, percent-encoded, base64 (a Basic header). */
function forms(secret: string): string[] {
  return [...new Set([secret, encodeURIComponent(secret), Buffer.from(secret).toString('base64')])];
}

describe('no secret in any output, file, database or alert', () => {
  it('runs every command, on success and failure paths', { timeout: 120_000 }, async () => {
    const audienceJob = (extra = '') =>
      `name: crm\naccount_id: emu-account\nschedule: "* * * * * *"\nalerts: { webhook_url: "${hookUrl}", reject_ratio: 0.01 }\nsource: { path: ../exports/crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email, partner_user_id: Id }\n${extra}`;
    ws.write('jobs/crm.yaml', audienceJob());
    ws.write('exports/crm.csv', `${crmExport(range(1, 50))},not-an-email\n`);
    ws.write('jobs/shop.yaml', 'name: shop\naccount_id: emu-account\nsource: { path: ../feed.xml }\ncatalog:\n  product_catalog_id: emu-catalog\n');
    ws.write('feed.xml', feedOf(range(1, 10).map((n) => ({ n, price: n === 3 ? '10,00 EUR' : '10.00 USD' }))));
    ws.write('missing.yaml', `account_id: emu-account\nalerts: { webhook_url: "${hookUrl}" }\nsource: { path: exports/crm.csv }\naudience:\n  custom_audience_id: no-such-audience\n  identifiers: { email: Email }\n`);
    ws.write('acme.yaml', 'name: acme\naccount_id: emu-account\ncredentials: acme\nsource: { path: exports/crm.csv }\naudience:\n  do_not_reach_list_id: emu-dnr\n  identifiers: { email: Email }\n');
    ws.write('history.csv', crmExport(range(100, 300)));
    ws.write('remote.yaml', `name: remote\naccount_id: emu-account\nalerts: { webhook_url: "${hookUrl}" }\nsource: { path: "${feedUrl}" }\ncatalog:\n  product_catalog_id: emu-catalog\n  mode: upsert\n`);
    ws.write('bad.yaml', 'account_id: emu-account\nsource: { path: x.csv }\naudience: { custom_audience_id: x, identifers: { email: Email } }\n');

    expect((await adsync(['validate', 'jobs/crm.yaml', 'jobs/shop.yaml'])).code).toBe(0);
    expect((await adsync(['run', 'jobs/crm.yaml', 'jobs/shop.yaml', '--json', '--rejects-with-values'])).code).toBe(0);
    expect((await adsync(['run', 'jobs/crm.yaml', '--dry-run', '--json'])).code).toBe(0);
    expect((await adsync(['run', 'jobs/crm.yaml', '--full'])).code).toBe(0);
    expect((await adsync(['run', 'missing.yaml', '--json'])).code).toBe(1);
    expect((await adsync(['run', 'bad.yaml'])).code).toBe(2);
    // The service's refusals go to the rejects file: what it echoes of the request is scrubbed.
    ws.write('echo.yaml', 'name: echo\naccount_id: emu-account\nsource: { path: exports/crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  mode: add\n  identifiers: { email: Email }\n');
    const echoed = await adsync(['run', 'echo.yaml', '--json', '--full'], { ADSYNC_ADS_URL: hookUrl.replace('/hooks/adsync', '') });
    const echoRejects = readFileSync(String(summaries(echoed)[0]?.rejects_file), 'utf8');
    expect(echoRejects).toContain('bad user; request was POST /12/accounts/emu-account/custom_audiences/emu-audience/users with OAuth ');
    expect(echoRejects).toContain('oauth_token=""[redacted]""');
    expect((await adsync(['backfill', 'jobs/crm.yaml', '--source', 'history.csv', '--json'])).code).toBe(0);
    // A feed behind basic auth and a query token: down (the run fails, an alert is sent), then up.
    const down = await adsync(['run', 'remote.yaml', '--json']);
    expect(down.code).toBe(1);
    expect(down.stderr).toContain('answered HTTP 503');
    feedDown = false;
    expect((await adsync(['validate', 'remote.yaml'])).code).toBe(0);
    expect((await adsync(['run', 'remote.yaml', '--json'])).code).toBe(0);
    expect((await adsync(['runs'])).code).toBe(0);
    expect((await adsync(['runs', '--json', '--limit', '100'])).code).toBe(0);

    // The scheduler, until it has run the job once, stopped by SIGTERM.
    const child = ws.spawn(['--log-level', 'trace', 'schedule', '--jobs', 'jobs']);
    const scheduled = collect(child);
    let log = '';
    child.stderr?.on('data', (d: Buffer) => (log += d.toString()));
    await waitFor(() => log.includes('"msg":"run finished"'), 20_000, 'a scheduled run');
    child.kill('SIGTERM');
    const schedule = await scheduled;
    outputs.push({ args: ['schedule'], result: schedule });
    expect(schedule.code, schedule.stderr).toBe(0);
    expect(schedule.stderr).toContain('"msg":"run finished"');

    expect((await adsync(['unlock', 'crm'])).code).toBeLessThanOrEqual(1);

    // A wrong token secret: 401, exit 3.
    const wrong = await adsync(['run', 'jobs/crm.yaml', '--full'], { ADSYNC_ACCESS_TOKEN_SECRET: WRONG_TOKEN_SECRET });
    expect(wrong.code).toBe(3);
    expect(wrong.stderr).toContain('authentication failed');

    // The PIN flow in two steps, a wrong PIN first.
    const acmeEnv = { ADSYNC_ACME_CONSUMER_KEY: CREDENTIALS.consumerKey, ADSYNC_ACME_CONSUMER_SECRET: CREDENTIALS.consumerSecret };
    const step1 = await adsync(['auth', 'login', '--profile', 'acme'], acmeEnv);
    expect(step1.code, step1.stderr).toBe(0);
    const pending = storedProfile('acme');
    expect(pending.pending_request_token_secret).toMatch(/.{6,}/);
    madeSecrets.push(pending.pending_request_token_secret ?? '');
    expect((await adsync(['auth', 'login', '--profile', 'acme', '--pin', '0000000'], acmeEnv)).code).not.toBe(0);
    const { pin } = (await (await fetch(`${ws.emulator.url}/_emulator/pin?oauth_token=${encodeURIComponent(pending.pending_request_token ?? '')}`)).json()) as { pin: string };
    const step2 = await adsync(['auth', 'login', '--profile', 'acme', '--pin', pin], acmeEnv);
    expect(step2.code, step2.stderr).toBe(0);
    // The credentials file: created 0600 in a 0700 folder, holding the new tokens.
    expect(statSync(credentialsFile()).mode & 0o777).toBe(0o600);
    expect(statSync(join(credentialsFile(), '..')).mode & 0o777).toBe(0o700);
    const acme = storedProfile('acme');
    expect(acme.access_token).toMatch(/.{6,}/);
    expect(acme.access_token_secret).toMatch(/.{6,}/);
    madeSecrets.push(acme.access_token ?? '', acme.access_token_secret ?? '');

    expect((await adsync(['run', 'acme.yaml', '--json'])).code).toBe(0);

    // A credentials file others can read is refused (exit 2), without reading it. (--full: a
    // run with nothing to send never needs the credentials.)
    chmodSync(credentialsFile(), 0o644);
    const exposed = await adsync(['run', 'acme.yaml', '--full']);
    expect(exposed.code).toBe(2);
    expect(exposed.stderr).toMatch(/credentials file \S+credentials\.json can be read by others \(mode 644\); adsync will not use it/);
    chmodSync(credentialsFile(), 0o640);
    expect((await adsync(['run', 'acme.yaml', '--full'])).code).toBe(2);
    chmodSync(credentialsFile(), 0o600);

    expect((await adsync(['auth', 'revoke', '--profile', 'acme'])).code).toBe(0);
    // The revoked token, given through the environment: 401 code 89, exit 3.
    const revoked = await adsync(['run', 'acme.yaml', '--full'], { ADSYNC_ACME_ACCESS_TOKEN: acme.access_token, ADSYNC_ACME_ACCESS_TOKEN_SECRET: acme.access_token_secret });
    expect(revoked.code).toBe(3);
    expect(revoked.stderr).toContain('the access token was revoked (HTTP 401, code 89)');

    expect((await adsync(['demo', '--json'])).code).toBe(0);

    // The alert webhook was called (the 404 failure and the reject ratio).
    expect(hookBodies.length).toBeGreaterThanOrEqual(2);
  });

  it('finds none of the secrets anywhere', () => {
    const secrets = [CREDENTIALS.consumerSecret, CREDENTIALS.accessToken, CREDENTIALS.accessTokenSecret, WRONG_TOKEN_SECRET, FEED_PASSWORD, FEED_TOKEN, ...madeSecrets];
    expect(madeSecrets).toHaveLength(3);
    const haystacks: { where: string; text: Buffer }[] = [
      ...outputs.flatMap(({ args, result }) => [
        { where: `stdout of adsync ${args.join(' ')}`, text: Buffer.from(result.stdout) },
        { where: `stderr of adsync ${args.join(' ')}`, text: Buffer.from(result.stderr) },
      ]),
      ...hookBodies.map((body, i) => ({ where: `alert webhook body ${i + 1}`, text: Buffer.from(body) })),
      // The job file holds the feed's URL, by design.
      ...listFiles(ws.dir)
        .filter((file) => !file.endsWith('/remote.yaml'))
        .map((file) => ({ where: file, text: readFileSync(file) })),
      ...listFiles(ws.env.HOME ?? '')
        .filter((file) => file !== credentialsFile())
        .map((file) => ({ where: file, text: readFileSync(file) })),
    ];
    // What was searched: the state database, its WAL, the rejects files (with values).
    const files = haystacks.map((h) => h.where);
    expect(files).toContain(ws.statePath);
    expect(files.some((f) => f.includes('/rejects/crm/'))).toBe(true);
    expect(files.some((f) => f.includes('/rejects/shop/'))).toBe(true);
    expect(outputs.length).toBeGreaterThanOrEqual(20);

    const found: string[] = [];
    for (const { where, text } of haystacks) {
      for (const secret of secrets) for (const form of forms(secret)) if (text.includes(form)) found.push(`${where} holds ${form}`);
    }
    expect(found).toEqual([]);
  });

  it('auth login --print writes the new tokens to stdout only', async () => {
    const acmeEnv = { ADSYNC_ACME_CONSUMER_KEY: CREDENTIALS.consumerKey, ADSYNC_ACME_CONSUMER_SECRET: CREDENTIALS.consumerSecret };
    const step1 = await ws.cli(['--log-level', 'trace', 'auth', 'login', '--profile', 'acme'], acmeEnv);
    const pending = storedProfile('acme');
    const { pin } = (await (await fetch(`${ws.emulator.url}/_emulator/pin?oauth_token=${encodeURIComponent(pending.pending_request_token ?? '')}`)).json()) as { pin: string };
    const printed = await ws.cli(['--log-level', 'trace', 'auth', 'login', '--profile', 'acme', '--pin', pin, '--print'], acmeEnv);
    expect(printed.code, printed.stderr).toBe(0);
    const token = /ADSYNC_ACME_ACCESS_TOKEN='([^']+)'/.exec(printed.stdout)?.[1] ?? '';
    const secret = /ADSYNC_ACME_ACCESS_TOKEN_SECRET='([^']+)'/.exec(printed.stdout)?.[1] ?? '';
    expect(token).toMatch(/.{6,}/);
    for (const value of [token, secret, CREDENTIALS.consumerSecret, pending.pending_request_token_secret ?? '']) {
      expect(printed.stderr).not.toContain(value);
      expect(step1.stderr + step1.stdout).not.toContain(value);
      expect(readFileSync(credentialsFile(), 'utf8')).not.toContain(value === CREDENTIALS.consumerSecret ? '\u0000' : value);
    }
  });

  it(
    'a webhook URL whose path is its secret (as Slack\'s are) never appears in the log, even when the alert cannot be delivered',
    async () => {
      const secretPath = '/hooks/HookPathSecret0reliabilityV8n1';
      const down = http.createServer((_req, res) => res.writeHead(503).end());
      await new Promise<void>((resolve) => down.listen(0, '127.0.0.1', resolve));
      try {
        const url = `http://127.0.0.1:${(down.address() as AddressInfo).port}${secretPath}`;
        ws.write('alerting.yaml', `name: alerting\naccount_id: emu-account\nalerts: { webhook_url: "${url}" }\nsource: { path: exports/crm.csv }\naudience:\n  custom_audience_id: no-such-audience\n  identifiers: { email: Email }\n`);
        const result = await ws.cli(['run', 'alerting.yaml']);
        expect(result.code).toBe(1);
        expect(result.stderr).toContain('alert could not be delivered');
        // The logger names only the webhook's origin, on purpose: the path must not appear either.
        const leak = result.stderr.split('\n').find((line) => line.includes('HookPathSecret0reliability'));
        if (leak !== undefined) throw new Error(`log line names the webhook path secret: ${leak}`);
      } finally {
        await new Promise<void>((resolve) => down.close(() => resolve()));
      }
    },
    30_000,
  );

  it('auth login: a platform that quotes the request (its Authorization header, its URL) in a refusal of the PIN: the request token, its secret and the PIN are in no output', { timeout: 30_000 }, async () => {
    const own = await createWorkspace({ credentials: CREDENTIALS });
    // The platform's OAuth endpoints, refusing the exchange with the request as they got it.
    const echo = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const message = `Could not authenticate you: ${req.method ?? ''} ${req.url ?? ''} with ${req.headers.authorization ?? ''}`;
        res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ errors: [{ code: 32, message }] }));
      });
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    try {
      const acmeEnv = { ADSYNC_ACME_CONSUMER_KEY: CREDENTIALS.consumerKey, ADSYNC_ACME_CONSUMER_SECRET: CREDENTIALS.consumerSecret };
      const file = join(own.dir, 'credentials.json');
      const step1 = await own.cli(['--log-level', 'trace', 'auth', 'login', '--profile', 'acme', '--credentials-file', file], acmeEnv);
      expect(step1.code, step1.stderr).toBe(0);
      const pending = (JSON.parse(readFileSync(file, 'utf8')) as { profiles: Record<string, Record<string, string>> }).profiles.acme ?? {};
      const requestToken = pending.pending_request_token ?? '';
      const requestTokenSecret = pending.pending_request_token_secret ?? '';
      expect(requestToken).toMatch(/.{6,}/);
      // The first step prints the address to open, which names the request token: by design.
      expect(step1.stderr).toContain(`oauth_token=${requestToken}`);
      const pin = '7654321';
      const refused = await own.cli(['--log-level', 'trace', 'auth', 'login', '--profile', 'acme', '--credentials-file', file, '--pin', pin], {
        ...acmeEnv,
        ADSYNC_API_URL: `http://127.0.0.1:${(echo.address() as AddressInfo).port}`,
      });
      expect(refused.code).toBe(3);
      expectNoStackTrace(refused);
      expect(refused.stderr).toContain('adsync: the PIN was not accepted (it is wrong, or was already used): POST /oauth/access_token answered HTTP 401: 32 Could not authenticate you: POST /oauth/access_token?oauth_verifier=[redacted] with OAuth ');
      expect(refused.stderr).toContain('oauth_token="[redacted]"');
      const output = `${refused.stdout}\n${refused.stderr}\n${step1.stderr.replace(`oauth_token=${requestToken}`, '')}\n${step1.stdout}`;
      const found = [requestToken, requestTokenSecret, pin, CREDENTIALS.consumerSecret].flatMap((secret) => forms(secret).filter((form) => output.includes(form)));
      expect(found).toEqual([]);
    } finally {
      await new Promise<void>((resolve) => echo.close(() => resolve()));
      await own.close();
    }
  });

  it('adsync emulator --log-requests: its request log names no secret of the requests it serves (a run, the PIN flow, a revoke)', { timeout: 60_000 }, async () => {
    const seeded = ['--consumer-key', CREDENTIALS.consumerKey, '--consumer-secret', CREDENTIALS.consumerSecret, '--access-token', CREDENTIALS.accessToken, '--access-token-secret', CREDENTIALS.accessTokenSecret];
    const emulator = startCli(['--log-level', 'trace', 'emulator', '--port', '0', '--rate-limits', 'off', '--log-requests', ...seeded], { env: baseEnv() });
    const served = collect(emulator);
    let banner = '';
    emulator.stdout?.on('data', (d: Buffer) => (banner += d.toString()));
    const own = await createWorkspace({ credentials: CREDENTIALS });
    const secrets = [CREDENTIALS.consumerSecret, CREDENTIALS.accessToken, CREDENTIALS.accessTokenSecret];
    try {
      await waitFor(() => /listening on http:\/\/\S+/.test(banner), 20_000, 'the emulator to listen');
      const url = /listening on (http:\/\/\S+)/.exec(banner)?.[1] ?? '';
      const env = { ADSYNC_ADS_URL: url, ADSYNC_API_URL: url, ADSYNC_ACME_CONSUMER_KEY: CREDENTIALS.consumerKey, ADSYNC_ACME_CONSUMER_SECRET: CREDENTIALS.consumerSecret };
      own.write('crm.csv', crmExport(range(1, 5)));
      own.write('crm.yaml', 'name: crm\naccount_id: emu-account\nsource: { path: crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email }\n');
      expect((await own.cli(['run', 'crm.yaml'], env)).code).toBe(0);
      const file = join(own.dir, 'credentials.json');
      const login = ['auth', 'login', '--profile', 'acme', '--credentials-file', file];
      expect((await own.cli(login, env)).code).toBe(0);
      const stored = (): Record<string, string> => (JSON.parse(readFileSync(file, 'utf8')) as { profiles: Record<string, Record<string, string>> }).profiles.acme ?? {};
      const pending = stored();
      const { pin } = (await (await fetch(`${url}/_emulator/pin?oauth_token=${encodeURIComponent(pending.pending_request_token ?? '')}`)).json()) as { pin: string };
      expect((await own.cli([...login, '--pin', pin], env)).code).toBe(0);
      const access = stored();
      expect((await own.cli(['auth', 'revoke', '--profile', 'acme', '--credentials-file', file], env)).code).toBe(0);
      secrets.push(pending.pending_request_token ?? '', pending.pending_request_token_secret ?? '', pin, access.access_token ?? '', access.access_token_secret ?? '');
    } finally {
      emulator.kill('SIGTERM');
      await own.close();
    }
    const log = (await served).stderr;
    // It did log the requests: the run's upload and each step of the flow.
    for (const line of ['POST /12/accounts/emu-account/custom_audiences/emu-audience/users 200', 'POST /oauth/request_token 200', 'POST /oauth/access_token 200', 'POST /1.1/oauth/invalidate_token.json 200']) expect(log).toContain(line);
    expect(secrets.filter((secret) => secret.length >= 6)).toHaveLength(8);
    expect(secrets.flatMap((secret) => forms(secret).filter((form) => log.includes(form)))).toEqual([]);
  });

  it('a delete refused with a message that echoes the Authorization header: the token is in no summary, run history, state file or alert', { timeout: 60_000 }, async () => {
    const own = await createWorkspace({ credentials: CREDENTIALS });
    // An Ads API (or a proxy before it) that refuses each product delete with a message quoting
    // the request's Authorization header; everything else goes to the emulator.
    const echo = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (d: Buffer) => chunks.push(d));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        if (req.method === 'DELETE' && /^\/12\/product_catalogs\/[^/]+\/products$/.test(req.url ?? '')) {
          const keys = (JSON.parse(body.toString('utf8')) as { product_keys: string[] }).product_keys;
          const failed = keys.map((key) => ({ failed_product_key: key, message: `cannot delete now; request carried ${req.headers.authorization ?? ''}` }));
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ request: { params: {} }, data: { delete_products: failed } }));
          return;
        }
        const upstream = http.request(`${own.emulator.url}${req.url ?? ''}`, { method: req.method, headers: req.headers }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        upstream.end(body);
      });
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    try {
      const echoUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
      own.write('shop.yaml', `name: shop\naccount_id: emu-account\nalerts: { webhook_url: "${hookUrl}" }\nsource: { path: feed.xml }\ncatalog:\n  product_catalog_id: emu-catalog\n`);
      own.write('feed.xml', feedOf(range(1, 5).map((n) => ({ n, price: '10.00 USD' }))));
      expect((await own.cli(['run', 'shop.yaml'])).code).toBe(0);
      own.write('feed.xml', feedOf(range(1, 4).map((n) => ({ n, price: '10.00 USD' }))));
      const alertsBefore = hookBodies.length;
      const refused = await own.cli(['--log-level', 'trace', 'run', 'shop.yaml', '--json'], { ADSYNC_ADS_URL: echoUrl });
      expect(refused.code).toBe(1);
      const summary = summaries(refused)[0] ?? {};
      expect(summary.error).toMatch(/^1 products could not be deleted \(first: \S+: cannot delete now; request carried OAuth .*oauth_token="\[redacted\]"/);
      expect(hookBodies.length).toBe(alertsBefore + 1);
      const runs = await own.cli(['runs', '--json']);
      const places = [
        { where: 'stdout', text: refused.stdout },
        { where: 'stderr', text: refused.stderr },
        { where: 'adsync runs --json', text: runs.stdout },
        { where: 'the alert', text: hookBodies.slice(alertsBefore).join('\n') },
        ...listFiles(own.dir).map((file) => ({ where: file, text: readFileSync(file).toString('latin1') })),
      ];
      const found = places.flatMap(({ where, text }) => forms(CREDENTIALS.accessToken).filter((form) => text.includes(form)).map((form) => `${where} holds ${form}`));
      expect(found).toEqual([]);
    } finally {
      await new Promise<void>((resolve) => echo.close(() => resolve()));
      await own.close();
    }
  });
});
