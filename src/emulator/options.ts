/** Options of startEmulator, the seeded ids and credentials, and their defaults. */
import { ConfigError } from '../errors.js';
import { EMULATOR_FAMILIES, type RateLimitOption } from './rate-limits.js';
import type { SeedIds } from './store.js';
import type { EmulatedUser, SeedCredentials } from './token-registry.js';

export type EmulatorCredentials = SeedCredentials;

export interface EmulatorOptions {
  /** 0 = any free port; default 0. */
  port?: number;
  /** Default 127.0.0.1 (never 0.0.0.0 unless asked). */
  host?: string;
  /** 'default' (the service's limits), 'off' (no limits, no headers), or families replaced. */
  rateLimits?: RateLimitOption;
  credentials?: EmulatorCredentials;
  accountId?: string;
  catalogId?: string;
  customAudienceId?: string;
  doNotReachListId?: string;
  /** The clock, epoch ms; for tests. */
  now?: () => number;
  /** How far an oauth_timestamp may be from the clock; default 300. */
  timestampSkewSeconds?: number;
  /** Receives one line per request served, when given. Nothing is logged otherwise. */
  logger?: (line: string) => void;
}

export const EMULATOR_DEFAULTS = {
  host: '127.0.0.1',
  port: 0,
  accountId: 'emu-account',
  catalogId: 'emu-catalog',
  customAudienceId: 'emu-audience',
  doNotReachListId: 'emu-dnr',
  credentials: {
    consumerKey: 'emulator-consumer-key',
    consumerSecret: 'emulator-consumer-secret',
    accessToken: 'emulator-access-token',
    accessTokenSecret: 'emulator-access-token-secret',
  },
  user: { userId: '1000000000000000001', screenName: 'emulator_user' },
  timestampSkewSeconds: 300,
  /** Largest request body, in bytes (the custom audience batch limit). */
  maxBodyBytes: 5_000_000,
} as const satisfies {
  host: string;
  port: number;
  credentials: EmulatorCredentials;
  user: EmulatedUser;
  timestampSkewSeconds: number;
  maxBodyBytes: number;
} & SeedIds;

export interface EmulatorSettings {
  host: string;
  port: number;
  ids: SeedIds;
  credentials: EmulatorCredentials;
  user: EmulatedUser;
  rateLimits: RateLimitOption;
  now: () => number;
  timestampSkewSeconds: number;
  maxBodyBytes: number;
  logger: ((line: string) => void) | undefined;
}

function checkOptions(options: EmulatorOptions): void {
  const { port, timestampSkewSeconds, rateLimits } = options;
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65_535)) {
    throw new ConfigError(`emulator port must be a whole number from 0 to 65535, got ${port}`, { hint: 'use --port 0 for any free port' });
  }
  if (timestampSkewSeconds !== undefined && !(timestampSkewSeconds >= 0)) {
    throw new ConfigError(`timestampSkewSeconds must be 0 or more, got ${timestampSkewSeconds}`);
  }
  if (typeof rateLimits === 'string') {
    if (rateLimits !== 'off' && rateLimits !== 'default') {
      throw new ConfigError(`rate limits must be off or default, got "${String(rateLimits)}"`, { hint: 'use --rate-limits off or --rate-limits default' });
    }
    return;
  }
  for (const [family, limit] of Object.entries(rateLimits ?? {})) {
    if (!(EMULATOR_FAMILIES as readonly string[]).includes(family)) {
      throw new ConfigError(`unknown rate-limit family "${family}"; the families are ${EMULATOR_FAMILIES.join(', ')}`);
    }
    if (!limit || !Number.isInteger(limit.limit) || limit.limit < 1 || !(limit.windowMs > 0)) {
      throw new ConfigError(`the rate limit of ${family} needs a whole limit of at least 1 and a positive windowMs`);
    }
  }
}

export function resolveEmulatorSettings(options: EmulatorOptions): EmulatorSettings {
  checkOptions(options);
  const d = EMULATOR_DEFAULTS;
  return {
    host: options.host ?? d.host,
    port: options.port ?? d.port,
    ids: {
      accountId: options.accountId ?? d.accountId,
      catalogId: options.catalogId ?? d.catalogId,
      customAudienceId: options.customAudienceId ?? d.customAudienceId,
      doNotReachListId: options.doNotReachListId ?? d.doNotReachListId,
    },
    credentials: { ...(options.credentials ?? d.credentials) },
    user: { ...d.user },
    rateLimits: options.rateLimits ?? 'default',
    now: options.now ?? Date.now,
    timestampSkewSeconds: options.timestampSkewSeconds ?? d.timestampSkewSeconds,
    maxBodyBytes: d.maxBodyBytes,
    logger: options.logger,
  };
}
