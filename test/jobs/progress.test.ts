/**
 * The progress displays with runs at once (the scheduler runs jobs concurrently through one
 * display): each run's timer is its own and stops with it. They used to keep one timer
 * handle, which a second run overwrote: the first run's timer was never cleared.
 */
import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BarProgress, LogProgress, type RunCounters } from '../../src/jobs/progress.js';
import { TerminalOutput } from '../../src/logging/terminal-output.js';

function counters(): RunCounters {
  return { phase: 'reading', rowsRead: 0, bytesRead: 0, bytesTotal: undefined, toSend: 0, sent: 0, requests: () => 0, retries: () => 0 };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('LogProgress', () => {
  it('logs each run of several at once until that run stops, and nothing after', () => {
    const lines: Record<string, unknown>[] = [];
    const logger = { info: (fields: Record<string, unknown>) => lines.push(fields) } as unknown as Logger;
    const display = new LogProgress(logger, 1000);
    const a = display.start('a', counters(), 'run-a');
    const b = display.start('b', counters(), 'run-b');
    vi.advanceTimersByTime(1000);
    expect(lines.map((l) => l.run).sort()).toEqual(['run-a', 'run-b']);
    a.stop();
    lines.length = 0;
    vi.advanceTimersByTime(3000);
    expect(lines.map((l) => l.run)).toEqual(['run-b', 'run-b', 'run-b']);
    b.stop();
    lines.length = 0;
    vi.advanceTimersByTime(5000);
    expect(lines).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('BarProgress', () => {
  it('shows one bar; a run started meanwhile gets none, and stopping either leaves no timer of the other behind', () => {
    let written = '';
    const stream = Object.assign(
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          written += chunk.toString();
          done();
        },
      }),
      { isTTY: true, columns: 200 },
    );
    const terminal = new TerminalOutput((text) => stream.write(text));
    const display = new BarProgress(terminal, stream);
    const a = display.start('job-a', counters());
    const b = display.start('job-b', counters());
    vi.advanceTimersByTime(1000);
    b.stop();
    vi.advanceTimersByTime(1000);
    expect(written).toContain('job-a reading');
    expect(written).not.toContain('job-b');
    a.stop();
    expect(vi.getTimerCount()).toBe(0);
    // The next run (run and backfill run their jobs one after another) has its bar.
    const c = display.start('job-c', counters());
    vi.advanceTimersByTime(500);
    c.stop();
    expect(written).toContain('job-c reading');
    expect(vi.getTimerCount()).toBe(0);
  });
});
