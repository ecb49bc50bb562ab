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

  it('nothing for an error that is not retried', async () => {
    const error = await failure(() => withRetry(() => Promise.reject(new ConfigError('no')), { retries: 3, minDelayMs: 1, maxDelayMs: 2, budgetMs: 60_000 }));
    expect(whyRetryingStopped(error)).toBeUndefined();
  });
});
