/**
 * What README says about where adsync's settings and credentials come from, `adsync unlock`,
 * and usage errors, checked end to end with the real CLI against the emulator:
 *
 * - the settings file: `--config <file>`, else `ADSYNC_CONFIG`, else `config/adsync.yaml` in the
 *   working directory, else the built-in defaults; one file is read (they are not merged), a
 *   named file must exist, relative paths are relative to the working directory;
 * - the credentials file of a job's profile (`credentials: acme`): the settings key
 *   `credentials_file`, else `ADSYNC_CREDENTIALS`, else `$XDG_CONFIG_HOME/adsync/credentials.json`,
 *   else `~/.config/adsync/credentials.json`; values in the environment win over the file;
 *   `adsync auth login --credentials-file` writes one a job can use; a file group or others
 *   can read is refused (exit 2);
 * - `adsync unlock <job>` removes a held lock (another machine's, or a killed run's) so the
 *   next run goes ahead;
 * - usage errors (unknown flag or command, a bad `--max-delete-ratio` or `--log-level`, a job
 *   name README does not allow, two job files with one job name) exit 2 with a short message,
 *   no stack trace, and nothing sent.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { openTestDatabase } from '../helpers/sqlite.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStateStore } from '../../src/state/index.js';
import type { CliResult } from '../helpers/cli.js';
import { collect, createWorkspace, summaries, type Workspace } from '../helpers/e2e.js';

let ws: Workspace;
beforeEach(async () => {
  ws = await createWorkspace();
});
afterEach(async () => {
  await ws.close();
});

/** Two usable rows and one rejected one, so every run writes a rejects file. */
const CRM = 'Email\na@example.com\nnot-an-email\nb@example.com\n';

const audienceJob = (head = ''): string =>
  `${head}account_id: emu-account\nmax_reject_ratio: 0.5\nsource: { path: crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  mode: add\n  identifiers: { email: Email }\n`;

const requests = (): number => ws.emulator.state().requests.total;

const members = (): string[] => ws.emulator.state().custom_audiences['emu-audience']?.members.email ?? [];

/** The workspace's own settings file (fast retries), which ADSYNC_CONFIG names. */
const workspaceSettings = (): string => ws.read('adsync.yaml');

function firstSummary(r: CliResult): Record<string, unknown> {
  const s = summaries(r)[0];
  expect(s, `no JSON summary; stderr: ${r.stderr}`).toBeDefined();
  return s ?? {};
}

function expectNoStack(r: CliResult): void {
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(r.stderr).not.toContain('internal error');
}

