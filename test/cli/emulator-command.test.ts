/**
 * `adsync emulator` as README's "Starting it" shows it: a process on a free port whose banner
 * says where it listens, with seeded ids and credentials overridden by flags, and the
 * environment that points adsync at it; --log-requests prints a line per request; SIGTERM
 * stops it (exit 0). The banner's own `export` lines are what the run below uses.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { baseEnv, collect, runCli, startCli } from '../helpers/cli.js';

describe('adsync emulator', () => {
  it('starts on a free port with the seeded values of its flags, serves a real run, logs each request, and stops on SIGTERM', { timeout: 60_000 }, async () => {
    const env = baseEnv();
    const child = startCli(
      ['emulator', '--port', '0', '--rate-limits', 'off', '--log-requests', '--account', 'acct-1', '--audience', 'aud-9', '--consumer-key', 'ck-1', '--consumer-secret', 'cs-secret-1', '--access-token', 'at-token-1', '--access-token-secret', 'ats-secret-1'],
      { env },
    );
    const done = collect(child);
    let stdout = '';
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    const until = Date.now() + 20_000;
    while (!stdout.includes('Admin endpoints:') && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    try {
      const url = /^X Ads API emulator listening on (http:\/\/127\.0\.0\.1:\d+)$/m.exec(stdout)?.[1] ?? '';
      expect(url, stdout).not.toBe('');
      expect(stdout).toMatch(/^ {2}account +acct-1$/m);
      expect(stdout).toMatch(/^ {2}custom audience +aud-9$/m);
      expect(stdout).toMatch(/^ {2}rate limits +off$/m);

      // The environment exactly as the banner says to export it.
      const exported: Record<string, string> = {};
      for (const line of stdout.split('\n').filter((l) => l.startsWith('  export '))) {
        for (const pair of line.slice('  export '.length).split(' ')) {
          const [k = '', v = ''] = pair.split('=');
          exported[k] = v;
        }
      }
      expect(exported).toEqual({
        ADSYNC_ADS_URL: url,
        ADSYNC_API_URL: url,
        ADSYNC_CONSUMER_KEY: 'ck-1',
        ADSYNC_CONSUMER_SECRET: 'cs-secret-1',
        ADSYNC_ACCESS_TOKEN: 'at-token-1',
        ADSYNC_ACCESS_TOKEN_SECRET: 'ats-secret-1',
      });

      const dir = mkdtempSync(join(tmpdir(), 'adsync-emulator-cmd-'));
      writeFileSync(join(dir, 'crm.csv'), 'Email\na@example.com\nb@example.com\n');
      writeFileSync(join(dir, 'crm.yaml'), 'account_id: acct-1\nsource: { path: crm.csv }\naudience:\n  custom_audience_id: aud-9\n  identifiers: { email: Email }\n');
      writeFileSync(join(dir, 'adsync.yaml'), `state: ${join(dir, 'state.sqlite')}\nrejects_dir: ${join(dir, 'rejects')}\n`);
      const run = await runCli(['run', 'crm.yaml', '--json'], { env: { ...env, ...exported, ADSYNC_CONFIG: join(dir, 'adsync.yaml') }, cwd: dir });
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout.trim()) as Record<string, unknown>).toMatchObject({ status: 'success', added: 2 });
      const state = (await (await fetch(`${url}/_emulator/state`)).json()) as { custom_audiences: Record<string, { members: { email: string[] } }> };
      expect(state.custom_audiences['aud-9']?.members.email).toHaveLength(2);
    } finally {
      child.kill('SIGTERM');
    }
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    // One line per request served: the run's POST of users among them.
    expect(r.stderr).toMatch(/POST \/12\/accounts\/acct-1\/custom_audiences\/aud-9\/users/);
    expect(r.stderr.trimEnd().split('\n').at(-1)).toBe('emulator stopped');
  });
});
