/**
 * The progress displays with runs at once (the scheduler runs jobs concurrently through one
 * display): each run's timer is its own and stops with it. They used to keep one timer
 * handle, which a second run overwrote: the first run's timer was never cleared.
 */
import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BarProgress, LogProgress, phaseEtaSeconds, type RunCounters } from '../../src/jobs/progress.js';
import { TerminalOutput } from '../../src/logging/terminal-output.js';

function counters(): RunCounters {
  return { phase: 'reading', rowsRead: 0, waitedMs: 0, bytesRead: 0, bytesTotal: undefined, listed: 0, toSend: 0, sent: 0, requests: () => 0, retries: () => 0, limitedTimeLeft: () => undefined };
}

/** A logger that keeps the fields of each line it is given (the progress lines). */
function progressLog(): { lines: Record<string, unknown>[]; logger: Logger } {
  const lines: Record<string, unknown>[] = [];
  return { lines, logger: { info: (fields: Record<string, unknown>) => lines.push(fields) } as unknown as Logger };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('LogProgress', () => {
  it('logs each run of several at once until that run stops, and nothing after', () => {
    const { lines, logger } = progressLog();
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

describe('rows per second', () => {
  it('are counted on the monotonic clock: a wall clock stepped back an hour (NTP) mid-run changes nothing', () => {
    const { lines, logger } = progressLog();
    const run: RunCounters = { ...counters(), rowsRead: 0 };
    const r = new LogProgress(logger, 10_000).start('crm', run, 'run-1');
    run.rowsRead = 5_000;
    vi.advanceTimersByTime(5_000);
    vi.setSystemTime(Date.now() - 3_600_000);
    run.rowsRead = 10_000;
    vi.advanceTimersByTime(5_000);
    r.stop();
    expect(lines.map((l) => l.rowsPerSecond)).toEqual([1_000]);
  });
});

describe('the ETA and rows per second on progress log lines', () => {
  it("is the phase's own time left, counted from when the phase started: none while the share done is unknown; rows per second are the reading's", () => {
    const { lines, logger } = progressLog();
    const run: RunCounters = { ...counters(), bytesTotal: 1_000 };
    const r = new LogProgress(logger, 10_000).start('shop', run, 'run-1');
    run.bytesRead = 500;
    run.rowsRead = 1_000;
    vi.advanceTimersByTime(10_000);
    // Half read in 10 s: 10 s left.
    run.phase = 'planning';
    vi.advanceTimersByTime(1_000);
    run.phase = 'uploading';
    run.toSend = 400;
    vi.advanceTimersByTime(1_000);
    run.sent = 100;
    vi.advanceTimersByTime(8_000);
    // Uploading since 11,000 ms (seen at 11,250): a quarter sent in 8.75 s, 26.25 s left.
    run.phase = 'listing';
    vi.advanceTimersByTime(10_000);
    r.stop();
    // Rows per second are the reading's (its end seen at 10,250 ms), not the run's so far.
    expect(lines.map((l) => [l.phase, l.percent, l.etaSeconds, l.rowsPerSecond])).toEqual([
      ['reading', 50, 10, 100],
      ['uploading', 25, 26, 98],
      ['listing', undefined, undefined, 98],
    ]);
    expect(lines.every((l) => 'etaSeconds' in l === (l.phase !== 'listing'))).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('the ETA of an upload the rate limits pace', () => {
  it('is the time its requests left take at the limits once they held one, else no less than that; the pace alone where they say nothing, 0 once all is sent', () => {
    const upload = (ms: number | undefined, paced: boolean, sent = 250): RunCounters => ({
      ...counters(),
      phase: 'uploading',
      toSend: 1_000,
      sent,
      limitedTimeLeft: () => (ms === undefined ? undefined : { ms, paced }),
    });
    // A quarter sent in 10 s: 30 s left at that pace. The limits not reached yet: the slower.
    expect(phaseEtaSeconds(upload(95_000, false), 10_000)).toBe(95);
    expect(phaseEtaSeconds(upload(2_000, false), 10_000)).toBe(30);
    expect(phaseEtaSeconds(upload(undefined, false), 10_000)).toBe(30);
    // The limits have held a request: bursts and waits, the pace says nothing; the limits' time.
    expect(phaseEtaSeconds(upload(2_000, true), 10_000)).toBe(2);
    expect(phaseEtaSeconds(upload(95_000, true), 10_000)).toBe(95);
    // Nothing acknowledged yet: the limits' time alone.
    expect(phaseEtaSeconds(upload(61_400, false, 0), 3_000)).toBe(61);
    expect(phaseEtaSeconds(upload(5_000, true, 1_000), 10_000)).toBe(0);
    // Other phases have no requests paced.
    expect(phaseEtaSeconds({ ...counters(), bytesTotal: 100, bytesRead: 50, limitedTimeLeft: () => ({ ms: 95_000, paced: true }) }, 10_000)).toBe(10);
  });

  it('on the log line and the bar', () => {
    const { lines, logger } = progressLog();
    const run: RunCounters = { ...counters(), phase: 'uploading', toSend: 1_000, sent: 250, limitedTimeLeft: () => ({ ms: 754_000, paced: true }) };
    const r = new LogProgress(logger, 10_000).start('shop', run, 'run-1');
    vi.advanceTimersByTime(10_000);
    r.stop();
    expect(lines.map((l) => l.etaSeconds)).toEqual([754]);
    const { stream, text } = terminalStream(200);
    const bar = new BarProgress(new TerminalOutput((t) => stream.write(t)), stream).start('shop', run);
    vi.advanceTimersByTime(10_000);
    bar.stop();
    expect(lastLine(text())).toContain('| ETA 12m34s');
  });
});

describe('rows per second after the reading', () => {
  it("stop counting time when a run's upload starts, a planning too short to be seen or not; a backfill's go on, it reads as it uploads", () => {
    const { lines, logger } = progressLog();
    const run: RunCounters = { ...counters(), rowsRead: 1_000 };
    const backfill: RunCounters = { ...counters(), rowsRead: 1_000 };
    const display = new LogProgress(logger, 10_000);
    const a = display.start('run', run, 'run-1');
    const b = display.start('backfill', backfill, 'run-2');
    vi.advanceTimersByTime(4_900);
    run.phase = 'planning';
    run.phase = 'uploading';
    run.toSend = 500;
    backfill.phase = 'uploading';
    vi.advanceTimersByTime(5_100);
    backfill.rowsRead = 2_000;
    vi.advanceTimersByTime(10_000);
    a.stop();
    b.stop();
    // The run's reading was seen ending at 5,000 ms: 1,000 rows in 5 s, then and ten seconds on.
    expect(lines.filter((l) => l.run === 'run-1').map((l) => l.rowsPerSecond)).toEqual([200, 200]);
    expect(lines.filter((l) => l.run === 'run-2').map((l) => l.rowsPerSecond)).toEqual([100, 100]);
  });
});

/** A terminal stream of `columns` columns; `text()` is everything written to it. */
function terminalStream(columns: number): { stream: Writable & { isTTY: boolean; columns: number }; text: () => string } {
  let written = '';
  const stream = Object.assign(
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        written += chunk.toString();
        done();
      },
    }),
    { isTTY: true, columns },
  );
  return { stream, text: () => written };
}

/** The bar's last state in what was written: the text after its last move to column 1. */
function lastLine(raw: string): string {
  return (raw.split(`${String.fromCharCode(27)}[1G`).at(-1) ?? '').split(String.fromCharCode(27))[0] ?? '';
}

describe('BarProgress', () => {
  it("shows the phase's own ETA, with its unit, and '-' while the share done is unknown", () => {
    const { stream, text: raw } = terminalStream(200);
    // Each state of the bar ends with an erase to the end of the line.
    const text = (): string => raw().replaceAll(`${String.fromCharCode(27)}[0K`, '<EOL>');
    const display = new BarProgress(new TerminalOutput((t) => stream.write(t)), stream);
    const c = counters();
    const run = display.start('job', c);
    // Reading a source of unknown size: no share done, no ETA (cli-progress's own said 'INF').
    c.rowsRead = 100;
    vi.advanceTimersByTime(1000);
    expect(text()).toMatch(/ETA -<EOL>$/);
    expect(text()).not.toContain('INF');
    // Uploading: a quarter sent in the phase's first 9.75 s (it starts at the next tick) leaves 29 s.
    c.phase = 'uploading';
    c.toSend = 1000;
    c.sent = 250;
    vi.advanceTimersByTime(10_000);
    expect(text()).toMatch(/\| 250\/1,000 sent \| 0 requests, 0 retries \| ETA 29s<EOL>$/);
    c.phase = 'finishing';
    c.sent = 1000;
    run.stop();
    expect(text()).toMatch(/finishing .*\| ETA 0s<EOL>\r?\n?$/);
  });

  it('shows the products listed while a catalog run lists the service (no share done: ETA -), and then what it sends', () => {
    const { stream, text } = terminalStream(200);
    const display = new BarProgress(new TerminalOutput((t) => stream.write(t)), stream);
    const c: RunCounters = { ...counters(), phase: 'listing', rowsRead: 500, listed: 12_300, requests: () => 140 };
    const run = display.start('shop', c);
    vi.advanceTimersByTime(1000);
    expect(lastLine(text())).toMatch(/^shop listing {3}\|░{40}\| 0% \| 500 rows, 500 rows\/s \| 12,300 listed \| 140 requests, 0 retries \| ETA -$/);
    c.phase = 'uploading';
    c.toSend = 400;
    c.sent = 100;
    vi.advanceTimersByTime(1000);
    run.stop();
    expect(lastLine(text())).toMatch(/\| 100\/400 sent \| 140 requests, 0 retries \| ETA \S+$/);
    // Off a terminal: `listed` on the lines of the listing phase only.
    const { lines, logger } = progressLog();
    const listing: RunCounters = { ...counters(), phase: 'listing', listed: 700 };
    const log = new LogProgress(logger, 1000).start('shop', listing, 'run-1');
    vi.advanceTimersByTime(1000);
    listing.phase = 'planning';
    vi.advanceTimersByTime(1000);
    log.stop();
    expect(lines.map((l) => [l.phase, l.listed])).toEqual([
      ['listing', 700],
      ['planning', undefined],
    ]);
  });

  it('narrows the bar to fit the counts on the terminal, down to none, the last state too', () => {
    const shown = (columns: number): string => {
      const { stream, text } = terminalStream(columns);
      const display = new BarProgress(new TerminalOutput((t) => stream.write(t)), stream);
      const c: RunCounters = { ...counters(), phase: 'uploading', rowsRead: 300_000, toSend: 310_000, sent: 62_900, requests: () => 5 };
      const run = display.start('acme-crm', c);
      vi.advanceTimersByTime(2000);
      c.phase = 'finishing';
      c.sent = 310_000;
      run.stop();
      return lastLine(text());
    };
    const counts = '300,000 rows, 150,000 rows/s | 310,000/310,000 sent | 5 requests, 0 retries | ETA 0s';
    // Wide: the whole 40-character bar.
    expect(shown(200)).toBe(`acme-crm finishing |${'\u2588'.repeat(40)}| 100% | ${counts}`);
    // 140 columns: a narrower bar, the line one short of the width (cli-progress cut it at the width).
    expect(shown(140)).toBe(`acme-crm finishing |${'\u2588'.repeat(26)}| 100% | ${counts}`);
    expect(shown(140)).toHaveLength(139);
    // 80 columns: no room for a bar; the counts come first (before, only the rows were seen).
    expect(shown(80)).toBe(`acme-crm finishing | 100% | ${counts}`.slice(0, 80));
  });

  it("a backfill (no count to send) shows the share of the source read; a run stopped short is not shown 100% done", () => {
    const { stream, text } = terminalStream(200);
    const display = new BarProgress(new TerminalOutput((t) => stream.write(t)), stream);
    // A backfill: uploading from the start, as it reads.
    const backfill: RunCounters = { ...counters(), phase: 'uploading', bytesTotal: 4000, bytesRead: 1000, rowsRead: 100, sent: 200, requests: () => 1 };
    const b = display.start('crm', backfill);
    vi.advanceTimersByTime(10_000);
    expect(lastLine(text())).toMatch(/^crm uploading \|█{10}░{30}\| 25% \| 100 rows, 10 rows\/s \| 200 sent \| 1 requests, 0 retries \| ETA 30s$/);
    b.stop();
    // A run stopped by Ctrl-C after sending part of its plan.
    const run: RunCounters = { ...counters(), phase: 'uploading', toSend: 1000, sent: 400, rowsRead: 100 };
    const r = display.start('crm', run);
    vi.advanceTimersByTime(1000);
    run.phase = 'finishing';
    r.stop();
    expect(lastLine(text())).toMatch(/^crm finishing \|█{16}░{24}\| 40% \| 100 rows, 100 rows\/s \| 400\/1,000 sent \| 0 requests, 0 retries \| ETA -$/);
    // Off a terminal, the same shares.
    const { lines, logger } = progressLog();
    const log = new LogProgress(logger, 1000);
    const l1 = log.start('crm', backfill, 'run-b');
    const l2 = log.start('crm', run, 'run-r');
    vi.advanceTimersByTime(1000);
    l1.stop();
    l2.stop();
    expect(lines.map((l) => [l.run, l.percent])).toEqual([
      ['run-b', 25],
      ['run-r', 40],
    ]);
  });

  it('shows one bar; a run started meanwhile gets none, and stopping either leaves no timer of the other behind', () => {
    const { stream, text } = terminalStream(200);
    const terminal = new TerminalOutput((text) => stream.write(text));
    const display = new BarProgress(terminal, stream);
    const a = display.start('job-a', counters());
    const b = display.start('job-b', counters());
    vi.advanceTimersByTime(1000);
    b.stop();
    vi.advanceTimersByTime(1000);
    expect(text()).toContain('job-a reading');
    expect(text()).not.toContain('job-b');
    a.stop();
    expect(vi.getTimerCount()).toBe(0);
    // The next run (run and backfill run their jobs one after another) has its bar.
    const c = display.start('job-c', counters());
    vi.advanceTimersByTime(500);
    c.stop();
    expect(text()).toContain('job-c reading');
    expect(vi.getTimerCount()).toBe(0);
  });
});