describe('where the settings come from', () => {
  /** Runs the job and answers which folder its rejects file went to, relative to the workspace. */
  async function rejectsDirOf(args: string[], env: Record<string, string | undefined>): Promise<string> {
    const r = await ws.cli([...args, 'run', 'crm.yaml', '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    const file = String(firstSummary(r).rejects_file);
    expect(existsSync(file), file).toBe(true);
    // <rejects_dir>/<job>/<run id>.csv
    expect(relative(dirname(file), file)).toMatch(/^\d{8}T\d{6}Z-[0-9a-f]{6}\.csv$/);
    return relative(ws.dir, dirname(dirname(file)));
  }

  it('--config wins over ADSYNC_CONFIG, which wins over config/adsync.yaml; one file is read, not merged; else the defaults', async () => {
    ws.write('crm.csv', CRM);
    ws.write('crm.yaml', audienceJob());
    ws.write('config/adsync.yaml', 'rejects_dir: from-default\n');
    ws.write('conf/flag.yaml', 'rejects_dir: from-flag\nstate: flag-state/state.sqlite\n');
    ws.write('env.yaml', 'rejects_dir: from-env\n');
    ws.write('no-rejects-dir.yaml', 'concurrency: 2\n');
    const envConfig = join(ws.dir, 'env.yaml');

    // All three given: the flag's file, whose relative paths are relative to the working
    // directory (not to conf/); its `state` is used when ADSYNC_STATE is not set.
    expect(await rejectsDirOf(['--config', 'conf/flag.yaml'], { ADSYNC_CONFIG: envConfig, ADSYNC_STATE: undefined })).toBe('from-flag');
    expect(existsSync(join(ws.dir, 'flag-state', 'state.sqlite'))).toBe(true);
    expect(existsSync(join(ws.dir, 'conf', 'from-flag'))).toBe(false);
    // ADSYNC_CONFIG and config/adsync.yaml: the variable's file.
    expect(await rejectsDirOf([], { ADSYNC_CONFIG: envConfig })).toBe('from-env');
    // Neither --config nor ADSYNC_CONFIG: config/adsync.yaml of the working directory.
    expect(await rejectsDirOf([], { ADSYNC_CONFIG: undefined })).toBe('from-default');
    // A named file replaces config/adsync.yaml: a key it does not set takes the built-in default.
    expect(await rejectsDirOf([], { ADSYNC_CONFIG: join(ws.dir, 'no-rejects-dir.yaml') })).toBe(join('.adsync', 'rejects'));
    // No settings file at all: the built-in defaults.
    rmSync(join(ws.dir, 'config'), { recursive: true });
    expect(await rejectsDirOf([], { ADSYNC_CONFIG: undefined })).toBe(join('.adsync', 'rejects'));
    expect(members()).toHaveLength(2);
    // --help says so, in that order.
    const help = await ws.cli(['--help']);
    expect(help.stdout.replace(/\s+/g, ' ')).toContain('--config <file> settings file (default: the file ADSYNC_CONFIG names, else config/adsync.yaml when present)');
    expect(help.stdout.replace(/\s+/g, ' ')).toContain('--log-level <level> log level (default: ADSYNC_LOG_LEVEL, else info (warn for validate)) (choices:');
  });

  it('a leading ~ in state, rejects_dir, a job source and ADSYNC_STATE is the home folder (no folder named ~)', async () => {
    const home = join(ws.dir, 'home');
    mkdirSync(home);
    writeFileSync(join(home, 'crm.csv'), CRM);
    ws.write('tilde.yaml', audienceJob().replace('source: { path: crm.csv }', 'source: { path: ~/crm.csv }'));
    ws.write('tilde-settings.yaml', `${workspaceSettings().replace(/^rejects_dir: .*\n/m, '')}state: ~/adsync/state.sqlite\nrejects_dir: ~/rejects\n`);
    const r = await ws.cli(['--config', 'tilde-settings.yaml', 'run', 'tilde.yaml', '--json'], { HOME: home, ADSYNC_STATE: undefined, ADSYNC_CONFIG: undefined });
    expect(r.code, r.stderr).toBe(0);
    expect(firstSummary(r)).toMatchObject({ status: 'success', read: 3, added: 2 });
    expect(String(firstSummary(r).rejects_file).startsWith(join(home, 'rejects', 'tilde') + '/')).toBe(true);
    expect(existsSync(join(home, 'adsync', 'state.sqlite'))).toBe(true);
    const byVariable = await ws.cli(['runs', '--json'], { HOME: home, ADSYNC_STATE: '~/adsync/state.sqlite' });
    expect(byVariable.code, byVariable.stderr).toBe(0);
    expect(byVariable.stdout).toContain('"job":"tilde"');
    expect(existsSync(join(ws.dir, '~'))).toBe(false);
  });

  it('a settings file named by --config or ADSYNC_CONFIG must exist (exit 2), even when config/adsync.yaml does', async () => {
    ws.write('crm.csv', CRM);
    ws.write('crm.yaml', audienceJob());
    ws.write('config/adsync.yaml', 'rejects_dir: from-default\n');
    const byFlag = await ws.cli(['--config', 'missing.yaml', 'run', 'crm.yaml'], { ADSYNC_CONFIG: undefined });
    expect(byFlag.code).toBe(2);
    expect(byFlag.stderr).toBe('adsync: missing.yaml does not exist\n');
    const byEnv = await ws.cli(['run', 'crm.yaml'], { ADSYNC_CONFIG: join(ws.dir, 'gone.yaml') });
    expect(byEnv.code).toBe(2);
    expect(byEnv.stderr).toBe(`adsync: ${join(ws.dir, 'gone.yaml')} does not exist\n`);
    // The flag is read even when ADSYNC_CONFIG names a good file.
    const both = await ws.cli(['--config', 'missing.yaml', 'run', 'crm.yaml']);
    expect(both.code).toBe(2);
    expect(both.stderr).toBe('adsync: missing.yaml does not exist\n');
    expect(requests()).toBe(0);
    expect(existsSync(join(ws.dir, 'from-default'))).toBe(false);
  });
});

describe('settings and job keys that must agree with each other', () => {
  const LOCK_REASON = "a running job's lock would expire between two heartbeats and another run could take it";

  beforeEach(() => {
    ws.write('crm.csv', CRM);
    ws.write('crm.yaml', audienceJob());
  });

  it('lock.ttl_seconds must be greater than lock.heartbeat_seconds (exit 2, naming both), also against a default', async () => {
    const cases: [string, string][] = [
      ['lock: { ttl_seconds: 20, heartbeat_seconds: 20 }', 'lock.ttl_seconds (20) must be greater than lock.heartbeat_seconds (20)'],
      ['lock: { ttl_seconds: 10, heartbeat_seconds: 30 }', 'lock.ttl_seconds (10) must be greater than lock.heartbeat_seconds (30)'],
      ['lock: { heartbeat_seconds: 120 }', 'lock.ttl_seconds (120, the default) must be greater than lock.heartbeat_seconds (120)'],
      ['lock: { ttl_seconds: 5 }', 'lock.ttl_seconds (5) must be greater than lock.heartbeat_seconds (20, the default)'],
    ];
    for (const [i, [lock, problem]] of cases.entries()) {
      ws.write('locks.yaml', `${workspaceSettings()}${lock}\n`);
      for (const args of i === 0 ? [['run', 'crm.yaml'], ['runs']] : [['run', 'crm.yaml']]) {
        const r = await ws.cli(['--config', 'locks.yaml', ...args]);
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toBe(`adsync: locks.yaml is not valid:\n  ${problem}: ${LOCK_REASON}\n`);
        expect(r.stdout).toBe('');
        expectNoStack(r);
      }
    }
    expect(requests()).toBe(0);
    expect(existsSync(ws.statePath)).toBe(false);
    ws.write('locks.yaml', `${workspaceSettings()}lock: { ttl_seconds: 2, heartbeat_seconds: 1 }\n`);
    const ok = await ws.cli(['--config', 'locks.yaml', 'run', 'crm.yaml', '--json']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(firstSummary(ok)).toMatchObject({ status: 'success', added: 2 });
  });

  it('retry.min_delay_ms must not be greater than retry.max_delay_ms, in the settings and in a job (with the settings under it)', async () => {
    ws.write('slow.yaml', 'retry: { min_delay_ms: 40000 }\n');
    const settings = await ws.cli(['--config', 'slow.yaml', 'run', 'crm.yaml']);
    expect(settings.code, settings.stderr).toBe(2);
    expect(settings.stderr).toBe('adsync: slow.yaml is not valid:\n  retry.min_delay_ms (40000) must not be greater than retry.max_delay_ms (30000, the default)\n');
    expectNoStack(settings);

    // The workspace's settings: retry 20 ms to 200 ms.
    ws.write('both.yaml', audienceJob('retry: { min_delay_ms: 100000, max_delay_ms: 1 }\n'));
    ws.write('min.yaml', audienceJob('retry: { min_delay_ms: 1000 }\n'));
    ws.write('max.yaml', audienceJob('retry: { max_delay_ms: 10 }\n'));
    const r = await ws.cli(['run', 'both.yaml', 'min.yaml', 'max.yaml', 'crm.yaml', '--json']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('adsync: both.yaml is not valid:\n  retry.min_delay_ms (100000) must not be greater than retry.max_delay_ms (1)\n');
    expect(r.stderr).toContain('adsync: min.yaml is not valid:\n  retry.min_delay_ms (1000) must not be greater than retry.max_delay_ms (200, from the settings)\n');
    expect(r.stderr).toContain('adsync: max.yaml is not valid:\n  retry.min_delay_ms (20, from the settings) must not be greater than retry.max_delay_ms (10)\n');
    expectNoStack(r);
    // The valid job still ran (the others have failed summary objects); equal delays are fine.
    expect(summaries(r).map((s) => [s.job, s.status])).toEqual([
      ['both', 'failed'],
      ['min', 'failed'],
      ['max', 'failed'],
      ['crm', 'success'],
    ]);
    ws.write('equal.yaml', audienceJob('retry: { min_delay_ms: 300, max_delay_ms: 300 }\n'));
    const equal = await ws.cli(['validate', 'equal.yaml']);
    expect(equal.code, equal.stderr).toBe(0);
  });
});

describe('where the credentials file is found', () => {
  const ACME_JOB = audienceJob('credentials: acme\n');

  /** Writes a credentials file with profile `acme` (README: `adsync auth login` writes this shape). */
  function writeProfile(path: string, options: { wrongSecret?: boolean; mode?: number } = {}): string {
    const c = ws.emulator.credentials;
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const acme = {
      consumer_key: c.consumerKey,
      consumer_secret: c.consumerSecret,
      access_token: c.accessToken,
      access_token_secret: options.wrongSecret ? 'not-the-token-secret' : c.accessTokenSecret,
    };
    writeFileSync(path, `${JSON.stringify({ profiles: { acme } }, null, 2)}\n`);
    chmodSync(path, options.mode ?? 0o600);
    return path;
  }

  /** Runs the acme job with --full, so every run has to send (signed) requests. */
  async function runAcme(env: Record<string, string | undefined>): Promise<CliResult> {
    return ws.cli(['run', 'acme.yaml', '--json', '--full'], env);
  }

  function expectAccepted(r: CliResult): void {
    expect(r.code, r.stderr).toBe(0);
    expect(firstSummary(r)).toMatchObject({ job: 'acme', status: 'success', added: 2 });
  }

  function expectRejectedByTheService(r: CliResult): void {
    expect(r.code, r.stderr).toBe(3);
    expect(firstSummary(r)).toMatchObject({ status: 'failed', added: 0 });
  }

  function expectLookedIn(r: CliResult, path: string): void {
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `adsync: job acme failed: credentials profile "acme" is incomplete: ADSYNC_ACME_CONSUMER_KEY, ADSYNC_ACME_CONSUMER_SECRET, ADSYNC_ACME_ACCESS_TOKEN, ADSYNC_ACME_ACCESS_TOKEN_SECRET are not set and not in ${path} (`,
    );
    expectNoStack(r);
  }

  beforeEach(() => {
    ws.write('crm.csv', CRM);
    ws.write('acme.yaml', ACME_JOB);
  });

  it('by default $XDG_CONFIG_HOME/adsync/credentials.json, else ~/.config/adsync/credentials.json', async () => {
    const home = ws.env.HOME ?? '';
    const xdg = join(ws.dir, 'xdg');
    const xdgFile = join(xdg, 'adsync', 'credentials.json');
    const homeFile = join(home, '.config', 'adsync', 'credentials.json');

    // The profile is not in the environment (only the unnamed one is): the file is needed.
    expectLookedIn(await runAcme({ XDG_CONFIG_HOME: xdg }), xdgFile);
    writeProfile(homeFile);
    // XDG_CONFIG_HOME set: the file under it, not the one under HOME.
    expectLookedIn(await runAcme({ XDG_CONFIG_HOME: xdg }), xdgFile);
    expect(requests()).toBe(0);
    // XDG_CONFIG_HOME unset: ~/.config/adsync/credentials.json, and the service accepts it.
    expectAccepted(await runAcme({ XDG_CONFIG_HOME: undefined }));
    writeProfile(homeFile, { wrongSecret: true });
    expectRejectedByTheService(await runAcme({ XDG_CONFIG_HOME: undefined }));
    writeProfile(xdgFile);
    expectAccepted(await runAcme({ XDG_CONFIG_HOME: xdg }));
    expect(members()).toHaveLength(2);
  });

  it('ADSYNC_CREDENTIALS names the file; credentials_file in the settings names it and wins; the environment wins per value', async () => {
    const defaultFile = writeProfile(join(ws.env.XDG_CONFIG_HOME ?? '', 'adsync', 'credentials.json'), { wrongSecret: true });
    const envFile = writeProfile(join(ws.dir, 'secrets', 'env.json'));
    const wrongFile = writeProfile(join(ws.dir, 'secrets', 'wrong.json'), { wrongSecret: true });
    expectRejectedByTheService(await runAcme({}));
    expect(existsSync(defaultFile)).toBe(true);

    // ADSYNC_CREDENTIALS instead of the default file.
    expectAccepted(await runAcme({ ADSYNC_CREDENTIALS: envFile }));
    expectLookedIn(await runAcme({ ADSYNC_CREDENTIALS: join(ws.dir, 'secrets', 'none.json') }), join(ws.dir, 'secrets', 'none.json'));

    // credentials_file (relative to the working directory) pins the file, whatever ADSYNC_CREDENTIALS says.
    writeProfile(join(ws.dir, 'secrets', 'pinned.json'));
    ws.write('pinned.yaml', `${workspaceSettings()}credentials_file: secrets/pinned.json\n`);
    ws.write('pinned-missing.yaml', `${workspaceSettings()}credentials_file: secrets/missing.json\n`);
    expectAccepted(await runAcme({ ADSYNC_CONFIG: join(ws.dir, 'pinned.yaml'), ADSYNC_CREDENTIALS: wrongFile }));
    expectLookedIn(await runAcme({ ADSYNC_CONFIG: join(ws.dir, 'pinned-missing.yaml'), ADSYNC_CREDENTIALS: envFile }), join(ws.dir, 'secrets', 'missing.json'));

    // A value set in the environment is used instead of the file's.
    expectRejectedByTheService(await runAcme({ ADSYNC_CREDENTIALS: envFile, ADSYNC_ACME_ACCESS_TOKEN_SECRET: 'not-the-token-secret' }));
    expectAccepted(await runAcme({ ADSYNC_CREDENTIALS: wrongFile, ADSYNC_ACME_ACCESS_TOKEN_SECRET: ws.emulator.credentials.accessTokenSecret }));
  });

  it('adsync auth login --credentials-file writes a 0600 file with a new token that a job then runs with', async () => {
    const file = join('secrets', 'acme.json');
    const consumer = { ADSYNC_ACME_CONSUMER_KEY: ws.emulator.credentials.consumerKey, ADSYNC_ACME_CONSUMER_SECRET: ws.emulator.credentials.consumerSecret };
    const step1 = await ws.cli(['auth', 'login', '--profile', 'acme', '--no-prompt', '--credentials-file', file], consumer);
    expect(step1.code, step1.stderr).toBe(0);
    const token = new URL(/(http:\/\/\S+\/oauth\/authorize\?\S+)/.exec(step1.stderr)?.[1] ?? 'http://x').searchParams.get('oauth_token') ?? '';
    const { pin } = (await (await fetch(`${ws.emulator.url}/_emulator/pin?oauth_token=${encodeURIComponent(token)}`)).json()) as { pin: string };
    const step2 = await ws.cli(['auth', 'login', '--profile', 'acme', '--pin', pin, '--credentials-file', file], consumer);
    expect(step2.code, step2.stderr).toBe(0);
    expect(step2.stderr).toContain(`Profile "acme" is stored in ${file} (mode 0600).`);

    const path = join(ws.dir, file);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const stored = (JSON.parse(readFileSync(path, 'utf8')) as { profiles: Record<string, Record<string, string>> }).profiles.acme ?? {};
    expect(stored.access_token).toMatch(/.+/);
    expect(stored.access_token).not.toBe(ws.emulator.credentials.accessToken);
    expect(existsSync(join(ws.env.XDG_CONFIG_HOME ?? '', 'adsync', 'credentials.json'))).toBe(false);

    // The job's profile is not in the environment: all four values come from the file.
    expectAccepted(await runAcme({ ADSYNC_CREDENTIALS: path }));
    expect(members()).toHaveLength(2);
  });

  it('refuses a credentials file that group or others can read (exit 2), before sending anything', async () => {
    const path = join(ws.dir, 'secrets', 'acme.json');
    for (const mode of [0o644, 0o640, 0o604]) {
      writeProfile(path, { mode });
      const r = await runAcme({ ADSYNC_CREDENTIALS: path });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toBe(
        `adsync: job acme failed: credentials file ${path} can be read by others (mode ${mode.toString(8)}); adsync will not use it (run: chmod 600 ${path})\n`,
      );
      expect(firstSummary(r)).toMatchObject({ status: 'failed', exit_code: 2, requests: 0 });
    }
    expect(requests()).toBe(0);
    chmodSync(path, 0o600);
    expectAccepted(await runAcme({ ADSYNC_CREDENTIALS: path }));
  });
});

describe('adsync unlock <job>', () => {
  const LOCKED = /^adsync: job crm failed: job crm is already running \(lock held by (\S+) since (\S+), last heartbeat \S+\); nothing was done \(if that process is gone, the lock expires at \S+; or remove it with `adsync unlock crm`\)$/m;

  async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (!condition()) {
      if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** The owner of a lock (job crm's by default), read from the state database (undefined: none yet). */
  function lockOwner(key = 'crm'): string | undefined {
    try {
      const db = openTestDatabase(ws.statePath, { readonly: true, fileMustExist: true });
      try {
        return (db.prepare('SELECT owner FROM locks WHERE job = ?').get(key) as { owner: string } | undefined)?.owner;
      } finally {
        db.close();
      }
    } catch {
      return undefined; // the database or its schema is still being created
    }
  }

  beforeEach(() => {
    ws.write('crm.csv', CRM);
    ws.write('crm.yaml', audienceJob());
  });

  it("removes another machine's lock: the refused run goes ahead afterwards", async () => {
    const owner = 'build-server-7:4242:a1b2c3';
    const acquiredAt = Date.now() - 5000;
    const store = openStateStore(ws.statePath);
    try {
      expect(await store.locks.acquire('crm', owner, 3_600_000, acquiredAt)).toEqual({ acquired: true });
    } finally {
      await store.close();
    }

    const refused = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(refused.code, refused.stderr).toBe(1);
    const m = LOCKED.exec(refused.stderr);
    expect(m, refused.stderr).not.toBeNull();
    expect(m?.[1]).toBe(owner);
    expect(m?.[2]).toBe(new Date(acquiredAt).toISOString());
    expect(firstSummary(refused)).toMatchObject({ status: 'failed', exit_code: 1, added: 0 });
    expect(requests()).toBe(0);

    const unlock = await ws.cli(['unlock', 'crm']);
    expect(unlock.code, unlock.stderr).toBe(0);
    expect(unlock.stderr).toBe(
      `removed the lock of job crm (held by ${owner} since ${new Date(acquiredAt).toISOString()}, last heartbeat ${new Date(acquiredAt).toISOString()}): its holder is on another host (build-server-7), so adsync cannot check whether that run is still alive; if it is, it stops at its next heartbeat (lock.heartbeat_seconds)\n`,
    );
    const again = await ws.cli(['unlock', 'crm']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toBe('job crm is not locked\n');

    const run = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(firstSummary(run)).toMatchObject({ status: 'success', added: 2 });
    expect(members()).toHaveLength(2);
    const after = openStateStore(ws.statePath);
    try {
      expect(await after.locks.get('crm')).toBeUndefined();
    } finally {
      await after.close();
    }
  });

  it('removes the lock a killed run left behind, naming that process', async () => {
    // A killed run on this machine cannot be shown refusing the next run: README says such a
    // lock is taken over automatically (the test above shows the refusal). Here the lock is a
    // real one, left by a real process.
    // The run's one user batch is answered after 5 s (and not abandoned before): the run
    // holds its lock for that long, and is killed while it does.
    ws.write('crm.yaml', audienceJob('request_timeout_ms: 30000\n'));
    ws.fault({ route: 'POST /12/**/users', kind: 'delay', ms: 5000, times: 1 });
    const child = ws.spawn(['run', 'crm.yaml', '--json']);
    const done = collect(child);
    // The job's lock first, then its audience's: killed between the two, the run would leave one.
    await waitFor(
      () => lockOwner() !== undefined && lockOwner('custom_audience:emu-account:emu-audience') !== undefined,
      10_000,
      'the run to take its locks',
    );
    child.kill('SIGKILL');
    const killed = await done;
    expect(killed.signal, killed.stderr).toBe('SIGKILL');

    const store = openStateStore(ws.statePath);
    let since = '';
    try {
      const lock = await store.locks.get('crm');
      expect(lock?.owner).toMatch(new RegExp(`^${hostname().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:${String(child.pid)}:[0-9a-f]+$`));
      since = new Date(lock?.acquiredAt ?? 0).toISOString();
    } finally {
      await store.close();
    }

    const unlock = await ws.cli(['unlock', 'crm']);
    expect(unlock.code, unlock.stderr).toBe(0);
    expect(unlock.stderr).toMatch(new RegExp(`^removed the lock of job crm \\(held by \\S+:${String(child.pid)}:[0-9a-f]+ since ${since.replace(/\./g, '\\.')}, last heartbeat \\S+\\), and the lock of custom audience emu-audience of account emu-account that the same run held: its process ${String(child.pid)} on this host is gone\n$`));

    const run = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(firstSummary(run)).toMatchObject({ status: 'success' });
    // Nothing was said about taking over a dead process's lock: there was none left (not the audience's either).
    expect(run.stderr).not.toContain('taking the lock over');
    expect(members()).toHaveLength(2);
  });
});

describe('usage errors exit 2 with a short message and no stack trace', () => {
  beforeEach(() => {
    ws.write('crm.csv', CRM);
    ws.write('crm.yaml', audienceJob());
  });

  function expectUsage(r: CliResult, firstLine: string): void {
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toBe(`${firstLine}\n(run \`adsync --help\` for usage)\n`);
    expect(r.stdout).toBe('');
  }

  it('--version and -V print the version of package.json, exit 0', async () => {
    const { version } = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const r = await ws.cli([flag]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(`${version}\n`);
    }
  });

  it('an unknown flag or command, a bad --log-level', async () => {
    expectUsage(await ws.cli(['run', 'crm.yaml', '--bogus']), "error: unknown option '--bogus'");
    expectUsage(await ws.cli(['--bogus', 'run', 'crm.yaml']), "error: unknown option '--bogus'");
    expectUsage(await ws.cli(['frobnicate', 'crm.yaml']), "error: unknown command 'frobnicate'");
    expectUsage(
      await ws.cli(['--log-level', 'loud', 'run', 'crm.yaml']),
      "error: option '--log-level <level>' argument 'loud' is invalid. Allowed choices are fatal, error, warn, info, debug, trace, silent.",
    );
    expect(requests()).toBe(0);
    expect(existsSync(ws.statePath)).toBe(false);
  });

  it('no command (adsync, adsync auth): the help on stderr, exit 2; asked for (--help, help), on stdout, exit 0', async () => {
    for (const args of [[], ['auth']]) {
      const r = await ws.cli(args);
      expect(r.code, `adsync ${args.join(' ')}`).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(new RegExp(`^Usage: adsync ${args.length > 0 ? 'auth ' : ''}\\[options\\] \\[command\\]\\n`));
    }
    for (const args of [['--help'], ['help'], ['auth', '--help'], ['help', 'auth']]) {
      const r = await ws.cli(args);
      expect(r.code, `adsync ${args.join(' ')}`).toBe(0);
      expect(r.stdout).toMatch(/^Usage: adsync /);
    }
  });

  it('ADSYNC_LOG_LEVEL that is not a level: exit 2 naming the variable and the levels, for every command; empty is unset (info)', async () => {
    const LEVELS = 'fatal, error, warn, info, debug, trace, silent';
    for (const value of ['verbose', 'INFO', ' ']) {
      for (const args of [['run', 'crm.yaml'], ['validate', 'crm.yaml'], ['runs'], ['unlock', 'crm']]) {
        const r = await ws.cli(args, { ADSYNC_LOG_LEVEL: value });
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
        expect(r.stderr).toBe(`adsync: ADSYNC_LOG_LEVEL is "${value}": expected one of ${LEVELS} (or empty for the default, info)\n`);
        expect(r.stdout).toBe('');
      }
    }
    expect(requests()).toBe(0);
    expect(existsSync(ws.statePath)).toBe(false);
    // --log-level wins over the variable, as README says.
    const flag = await ws.cli(['--log-level', 'warn', 'run', 'crm.yaml', '--json'], { ADSYNC_LOG_LEVEL: 'verbose' });
    expect(flag.code, flag.stderr).toBe(0);
    // Empty (`ADSYNC_LOG_LEVEL=` in a systemd EnvironmentFile) is the default, info.
    const empty = await ws.cli(['run', 'crm.yaml', '--json', '--full'], { ADSYNC_LOG_LEVEL: '' });
    expect(empty.code, empty.stderr).toBe(0);
    expect(firstSummary(empty)).toMatchObject({ status: 'success' });
    const levels = empty.stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => (JSON.parse(l) as { level: number }).level);
    expect(levels).toContain(30);
    expect(levels.every((l) => l >= 30)).toBe(true);
    expectNoStack(empty);
  });

  it('an API URL that is not an http(s) URL (a typo, a trailing space from an env file, another scheme): exit 2 before anything is read', async () => {
    for (const [variable, value, example] of [
      ['ADSYNC_ADS_URL', 'not-a-url', 'https://ads-api.x.com'],
      ['ADSYNC_ADS_URL', `${ws.emulator.url} `, 'https://ads-api.x.com'],
      ['ADSYNC_ADS_URL', 'ftp://127.0.0.1', 'https://ads-api.x.com'],
      ['ADSYNC_API_URL', 'api.x.com', 'https://api.x.com'],
    ] as const) {
      const r = await ws.cli(['run', 'crm.yaml', '--full'], { [variable]: value });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toBe(`adsync: ${variable} is ${JSON.stringify(value)}: expected an http or https URL such as ${example}, without spaces\n`);
    }
    ws.write('ftp.yaml', 'ads_url: ftp://127.0.0.1/\n');
    const file = await ws.cli(['--config', 'ftp.yaml', 'run', 'crm.yaml', '--full'], { ADSYNC_ADS_URL: undefined });
    expect(file.code, file.stderr).toBe(2);
    expect(file.stderr).toBe('adsync: ftp.yaml: ads_url is "ftp://127.0.0.1/": expected an http or https URL such as https://ads-api.x.com, without spaces\n');
    expect(requests()).toBe(0);
  });

  it('an API URL with a path, a query or a fragment (/12 copied from a request, a proxy path): exit 2 before anything is read, not a 404 that blames the job', async () => {
    const expected = (where: string, value: string, example: string): string =>
      `adsync: ${where} is ${JSON.stringify(value)}: expected the service's address without a path, query or fragment, such as ${example} (adsync adds each request's path, /12/... or /oauth/..., itself)\n`;
    for (const [variable, value, example] of [
      ['ADSYNC_ADS_URL', `${ws.emulator.url}/12`, 'https://ads-api.x.com'],
      ['ADSYNC_ADS_URL', `${ws.emulator.url}/12/`, 'https://ads-api.x.com'],
      ['ADSYNC_ADS_URL', `${ws.emulator.url}/api/`, 'https://ads-api.x.com'],
      ['ADSYNC_ADS_URL', `${ws.emulator.url}/?x=1`, 'https://ads-api.x.com'],
      ['ADSYNC_API_URL', `${ws.emulator.url}/oauth`, 'https://api.x.com'],
      ['ADSYNC_API_URL', `${ws.emulator.url}#top`, 'https://api.x.com'],
    ] as const) {
      const r = await ws.cli(['run', 'crm.yaml', '--full'], { [variable]: value });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toBe(expected(variable, value, example));
    }
    ws.write('path.yaml', `ads_url: ${ws.emulator.url}/12\n`);
    const file = await ws.cli(['--config', 'path.yaml', 'run', 'crm.yaml', '--full'], { ADSYNC_ADS_URL: undefined });
    expect(file.code, file.stderr).toBe(2);
    expect(file.stderr).toBe(expected('path.yaml: ads_url', `${ws.emulator.url}/12`, 'https://ads-api.x.com'));
    expect(requests()).toBe(0);
    // The address alone, with or without its slash, is the service's.
    for (const value of [ws.emulator.url, `${ws.emulator.url}/`]) {
      const r = await ws.cli(['run', 'crm.yaml', '--full'], { ADSYNC_ADS_URL: value, ADSYNC_API_URL: value });
      expect(r.code, r.stderr).toBe(0);
    }
  });

  it("http:// to X's own hosts (the token would go out in clear before the redirect to https is refused): exit 2 before anything is read", async () => {
    for (const [variable, value, https] of [
      ['ADSYNC_ADS_URL', 'http://ads-api.x.com', 'https://ads-api.x.com'],
      ['ADSYNC_ADS_URL', 'http://ADS-API-SANDBOX.X.COM/', 'https://ads-api-sandbox.x.com'],
      ['ADSYNC_API_URL', 'http://api.twitter.com', 'https://api.twitter.com'],
      ['ADSYNC_API_URL', 'http://api.x.com:80', 'https://api.x.com'],
    ] as const) {
      const r = await ws.cli(['run', 'crm.yaml', '--full'], { [variable]: value });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toBe(
        `adsync: ${variable} is ${JSON.stringify(value)}: X's services take https only, and a request sent over http would carry the consumer key, the access token and the signature in clear before being refused; use ${https}\n`,
      );
    }
    ws.write('clear.yaml', 'ads_url: http://ads-api.x.com\n');
    const file = await ws.cli(['--config', 'clear.yaml', 'run', 'crm.yaml', '--full'], { ADSYNC_ADS_URL: undefined });
    expect(file.code, file.stderr).toBe(2);
    expect(file.stderr).toContain("adsync: clear.yaml: ads_url is \"http://ads-api.x.com\": X's services take https only");
    // validate reads the settings and calls nothing: X's host over http is refused there too, a
    // host that only ends in the same letters (an emulator, a stand-in) is not X's.
    const refused = await ws.cli(['validate', 'crm.yaml'], { ADSYNC_ADS_URL: 'http://ads-api.x.com' });
    expect(refused.code, refused.stderr).toBe(2);
    for (const host of ['http://notx.com', 'http://x.com.example']) {
      const allowed = await ws.cli(['validate', 'crm.yaml'], { ADSYNC_ADS_URL: host });
      expect(allowed.code, allowed.stderr).toBe(0);
    }
    expect(requests()).toBe(0);
  });

  it('a settings file with an alias to an anchor that is not set, or an alias bomb: exit 2 like any YAML error', async () => {
    ws.write('alias.yaml', 'retry: { retries: 2 }\nconcurrency: *c\n');
    const alias = await ws.cli(['--config', 'alias.yaml', 'run', 'crm.yaml']);
    expect(alias.code, alias.stderr).toBe(2);
    expect(alias.stderr).toBe('adsync: alias.yaml line 2, column 14: not valid YAML: Unresolved alias (the anchor must be set before the alias): c\n');
    const bomb = ['a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]', ...Array.from({ length: 8 }, (_, i) => `a${i + 1}: &a${i + 1} [${Array(10).fill(`*a${i}`).join(', ')}]`)].join('\n');
    ws.write('bomb.yaml', `${bomb}\n`);
    const bombed = await ws.cli(['run', 'crm.yaml'], { ADSYNC_CONFIG: join(ws.dir, 'bomb.yaml') });
    expect(bombed.code, bombed.stderr).toBe(2);
    expect(bombed.stderr).toBe(`adsync: ${join(ws.dir, 'bomb.yaml')}: not valid YAML: Excessive alias count indicates a resource exhaustion attack\n`);
    for (const r of [alias, bombed]) {
      expectNoStack(r);
      expect(r.stdout).toBe('');
    }
    expect(requests()).toBe(0);
    expect(existsSync(ws.statePath)).toBe(false);
  });

  it('--max-delete-ratio out of 0..1 or not a number', async () => {
    for (const value of ['2', 'abc', '-0.5', '1.01', '']) {
      expectUsage(
        await ws.cli(['run', 'crm.yaml', `--max-delete-ratio=${value}`]),
        `error: option '--max-delete-ratio <ratio>' argument '${value}' is invalid. expected a number from 0 to 1, got "${value}"`,
      );
    }
    expect(requests()).toBe(0);
    expect(existsSync(ws.statePath)).toBe(false);
    // The bounds themselves are accepted.
    for (const value of ['0', '1']) {
      const ok = await ws.cli(['run', 'crm.yaml', '--dry-run', '--json', '--max-delete-ratio', value]);
      expect(ok.code, ok.stderr).toBe(0);
    }
  });

  it('a job name with characters README does not allow (letters, digits, ".", "-", "_")', async () => {
    for (const name of ['acme crm', 'acme/crm', 'acme:crm', '..']) {
      ws.write('bad.yaml', audienceJob(`name: "${name}"\n`));
      const r = await ws.cli(['run', 'bad.yaml', '--json']);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toBe('adsync: bad.yaml is not valid:\n  name: use letters, digits, dot, dash and underscore, starting with a letter or digit\n');
      // --json: the job is not lost from the output; its name is not one, so the file's is used.
      expect(r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as unknown)).toEqual([
        expect.objectContaining({ job: 'bad', kind: 'custom_audience', run_id: null, status: 'failed', exit_code: 2, job_file: 'bad.yaml' }),
      ]);
    }
    expect(requests()).toBe(0);
    ws.write('good.yaml', audienceJob('name: Acme_CRM-2.eu\n'));
    const ok = await ws.cli(['run', 'good.yaml', '--json']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(firstSummary(ok)).toMatchObject({ job: 'Acme_CRM-2.eu', status: 'success', added: 2 });
  });

  it('a job name taken from the file name is held to the same rule (a file "...yaml" is not job "..")', async () => {
    // README: `name` defaults to the file name without extension; names are letters, digits,
    // ".", "-", "_", and `name: ".."` is refused. The same name from the file name must be too:
    // it would put the rejects file outside rejects_dir (<rejects_dir>/../<run id>.csv).
    ws.write('...yaml', audienceJob());
    const r = await ws.cli(['run', '...yaml', '--json']);
    expect(readdirSync(ws.dir).filter((f) => f.endsWith('.csv') && f !== 'crm.csv')).toEqual([]);
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^adsync: .*\.\.\.yaml is not valid:\n {2}name: "\.\." \(from the file name\) is not a job name: use letters, digits, dot, dash and underscore, starting with a letter or digit; rename the file or set name: in it\n$/);
    expectNoStack(r);
    expect(requests()).toBe(0);
  });

  it('two job files with the same job name in one run: nothing runs', async () => {
    ws.write('a.yaml', audienceJob('name: shop\n'));
    ws.write('b.yaml', audienceJob('name: shop\n'));
    const named = await ws.cli(['run', 'a.yaml', 'b.yaml', '--json']);
    expect(named.code, named.stderr).toBe(2);
    expect(named.stderr).toMatch(/^adsync: \S*b\.yaml and \S*a\.yaml have the same job name "shop"; give one of them a different name \(name: in the job file\)$/m);
    expect(named.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(named.stdout).toBe('');

    // The same file name in two folders is the same default name.
    ws.write('eu/crm.yaml', audienceJob().replace('path: crm.csv', 'path: ../crm.csv'));
    const byFile = await ws.cli(['run', 'crm.yaml', 'eu/crm.yaml', '--json']);
    expect(byFile.code, byFile.stderr).toBe(2);
    expect(byFile.stderr).toMatch(/^adsync: \S*eu\/crm\.yaml and \S*crm\.yaml have the same job name "crm"; give one of them a different name \(name: in the job file\)$/m);
    expect(byFile.stderr.trimEnd().split('\n')).toHaveLength(1);
    expectNoStack(byFile);

    expect(requests()).toBe(0);
    expect(existsSync(ws.statePath)).toBe(false);
    // Each alone runs.
    const one = await ws.cli(['run', 'a.yaml', '--json']);
    expect(one.code, one.stderr).toBe(0);
  });
});
