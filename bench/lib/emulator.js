/**
 * The emulator as its own process (`adsync emulator --port 0`), so its CPU is its own and
 * visible; its request counters read through GET /_emulator/state?summary=1.
 */
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { processCpuSeconds, processMemoryMb } from './proc.js';

export const USERS_ROUTE = 'POST /12/accounts/:account_id/custom_audiences/:custom_audience_id/users';

export const EMULATOR_CREDENTIALS = {
  ADSYNC_CONSUMER_KEY: 'emulator-consumer-key',
  ADSYNC_CONSUMER_SECRET: 'emulator-consumer-secret',
  ADSYNC_ACCESS_TOKEN: 'emulator-access-token',
  ADSYNC_ACCESS_TOKEN_SECRET: 'emulator-access-token-secret',
};

/**
 * Starts `node bin/adsync.js emulator --port 0 --rate-limits <rateLimits>` and resolves once
 * it prints its URL. nodeArgs: extra node flags (e.g. --cpu-prof).
 */
export async function startEmulatorProcess({ root, rateLimits, logPath, nodeArgs = [] }) {
  const child = spawn(process.execPath, [...nodeArgs, 'bin/adsync.js', 'emulator', '--host', '127.0.0.1', '--port', '0', '--rate-limits', rateLimits], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  const log = createWriteStream(logPath);
  child.stderr.pipe(log);
  const url = await new Promise((resolve, reject) => {
    let seen = '';
    const onData = (data) => {
      seen += data.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(seen);
      if (m) {
        child.stdout.off('data', onData);
        child.stdout.resume();
        resolve(m[1]);
      }
    };
    child.stdout.on('data', onData);
    child.once('exit', (code) => reject(new Error(`the emulator exited (${code}) before listening: ${seen}`)));
    setTimeout(() => reject(new Error('the emulator did not start within 30 s')), 30_000).unref();
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    url,
    pid: child.pid,
    env: { ADSYNC_ADS_URL: url, ADSYNC_API_URL: url, ...EMULATOR_CREDENTIALS },
    cpuSeconds: () => processCpuSeconds(child.pid),
    memoryMb: () => processMemoryMb(child.pid),
    async summary() {
      const res = await fetch(`${url}/_emulator/state?summary=1`);
      if (!res.ok) throw new Error(`GET /_emulator/state: ${res.status}`);
      return res.json();
    },
    async reset() {
      const res = await fetch(`${url}/_emulator/reset`, { method: 'POST' });
      if (!res.ok) throw new Error(`POST /_emulator/reset: ${res.status}`);
      await res.arrayBuffer();
    },
    async stop() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
      log.end();
    },
  };
}

/** Requests per route (and per status) between two state summaries. */
export function requestDelta(before, after) {
  const diff = (a = {}, b = {}) => {
    const out = {};
    for (const [k, v] of Object.entries(b)) {
      const d = v - (a[k] ?? 0);
      if (d !== 0) out[k] = d;
    }
    return out;
  };
  return {
    total: after.requests.total - before.requests.total,
    by_route: diff(before.requests.by_route, after.requests.by_route),
    by_status: diff(before.requests.by_status, after.requests.by_status),
  };
}
