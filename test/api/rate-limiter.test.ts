import { describe, expect, it } from 'vitest';
import { RateLimiter, readRateLimitHeaders, readResetHeader, type LongWait } from '../../src/api/rate-limiter.js';

function fakeClock(start = 1_000_000) {
  let t = start;
  const sleeps: number[] = [];
  return {
    now: () => t,
    sleep: (ms: number) => {
      sleeps.push(ms);
      t += ms;
      return Promise.resolve();
    },
    advance: (ms: number) => {
      t += ms;
    },
    sleeps,
  };
}

describe('RateLimiter', () => {
  it('keeps a family within its static budget as a sliding window', async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ audience_users: { requests: 3, windowMs: 60_000 } }, clock.now, clock.sleep);
    for (let i = 0; i < 3; i++) {
      await limiter.acquire('audience_users');
      limiter.release('audience_users');
    }
    expect(clock.sleeps).toEqual([]);
    await limiter.acquire('audience_users');
    expect(clock.sleeps).toEqual([60_000]);
  });

  it('counts its static window on the window clock: a wall clock stepped back an hour does not hold a request an hour', async () => {
    const wall = fakeClock();
    const monotonic = fakeClock(5_000);
    // Time slept passes on both clocks.
    const sleep = (ms: number): Promise<void> => (wall.advance(ms), monotonic.sleep(ms));
    const limiter = new RateLimiter({ audience_users: { requests: 1, windowMs: 2_000 } }, wall.now, sleep, undefined, monotonic.now);
    await limiter.acquire('audience_users');
    limiter.release('audience_users');
    wall.advance(-3_600_000);
    await limiter.acquire('audience_users');
    expect(monotonic.sleeps).toEqual([2_000]);
  });

  it('does not limit families without a static budget or observed headers', async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({}, clock.now, clock.sleep);
    for (let i = 0; i < 100; i++) await limiter.acquire('catalog_write');
    expect(clock.sleeps).toEqual([]);
  });

  it('waits for the reset when the service reports nothing remaining', async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({}, clock.now, clock.sleep);
    await limiter.acquire('catalog_write');
    limiter.release('catalog_write', { limit: 450, remaining: 0, resetAt: clock.now() + 5000 });
    await limiter.acquire('catalog_write');
    expect(clock.sleeps).toEqual([5250]);
  });

  it('does not wait out a reset the service puts beyond maxServiceWaitMs: it says when, and acquires nothing; a rate_limits wait is still waited', async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ audience_users: { requests: 1, windowMs: 3_600_000 } }, clock.now, clock.sleep);
    await limiter.acquire('catalog_write');
    limiter.release('catalog_write', { limit: 2, remaining: 0, resetAt: clock.now() + 3_600_000 });
    await expect(limiter.acquire('catalog_write', undefined, 300_000)).resolves.toBe(clock.now() + 3_600_250);
    expect(clock.sleeps).toEqual([]);
    // Within the limit it waits, as without one.
    await expect(limiter.acquire('catalog_write', undefined, 3_600_250)).resolves.toBeUndefined();
    expect(clock.sleeps).toEqual([3_600_250]);
    // The client's own budget (a rate_limits setting) is the operator's choice: waited, however long.
    await limiter.acquire('audience_users', undefined, 300_000);
    await expect(limiter.acquire('audience_users', undefined, 300_000)).resolves.toBeUndefined();
    expect(clock.sleeps).toEqual([3_600_250, 3_600_000]);
  });

  it('does not pace requests the service still allows further apart than maxServiceWaitMs: it sends them, and holds only at 0 remaining', async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({}, clock.now, clock.sleep);
    await limiter.acquire('catalog_write');
    // 2 of 450 left for the next hour: paced, they would go 20 minutes apart.
    limiter.release('catalog_write', { limit: 450, remaining: 2, resetAt: clock.now() + 3_600_000 });
    await expect(limiter.acquire('catalog_write', undefined, 300_000)).resolves.toBeUndefined();
    await expect(limiter.acquire('catalog_write', undefined, 300_000)).resolves.toBeUndefined();
    expect(clock.sleeps).toEqual([]);
    await expect(limiter.acquire('catalog_write', undefined, 300_000)).resolves.toBe(clock.now() + 3_600_250);
  });

  it('reports a long wait with its cause and end; short waits are not reported', async () => {
    const clock = fakeClock();
    const waits: LongWait[] = [];
    const limiter = new RateLimiter({ audience_users: { requests: 1, windowMs: 60_000 } }, clock.now, clock.sleep, (w) => waits.push(w));
    await limiter.acquire('catalog_write');
    limiter.release('catalog_write', { limit: 450, remaining: 0, resetAt: clock.now() + 4000 });
    await limiter.acquire('catalog_write');
    expect(waits).toEqual([]); // 4.25 s: under LONG_WAIT_MS
    limiter.release('catalog_write', { limit: 450, remaining: 0, resetAt: clock.now() + 120_000 });
    const start = clock.now();
    await limiter.acquire('catalog_write');
    expect(waits).toEqual([{ family: 'catalog_write', waitMs: 120_250, until: start + 120_250, cause: 'service rate-limit headers' }]);
    // The client-side budget: the second request of the window waits 60 s.
    await limiter.acquire('audience_users');
    const at = clock.now();
    await limiter.acquire('audience_users');
    expect(waits.slice(1)).toEqual([{ family: 'audience_users', waitMs: 60_000, until: at + 60_000, cause: 'rate_limits setting' }]);
  });

  it('reports the wait for one window once, however many callers wait for it', async () => {
    let t = 1_000_000;
    const wakers: (() => void)[] = [];
    const sleep = (ms: number): Promise<void> =>
      new Promise((resolve) =>
        wakers.push(() => {
          t = Math.max(t, 1_000_000 + ms + 250);
          resolve();
        }),
      );
    const waits: LongWait[] = [];
    const limiter = new RateLimiter({}, () => t, sleep, (w) => waits.push(w));
    await limiter.acquire('catalog_write');
    limiter.release('catalog_write', { limit: 450, remaining: 0, resetAt: t + 30_000 });
    const callers = [limiter.acquire('catalog_write'), limiter.acquire('catalog_write'), limiter.acquire('catalog_write')];
    expect(wakers).toHaveLength(3);
    expect(waits).toEqual([{ family: 'catalog_write', waitMs: 30_250, until: 1_030_250, cause: 'service rate-limit headers' }]);
    for (const wake of wakers) wake();
    await Promise.all(callers);
  });

  it('counts requests still in flight against the remaining budget', async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({}, clock.now, clock.sleep);
    await limiter.acquire('other');
    await limiter.acquire('other');
    await limiter.acquire('other');
    // The first answer says 2 remain, but two requests are still in flight.
    limiter.release('other', { limit: 100, remaining: 2, resetAt: clock.now() + 10_000 });
    expect(limiter.delayFor('other')).toBe(10_250);
  });

  it('spreads the last requests of a window over the time left', async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({}, clock.now, clock.sleep);
    await limiter.acquire('other');
    limiter.release('other', { limit: 100, remaining: 4, resetAt: clock.now() + 10_000 });
    await limiter.acquire('other');
    limiter.release('other');
    await limiter.acquire('other');
    // 4 remained; after one more start, 3 are left for 10 s: one every 2.5 s.
    expect(clock.sleeps).toEqual([2500]);
  });

  it('forgets observed limits once their window has reset', async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({}, clock.now, clock.sleep);
    await limiter.acquire('other');
    limiter.release('other', { limit: 10, remaining: 0, resetAt: clock.now() + 1000 });
    clock.advance(1000);
    expect(limiter.delayFor('other')).toBe(0);
  });
});

