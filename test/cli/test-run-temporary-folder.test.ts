/**
 * The suite's temporary files go to one folder per run (test/global-setup.ts), removed when
 * the run ends: thousands of workspaces, state databases and spool files a run, which filled
 * /tmp on a developer's machine when each test left its own there.
 */
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { basename, dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { baseEnv } from '../helpers/cli.js';

describe("the test run's temporary folder", () => {
  it('is where the tests make their temporary files', () => {
    expect(basename(tmpdir())).toMatch(/^adsync-test-run-/);
  });

  it('is where the CLIs the tests start make theirs', () => {
    const env = baseEnv();
    const childTmp = execFileSync(process.execPath, ['-e', 'process.stdout.write(require("node:os").tmpdir())'], { env }).toString();
    expect(childTmp).toBe(tmpdir());
    // baseEnv's HOME is made there too.
    expect(dirname(env.HOME ?? '')).toBe(tmpdir());
  });
});
