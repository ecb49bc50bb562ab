/**
 * `adsync demo --json`: stdout holds only JSON lines, one summary object per job run (two
 * demo jobs, run twice); the banner, the section headers and the emulator's state go to stderr.
 */
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { baseEnv, ROOT, runCli } from '../helpers/cli.js';
import { startHook } from '../helpers/webhook.js';

describe('adsync demo --json', () => {
  it('prints only the summary objects on stdout, everything else on stderr', { timeout: 60_000 }, async () => {
    const r = await runCli(['demo', '--json'], { env: baseEnv(), cwd: ROOT });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines.pop()).toBe('');
    const objects = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(objects.map((o) => [o.job, o.status])).toEqual([
      ['demo-audience', 'success'],
      ['demo-catalog', 'success'],
      ['demo-audience', 'success'],
      ['demo-catalog', 'success'],
    ]);
    expect(r.stderr).toMatch(/^adsync demo: emulator on http:\/\/127\.0\.0\.1:\d+, state in /m);
    expect(r.stderr).toContain('== first run\n');
    expect(r.stderr).toContain('== what the emulator now holds\n');
    expect(r.stderr).toContain('adsync demo --keep');
  });

  it("never alerts the webhook of the operator's settings", { timeout: 60_000 }, async () => {
    const hook = await startHook();
    try {
      const dir = mkdtempSync(join(tmpdir(), 'adsync-demo-alerts-'));
      // reject_ratio 0: every demo run (each rejects a few rows of its sample files) would alert.
      writeFileSync(join(dir, 'adsync.yaml'), `alerts:\n  webhook_url: "${hook.url('/hooks/production')}"\n  reject_ratio: 0\n`);
      const r = await runCli(['demo', '--json'], { env: baseEnv({ ADSYNC_CONFIG: join(dir, 'adsync.yaml') }), cwd: ROOT });
      expect(r.code, r.stderr).toBe(0);
      const summaries = r.stdout.trim().split('\n').map((line) => JSON.parse(line) as { rejected: number });
      expect(summaries.filter((s) => s.rejected > 0)).not.toEqual([]);
      expect(hook.calls).toEqual([]);
    } finally {
      await hook.close();
    }
  });

  it('a settings file that is not valid ends the demo with exit 2, nothing started or left behind', { timeout: 30_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'adsync-demo-settings-'));
    const temp = mkdtempSync(join(tmpdir(), 'adsync-demo-tmpdir-'));
    writeFileSync(join(dir, 'adsync.yaml'), 'concurrency: 0\n');
    // Before the fix the error came after the emulator listened, and its server kept the
    // process alive for good: the run below never ended.
    const r = await runCli(['demo', '--json'], { env: baseEnv({ ADSYNC_CONFIG: join(dir, 'adsync.yaml'), TMPDIR: temp }), cwd: ROOT });
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toBe(`adsync: ${join(dir, 'adsync.yaml')} is not valid:\n  concurrency: Too small: expected number to be >=1\n`);
    expect(readdirSync(temp)).toEqual([]);
  });
});

