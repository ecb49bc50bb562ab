/**
 * Two cells of the fault matrix that stop a run instead of being retried:
 *
 * - the access token revoked in the middle of a run (401, code 89): the run stops at once,
 *   exit 3, with a message saying the token was revoked and how to authorize again; what was
 *   acknowledged before is committed, nothing else is (the state equals the service), nothing
 *   is removed or deleted afterwards; after `adsync auth login` the next run ends exact;
 * - an audience, do-not-reach list or catalog that does not exist (404): exit 1 with a clear
 *   message naming it, and nothing changed anywhere.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { AdsApiClient } from '../../src/api/client.js';
import { Credentials } from '../../src/api/credentials.js';
import { invalidateAccessToken } from '../../src/api/oauth-flow.js';
import { collect, createWorkspace, type Workspace } from '../helpers/e2e.js';
import {
  audienceOf,
  committedAudience,
  committedCatalog,
  crmExport,
  emulatorAudience,
  errorLines,
  expectCatalog,
  expectCatalogStateExact,
  expectNoStackTrace,
  feedOf,
  integrity,
  range,
  summaryOf,
  waitFor,
  type ProductSpec,
} from './support.js';

/** A workspace of its own, closed when the test ends (the two revocation tests run side by side). */
async function workspace(context: TestContext): Promise<Workspace> {
  const ws = await createWorkspace();
  context.onTestFinished(() => ws.close());
  return ws;
}

/** What `adsync auth revoke` does, from outside the run: the seeded access token stops working. */
async function revokeSeededToken(ws: Workspace): Promise<void> {
  const c = ws.emulator.credentials;
  const client = new AdsApiClient({
    credentials: new Credentials('default', c.consumerKey, c.consumerSecret, c.accessToken, c.accessTokenSecret),
    adsUrl: ws.emulator.url,
    apiUrl: ws.emulator.url,
    retry: { retries: 0 },
  });
  await invalidateAccessToken(client, { token: c.accessToken, tokenSecret: c.accessTokenSecret });
}

/** The environment without the revoked token: the profile comes from the credentials file. */
const WITHOUT_TOKEN = { ADSYNC_ACCESS_TOKEN: undefined, ADSYNC_ACCESS_TOKEN_SECRET: undefined };

/** `adsync auth login` in its two non-interactive steps, approved through the emulator's PIN page. */
async function authorizeAgain(ws: Workspace): Promise<void> {
  const step1 = await ws.cli(['auth', 'login'], WITHOUT_TOKEN);
  expect(step1.code, step1.stderr).toBe(0);
  const url = /(http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?oauth_token=\S+)/.exec(step1.stderr)?.[1] ?? '';
  const requestToken = new URL(url).searchParams.get('oauth_token') ?? '';
  const { pin } = (await (await fetch(`${ws.emulator.url}/_emulator/pin?oauth_token=${encodeURIComponent(requestToken)}`)).json()) as { pin: string };
  const step2 = await ws.cli(['auth', 'login', '--pin', pin], WITHOUT_TOKEN);
  expect(step2.code, step2.stderr).toBe(0);
  const file = join(ws.env.XDG_CONFIG_HOME ?? '', 'adsync', 'credentials.json');
  expect(statSync(file).mode & 0o777).toBe(0o600);
  expect(readFileSync(file, 'utf8')).not.toContain(ws.emulator.credentials.accessToken);
}

function expectRevokedMessage(stderr: string): void {
  const lines = errorLines(stderr);
  expect(lines, stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^adsync: job \S+ failed: the access token was revoked \(HTTP 401, code 89\) on (POST|PUT) \/12\/\S+ \(run `adsync auth login` to authorize again, then update the credentials profile the job uses\)$/);
}

const AUDIENCE_JOB = 'name: crm\naccount_id: emu-account\nconcurrency: 1\nsource: { path: exports/crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email, partner_user_id: Id }\n';
const CATALOG_JOB = 'name: shop\naccount_id: emu-account\nconcurrency: 1\nsource: { path: feed.xml }\ncatalog:\n  product_catalog_id: emu-catalog\n';

