/**
 * The retry policy of every API call, on p-retry: exponential backoff with jitter, a time
 * budget, and the service's own word on when to come back (x-rate-limit-reset on a 429,
 * Retry-After on a 503). Only errors that say `retryable` are retried; everything else
 * (400, 401, 403, 404, programming errors) fails at once.
 */
import pRetry from 'p-retry';
import { isAdsyncError } from '../errors.js';
import { sleep, type Sleep } from './rate-limiter.js';

export interface RetrySettings {
  /** Retries after the first attempt. */
  retries: number;
  minDelayMs: number;
  maxDelayMs: number;
  /** No new attempt starts after this long since the first one. */
  budgetMs: number;
}

export const DEFAULT_RETRY: RetrySettings = {
  retries: 8,
  minDelayMs: 500,
  maxDelayMs: 30_000,
  budgetMs: 300_000,
};

/** A wait the service asked for is honoured, but never less than this (a reset "now"). */
const MIN_SERVER_WAIT_MS = 1000;

export interface RetryEvent {
  attempt: number;
  error: Error;
  /** How long until the next attempt, when the service said so. */
  waitMs: number | undefined;
}

function serverRetryAt(error: Error): number | undefined {
  if ('retryAt' in error && typeof error.retryAt === 'number') return error.retryAt;
  return undefined;
}

/**
 * "until <ISO time>", or "<N> s" for a time too far ahead to be a date (a reset header in
 * milliseconds read as seconds, say): Date cannot write it.
 */
function untilOrHowLong(wait: { at: number; waitMs: number }): string {
  const at = new Date(wait.at);
  return Number.isNaN(at.getTime()) ? `${Math.round(wait.waitMs / 1000)} s` : `until ${at.toISOString()}`;
}

/** Why the retries of a retryable error that was given up on stopped, by the error. */
const givenUp = new WeakMap<Error, string>();

/**
 * Why retrying `error` stopped ("gave up after 4 attempts in 2.7 s (retry.retries: 3)", ...),
 * when it is a retryable error that withRetry gave up on; undefined otherwise.
 */
export function whyRetryingStopped(error: Error): string | undefined {
  return givenUp.get(error);
}

/**
 * Runs `attempt` until it succeeds, a non-retryable error is thrown, the retries are used up
 * or the time budget is spent. `attempt` must build (and sign) its request afresh each time.
 * A retryable error given up on remembers why (whyRetryingStopped).
 */
export async function withRetry<T>(
  attempt: (attemptNumber: number) => Promise<T>,
  settings: RetrySettings,
  hooks: {
    onRetry?: (event: RetryEvent) => void;
    /** Ends the retries at once, an attempt in progress too (it is the attempt's own signal as well). */
    signal?: AbortSignal | undefined;
    /** A stop request: ends the waits between attempts, never an attempt (its answer is kept). */
    stop?: AbortSignal | undefined;
    /** The wall clock (epoch ms), which the service's retry times are of. */
    now?: () => number;
    /**
     * The clock the budget is counted on: monotonic (performance.now), as p-retry's own
     * maxRetryTime. On the wall clock, a step forward by NTP while a call was retried made any
     * wait the service asked for "beyond retry.budget_ms" (a 429's reset an hour in the past).
     */
    elapsed?: () => number;
    sleep?: Sleep;
  } = {},
): Promise<T> {
  const now = hooks.now ?? Date.now;
  const elapsed = hooks.elapsed ?? (() => performance.now());
  const wait = hooks.sleep ?? sleep;
  // p-retry, given an aborted signal, throws away even a successful attempt's result: its
  // signal is aborted by a stop request only between attempts, or when an attempt has failed.
  const waits = new AbortController();
  let attempting = false;
  const stop = hooks.stop;
  const endWaits = (): void => {
    if (!attempting) waits.abort(stop?.reason);
  };
  stop?.addEventListener('abort', endWaits, { once: true });
  const signal = hooks.signal ? AbortSignal.any([hooks.signal, waits.signal]) : waits.signal;
  const started = elapsed();
  let attempts = 0;
  /** Retries that used up one of settings.retries (a wait the service prescribed does not). */
  let consumed = 0;
  /** When the service asked to come back, and how long that was, if it was after the budget. */
  let beyondBudget: { at: number; waitMs: number } | undefined;
  try {
    return await pRetry(
      async (n) => {
        attempts = n;
        attempting = true;
        let answered = false;
        try {
          const result = await attempt(n);
          answered = true;
          return result;
        } finally {
          attempting = false;
          if (!answered && stop?.aborted) waits.abort(stop.reason);
        }
      },
      {
        retries: settings.retries,
        minTimeout: settings.minDelayMs,
        maxTimeout: settings.maxDelayMs,
        factor: 2,
        randomize: true,
        maxRetryTime: settings.budgetMs,
        signal,
        shouldRetry: ({ error }) => isAdsyncError(error) && error.retryable,
        // A wait the service prescribed replaces the backoff delay instead of adding to it.
        shouldConsumeRetry: ({ error }) => serverRetryAt(error) === undefined,
        onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
          if (!(isAdsyncError(error) && error.retryable)) return;
          // Stopped: no other attempt comes (p-retry ends with the stop), so none is announced.
          if (signal.aborted) return;
          const retryAt = serverRetryAt(error);
          if (retryAt === undefined) consumed += 1;
          if (retriesLeft <= 0) return;
          const waitMs = retryAt === undefined ? undefined : Math.max(MIN_SERVER_WAIT_MS, retryAt - now());
          if (waitMs !== undefined && elapsed() - started + waitMs > settings.budgetMs) {
            // The service asks us to come back after the budget ends: fail now, with its error.
            beyondBudget = { at: now() + waitMs, waitMs };
            throw error;
          }
          hooks.onRetry?.({ attempt: attemptNumber, error, waitMs });
          if (waitMs !== undefined) await wait(waitMs, signal);
        },
      },
    );
  } catch (error) {
    if (isAdsyncError(error) && error.retryable && !signal.aborted) {
      const spent = `${attempts} ${attempts === 1 ? 'attempt' : 'attempts'} in ${((elapsed() - started) / 1000).toFixed(1)} s`;
      givenUp.set(
        error,
        beyondBudget !== undefined
          ? `the service asked to wait ${untilOrHowLong(beyondBudget)}, beyond retry.budget_ms (${settings.budgetMs} ms)`
          : consumed > settings.retries
            ? `gave up after ${spent} (retry.retries: ${settings.retries})`
            : `gave up after ${spent}, at the end of retry.budget_ms (${settings.budgetMs} ms)`,
      );
    }
    throw error;
  } finally {
    stop?.removeEventListener('abort', endWaits);
  }
}
