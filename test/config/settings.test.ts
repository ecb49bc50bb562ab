import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULTS, loadSettings } from '../../src/config/settings.js';
import { ConfigError } from '../../src/errors.js';
import { parseYaml } from '../../src/config/yaml-file.js';

const root = resolve(import.meta.dirname, '..', '..');

describe('settings', () => {
  it('the shipped config/adsync.yaml holds exactly the built-in defaults', () => {
    const fromFile = loadSettings({ path: 'config/adsync.yaml', env: {}, cwd: root });
    const builtIn = loadSettings({ env: {}, cwd: mkdtempSync(join(tmpdir(), 'adsync-cfg-')) });
    expect({ ...fromFile, file: undefined, statePath: '', rejectsDir: '' }).toEqual({ ...builtIn, file: undefined, statePath: '', rejectsDir: '' });
    const yaml = parseYaml(readFileSync(join(root, 'config', 'adsync.yaml'), 'utf8'), 'x') as Record<string, unknown>;
    expect(yaml.state).toBe(DEFAULTS.state);
  });

  it('lets the environment win for endpoints and the state path', () => {
    const dir = mkdtempSync(join(tmpdir(), 'adsync-cfg-'));
    writeFileSync(join(dir, 'a.yaml'), 'ads_url: https://example.test\nstate: s.sqlite\nconcurrency: 2\n');
    const s = loadSettings({ path: 'a.yaml', cwd: dir, env: { ADSYNC_ADS_URL: 'http://127.0.0.1:1', ADSYNC_STATE: '/tmp/x.sqlite' } });
    expect(s.adsUrl).toBe('http://127.0.0.1:1');
    expect(s.statePath).toBe('/tmp/x.sqlite');
    expect(s.concurrency).toBe(2);
  });

  it('takes an empty ADSYNC_CONFIG (ADSYNC_CONFIG= in an EnvironmentFile) as unset, like the other variables', () => {
    const dir = mkdtempSync(join(tmpdir(), 'adsync-cfg-'));
    const none = loadSettings({ cwd: dir, env: { ADSYNC_CONFIG: '' } });
    expect(none.file).toBeUndefined();
    mkdirSync(join(dir, 'config'));
    writeFileSync(join(dir, 'config', 'adsync.yaml'), 'concurrency: 2\n');
    const s = loadSettings({ cwd: dir, env: { ADSYNC_CONFIG: '' } });
    expect([s.file, s.concurrency]).toEqual([join(dir, 'config', 'adsync.yaml'), 2]);
  });

  it('refuses durations longer than a timer can wait (a Node.js timer over 2^31-1 ms fires after 1 ms)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'adsync-cfg-'));
    writeFileSync(
      join(dir, 'long.yaml'),
      'request_timeout_ms: 3000000000\nretry: { max_delay_ms: 2147483648, budget_ms: 2147483647 }\nlock: { ttl_seconds: 2147484, heartbeat_seconds: 20 }\nprogress_interval_seconds: 9999999999\nrate_limits: { catalog_write: { requests: 450, window_seconds: 2147484 } }\n',
    );
    const message = (() => {
      try {
        loadSettings({ path: 'long.yaml', cwd: dir, env: {} });
        return 'loaded';
      } catch (e) {
        return (e as Error).message;
      }
    })();
    const ms = 'at most 2147483647 (about 24.8 days: a longer wait cannot be timed)';
    const s = 'at most 2147483 (about 24.8 days: a longer wait cannot be timed)';
    expect(message).toBe(
      [
        'long.yaml is not valid:',
        `  request_timeout_ms: ${ms}`,
        `  retry.max_delay_ms: ${ms}`,
        `  rate_limits.catalog_write.window_seconds: ${s}`,
        `  lock.ttl_seconds: ${s}`,
        `  progress_interval_seconds: ${s}`,
      ].join('\n'),
    );
  });

  it('refuses an audience.refresh_after_days past the 13-month expiry of memberships', () => {
    const dir = mkdtempSync(join(tmpdir(), 'adsync-cfg-'));
    writeFileSync(join(dir, 'refresh.yaml'), 'audience: { refresh_after_days: 396 }\n');
    expect(() => loadSettings({ path: 'refresh.yaml', cwd: dir, env: {} })).toThrow(
      'refresh.yaml is not valid:\n  audience.refresh_after_days: at most 365: memberships expire 13 months after they are sent, so members must be sent again before then',
    );
    writeFileSync(join(dir, 'refresh.yaml'), 'audience: { refresh_after_days: 365 }\n');
    expect(loadSettings({ path: 'refresh.yaml', cwd: dir, env: {} }).refreshAfterDays).toBe(365);
  });

  it('names the file, the field and the fix for a bad settings file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'adsync-cfg-'));
    writeFileSync(join(dir, 'bad.yaml'), 'concurrency: many\nretrys: {}\n');
    let error: unknown;
    try {
      loadSettings({ path: 'bad.yaml', cwd: dir, env: {} });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe('bad.yaml is not valid:\n  concurrency: expected number, got "many"\n  retrys: unknown key (did you mean "retry"?)');
  });
});
