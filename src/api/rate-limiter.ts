/**
 * Client-side rate limiting per endpoint family, so a run stays under the service's limits
 * instead of discovering them through 429s:
 * - a static budget per family (requests per window) for limits the service documents
 *   (1500 per minute on audience user batches), enforced as a sliding window;
 * - the service's own x-rate-limit-limit/-remaining/-reset headers (and, on GETs, the
 *   account-level x-account-rate-limit-* ones, whichever has fewer requests left): when the
 *   remaining budget (minus requests already in flight) runs out, callers wait for the
 *   reset, and when it runs low the remaining requests are spread over the time left.
 */

export type EndpointFamily =
  | 'audience_users'
  | 'do_not_reach_users'
  | 'catalog_read'
  | 'catalog_write'
  | 'audiences'
  | 'accounts'
  | 'oauth'
  | 'other';

export interface FamilyLimit {
  requests: number;
  windowMs: number;
}

export type RateLimitSettings = Partial<Record<EndpointFamily, FamilyLimit | null>>;

/** Documented limits only; every other family is paced by the service's headers alone. */
export const DEFAULT_RATE_LIMITS: RateLimitSettings = {
  audience_users: { requests: 1500, windowMs: 60_000 },
  do_not_reach_users: { requests: 1500, windowMs: 60_000 },
};

export interface ObservedLimit {
  limit: number | undefined;
  remaining: number;
  /** Epoch ms at which the window resets. */
  resetAt: number;
}

interface FamilyState {
  sent: number[]; // send times inside the static window, oldest first (on the window clock)
  observed: ObservedLimit | undefined;
  startedSinceObserved: number;
  inFlight: number;
  nextSlotAt: number;
  /** The end of the last long wait reported (one report per wait, however many callers wait). */
  reportedUntil: number;
  /** A request of the family has waited for a limit: the limits, not the sending, set its pace. */
  waited: boolean;
  /** The limit of the service's latest window seen: kept after its reset, until an answer gives the next. */
  windowLimit: number | undefined;
  /** The reset of the service's latest window seen, and when an answer first gave it. */
  windowResetAt: number;
  windowSeenAt: number;
  /**
   * The service's window, as long as the longest seen from its first answer to its reset (the
   * headers give a reset, not a length): short of the truth only while no window was seen whole.
   */
  windowMs: number | undefined;
}

/** A wait of at least LONG_WAIT_MS: why (the client-side budget or the service's headers) and until when. */
export interface LongWait {
  family: EndpointFamily;
  waitMs: number;
  until: number;
  cause: 'rate_limits setting' | 'service rate-limit headers';
}