describe('an access token revoked in the middle of a run (401, code 89)', () => {
  it.concurrent('audience: stops at once with exit 3 and the re-authorization hint; committed = acknowledged; the next run after auth login is exact', async (context) => {
    const ws = await workspace(context);
    ws.write('crm.yaml', AUDIENCE_JOB);
    ws.write('exports/crm.csv', crmExport(range(1, 40)));
    expect((await ws.cli(['run', 'crm.yaml'])).code).toBe(0);

    // The next export adds rows 41-50 (an Update request) and drops rows 1-10 (a Delete request).
    ws.write('exports/crm.csv', crmExport(range(11, 50)));
    // The Update is applied, then its answer held back; the token is revoked meanwhile.
    ws.fault({ route: 'POST /12/**/users', kind: 'delay', ms: 1500, times: 1 });
    const child = ws.spawn(['run', 'crm.yaml', '--json']);
    const done = collect(child);
    const members = () => ws.emulator.store.customAudiences.get('emu-audience')?.membership.rawSet('partner_user_id');
    await waitFor(() => members()?.has('P41') === true, 20_000, 'the Update to be applied');
    await revokeSeededToken(ws);
    const result = await done;

    expect(result.code, result.stderr).toBe(3);
    expectNoStackTrace(result);
    expectRevokedMessage(result.stderr);
    expect(summaryOf(result)).toMatchObject({ status: 'failed', exit_code: 3, added: 20, removed: 0 });
    // Stopped at once: one request answered 401, not retried.
    expect(ws.emulator.state().requests.by_status['401']).toBe(1);
    // The acknowledged Update is committed, the refused Delete is not: state = service.
    expect(integrity(ws.statePath)).toBe('ok');
    expect(emulatorAudience(ws)).toEqual(audienceOf(range(1, 50)));
    expect(committedAudience(ws.statePath)).toEqual(audienceOf(range(1, 50)));

    // Running again with the revoked token changes nothing and says the same.
    const again = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(again.code).toBe(3);
    expectRevokedMessage(again.stderr);
    expect(emulatorAudience(ws)).toEqual(audienceOf(range(1, 50)));

    await authorizeAgain(ws);
    const repaired = await ws.cli(['run', 'crm.yaml', '--json'], WITHOUT_TOKEN);
    expect(repaired.code, repaired.stderr).toBe(0);
    expect(summaryOf(repaired)).toMatchObject({ status: 'success', added: 0, removed: 20 });
    expect(emulatorAudience(ws)).toEqual(audienceOf(range(11, 50)));
    expect(committedAudience(ws.statePath)).toEqual(audienceOf(range(11, 50)));
  });

  it.concurrent('catalog: stops at once with exit 3; the acknowledged PUT is committed, nothing is deleted; the next run after auth login is exact', async (context) => {
    const ws = await workspace(context);
    const X: ProductSpec[] = range(1, 60).map((n) => ({ n, price: '10.00 USD' }));
    const Y: ProductSpec[] = range(11, 75).map((n) => ({ n, price: n >= 21 && n <= 40 ? '12.00 USD' : '10.00 USD' }));
    ws.write('shop.yaml', CATALOG_JOB);
    ws.write('feed.xml', feedOf(X));
    expect((await ws.cli(['run', 'shop.yaml'])).code).toBe(0);

    // X -> Y: PUT 1 = P-021..P-040 (updates) and P-061..P-065, PUT 2 = P-066..P-075, then the
    // delete of P-001..P-010. PUT 1 is applied and its answer held back while the token is revoked.
    ws.write('feed.xml', feedOf(Y));
    ws.fault({ route: 'PUT /12/product_catalogs/**', kind: 'delay', ms: 1500, times: 1 });
    const child = ws.spawn(['run', 'shop.yaml', '--json']);
    const done = collect(child);
    await waitFor(() => ws.emulator.store.catalogs.get('emu-catalog')?.getById('P-061') !== undefined, 20_000, 'the first PUT to be applied');
    await revokeSeededToken(ws);
    const result = await done;

    expect(result.code, result.stderr).toBe(3);
    expectNoStackTrace(result);
    expectRevokedMessage(result.stderr);
    expect(summaryOf(result)).toMatchObject({ status: 'failed', exit_code: 3, deleted: 0 });
    expect(ws.emulator.state().requests.by_status['401']).toBe(1);
    expect(integrity(ws.statePath)).toBe('ok');
    // Nothing deleted; PUT 1 applied and committed; PUT 2 refused and not committed.
    const afterPut1 = [...X.map((p) => (p.n >= 21 && p.n <= 40 ? { ...p, price: '12.00 USD' } : p)), ...range(61, 65).map((n) => ({ n, price: '10.00 USD' }))];
    expectCatalog(ws, afterPut1);
    expectCatalogStateExact(ws);
    expect(committedCatalog(ws.statePath).has('P-066')).toBe(false);

    await authorizeAgain(ws);
    const repaired = await ws.cli(['run', 'shop.yaml', '--json'], WITHOUT_TOKEN);
    expect(repaired.code, repaired.stderr).toBe(0);
    expect(summaryOf(repaired)).toMatchObject({ status: 'success', created: 10, updated: 0, deleted: 10 });
    expectCatalog(ws, Y);
    expectCatalogStateExact(ws);
  });
});

