/**
 * Rate limits per endpoint family and per access token, in fixed windows as the service
 * keeps them. Every answer of a limited family carries x-rate-limit-limit,
 * x-rate-limit-remaining and x-rate-limit-reset (epoch seconds); a request over the limit is
 * answered 429 TOO_MANY_REQUESTS (403 code 99 for oauth2/token).
 */

export const EMULATOR_FAMILIES = ['audience_users', 'do_not_reach_users', 'total_count', 'write', 'read', 'oauth2_token'] as const;
/**
 * audience_users: custom audience user batches; do_not_reach_users: do-not-reach user batches;
 * total_count: reads with with_total_count=true; write: other POST/PUT/DELETE; read: other
 * GETs; oauth2_token: POST oauth2/token, per consumer key.
 */
export type EmulatorFamily = (typeof EMULATOR_FAMILIES)[number];

export interface FamilyLimit {
  limit: number;
  windowMs: number;
}

export type RateLimitOption = 'off' | 'default' | Partial<Record<EmulatorFamily, FamilyLimit>>;

export const DEFAULT_EMULATOR_RATE_LIMITS: Readonly<Record<EmulatorFamily, FamilyLimit>> = {
  audience_users: { limit: 1500, windowMs: 60_000 },
  do_not_reach_users: { limit: 1500, windowMs: 60_000 },
  total_count: { limit: 200, windowMs: 15 * 60_000 },
  write: { limit: 450, windowMs: 60_000 },
  read: { limit: 2000, windowMs: 60_000 },
  oauth2_token: { limit: 30, windowMs: 15 * 60_000 },
};

/** The limits in force: none for 'off', the defaults with the given families replaced otherwise. */
export function resolveRateLimits(option: RateLimitOption | undefined): Partial<Record<EmulatorFamily, FamilyLimit>> {
  if (option === 'off') return {};
  if (option === undefined || option === 'default') return { ...DEFAULT_EMULATOR_RATE_LIMITS };
  return { ...DEFAULT_EMULATOR_RATE_LIMITS, ...option };
}

export interface RateLimitVerdict {
  allowed: boolean;
  headers: Record<string, string>;
}

interface Window {
  startedAt: number;
  used: number;
}

export class RateLimitTable {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly limits: Partial<Record<EmulatorFamily, FamilyLimit>>,
    private readonly now: () => number,
  ) {}

  /** Counts one request of `family` by `caller`; undefined when the family is not limited. */
  consume(family: EmulatorFamily, caller: string): RateLimitVerdict | undefined {
    const limit = this.limits[family];
    if (!limit) return undefined;
    const t = this.now();
    const key = `${family}\u0000${caller}`;
    let window = this.windows.get(key);
    if (!window || t >= window.startedAt + limit.windowMs) {
      window = { startedAt: t, used: 0 };
      this.windows.set(key, window);
    }
    const allowed = window.used < limit.limit;
    if (allowed) window.used += 1;
    return {
      allowed,
      headers: {
        'x-rate-limit-limit': String(limit.limit),
        'x-rate-limit-remaining': String(limit.limit - window.used),
        'x-rate-limit-reset': String(Math.ceil((window.startedAt + limit.windowMs) / 1000)),
      },
    };
  }

  clear(): void {
    this.windows.clear();
  }
}
