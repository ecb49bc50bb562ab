/**
 * The local X Ads API emulator: OAuth 1.0a verification of every call, the OAuth endpoints,
 * accounts, product catalogs, products and product sets, custom audience and do-not-reach
 * user batches, tailored audience permissions, per-family rate limits, fault injection and
 * unsigned admin endpoints under /_emulator/. See notes/README-emulator.md.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError } from '../errors.js';
import { formatEmulatorBanner } from './banner.js';
import type { ActiveFault } from './faults.js';
import { resolveEmulatorSettings, type EmulatorCredentials, type EmulatorOptions } from './options.js';
import { createEmulatorRuntime } from './runtime.js';
import { createRequestListener } from './server.js';
import { stateSnapshot, stateSummary, type EmulatorState, type EmulatorStateSummary } from './state-snapshot.js';
import type { EmulatorStore, SeedIds } from './store.js';
import type { EmulatedUser } from './token-registry.js';

export { EMULATOR_DEFAULTS, type EmulatorCredentials, type EmulatorOptions } from './options.js';
export { formatEmulatorBanner, type BannerInput } from './banner.js';
export { DEFAULT_EMULATOR_RATE_LIMITS, EMULATOR_FAMILIES, type EmulatorFamily, type FamilyLimit, type RateLimitOption } from './rate-limits.js';
export type { ActiveFault, FaultSpec } from './faults.js';
export type { EmulatorState, EmulatorStateSummary } from './state-snapshot.js';
export type { EmulatorStore, SeedIds } from './store.js';
export type { EmulatedUser } from './token-registry.js';

export interface EmulatorHandle {
  /** http://host:port, without a trailing slash. */
  url: string;
  port: number;
  host: string;
  /** The seeded ids. */
  ids: SeedIds;
  credentials: EmulatorCredentials;
  /** The user every access token belongs to. */
  user: EmulatedUser;
  /** Direct access to the records, for tests. */
  store: EmulatorStore;
  /** What GET /_emulator/state answers (summary: what ?summary=1 answers). */
  state(): EmulatorState;
  stateSummary(): EmulatorStateSummary;
  /** What POST /_emulator/faults does; throws on an invalid specification. */
  addFault(spec: unknown): ActiveFault;
  clearFaults(): void;
  /** What POST /_emulator/reset does. */
  reset(): void;
  /** The start banner (URL, seeded ids, credentials). */
  banner(): string;
  close(): Promise<void>;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      const reason =
        error.code === 'EADDRINUSE'
          ? `port ${port} on ${host} is already in use`
          : error.code === 'EADDRNOTAVAIL'
            ? `address ${host} is not available on this machine`
            : error.message;
      reject(new ConfigError(`the emulator cannot listen: ${reason}`, { cause: error, hint: 'choose another port with --port, or 0 for any free port' }));
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

export async function startEmulator(options: EmulatorOptions = {}): Promise<EmulatorHandle> {
  const settings = resolveEmulatorSettings(options);
  const runtime = createEmulatorRuntime(settings);
  const server = createServer(createRequestListener(runtime));
  server.keepAliveTimeout = 30_000;
  await listen(server, settings.port, settings.host);
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${urlHost}:${address.port}`;
  const rateLimits = typeof settings.rateLimits === 'string' ? settings.rateLimits : 'custom';
  return {
    url,
    port: address.port,
    host: address.address,
    ids: { ...settings.ids },
    credentials: { ...settings.credentials },
    user: { ...settings.user },
    store: runtime.store,
    state: () => stateSnapshot(runtime.store, runtime.counters.snapshot()),
    stateSummary: () => stateSummary(runtime.store, runtime.counters.snapshot()),
    addFault: (spec) => runtime.faults.add(spec),
    clearFaults: () => runtime.faults.clear(),
    reset: () => runtime.reset(),
    banner: () => formatEmulatorBanner({ url, ids: settings.ids, credentials: settings.credentials, rateLimits }),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
