/**
 * withRetry remembers why it gave up on a retryable error, so the run's message names the
 * setting that stopped it: the retries used up, the time budget spent, or a wait the service
 * asked for that ends after the budget.
 */
import { describe, expect, it } from 'vitest';
import { whyRetryingStopped, withRetry } from '../../src/api/retry.js';
import { AdsyncError, ConfigError } from '../../src/errors.js';

class Flaky extends AdsyncError {
  readonly code = 'FLAKY';
  readonly retryable = true;
  constructor(readonly retryAt?: number) {
    super('flaky');
  }
}

async function failure(run: () => Promise<unknown>): Promise<Error> {
  try {
    await run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a failure');
}

describe('withRetry: why it gave up', () => {
  it('the retries used up', async () => {
    const error = await failure(() => withRetry(() => Promise.reject(new Flaky()), { retries: 3, minDelayMs: 1, maxDelayMs: 2, budgetMs: 60_000 }));
    expect(whyRetryingStopped(error)).toMatch(/^gave up after 4 attempts in \d+\.\d s \(retry\.retries: 3\)$/);
  });

  it('the time budget spent', async () => {
    const error = await failure(() => withRetry(() => Promise.reject(new Flaky()), { retries: 1000, minDelayMs: 20, maxDelayMs: 20, budgetMs: 150 }));
    expect(whyRetryingStopped(error)).toMatch(/^gave up after \d+ attempts in \d+\.\d s, at the end of retry\.budget_ms \(150 ms\)$/);
  });

  it('a wait the service asked for that ends after the budget', async () => {
    const at = Date.now() + 3_600_000;
    const error = await failure(() => withRetry(() => Promise.reject(new Flaky(at)), { retries: 5, minDelayMs: 1, maxDelayMs: 2, budgetMs: 60_000 }));
    expect(whyRetryingStopped(error)).toBe(`the service asked to wait until ${new Date(at).toISOString()}, beyond retry.budget_ms (60000 ms)`);
  });

  it('not a wall clock stepped forward an hour (NTP) after a 429: the budget is counted on the monotonic clock', async () => {
    let wall = Date.now();
    const waits: number[] = [];
    let attempts = 0;
    const result = await withRetry(
      () => {
        attempts += 1;
        if (attempts > 1) return Promise.resolve('sent');
        const error = new Flaky(wall + 2000);
        wall += 3_600_000;
        return Promise.reject(error);
      },
      { retries: 5, minDelayMs: 1, maxDelayMs: 2, budgetMs: 60_000 },
      { now: () => wall, sleep: (ms) => (waits.push(ms), Promise.resolve()) },
    );
    expect([result, attempts, waits]).toEqual(['sent', 2, [1000]]);
  });

  it('nothing for an error that is not retried', async () => {
    const error = await failure(() => withRetry(() => Promise.reject(new ConfigError('no')), { retries: 3, minDelayMs: 1, maxDelayMs: 2, budgetMs: 60_000 }));
    expect(whyRetryingStopped(error)).toBeUndefined();
  });
});

describe('withRetry: a stop request', () => {
  const settings = { retries: 5, minDelayMs: 5_000, maxDelayMs: 5_000, budgetMs: 60_000 };

  it('keeps the answer of an attempt that was on its way when the stop came', async () => {
    const stop = new AbortController();
    const result = await withRetry(
      async () => {
        stop.abort();
        await new Promise((resolve) => setTimeout(resolve, 20));
        return 'answered';
      },
      settings,
      { stop: stop.signal },
    );
    expect(result).toBe('answered');
  });

  it('ends a backoff and a wait the service asked for at once, without another attempt', async () => {
    for (const retryAt of [undefined, Date.now() + 30_000]) {
      const stop = new AbortController();
      let attempts = 0;
      const started = Date.now();
      setTimeout(() => stop.abort(), 50);
      const error = await failure(() =>
        withRetry(
          () => {
            attempts += 1;
            return Promise.reject(new Flaky(retryAt));
          },
          settings,
          { stop: stop.signal },
        ),
      );
      expect([attempts, error.name, Date.now() - started < 2_000]).toEqual([1, 'AbortError', true]);
    }
  });

  it('after an attempt that failed once the stop had come: no other attempt, and none announced', async () => {
    const stop = new AbortController();
    let attempts = 0;
    let announced = 0;
    const error = await failure(() =>
      withRetry(
        () => {
          attempts += 1;
          stop.abort();
          return Promise.reject(new Flaky());
        },
        settings,
        { stop: stop.signal, onRetry: () => (announced += 1) },
      ),
    );
    expect([attempts, announced, error.name]).toEqual([1, 0, 'AbortError']);
  });
});
