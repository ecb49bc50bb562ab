import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdsApiClient } from '../../src/api/client.js';
import { Credentials } from '../../src/api/credentials.js';
import { AuthError } from '../../src/api/errors.js';
import { getAccount } from '../../src/api/resources/accounts.js';
import { startEmulator, type EmulatorHandle } from '../../src/emulator/index.js';
import { main } from '../../src/cli/main.js';
import { baseEnv, runCli } from '../helpers/cli.js';
import { createWorkspace } from '../helpers/e2e.js';

let emulator: EmulatorHandle;
beforeAll(async () => {
  emulator = await startEmulator({ rateLimits: 'off' });
});
afterAll(async () => {
  await emulator.close();
});

/** The emulator's addresses and its app's consumer key and secret, for profile acme. */
function acmeEnv(): NodeJS.ProcessEnv {
  return baseEnv({
    ADSYNC_API_URL: emulator.url,
    ADSYNC_ADS_URL: emulator.url,
    ADSYNC_ACME_CONSUMER_KEY: emulator.credentials.consumerKey,
    ADSYNC_ACME_CONSUMER_SECRET: emulator.credentials.consumerSecret,
  });
}

/** The PIN the emulator's authorization page shows for the address step 1 printed (the user approving). */
async function approvedPin(step1Stderr: string): Promise<string> {
  const token = new URL(/(http:\/\/\S+)/.exec(step1Stderr)?.[1] ?? '').searchParams.get('oauth_token') ?? '';
  return ((await (await fetch(`${emulator.url}/_emulator/pin?oauth_token=${encodeURIComponent(token)}`)).json()) as { pin: string }).pin;
}

/** `adsync auth login --profile acme` on a terminal, whose user approves and types the PIN when asked (`asked`). */
async function loginOnTerminal(env: NodeJS.ProcessEnv, credentialsFile: string): Promise<{ code: number; stderr: string; asked: boolean }> {
  let stderr = '';
  let asked = false;
  const code = await main(['auth', 'login', '--profile', 'acme', '--credentials-file', credentialsFile], {
    stdout: () => undefined,
    stderr: (text) => (stderr += text),
    isTty: true,
    prompt: async () => {
      asked = true;
      return approvedPin(stderr);
    },
  }, env, env.HOME);
  return { code, stderr, asked };
}