/** Waits from this long on are reported (onLongWait): a progress display that stops for minutes must say why. */
export const LONG_WAIT_MS = 5_000;

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export const sleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (ms <= 0) {
      resolve();
      return;
    }
    // An abort listener added to a signal already aborted never runs.
    if (signal?.aborted) {
      reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** Below this share of the window's limit, requests are spread evenly until the reset. */
const PACE_BELOW_SHARE = 0.1;
/** Margin after a reset time before trying, for clock skew between us and the service. */
const RESET_MARGIN_MS = 250;

export class RateLimiter {
  private readonly states = new Map<EndpointFamily, FamilyState>();

  /**
   * `now` is the wall clock, which the service's resets are of; `windowClock` the clock of the
   * static windows (`rate_limits`): monotonic (performance.now) in the client, since on the wall
   * clock a step back by NTP kept the sends of the hour before in the window, and a request
   * then waited an hour for the window to pass. It defaults to `now` (one clock for tests).
   */
  constructor(
    private readonly limits: RateLimitSettings = DEFAULT_RATE_LIMITS,
    private readonly now: () => number = Date.now,
    private readonly sleepFn: Sleep = sleep,
    private readonly onLongWait?: (wait: LongWait) => void,
    private readonly windowClock: () => number = now,
  ) {}

  private state(family: EndpointFamily): FamilyState {
    let s = this.states.get(family);
    if (!s) {
      s = { sent: [], observed: undefined, startedSinceObserved: 0, inFlight: 0, nextSlotAt: 0, reportedUntil: 0, waited: false, windowLimit: undefined, windowResetAt: 0, windowSeenAt: 0, windowMs: undefined };
      this.states.set(family, s);
    }
    return s;
  }

  /** How long a request of this family must wait now; 0 when it may go. */
  delayFor(family: EndpointFamily): number {
    return this.delayAndCause(family).wait;
  }

  /**
   * The wait and its cause; `held` when the service's headers allow no request before their
   * reset. Pacing (the spreading of the last requests of a window) longer than
   * `maxPaceMs` is dropped: those requests are sent, the service still allows them.
   */
  private delayAndCause(family: EndpointFamily, maxPaceMs = Infinity): { wait: number; cause: LongWait['cause']; held: boolean } {
    const s = this.state(family);
    const now = this.now();
    let wait = 0;
    let held = false;
    let cause: LongWait['cause'] = 'rate_limits setting';
    const limit = this.limits[family];
    if (limit) {
      const at = this.windowClock();
      while (s.sent.length > 0 && (s.sent[0] ?? 0) <= at - limit.windowMs) s.sent.shift();
      if (s.sent.length >= limit.requests) wait = Math.max(wait, (s.sent[0] ?? at) + limit.windowMs - at);
    }
    const obs = s.observed;
    if (obs) {
      if (now >= obs.resetAt) {
        s.observed = undefined;
      } else {
        const budget = obs.remaining - s.startedSinceObserved;
        let byService = 0;
        if (budget <= 0) {
          byService = obs.resetAt - now + RESET_MARGIN_MS;
          held = true;
        } else if (obs.limit !== undefined && budget < obs.limit * PACE_BELOW_SHARE && s.nextSlotAt - now <= maxPaceMs) byService = s.nextSlotAt - now;
        if (byService > wait) {
          wait = byService;
          cause = 'service rate-limit headers';
        }
      }
    }
    return { wait: Math.max(0, wait), cause, held: held && cause === 'service rate-limit headers' };
  }

  /**
   * Waits until a request of this family may be sent, then counts it as sent, and returns
   * undefined. When the service's headers allow no request for longer than
   * `maxServiceWaitMs`, it does not wait: it returns when they allow the next request (epoch
   * ms), nothing acquired. Requests they still allow are not paced further apart than that.
   */
  async acquire(family: EndpointFamily, signal?: AbortSignal, maxServiceWaitMs = Infinity): Promise<number | undefined> {
    for (;;) {
      const { wait, cause, held } = this.delayAndCause(family, maxServiceWaitMs);
      if (wait <= 0) break;
      if (held && wait > maxServiceWaitMs) return this.now() + wait;
      this.state(family).waited = true;
      this.reportLongWait(family, wait, cause);
      await this.sleepFn(wait, signal);
    }
    const s = this.state(family);
    const now = this.now();
    s.inFlight += 1;
    if (this.limits[family]) s.sent.push(this.windowClock());
    if (s.observed) {
      s.startedSinceObserved += 1;
      const budget = s.observed.remaining - s.startedSinceObserved;
      s.nextSlotAt = now + (budget > 0 ? Math.max(0, s.observed.resetAt - now) / (budget + 1) : 0);
    }
    return undefined;
  }

  private reportLongWait(family: EndpointFamily, waitMs: number, cause: LongWait['cause']): void {
    if (this.onLongWait === undefined || waitMs < LONG_WAIT_MS) return;
    const s = this.state(family);
    const until = this.now() + waitMs;
    // Callers waiting for the same window report it once.
    if (until <= s.reportedUntil + LONG_WAIT_MS) return;
    s.reportedUntil = until;
    this.onLongWait({ family, waitMs, until, cause });
  }

  /**
   * Ends a request acquired with `acquire`, recording the service's rate-limit headers of
   * its answer when there was one. Requests still in flight are counted against the
   * remaining budget the answer reports, since the service may not have counted them yet.
   */
  release(family: EndpointFamily, observed?: ObservedLimit): void {
    const s = this.state(family);
    s.inFlight = Math.max(0, s.inFlight - 1);
    if (!observed) return;
    s.observed = observed;
    s.startedSinceObserved = s.inFlight;
    // A later reset (by more than the header's rounding to seconds): a new window.
    if (observed.resetAt > s.windowResetAt + 1000) {
      s.windowResetAt = observed.resetAt;
      s.windowSeenAt = this.now();
    }
    s.windowMs = Math.max(s.windowMs ?? 0, s.windowResetAt - s.windowSeenAt);
    if (observed.limit !== undefined) s.windowLimit = observed.limit;
  }

  /**
   * How long `requests` more requests of the family take at its limits, for an ETA: those the
   * window allows go now, then one window's limit per window, by the service's headers (the
   * window's length as seen: see `windowMs`) and by the static budget (`rate_limits`), whichever
   * is slower. `paced`: a request has waited for a limit, so the limits set the pace and this is
   * the time (else it is a floor under the pace of the sending). Undefined when no limit is known.
   */
  timeFor(family: EndpointFamily, requests: number): { ms: number; paced: boolean } | undefined {
    const s = this.state(family);
    const atLeast: number[] = [];
    const limit = this.limits[family];
    if (limit) {
      const at = this.windowClock();
      const inWindow = s.sent.filter((t) => t > at - limit.windowMs);
      atLeast.push(windowsFor(requests, limit.requests - inWindow.length, (inWindow[0] ?? at) + limit.windowMs - at, limit.requests, limit.windowMs));
    }
    const obs = s.observed;
    const now = this.now();
    if (s.windowLimit !== undefined && s.windowLimit > 0 && s.windowMs !== undefined && s.windowMs > 0) {
      atLeast.push(
        obs !== undefined && now < obs.resetAt
          ? windowsFor(requests, obs.remaining - s.startedSinceObserved, obs.resetAt - now, s.windowLimit, s.windowMs)
          : // The window has passed (no answer since its reset): a new one opens with the next request.
            windowsFor(requests, s.windowLimit, s.windowMs, s.windowLimit, s.windowMs),
      );
    }
    return atLeast.length === 0 ? undefined : { ms: Math.max(...atLeast), paced: s.waited };
  }
}

/**
 * How long `requests` take when `left` may go now, the window resets in `resetInMs`, and each
 * window after allows `limit` in `windowMs`.
 */
function windowsFor(requests: number, left: number, resetInMs: number, limit: number, windowMs: number): number {
  if (requests <= Math.max(0, left)) return 0;
  return Math.max(0, resetInMs) + (Math.ceil((requests - Math.max(0, left)) / limit) - 1) * windowMs;
}

type Headers = Readonly<Record<string, string | string[] | undefined>>;

function numericHeader(headers: Headers, name: string): number | undefined {
  const raw = headers[name];
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined || value.trim() === '') return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

/** The user-level limit (x-rate-limit-*) and the account-level one GETs also carry (x-account-rate-limit-*). */
const LEVELS = ['x-rate-limit', 'x-account-rate-limit'] as const;

function resetAt(headers: Headers, level: (typeof LEVELS)[number]): number | undefined {
  const reset = numericHeader(headers, `${level}-reset`);
  return reset === undefined ? undefined : reset * 1000;
}

/**
 * When a 429 says to come back, as epoch ms: the latest reset among the levels whose
 * remaining count is used up (the limit that was hit), else the user-level reset, else the
 * account-level one.
 */
export function readResetHeader(headers: Headers): number | undefined {
  let exhausted: number | undefined;
  for (const level of LEVELS) {
    const at = resetAt(headers, level);
    if (at !== undefined && numericHeader(headers, `${level}-remaining`) === 0) exhausted = Math.max(exhausted ?? at, at);
  }
  return exhausted ?? resetAt(headers, 'x-rate-limit') ?? resetAt(headers, 'x-account-rate-limit');
}

function observedLevel(headers: Headers, level: (typeof LEVELS)[number]): ObservedLimit | undefined {
  const remaining = numericHeader(headers, `${level}-remaining`);
  const at = resetAt(headers, level);
  if (remaining === undefined || at === undefined) return undefined;
  return { limit: numericHeader(headers, `${level}-limit`), remaining, resetAt: at };
}

/**
 * Reads x-rate-limit-{limit,remaining,reset} (reset in epoch seconds) from response headers,
 * and the account-level x-account-rate-limit-* of GETs: of the two, the one with fewer
 * requests left (on a tie, the later reset) is the one to pace by.
 */
export function readRateLimitHeaders(headers: Headers): ObservedLimit | undefined {
  const [user, account] = LEVELS.map((level) => observedLevel(headers, level));
  if (!user || !account) return user ?? account;
  if (account.remaining !== user.remaining) return account.remaining < user.remaining ? account : user;
  return account.resetAt > user.resetAt ? account : user;
}