describe('an audience, list or catalog that does not exist (404)', () => {
  const cases = [
    {
      name: 'a custom audience',
      job: 'account_id: emu-account\nsource: { path: crm.csv }\naudience:\n  custom_audience_id: no-such-audience\n  identifiers: { email: Email }\n',
      message: /^adsync: job missing failed: POST \/12\/accounts\/emu-account\/custom_audiences\/no-such-audience\/users answered HTTP 404: \S*NOT_FOUND /,
    },
    {
      name: 'a do-not-reach list',
      job: 'account_id: emu-account\nsource: { path: crm.csv }\naudience:\n  do_not_reach_list_id: no-such-list\n  identifiers: { email: Email }\n',
      message: /^adsync: job missing failed: POST \/12\/batch\/accounts\/emu-account\/do_not_reach_lists\/no-such-list\/users answered HTTP 404: \S*NOT_FOUND /,
    },
    {
      name: 'a catalog',
      job: 'account_id: emu-account\nsource: { path: feed.xml }\ncatalog:\n  product_catalog_id: no-such-catalog\n',
      message: /^adsync: job missing failed: GET \/12\/product_catalogs\/no-such-catalog\/products answered HTTP 404: NOT_FOUND /,
    },
  ];
  let ws: Workspace;
  beforeAll(async () => {
    ws = await createWorkspace();
    // The seeded audience and catalog hold something that must stay as it is.
    ws.write('seed-crm.yaml', AUDIENCE_JOB.replace('exports/crm.csv', 'crm.csv'));
    ws.write('seed-shop.yaml', CATALOG_JOB);
    ws.write('crm.csv', 'Id,Email\nA1,a1@example.com\n');
    ws.write('feed.xml', feedOf([{ n: 1, price: '10.00 USD' }]));
    expect((await ws.cli(['run', 'seed-crm.yaml', 'seed-shop.yaml'])).code).toBe(0);
  });
  afterAll(async () => {
    await ws.close();
  });

  for (const c of cases) {
    it(`${c.name}: exit 1, one line naming it, nothing changed`, async () => {
      const before = ws.emulator.state();
      ws.write('missing.yaml', c.job);
      const result = await ws.cli(['run', 'missing.yaml', '--json']);
      expect(result.code, result.stderr).toBe(1);
      expectNoStackTrace(result);
      const lines = errorLines(result.stderr);
      expect(lines, result.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(c.message);
      expect(summaryOf(result)).toMatchObject({ status: 'failed', exit_code: 1, added: 0, removed: 0, created: 0, deleted: 0 });
      const after = ws.emulator.state();
      expect(after.custom_audiences).toEqual(before.custom_audiences);
      expect(after.do_not_reach_lists).toEqual(before.do_not_reach_lists);
      expect(after.catalogs).toEqual(before.catalogs);
      expect(after.custom_audiences['emu-audience']?.members.partner_user_id).toEqual(['A1']);
      expect(after.catalogs['emu-catalog']?.products).toHaveLength(1);
    });
  }
});