describe('readRateLimitHeaders', () => {
  it('reads the three headers, reset in epoch seconds', () => {
    expect(readRateLimitHeaders({ 'x-rate-limit-limit': '1500', 'x-rate-limit-remaining': '12', 'x-rate-limit-reset': '1700000000' })).toEqual({
      limit: 1500,
      remaining: 12,
      resetAt: 1_700_000_000_000,
    });
  });
  it('paces by the account-level x-account-rate-limit-* of a GET when it has fewer requests left', () => {
    const user = { 'x-rate-limit-limit': '2000', 'x-rate-limit-remaining': '1500', 'x-rate-limit-reset': '1700000060' };
    const account = { 'x-account-rate-limit-limit': '100', 'x-account-rate-limit-remaining': '0', 'x-account-rate-limit-reset': '1700000900' };
    expect(readRateLimitHeaders({ ...user, ...account })).toEqual({ limit: 100, remaining: 0, resetAt: 1_700_000_900_000 });
    expect(readRateLimitHeaders({ ...user, ...account, 'x-account-rate-limit-remaining': '1600' })).toEqual({ limit: 2000, remaining: 1500, resetAt: 1_700_000_060_000 });
    expect(readRateLimitHeaders(account)).toEqual({ limit: 100, remaining: 0, resetAt: 1_700_000_900_000 });
  });
  it('on a 429, comes back at the reset of the limit that is used up', () => {
    const user = { 'x-rate-limit-remaining': '1500', 'x-rate-limit-reset': '1700000060' };
    const account = { 'x-account-rate-limit-remaining': '0', 'x-account-rate-limit-reset': '1700000900' };
    expect(readResetHeader({ ...user, ...account })).toBe(1_700_000_900_000);
    expect(readResetHeader({ ...user, 'x-rate-limit-remaining': '0', ...account, 'x-account-rate-limit-reset': '1700000030' })).toBe(1_700_000_060_000);
    expect(readResetHeader(user)).toBe(1_700_000_060_000);
    expect(readResetHeader({ 'x-account-rate-limit-reset': '1700000900' })).toBe(1_700_000_900_000);
  });
  it('ignores absent or malformed headers', () => {
    expect(readRateLimitHeaders({})).toBeUndefined();
    expect(readRateLimitHeaders({ 'x-rate-limit-remaining': 'x', 'x-rate-limit-reset': '1' })).toBeUndefined();
  });
});

