/**
 * Runs tasks through p-limit with backpressure: `submit` waits while `concurrency` tasks
 * are running, so the producer never builds more requests than can be in flight (each may
 * hold a 5 MB body) and memory stays flat however long the input.
 */
import pLimit, { type LimitFunction } from 'p-limit';

export class BoundedDispatch {
  private readonly limit: LimitFunction;
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly concurrency: number,
    private readonly stop?: AbortSignal,
  ) {
    this.limit = pLimit(concurrency);
  }

  /**
   * Starts `task` once a slot is free; resolves when it has started, not when it ends.
   * Returns false (and never starts it) when the stop signal came while waiting for a slot.
   */
  async submit(task: () => Promise<void>): Promise<boolean> {
    while (this.running.size >= this.concurrency) await Promise.race(this.running);
    if (this.stop?.aborted) return false;
    const p: Promise<void> = this.limit(task)
      .catch(() => undefined)
      .finally(() => this.running.delete(p));
    this.running.add(p);
    return true;
  }

  /** Waits for every started task. */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.running]);
  }
}

/**
 * Cuts the items of `pages` into batches of `size` and sends each through `dispatch`, until
 * the input ends, `halted()` says a fatal error happened, or `stop` is aborted. Waits for
 * every batch started. Returns true when it stopped because of the signal.
 */
export async function sendInBatches<T>(
  pages: AsyncIterable<readonly T[]>,
  size: number,
  concurrency: number,
  send: (batch: T[]) => Promise<void>,
  halted: () => boolean,
  stop: AbortSignal | undefined,
): Promise<{ stopped: boolean }> {
  const dispatcher = new BoundedDispatch(concurrency, stop);
  let stopped = false;
  try {
    let batch: T[] = [];
    outer: for await (const page of pages) {
      for (const item of page) {
        if (halted()) break outer;
        if (stop?.aborted) {
          stopped = true;
          break outer;
        }
        batch.push(item);
        if (batch.length === size) {
          const full = batch;
          batch = [];
          if (!(await dispatcher.submit(() => send(full)))) {
            stopped = true;
            break outer;
          }
        }
      }
    }
    if (batch.length > 0 && !halted() && !stopped) {
      const last = batch;
      if (!(await dispatcher.submit(() => send(last)))) stopped = true;
    }
  } finally {
    await dispatcher.drain();
  }
  return { stopped };
}