describe('adsync auth login / revoke against the emulator', () => {
  it('runs the PIN flow in two steps, stores working credentials 0600, and revokes them', async () => {
    const env = acmeEnv();
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
    expect(wrong.code).toBe(3);
    expect(wrong.stderr).not.toContain('    at ');
    // The PIN is what is wrong, not the keys: say so, and how to retry.
    expect(wrong.stderr).toBe(
      'adsync: the PIN was not accepted (it is wrong, or was already used): POST /oauth/access_token answered HTTP 401: UNAUTHORIZED_ACCESS invalid oauth_verifier\n' +
        '  hint: run `adsync auth login --profile acme --pin <PIN>` again with the PIN the authorization page shows, or start again with `adsync auth login --profile acme` if that PIN was already used or the page is gone\n',
    );
    expect(wrong.stderr).not.toContain('consumer key/secret');

    // A wrong PIN fails without using up the pending authorization: the right one still works.
    // As pasted from the page into quotes, with a space and a line end around it.
    const step2 = await runCli(['auth', 'login', '--profile', 'acme', '--pin', ` ${pinAnswer.pin}\n`], { env });
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
    const storedAfterRevoke = readFileSync(credentialsFile, 'utf8');
    const error = await getAccount(client, emulator.ids.accountId).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthError);
    expect((error as AuthError).revoked).toBe(true);
    const after = (JSON.parse(readFileSync(credentialsFile, 'utf8')) as { profiles: Record<string, Record<string, string>> }).profiles.acme ?? {};
    expect(after.access_token).toBeUndefined();
    expect(after.consumer_key).toBe(emulator.credentials.consumerKey);

    // Revoking a token that is already revoked (a copy of the file elsewhere, a lost answer)
    // is done, not a failure: the token leaves the file.
    writeFileSync(credentialsFile, storedAfterRevoke.replace('"consumer_key"', `"access_token": ${JSON.stringify(stored.access_token)}, "access_token_secret": ${JSON.stringify(stored.access_token_secret)}, "consumer_key"`), { mode: 0o600 });
    const again = await runCli(['auth', 'revoke', '--profile', 'acme'], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toBe('The access token of profile "acme" was already revoked; it can no longer be used.\n');
    expect(readFileSync(credentialsFile, 'utf8')).toBe(storedAfterRevoke);

    // Once more: no token is left to revoke. Say so, not "run `adsync auth login`" (a new token).
    const nothing = await runCli(['auth', 'revoke', '--profile', 'acme'], { env });
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toBe(
      `adsync: profile "acme" has no access token to revoke: ADSYNC_ACME_ACCESS_TOKEN is not set and ${credentialsFile} holds none for it\n` +
        '  hint: it was revoked (and removed) already, or never stored here; a token jobs take from their environment is revoked by running this command with that environment\n',
    );
  });

  it('login and revoke --help give the default credentials file in the order it is looked for', async () => {
    for (const command of ['login', 'revoke']) {
      const help = await runCli(['auth', command, '--help'], { env: acmeEnv() });
      expect(help.stdout.replace(/\s+/g, ' ')).toContain(
        "--credentials-file <path> credentials file (default: the settings' credentials_file, else ADSYNC_CREDENTIALS, else adsync/credentials.json in $XDG_CONFIG_HOME or ~/.config)",
      );
    }
  });

  it('prints shell exports with --print instead of storing the tokens', async () => {
    const env = baseEnv({
      ADSYNC_API_URL: emulator.url,
      ADSYNC_CONSUMER_KEY: emulator.credentials.consumerKey,
      ADSYNC_CONSUMER_SECRET: emulator.credentials.consumerSecret,
    });
    const step1 = await runCli(['auth', 'login', '--no-prompt'], { env });
    const pin = await approvedPin(step1.stderr);
    const step2 = await runCli(['auth', 'login', '--pin', pin, '--print'], { env });
    expect(step2.code, step2.stderr).toBe(0);
    expect(step2.stdout).toMatch(/^export ADSYNC_CONSUMER_KEY='emulator-consumer-key'\nexport ADSYNC_CONSUMER_SECRET='emulator-consumer-secret'\nexport ADSYNC_ACCESS_TOKEN='[^']+'\nexport ADSYNC_ACCESS_TOKEN_SECRET='[^']+'\n$/);
  });

  it('--print in the first step: the "finish with" line keeps --print, and following it stores no token', async () => {
    const env = baseEnv({
      ADSYNC_API_URL: emulator.url,
      ADSYNC_ACME_CONSUMER_KEY: emulator.credentials.consumerKey,
      ADSYNC_ACME_CONSUMER_SECRET: emulator.credentials.consumerSecret,
    });
    const credentialsFile = join(env.HOME ?? '', 'creds', 'acme.json');
    const step1 = await runCli(['auth', 'login', '--profile', 'acme', '--credentials-file', credentialsFile, '--print'], { env });
    expect(step1.code, step1.stderr).toBe(0);
    const finish = `adsync auth login --profile acme --credentials-file ${credentialsFile} --pin <PIN> --print`;
    expect(step1.stderr).toContain(`Then finish with:\n\n  ${finish}\n`);
    const pin = await approvedPin(step1.stderr);

    // Exactly what the operator was told to run.
    const step2 = await runCli(finish.replace('<PIN>', pin).split(' ').slice(1), { env });
    expect(step2.code, step2.stderr).toBe(0);
    expect(step2.stdout).toMatch(/^export ADSYNC_ACME_CONSUMER_KEY='emulator-consumer-key'\nexport ADSYNC_ACME_CONSUMER_SECRET='emulator-consumer-secret'\nexport ADSYNC_ACME_ACCESS_TOKEN='[^']+'\nexport ADSYNC_ACME_ACCESS_TOKEN_SECRET='[^']+'\n$/);
    const stored = (JSON.parse(readFileSync(credentialsFile, 'utf8')) as { profiles: Record<string, Record<string, string>> }).profiles.acme ?? {};
    expect(stored.access_token).toBeUndefined();
    expect(stored.pending_request_token).toBeUndefined();
  });

  it('without the app\'s consumer key and secret, says to set them (not to run the command that just failed)', async () => {
    const env = baseEnv({ ADSYNC_API_URL: emulator.url });
    const result = await runCli(['auth', 'login', '--profile', 'acme'], { env });
    expect(result.code).toBe(2);
    const path = join(env.XDG_CONFIG_HOME ?? '', 'adsync', 'credentials.json');
    expect(result.stderr).toBe(
      `adsync: credentials profile "acme" is incomplete: ADSYNC_ACME_CONSUMER_KEY, ADSYNC_ACME_CONSUMER_SECRET are not set and not in ${path}\n` +
        `  hint: set ADSYNC_ACME_CONSUMER_KEY and ADSYNC_ACME_CONSUMER_SECRET to your app's consumer key and secret (the developer portal's "Keys and tokens"), or put consumer_key and consumer_secret in profile "acme" of ${path}; then run \`adsync auth login --profile acme\` again (README, "Credentials")\n`,
    );
  });

  it('a consumer key or secret the platform refuses: says to check those two, not an access token login does not use (exit 3)', async () => {
    const env = baseEnv({ ADSYNC_API_URL: emulator.url, ADSYNC_ACME_CONSUMER_KEY: emulator.credentials.consumerKey, ADSYNC_ACME_CONSUMER_SECRET: 'not-the-app-secret' });
    const result = await runCli(['auth', 'login', '--profile', 'acme'], { env });
    expect(result.code).toBe(3);
    const path = join(env.XDG_CONFIG_HOME ?? '', 'adsync', 'credentials.json');
    expect(result.stderr).toBe(
      'adsync: authentication failed: POST /oauth/request_token answered HTTP 401: UNAUTHORIZED_ACCESS the OAuth signature does not match the request\n' +
        `  hint: check ADSYNC_ACME_CONSUMER_KEY and ADSYNC_ACME_CONSUMER_SECRET (or consumer_key and consumer_secret in profile "acme" of ${path}): they must be your app's consumer key and secret (the developer portal's "Keys and tokens"), with which this first step alone is signed\n`,
    );
    expect(existsSync(path)).toBe(false);
  });

  it('says which variables are missing, with exit code 2', async () => {
    const result = await runCli(['auth', 'login', '--profile', 'nobody'], { env: baseEnv() });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('credentials profile "nobody" is incomplete: ADSYNC_NOBODY_CONSUMER_KEY, ADSYNC_NOBODY_CONSUMER_SECRET are not set');
  });

  it('a credentials file that cannot be written or read: exit 2 naming the file and the fix, not "a bug in adsync"', async () => {
    const env = acmeEnv();
    const home = env.HOME ?? '';
    // The folder named for the file is a file: nothing can be written under it.
    writeFileSync(join(home, 'not-a-folder'), 'x');
    const unwritable = join(home, 'not-a-folder', 'credentials.json');
    const write = await runCli(['auth', 'login', '--profile', 'acme', '--no-prompt', '--credentials-file', unwritable], { env });
    expect(write.code).toBe(2);
    expect(write.stderr).not.toContain('internal error');
    expect(write.stderr.split('\n').slice(-3).join('\n')).toMatch(
      new RegExp(`^adsync: cannot write the credentials file ${unwritable.replace(/[.]/g, '\\.')}: .*\n  hint: make the folder ${join(home, 'not-a-folder').replace(/[.]/g, '\\.')} writable by the user adsync runs as, or name another file with --credentials-file \\(or credentials_file, ADSYNC_CREDENTIALS\\)\n$`),
    );

    // A folder where the file should be.
    const folder = join(home, 'creds-folder');
    mkdirSync(folder, { mode: 0o700 });
    const read = await runCli(['auth', 'revoke', '--profile', 'acme', '--credentials-file', folder], { env });
    expect(read.code).toBe(2);
    expect(read.stderr).toBe(
      `adsync: credentials file ${folder} is not a file\n  hint: name the file itself (credentials_file, ADSYNC_CREDENTIALS or --credentials-file), not its folder\n`,
    );
  });

  it('a job whose profile\'s token was revoked: the hint names that profile in the login command', async () => {
    const env = acmeEnv();
    const home = env.HOME ?? '';
    const step1 = await runCli(['auth', 'login', '--profile', 'acme', '--no-prompt'], { env });
    const step2 = await runCli(['auth', 'login', '--profile', 'acme', '--pin', await approvedPin(step1.stderr), '--print'], { env });
    expect(step2.code, step2.stderr).toBe(0);
    for (const [, name, value] of step2.stdout.matchAll(/^export (\w+)='([^']*)'$/gm)) env[name ?? ''] = value;
    const revoke = await runCli(['auth', 'revoke', '--profile', 'acme'], { env });
    expect(revoke.code, revoke.stderr).toBe(0);

    writeFileSync(join(home, 'crm.csv'), 'Email\nsomeone@example.com\n');
    const job = join(home, 'crm.yaml');
    writeFileSync(job, 'name: crm\naccount_id: emu-account\ncredentials: acme\nsource: { path: crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email }\n');
    const run = await runCli(['run', job], { env: { ...env, ADSYNC_STATE: join(home, 'state.sqlite') } });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain(
      'failed: the access token was revoked (HTTP 401, code 89) on POST /12/accounts/emu-account/custom_audiences/emu-audience/users (run `adsync auth login --profile acme` to authorize again, then update the credentials profile the job uses)\n',
    );
  });

  it('revoking the token the environment holds says so, and that the file\'s other token was not revoked', async () => {
    const env = acmeEnv();
    const credentialsFile = join(env.HOME ?? '', '.config', 'adsync', 'credentials.json');
    const step1 = await runCli(['auth', 'login', '--profile', 'acme', '--no-prompt'], { env });
    const step2 = await runCli(['auth', 'login', '--profile', 'acme', '--pin', await approvedPin(step1.stderr)], { env });
    expect(step2.code, step2.stderr).toBe(0);
    const stored = readFileSync(credentialsFile, 'utf8');
    // Another token of the same user in this shell's environment (exported from `--print` earlier).
    const step3 = await runCli(['auth', 'login', '--profile', 'acme', '--no-prompt', '--print'], { env });
    const printed = await runCli(['auth', 'login', '--profile', 'acme', '--pin', await approvedPin(step3.stderr), '--print'], { env });
    const shell = { ...env };
    for (const [, name, value] of printed.stdout.matchAll(/^export (\w+)='([^']*)'$/gm)) shell[name ?? ''] = value;

    const revoke = await runCli(['auth', 'revoke', '--profile', 'acme'], { env: shell });
    expect(revoke.code, revoke.stderr).toBe(0);
    expect(revoke.stderr).toBe(
      'Revoked the access token of profile "acme"; it can no longer be used.\n' +
        'It was the token in ADSYNC_ACME_ACCESS_TOKEN (set in this environment, which wins over the credentials file): unset ADSYNC_ACME_ACCESS_TOKEN and ADSYNC_ACME_ACCESS_TOKEN_SECRET wherever jobs get their environment.\n' +
        `Profile "acme" of ${credentialsFile} holds another access token, which was not revoked: to revoke it too, run \`adsync auth revoke --profile acme\` where ADSYNC_ACME_ACCESS_TOKEN and ADSYNC_ACME_ACCESS_TOKEN_SECRET are not set.\n`,
    );
    expect(readFileSync(credentialsFile, 'utf8')).toBe(stored);
    // Done as told: the file's token is revoked and leaves the file, and nothing more is said.
    const fileRevoke = await runCli(['auth', 'revoke', '--profile', 'acme'], { env });
    expect(fileRevoke.stderr).toBe('Revoked the access token of profile "acme"; it can no longer be used.\n');
  });

  it('storing a profile whose access token variables are set says that they win over the file', async () => {
    const env = { ...acmeEnv(), ADSYNC_ACME_ACCESS_TOKEN: 'old-token', ADSYNC_ACME_ACCESS_TOKEN_SECRET: 'old-secret' };
    const step1 = await runCli(['auth', 'login', '--profile', 'acme', '--no-prompt'], { env });
    const step2 = await runCli(['auth', 'login', '--profile', 'acme', '--pin', await approvedPin(step1.stderr)], { env });
    expect(step2.code, step2.stderr).toBe(0);
    expect(step2.stderr.split('\n')[1]).toBe(
      'Note: ADSYNC_ACME_ACCESS_TOKEN and ADSYNC_ACME_ACCESS_TOKEN_SECRET are set in this environment and win over the credentials file: unset them (or set them to the new values) wherever jobs get their environment, or they keep using the old token.',
    );
  });

  it('on a terminal, a credentials file adsync will not use is refused before the user approves, not after the PIN is used up', async () => {
    const env = acmeEnv();
    const credentialsFile = join(env.HOME ?? '', 'creds', 'credentials.json');
    mkdirSync(join(env.HOME ?? '', 'creds'), { mode: 0o700 });
    // Copied into place by hand: readable by others.
    writeFileSync(credentialsFile, '{"profiles": {}}\n', { mode: 0o644 });
    const { code, stderr, asked } = await loginOnTerminal(env, credentialsFile);
    expect(code).toBe(2);
    expect(asked).toBe(false);
    expect(stderr).toBe(
      `adsync: credentials file ${credentialsFile} can be read by others (mode 644); adsync will not use it\n  hint: run: chmod 600 ${credentialsFile}\n`,
    );
  });

  for (const [what, place] of [
    ['its folder cannot be made (a file is in the way)', (home: string) => (writeFileSync(join(home, 'blocked'), 'x'), { file: join(home, 'blocked', 'adsync', 'credentials.json'), folder: join(home, 'blocked', 'adsync'), why: `${join(home, 'blocked')} is not a folder` })],
    ['its folder is a file', (home: string) => (writeFileSync(join(home, 'plain'), 'x'), { file: join(home, 'plain', 'credentials.json'), folder: join(home, 'plain'), why: `${join(home, 'plain')} is not a folder` })],
  ] as const) {
    it(`on a terminal, a credentials file that cannot be written (${what}) is refused before the flow starts, not after the PIN is used up`, async () => {
      const env = acmeEnv();
      const { file, folder, why } = place(env.HOME ?? '');
      const before = emulator.state().requests.total;
      const { code, stderr, asked } = await loginOnTerminal(env, file);
      expect(code, stderr).toBe(2);
      expect(asked).toBe(false);
      // No request token was asked for: there is nothing to lose yet.
      expect(emulator.state().requests.total).toBe(before);
      expect(stderr).toBe(
        `adsync: cannot write the credentials file ${file}: ${why}\n  hint: make the folder ${folder} writable by the user adsync runs as, or name another file with --credentials-file (or credentials_file, ADSYNC_CREDENTIALS)\n`,
      );
    });
  }

  it('--print on a terminal writes nothing: the tokens are printed even where no credentials file can be written', async () => {
    const env = acmeEnv();
    // A read-only place, as in a container: the folder named for the file is a file.
    writeFileSync(join(env.HOME ?? '', 'read-only'), 'x');
    const credentialsFile = join(env.HOME ?? '', 'read-only', 'credentials.json');
    let stdout = '';
    let stderr = '';
    const code = await main(['auth', 'login', '--profile', 'acme', '--print', '--credentials-file', credentialsFile], {
      stdout: (text) => (stdout += text),
      stderr: (text) => (stderr += text),
      isTty: true,
      prompt: async () => approvedPin(stderr), // the user approves, then types the PIN shown
    }, env, env.HOME);
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/^export ADSYNC_ACME_CONSUMER_KEY='emulator-consumer-key'\nexport ADSYNC_ACME_CONSUMER_SECRET='emulator-consumer-secret'\nexport ADSYNC_ACME_ACCESS_TOKEN='[^']+'\nexport ADSYNC_ACME_ACCESS_TOKEN_SECRET='[^']+'\n$/);
    expect(stderr).toMatch(/Authorized as @emulator_user \(user 1000000000000000001\)\.\n$/);
    expect(existsSync(credentialsFile)).toBe(false);
  });
});