describe('RateLimiter.timeFor: how long requests take at the limits, for an ETA', () => {
  it("by the service's headers: the window's requests left now, then a window's limit per window, its length as seen", async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({}, clock.now, clock.sleep);
    const msFor = (requests: number): number | undefined => limiter.timeFor('catalog_write', requests)?.ms;
    expect(limiter.timeFor('catalog_write', 1_000)).toBeUndefined();
    // A window first seen 50 s before its reset (opened before this run): 50 s long as far as known.
    await limiter.acquire('catalog_write');
    limiter.release('catalog_write', { limit: 450, remaining: 440, resetAt: clock.now() + 50_000 });
    expect(msFor(440)).toBe(0);
    // 440 now, 450 after the reset, 450 a window later.
    expect(msFor(1_340)).toBe(100_000);
    clock.advance(20_000);
    expect(msFor(1_340)).toBe(80_000);
    // The next window, seen from its start: 60 s long.
    clock.advance(31_000);
    await limiter.acquire('catalog_write');
    limiter.release('catalog_write', { limit: 450, remaining: 449, resetAt: clock.now() + 60_000 });
    expect(msFor(1_349)).toBe(120_000);
    // Its reset passed with nothing sent: a new window opens with the next request.
    clock.advance(61_000);
    expect(msFor(450)).toBe(0);
    expect(msFor(451)).toBe(60_000);
  });

  it('by the rate_limits setting (a sliding window), and the slower of the two when both limit the family', async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ audience_users: { requests: 10, windowMs: 1_000 } }, clock.now, clock.sleep);
    const msFor = (requests: number): number | undefined => limiter.timeFor('audience_users', requests)?.ms;
    for (let i = 0; i < 4; i++) {
      await limiter.acquire('audience_users');
      limiter.release('audience_users');
      clock.advance(100);
    }
    // 6 left in the window that the first send (400 ms ago) opened; then 10 a second.
    expect(msFor(6)).toBe(0);
    expect(msFor(26)).toBe(1_600);
    await limiter.acquire('audience_users');
    limiter.release('audience_users', { limit: 5, remaining: 0, resetAt: clock.now() + 30_000 });
    expect(msFor(5)).toBe(30_000);
  });

  it('says when the limits set the pace: once a request of the family has waited for one', async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({}, clock.now, clock.sleep);
    await limiter.acquire('catalog_write');
    limiter.release('catalog_write', { limit: 2, remaining: 1, resetAt: clock.now() + 60_000 });
    await limiter.acquire('catalog_write');
    limiter.release('catalog_write', { limit: 2, remaining: 0, resetAt: clock.now() + 60_000 });
    expect(limiter.timeFor('catalog_write', 3)).toEqual({ ms: 120_000, paced: false });
    await limiter.acquire('catalog_write');
    expect(clock.sleeps.length).toBe(1);
    expect(limiter.timeFor('catalog_write', 3)?.paced).toBe(true);
    expect(limiter.timeFor('catalog_read', 3)).toBeUndefined();
  });
});
