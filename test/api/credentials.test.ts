import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadCredentials, writeCredentialsProfile } from '../../src/api/credentials.js';
import { ConfigError } from '../../src/errors.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'adsync-creds-'));

describe('credentials', () => {
  it('reads the default profile from ADSYNC_* variables', () => {
    const c = loadCredentials({
      env: { ADSYNC_CONSUMER_KEY: 'k', ADSYNC_CONSUMER_SECRET: 's1-secret', ADSYNC_ACCESS_TOKEN: 't1-token', ADSYNC_ACCESS_TOKEN_SECRET: 't2-secret' },
      credentialsPath: join(tmp(), 'none.json'),
    });
    expect([c.consumerKey, c.consumerSecret, c.accessToken, c.accessTokenSecret]).toEqual(['k', 's1-secret', 't1-token', 't2-secret']);
  });

  it('reads profile P from ADSYNC_P_* variables', () => {
    const c = loadCredentials({
      profile: 'acme',
      env: { ADSYNC_ACME_CONSUMER_KEY: 'ak', ADSYNC_ACME_CONSUMER_SECRET: 'as', ADSYNC_ACME_ACCESS_TOKEN: 'at', ADSYNC_ACME_ACCESS_TOKEN_SECRET: 'ats', ADSYNC_CONSUMER_KEY: 'other' },
      credentialsPath: join(tmp(), 'none.json'),
    });
    expect(c.consumerKey).toBe('ak');
    expect(c.profile).toBe('acme');
  });

  it('names every missing variable', () => {
    let error: unknown;
    try {
      loadCredentials({ profile: 'acme', env: { ADSYNC_ACME_CONSUMER_KEY: 'ak' }, credentialsPath: '/nonexistent/creds.json' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toBe(
      'credentials profile "acme" is incomplete: ADSYNC_ACME_CONSUMER_SECRET, ADSYNC_ACME_ACCESS_TOKEN, ADSYNC_ACME_ACCESS_TOKEN_SECRET are not set and not in /nonexistent/creds.json',
    );
    expect((error as ConfigError).exitCode).toBe(2);
  });

  it('writes the credentials file with mode 0600 and reads values missing from the environment from it', () => {
    const path = join(tmp(), 'sub', 'credentials.json');
    writeCredentialsProfile(path, 'acme', { consumer_key: 'fk', consumer_secret: 'fs', access_token: 'ft', access_token_secret: 'fts' });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    // The app's key and secret from the environment, the user's token and secret from the file.
    const c = loadCredentials({ profile: 'acme', env: { ADSYNC_ACME_CONSUMER_KEY: 'envkey', ADSYNC_ACME_CONSUMER_SECRET: 'envsecret' }, credentialsPath: path });
    expect([c.consumerKey, c.consumerSecret, c.accessToken, c.accessTokenSecret]).toEqual(['envkey', 'envsecret', 'ft', 'fts']);
    // Half a pair in the environment, the same as the file's: the file's other half goes with it.
    const same = loadCredentials({ profile: 'acme', env: { ADSYNC_ACME_ACCESS_TOKEN: 'ft' }, credentialsPath: path });
    expect([same.consumerKey, same.consumerSecret, same.accessToken, same.accessTokenSecret]).toEqual(['fk', 'fs', 'ft', 'fts']);
    writeCredentialsProfile(path, 'default', { consumer_key: 'dk' });
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({
      profiles: { acme: { consumer_key: 'fk', consumer_secret: 'fs', access_token: 'ft', access_token_secret: 'fts' }, default: { consumer_key: 'dk' } },
    });
  });

  it('refuses a key or token from the environment signed with the secret of the file\'s other one, naming the missing variable', () => {
    const path = join(tmp(), 'credentials.json');
    writeCredentialsProfile(path, 'acme', { consumer_key: 'fk', consumer_secret: 'fs-secret', access_token: 'ft-token', access_token_secret: 'fts-secret' });
    const refused = (env: NodeJS.ProcessEnv): ConfigError => {
      try {
        loadCredentials({ profile: 'acme', env, credentialsPath: path });
      } catch (error) {
        return error as ConfigError;
      }
      throw new Error('not refused');
    };
    // A new token set in the environment, its secret forgotten: the file's secret is the old token's.
    const token = refused({ ADSYNC_ACME_ACCESS_TOKEN: 'new-token' });
    expect(token).toBeInstanceOf(ConfigError);
    expect(token.exitCode).toBe(2);
    expect(token.message).toBe(`credentials profile "acme": ADSYNC_ACME_ACCESS_TOKEN is set but ADSYNC_ACME_ACCESS_TOKEN_SECRET is not, and the access_token_secret in profile "acme" of ${path} goes with another access_token`);
    expect(token.hint).toBe('set ADSYNC_ACME_ACCESS_TOKEN_SECRET too (the two go together), or unset ADSYNC_ACME_ACCESS_TOKEN to use the pair in the credentials file');
    // The app's key changed in the environment, its secret not.
    expect(refused({ ADSYNC_ACME_CONSUMER_KEY: 'new-app' }).message).toContain('ADSYNC_ACME_CONSUMER_KEY is set but ADSYNC_ACME_CONSUMER_SECRET is not, and the consumer_secret');
    // No value is quoted.
    expect(`${token.message} ${token.hint}`).not.toMatch(/new-token|fts-secret|ft-token/);
    // A secret set in the environment wins over the file's, with the file's token, as any value does.
    expect(loadCredentials({ profile: 'acme', env: { ADSYNC_ACME_ACCESS_TOKEN_SECRET: 'fixed-secret' }, credentialsPath: path }).accessTokenSecret).toBe('fixed-secret');
  });

  it('reads a profile name without regard to case, in the file as in its variables', () => {
    const path = join(tmp(), 'credentials.json');
    // `adsync auth login --profile acme` stored it; the job says `credentials: Acme`.
    writeCredentialsProfile(path, 'acme', { consumer_key: 'fk', consumer_secret: 'fs', access_token: 'ft', access_token_secret: 'fts' });
    const env = { ADSYNC_ACME_CONSUMER_KEY: 'fk', ADSYNC_ACME_CONSUMER_SECRET: 'fs' };
    const c = loadCredentials({ profile: 'Acme', env, credentialsPath: path });
    expect([c.consumerKey, c.consumerSecret, c.accessToken, c.accessTokenSecret]).toEqual(['fk', 'fs', 'ft', 'fts']);
    expect(loadCredentials({ profile: 'ACME', credentialsPath: path, env: {} }).accessToken).toBe('ft');
    // A login under another spelling updates that profile, not a second one that shares its variables.
    writeCredentialsProfile(path, 'ACME', { access_token: 'ft2' });
    expect(Object.keys((JSON.parse(readFileSync(path, 'utf8')) as { profiles: object }).profiles)).toEqual(['acme']);
    // `Default` is the unnamed profile: the ADSYNC_* variables.
    const d = loadCredentials({ profile: 'Default', env: { ADSYNC_CONSUMER_KEY: 'k', ADSYNC_CONSUMER_SECRET: 's', ADSYNC_ACCESS_TOKEN: 't', ADSYNC_ACCESS_TOKEN_SECRET: 'ts' }, credentialsPath: path });
    expect(d.accessToken).toBe('t');
    // Two keys the same but for case: which one is meant cannot be told.
    writeFileSync(path, JSON.stringify({ profiles: { acme: { access_token: 'a' }, ACME: { access_token: 'b' } } }), { mode: 0o600 });
    expect(() => loadCredentials({ profile: 'Acme', env, credentialsPath: path })).toThrow(`credentials file ${path} has profiles "acme", "ACME", which differ only in case: adsync cannot tell which one is "Acme"`);
    expect(loadCredentials({ profile: 'ACME', env, credentialsPath: path, consumerOnly: true }).consumerKey).toBe('fk');
  });

  it('takes an empty credentials file for one without profiles; refuses one that is not JSON without quoting it, and says where one that is JSON is wrong', () => {
    const path = join(tmp(), 'credentials.json');
    // Made ahead for `adsync auth login` to fill: touch, chmod 600.
    writeFileSync(path, '', { mode: 0o600 });
    expect(() => loadCredentials({ profile: 'acme', env: {}, credentialsPath: path })).toThrow('credentials profile "acme" is incomplete');
    writeCredentialsProfile(path, 'acme', { consumer_key: 'fk' });
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ profiles: { acme: { consumer_key: 'fk' } } });

    // Cut off in an editor. The hint is not `adsync auth login` alone: that refuses the file too.
    writeFileSync(path, '{"profiles": {"acme": {"access_token": "tok-1234567-secret", ', { mode: 0o600 });
    let error: ConfigError | undefined;
    try {
      loadCredentials({ profile: 'acme', env: {}, credentialsPath: path });
    } catch (e) {
      error = e as ConfigError;
    }
    expect(error?.message).toBe(`credentials file ${path} is not valid JSON`);
    expect(error?.hint).toBe('correct it (adsync writes {"profiles": {"<profile>": {"consumer_key": ..., "access_token": ...}}}), or move it away and run `adsync auth login` again for each profile it held: login does not overwrite a file it cannot read');
    expect(`${error?.message} ${error?.hint}`).not.toContain('tok-1234567');

    // JSON, but not as adsync writes it (a value left empty by hand, a number): say where.
    writeFileSync(path, '{"profiles": {"acme": {"consumer_key": "fk", "access_token": "", "access_token_secret": 12345678}}}', { mode: 0o600 });
    expect(() => loadCredentials({ profile: 'acme', env: {}, credentialsPath: path })).toThrow(
      `credentials file ${path} is not as adsync writes it: profiles.acme.access_token: Too small: expected string to have >=1 characters; profiles.acme.access_token_secret: Invalid input: expected string, received number`,
    );
  });

  it('keeps a credentials file that is a symbolic link a link, and updates its target', () => {
    const dir = tmp();
    mkdirSync(join(dir, 'secrets'), { mode: 0o700 });
    const target = join(dir, 'secrets', 'adsync.json');
    writeCredentialsProfile(target, 'acme', { consumer_key: 'ak' });
    const link = join(dir, 'credentials.json');
    symlinkSync(join('secrets', 'adsync.json'), link);
    writeCredentialsProfile(link, 'other', { consumer_key: 'ok' });
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(JSON.parse(readFileSync(target, 'utf8'))).toEqual({ profiles: { acme: { consumer_key: 'ak' }, other: { consumer_key: 'ok' } } });
    expect(statSync(target).mode & 0o777).toBe(0o600);

    // A link whose target does not exist yet: the target is created, the link kept.
    const dangling = join(dir, 'dangling.json');
    symlinkSync(join(dir, 'secrets', 'new.json'), dangling);
    writeCredentialsProfile(dangling, 'acme', { consumer_key: 'nk' });
    expect(lstatSync(dangling).isSymbolicLink()).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, 'secrets', 'new.json'), 'utf8'))).toEqual({ profiles: { acme: { consumer_key: 'nk' } } });
  });

  it('keeps every profile when several processes write the file at once', async () => {
    const path = join(tmp(), 'credentials.json');
    const module = fileURLToPath(new URL('../../dist/api/credentials.js', import.meta.url));
    // Each process stores its own profile 20 times over, as concurrent `adsync auth login`s do.
    const script = `const { writeCredentialsProfile } = await import(${JSON.stringify(module)}); for (let i = 0; i < 20; i++) writeCredentialsProfile(process.argv[1], process.argv[2], { consumer_key: 'k' + i });`;
    const names = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'];
    const codes = await Promise.all(
      names.map(
        (name) =>
          new Promise<number | null>((done) => {
            spawn(process.execPath, ['--input-type=module', '-e', script, path, name], { stdio: 'inherit' }).on('close', done);
          }),
      ),
    );
    expect(codes).toEqual(names.map(() => 0));
    const stored = JSON.parse(readFileSync(path, 'utf8')) as { profiles: Record<string, { consumer_key: string }> };
    expect(Object.keys(stored.profiles).sort()).toEqual(names);
    expect(Object.values(stored.profiles).map((p) => p.consumer_key)).toEqual(names.map(() => 'k19'));
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it('refuses a value with spaces, a carriage return or quotes around it, naming where it comes from but not the value', () => {
    const env = { ADSYNC_ACME_CONSUMER_KEY: 'ak', ADSYNC_ACME_CONSUMER_SECRET: 'as-secret', ADSYNC_ACME_ACCESS_TOKEN: 'at-token' };
    const path = join(tmp(), 'credentials.json');
    const failure = (extra: Record<string, string>): ConfigError => {
      try {
        loadCredentials({ profile: 'acme', env: { ...env, ...extra }, credentialsPath: path });
      } catch (error) {
        return error as ConfigError;
      }
      throw new Error('loaded');
    };
    for (const [value, what] of [
      ['ats-secret\r', 'spaces or a line break'],
      [' ats-secret', 'spaces or a line break'],
      ['"ats-secret"', 'quotes'],
      ["'ats-secret'", 'quotes'],
    ] as const) {
      const error = failure({ ADSYNC_ACME_ACCESS_TOKEN_SECRET: value });
      expect(error).toBeInstanceOf(ConfigError);
      expect(error.exitCode).toBe(2);
      expect(error.message).toBe(`credentials profile "acme": ADSYNC_ACME_ACCESS_TOKEN_SECRET has ${what} around its value`);
      expect(`${error.message}${error.hint ?? ''}`).not.toContain('ats-secret');
    }
    writeCredentialsProfile(path, 'acme', { access_token_secret: 'ats-secret ' });
    expect(failure({}).message).toBe(`credentials profile "acme": access_token_secret in profile "acme" of ${path} has spaces or a line break around its value`);
    // A quote inside a value, or an empty variable (the file's value is used), is fine.
    writeCredentialsProfile(path, 'acme', { consumer_key: 'fk', access_token_secret: 'ats"secret' });
    expect(loadCredentials({ profile: 'acme', env: { ...env, ADSYNC_ACME_CONSUMER_KEY: '' }, credentialsPath: path }).accessTokenSecret).toBe('ats"secret');
  });

  it('a profile found nowhere, with a credentials file holding others, is named as not existing (a misspelt `credentials:`)', () => {
    const path = join(tmp(), 'credentials.json');
    writeCredentialsProfile(path, 'acme', { consumer_key: 'ak', consumer_secret: 'as', access_token: 'at', access_token_secret: 'ats' });
    writeCredentialsProfile(path, 'default', { consumer_key: 'dk' });
    expect(() => loadCredentials({ profile: 'acmee', env: {}, credentialsPath: path })).toThrow(
      `credentials profile "acmee" does not exist: no ADSYNC_ACMEE_* variable is set and ${path} has no profile "acmee" (it has "acme", "default")`,
    );
    // Part of the profile set somewhere: incomplete, as before; and a login of a new profile is no typo.
    expect(() => loadCredentials({ profile: 'acmee', env: { ADSYNC_ACMEE_CONSUMER_KEY: 'k' }, credentialsPath: path })).toThrow(/^credentials profile "acmee" is incomplete: /);
    expect(() => loadCredentials({ profile: 'acmee', env: {}, credentialsPath: path, consumerOnly: true })).toThrow(/^credentials profile "acmee" is incomplete: /);
  });

  it('keeps keys it does not know when it rewrites the file', () => {
    const path = join(tmp(), 'credentials.json');
    writeFileSync(path, JSON.stringify({ comment: 'managed by ops', profiles: { acme: { consumer_key: 'ak', note: 'prod account, ask Ana' } } }), { mode: 0o600 });
    writeCredentialsProfile(path, 'other', { consumer_key: 'ok' });
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({
      comment: 'managed by ops',
      profiles: { acme: { consumer_key: 'ak', note: 'prod account, ask Ana' }, other: { consumer_key: 'ok' } },
    });
  });

  it('refuses a credentials file that others can read', () => {
    const path = join(tmp(), 'credentials.json');
    writeFileSync(path, JSON.stringify({ profiles: { default: { consumer_key: 'k' } } }));
    chmodSync(path, 0o644);
    expect(() => loadCredentials({ env: {}, credentialsPath: path })).toThrow(/can be read by others \(mode 644\); adsync will not use it/);
    // Writable by the group only: someone else could put their tokens in it.
    chmodSync(path, 0o620);
    expect(() => loadCredentials({ env: {}, credentialsPath: path })).toThrow(`credentials file ${path} can be changed by others (mode 620); adsync will not use it`);
  });

  it('redacts secrets when serialized or inspected', () => {
    const c = loadCredentials({
      env: { ADSYNC_CONSUMER_KEY: 'key-1', ADSYNC_CONSUMER_SECRET: 'SECRET-A', ADSYNC_ACCESS_TOKEN: 'TOKEN-B', ADSYNC_ACCESS_TOKEN_SECRET: 'SECRET-C' },
      credentialsPath: '/nonexistent',
    });
    const text = JSON.stringify({ c }) + inspect(c) + inspect({ nested: { c } });
    for (const s of ['SECRET-A', 'TOKEN-B', 'SECRET-C']) expect(text).not.toContain(s);
    expect(text).toContain('key-1');
  });
});
