/**
 * Before the tests: the end-to-end tests run the real CLI (bin/adsync.js -> dist/). Rebuild
 * dist/ first when any source file is newer than it, so `npx vitest` alone never tests stale
 * code.
 *
 * For the tests: one temporary folder for the whole run (TMPDIR, which os.tmpdir() reads in
 * the test processes and in every CLI they start), removed when the run ends. The tests make
 * thousands of workspaces, state databases and spool files there (~1 GB a run); left in /tmp,
 * repeated runs filled the disk of a developer's machine.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function buildWhenStale(): void {
  const root = join(import.meta.dirname, '..');
  const marker = join(root, 'dist', 'cli', 'main.js');
  if (existsSync(marker) && statSync(marker).mtimeMs >= newestMtime(join(root, 'src'))) return;
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json')], {
    cwd: root,
    stdio: 'inherit',
  });
}

/** Gives the run its own TMPDIR; the returned teardown removes it. */
function temporaryFolderForTheRun(): () => void {
  const previous = process.env.TMPDIR;
  const folder = mkdtempSync(join(tmpdir(), 'adsync-test-run-'));
  // As /tmp is: some tests run the CLI as another user, which makes its spool files here too.
  chmodSync(folder, 0o1777);
  process.env.TMPDIR = folder;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    rmSync(folder, { recursive: true, force: true, maxRetries: 3 });
  };
}

export default function setup(): () => void {
  buildWhenStale();
  return temporaryFolderForTheRun();
}
