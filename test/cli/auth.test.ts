import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdsApiClient } from '../../src/api/client.js';
import { Credentials } from '../../src/api/credentials.js';
import { AuthError } from '../../src/api/errors.js';
import { getAccount } from '../../src/api/resources/accounts.js';
import { startEmulator, type EmulatorHandle } from '../../src/emulator/index.js';
import { baseEnv, runCli } from '../helpers/cli.js';

let emulator: EmulatorHandle;
beforeAll(async () => {
  emulator = await startEmulator({ rateLimits: 'off' });
});
afterAll(async () => {
  await emulator.close();
});

describe('adsync auth login / revoke against the emulator', () => {
  it('runs the PIN flow in two steps, stores working credentials 0600, and revokes them', async () => {
    const env = baseEnv({
      ADSYNC_API_URL: emulator.url,
      ADSYNC_ADS_URL: emulator.url,
      ADSYNC_ACME_CONSUMER_KEY: emulator.credentials.consumerKey,
      ADSYNC_ACME_CONSUMER_SECRET: emulator.credentials.consumerSecret,
    });
    const credentialsFile = join(env.HOME ?? '', '.config', 'adsync', 'credentials.json');

    const step1 = await runCli(['auth', 'login', '--profile', 'acme'], { env });
    expect(step1.code).toBe(0);
    const url = /(http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?oauth_token=\S+)/.exec(step1.stderr)?.[1];
    expect(url).toBeDefined();
    expect(step1.stderr).toContain('adsync auth login --profile acme --pin <PIN>');
    const requestToken = new URL(url ?? '').searchParams.get('oauth_token') ?? '';

    // The user approves in a browser; the emulator's admin shortcut does the same and shows the PIN.
    const pinAnswer = (await (await fetch(`${emulator.url}/_emulator/pin?oauth_token=${encodeURIComponent(requestToken)}`)).json()) as { pin: string };

    const wrong = await runCli(['auth', 'login', '--profile', 'acme', '--pin', 'not-the-pin'], { env });
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(/^adsync: /);
    expect(wrong.stderr).not.toContain('    at ');

    // A wrong PIN fails without using up the pending authorization: the right one still works.
    const step2 = await runCli(['auth', 'login', '--profile', 'acme', '--pin', pinAnswer.pin], { env });
    expect(step2.code, step2.stderr).toBe(0);
    expect(step2.stderr).toMatch(/^Authorized as @emulator_user \(user 1000000000000000001\)\. Profile "acme" is stored in .*credentials\.json \(mode 0600\)\.\n$/m);

    expect(statSync(credentialsFile).mode & 0o777).toBe(0o600);
    const stored = (JSON.parse(readFileSync(credentialsFile, 'utf8')) as { profiles: Record<string, Record<string, string>> }).profiles.acme ?? {};
    expect(stored.pending_request_token).toBeUndefined();
    expect(stored.access_token).toMatch(/.+/);
    const creds = new Credentials('acme', stored.consumer_key ?? '', stored.consumer_secret ?? '', stored.access_token ?? '', stored.access_token_secret ?? '');
    const client = new AdsApiClient({ credentials: creds, adsUrl: emulator.url, retry: { retries: 0 } });
    await expect(getAccount(client, emulator.ids.accountId)).resolves.toMatchObject({ id: emulator.ids.accountId });

    const revoke = await runCli(['auth', 'revoke', '--profile', 'acme'], { env });
    expect(revoke.code, revoke.stderr).toBe(0);
    expect(revoke.stderr).toContain('Revoked the access token of profile "acme"');
    const error = await getAccount(client, emulator.ids.accountId).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthError);
    expect((error as AuthError).revoked).toBe(true);
    const after = (JSON.parse(readFileSync(credentialsFile, 'utf8')) as { profiles: Record<string, Record<string, string>> }).profiles.acme ?? {};
    expect(after.access_token).toBeUndefined();
    expect(after.consumer_key).toBe(emulator.credentials.consumerKey);
  });

  it('prints shell exports with --print instead of storing the tokens', async () => {
    const env = baseEnv({
      ADSYNC_API_URL: emulator.url,
      ADSYNC_CONSUMER_KEY: emulator.credentials.consumerKey,
      ADSYNC_CONSUMER_SECRET: emulator.credentials.consumerSecret,
    });
    const step1 = await runCli(['auth', 'login', '--no-prompt'], { env });
    const token = new URL(/(http:\/\/\S+)/.exec(step1.stderr)?.[1] ?? '').searchParams.get('oauth_token') ?? '';
    const pin = ((await (await fetch(`${emulator.url}/_emulator/pin?oauth_token=${encodeURIComponent(token)}`)).json()) as { pin: string }).pin;
    const step2 = await runCli(['auth', 'login', '--pin', pin, '--print'], { env });
    expect(step2.code, step2.stderr).toBe(0);
    expect(step2.stdout).toMatch(/^export ADSYNC_CONSUMER_KEY='emulator-consumer-key'\nexport ADSYNC_CONSUMER_SECRET='emulator-consumer-secret'\nexport ADSYNC_ACCESS_TOKEN='[^']+'\nexport ADSYNC_ACCESS_TOKEN_SECRET='[^']+'\n$/);
  });

  it('says which variables are missing, with exit code 2', async () => {
    const result = await runCli(['auth', 'login', '--profile', 'nobody'], { env: baseEnv() });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('credentials profile "nobody" is incomplete: ADSYNC_NOBODY_CONSUMER_KEY, ADSYNC_NOBODY_CONSUMER_SECRET are not set');
  });
});