describe('a 401 from a clock that is off', () => {
  it('says by how much this machine\'s clock is off the service\'s (the Date of its answer), not to check the keys', async () => {
    // The service's clock two hours ahead: this machine's is two hours behind.
    const ws = await createWorkspace({ now: () => Date.now() + 2 * 3600_000 });
    try {
      ws.write('crm.csv', 'Email\nsomeone@example.com\n');
      const job = ws.write('crm.yaml', 'name: crm\naccount_id: emu-account\nsource: { path: crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email }\n');
      const run = await ws.cli(['run', job]);
      expect(run.code).toBe(3);
      expect(run.stderr).toContain(
        "(this machine's clock is 120 minutes behind the service's (the Date of its answer), and OAuth 1.0a timestamps must be within a few minutes of it: set the clock right (NTP), then run again)\n",
      );
      expect(run.stderr).not.toContain('check the consumer key/secret');
    } finally {
      await ws.close();
    }
  });

  it('auth login --pin: a clock that is off is not blamed on the PIN', async () => {
    let offsetMs = 0;
    const ws = await createWorkspace({ now: () => Date.now() + offsetMs });
    try {
      const step1 = await ws.cli(['auth', 'login', '--no-prompt']);
      expect(step1.code, step1.stderr).toBe(0);
      const token = new URL(/(http:\/\/\S+)/.exec(step1.stderr)?.[1] ?? '').searchParams.get('oauth_token') ?? '';
      const { pin } = (await (await fetch(`${ws.emulator.url}/_emulator/pin?oauth_token=${encodeURIComponent(token)}`)).json()) as { pin: string };
      // The machine's clock falls behind (a VM resumed from a snapshot) before the second step.
      offsetMs = 3600_000;
      const step2 = await ws.cli(['auth', 'login', '--pin', pin]);
      expect(step2.code).toBe(3);
      expect(step2.stderr).not.toContain('the PIN was not accepted');
      expect(step2.stderr).toContain("hint: this machine's clock is 60 minutes behind the service's");
    } finally {
      await ws.close();
    }
  });
});
