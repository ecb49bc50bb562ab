/**
 * Runs the real `adsync` command (node bin/adsync.js, the built dist/) as a child process,
 * with a controlled environment: no ADSYNC_* variable of the developer's leaks in.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');
export const BIN = join(ROOT, 'bin', 'adsync.js');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function baseEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('ADSYNC_') && !k.startsWith('VITEST') && k !== 'NODE_OPTIONS') env[k] = v;
  env.HOME = mkdtempSync(join(tmpdir(), 'adsync-home-'));
  env.XDG_CONFIG_HOME = join(env.HOME, '.config');
  env.ADSYNC_LOG_LEVEL = 'warn';
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

export function startCli(args: string[], options: { env: NodeJS.ProcessEnv; cwd?: string }): ChildProcess {
  return spawn(process.execPath, [BIN, ...args], { cwd: options.cwd ?? ROOT, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
}

export function collect(child: ChildProcess): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

export async function runCli(args: string[], options: { env: NodeJS.ProcessEnv; cwd?: string }): Promise<CliResult> {
  return collect(startCli(args, options));
}
