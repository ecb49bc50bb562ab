/**
 * End-to-end harness: a real emulator on 127.0.0.1 in the test process, a temporary
 * workspace with job files and sources, and the real CLI (a child process) pointed at both.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startEmulator, type EmulatorHandle, type EmulatorOptions } from '../../src/emulator/index.js';
import { baseEnv, collect, runCli, startCli, type CliResult } from './cli.js';
import type { ChildProcess } from 'node:child_process';
import { afterEach } from 'vitest';

export interface Workspace {
  dir: string;
  emulator: EmulatorHandle;
  env: NodeJS.ProcessEnv;
  statePath: string;
  /** Writes a file (job, export, feed) relative to the workspace; returns its path. */
  write(relative: string, content: string | Buffer): string;
  read(relative: string): string;
  /** Runs `adsync <args>` in the workspace. */
  cli(args: string[], extraEnv?: Record<string, string | undefined>): Promise<CliResult>;
  spawn(args: string[], extraEnv?: Record<string, string | undefined>): ChildProcess;
  /** Adds a fault to the emulator (POST /_emulator/faults shape). */
  fault(spec: Record<string, unknown>): void;
  close(): Promise<void>;
}

export async function createWorkspace(options: EmulatorOptions = {}): Promise<Workspace> {
  const emulator = await startEmulator({ rateLimits: 'off', ...options });
  const dir = mkdtempSync(join(tmpdir(), 'adsync-e2e-'));
  const statePath = join(dir, 'state', 'state.sqlite');
  const c = emulator.credentials;
  const env = baseEnv({
    ADSYNC_ADS_URL: emulator.url,
    ADSYNC_API_URL: emulator.url,
    ADSYNC_CONSUMER_KEY: c.consumerKey,
    ADSYNC_CONSUMER_SECRET: c.consumerSecret,
    ADSYNC_ACCESS_TOKEN: c.accessToken,
    ADSYNC_ACCESS_TOKEN_SECRET: c.accessTokenSecret,
    ADSYNC_STATE: statePath,
  });
  // Fast retries so fault tests take seconds, not minutes.
  writeFileSync(
    join(dir, 'adsync.yaml'),
    'rejects_dir: rejects\nrequest_timeout_ms: 2000\nretry: { retries: 6, min_delay_ms: 20, max_delay_ms: 200, budget_ms: 20000 }\n',
  );
  env.ADSYNC_CONFIG = join(dir, 'adsync.yaml');
  return {
    dir,
    emulator,
    env,
    statePath,
    write(relative, content) {
      const path = join(dir, relative);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, content);
      return path;
    },
    read(relative) {
      return readFileSync(join(dir, relative), 'utf8');
    },
    cli(args, extraEnv = {}) {
      return runCli(args, { env: { ...env, ...extraEnv }, cwd: dir });
    },
    spawn(args, extraEnv = {}) {
      return startCli(args, { env: { ...env, ...extraEnv }, cwd: dir });
    },
    fault(spec) {
      emulator.addFault(spec);
    },
    close: () => emulator.close(),
  };
}

/**
 * createWorkspace for the tests of one file (call it at the file's top level): every workspace
 * it makes is closed after the test that made it.
 */
export function workspacePerTest(): (options?: EmulatorOptions) => Promise<Workspace> {
  let open: Workspace[] = [];
  afterEach(async () => {
    await Promise.all(open.map((ws) => ws.close()));
    open = [];
  });
  return async (options) => {
    const ws = await createWorkspace(options);
    open.push(ws);
    return ws;
  };
}

export { collect };

/** The JSON lines of an output (logs on stderr, summaries on stdout), parsed; other lines are left out. */
export function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Parses the JSON summary lines a `--json` run printed. */
export function summaries(result: CliResult): Record<string, unknown>[] {
  return jsonLines(result.stdout);
}

/** The lines adsync prints as its own error lines (`adsync: ...`). */
export function errorLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l.startsWith('adsync: '));
}
