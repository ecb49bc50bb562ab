/**
 * `adsync demo` (what `npm start` runs) works in a temporary folder and removes it at the
 * end: every `npm start` used to leave an `adsync-demo-*` folder behind. `--keep` keeps it,
 * with the state database the closing line names.
 */
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { baseEnv, runCli } from '../helpers/cli.js';

describe('adsync demo', () => {
  it('leaves nothing behind in the temporary folder, unless --keep', { timeout: 60_000 }, async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'adsync-demo-tmp-'));
    const env = baseEnv({ TMPDIR: tmp });
    const plain = await runCli(['demo'], { env });
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toContain('adsync demo --keep');
    // A first-time reader sees rejected rows at once: the demo says they are meant.
    expect(plain.stdout).toContain('\nThe demo export and feed hold a few invalid rows on purpose: each run rejects them (the rejects file says why) and sends the rest.\n');
    expect(readdirSync(tmp).filter((n) => n.startsWith('adsync-demo-'))).toEqual([]);

    const kept = await runCli(['demo', '--keep'], { env });
    expect(kept.code, kept.stderr).toBe(0);
    const folders = readdirSync(tmp).filter((n) => n.startsWith('adsync-demo-'));
    expect(folders).toHaveLength(1);
    const state = join(tmp, folders[0] ?? '', 'state.sqlite');
    expect(existsSync(state)).toBe(true);
    expect(kept.stdout).toContain(`Run history: ADSYNC_STATE=${state} adsync runs`);
  });
});
