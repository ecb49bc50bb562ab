import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { RunStop } from '../../src/jobs/run-stop.js';

describe('RunStop: the stop signal of one run', () => {
  it('aborts when the process is asked to stop, with its reason', () => {
    const processStop = new AbortController();
    const stop = new RunStop(processStop.signal, [new AbortController().signal]);
    expect(stop.signal.aborted).toBe(false);
    processStop.abort('SIGTERM');
    expect(stop.signal.aborted).toBe(true);
    expect(stop.signal.reason).toBe('SIGTERM');
  });

  it("aborts when one of the run's own signals does, and is aborted from the start after a stop request", () => {
    const lockLost = new AbortController();
    const stop = new RunStop(new AbortController().signal, [new AbortController().signal, lockLost.signal]);
    lockLost.abort();
    expect(stop.signal.aborted).toBe(true);
    const stopped = new AbortController();
    stopped.abort();
    expect(new RunStop(stopped.signal, []).signal.aborted).toBe(true);
  });

  it('once ended, no longer follows the process nor holds on to it', () => {
    const processStop = new AbortController();
    const stop = new RunStop(processStop.signal, []);
    expect(getEventListeners(processStop.signal, 'abort')).toHaveLength(1);
    stop.end();
    expect(getEventListeners(processStop.signal, 'abort')).toHaveLength(0);
    processStop.abort();
    expect(stop.signal.aborted).toBe(false);
  });

  it("leaves nothing of itself on the process's signal (AbortSignal.any over it kept a reference per run on Node 20)", async () => {
    const processStop = new AbortController();
    for (let i = 0; i < 1000; i++) new RunStop(processStop.signal, [new AbortController().signal]).end();
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Node keeps a signal's dependants (the signals AbortSignal.any made from it) under this symbol.
    const dependants = Object.getOwnPropertySymbols(processStop.signal).find((s) => s.description === 'kDependantSignals');
    const held = dependants === undefined ? undefined : (Reflect.get(processStop.signal, dependants) as Set<unknown> | undefined);
    expect(held?.size ?? 0).toBe(0);
  });
});
