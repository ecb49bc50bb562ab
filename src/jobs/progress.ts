/**
 * Progress of a run. On a terminal: a bar per job (cli-progress) with rows read, rows/s,
 * requests, retries and an ETA when the input size is known. Elsewhere (cron, CI): a plain
 * log line every few seconds. The run only updates counters; the display samples them on
 * a timer, so reporting costs the hot path nothing. One display serves every run of a
 * command, several at once in `adsync schedule`: each start() gives that run its own timer,
 * stopped by the handle it returns.
 *
 * cli-progress is required when a bar starts (cliProgressModule): a run that is not on a
 * terminal (cron, systemd, --json to a pipe) shows none, and its 16 modules cost ~15 ms to load.
 */
import type CliProgress from 'cli-progress';
import { createRequire } from 'node:module';
import type { Logger } from 'pino';
import type { TerminalOutput } from '../logging/terminal-output.js';

export interface RunCounters {
  /**
   * waiting: for another job's run on the same target to end (target-lock.ts). listing: a
   * catalog run lists the products the service holds (a lost state rebuilt, an interrupted
   * upload reconciled): one GET per 100 products and per item group, minutes against the service.
   */
  phase: 'waiting' | 'reading' | 'listing' | 'planning' | 'uploading' | 'finishing';
  rowsRead: number;
  /** Time spent waiting for the target's lock (phase `waiting`): no rows are read then, so rows/s leaves it out. */
  waitedMs: number;
  /** Raw bytes of the source consumed, and its size when known. */
  bytesRead: number;
  bytesTotal: number | undefined;
  /** Products the service listed so far (phase `listing`). */
  listed: number;
  /** Records (identifiers or products) to send, and sent so far. */
  toSend: number;
  sent: number;
  requests: () => number;
  retries: () => number;
  /**
   * In the upload, how long (ms) its requests left take at the rate limits (the service's, as
   * its headers tell them); `paced` once they have held a request: an upload they pace goes in
   * bursts, whose pace so far says little of the time left. Undefined while unknown.
   */
  limitedTimeLeft: () => { ms: number; paced: boolean } | undefined;
}

/** One run's progress, shown until stop(). */
export interface RunProgress {
  stop(): void;
}

export interface ProgressDisplay {
  /**
   * Shows a run's progress until the returned handle is stopped; runs started before that
   * (concurrent runs of the scheduler) go on being shown, each with its own timer.
   * `runId`: the run's id, on each progress log line (as on the run's other lines).
   */
  start(job: string, counters: RunCounters, runId?: string): RunProgress;
}

function rate(count: number, ms: number): number {
  return ms <= 0 ? 0 : Math.round((count * 1000) / ms);
}

/** Rows read per second of a run shown since `started`, leaving out its wait for the target. */
function rowsPerSecond(c: RunCounters, now: number, started: number): number {
  return rate(c.rowsRead, now - started - c.waitedMs);
}

function bytesFraction(c: RunCounters): number | undefined {
  return c.bytesTotal ? Math.min(1, c.bytesRead / c.bytesTotal) : undefined;
}

/**
 * The share of the phase done. A backfill uploads as it reads, without a count to send: its
 * share is that of the source read. A run that ends before sending all it planned (stopped, a
 * batch not delivered) is finishing short of 100%.
 */
function fraction(c: RunCounters): number | undefined {
  if (c.phase === 'reading') return bytesFraction(c);
  if (c.phase === 'uploading') return c.toSend > 0 ? Math.min(1, c.sent / c.toSend) : bytesFraction(c);
  if (c.phase === 'finishing') return c.toSend > 0 ? Math.min(1, c.sent / c.toSend) : 1;
  return undefined;
}

/** Seconds left in a phase, from its share done so far (`elapsedMs` in the phase); undefined while unknown. */
export function etaSeconds(fractionDone: number | undefined, elapsedMs: number): number | undefined {
  if (fractionDone !== undefined && fractionDone >= 1) return 0;
  if (fractionDone === undefined || fractionDone <= 0 || elapsedMs <= 0) return undefined;
  return Math.max(0, Math.round((elapsedMs * (1 - Math.min(1, fractionDone))) / fractionDone / 1000));
}

/**
 * Seconds left in the run's phase: at its pace so far; in an upload the rate limits have held,
 * the time its requests left take at the limits (the pace of bursts and waits runs ahead after
 * a burst and behind before the last one); in one they have not, no less than that.
 */
export function phaseEtaSeconds(c: RunCounters, elapsedMs: number): number | undefined {
  const byPace = etaSeconds(fraction(c), elapsedMs);
  if (c.phase !== 'uploading' || byPace === 0) return byPace;
  const limited = c.limitedTimeLeft();
  if (limited === undefined) return byPace;
  const atLimits = Math.round(limited.ms / 1000);
  return limited.paced ? atLimits : Math.max(byPace ?? 0, atLimits);
}

/** Time left in a phase, as the bar shows it: '12s', '3m05s', '1h02m'; '-' while unknown. */
export function formatEta(seconds: number | undefined): string {
  if (seconds === undefined) return '-';
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(seconds / 3600)}h${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m`;
}

/** How often a display looks at the run's phase: an ETA counts from the start of its phase. */
const PHASE_SAMPLE_MS = 250;

/**
 * When the run's current phase started, and when its reading ended, as seen by sampling the
 * phase (every PHASE_SAMPLE_MS): the run only sets `phase`. The ETA is the phase's own (an
 * upload's share done says nothing of the time spent reading), and rows per second are those of
 * the reading: a 17-minute upload does not make them fall to nothing.
 */
class PhaseClock {
  private phase: RunCounters['phase'];
  /** When a phase after the reading was first seen: a run reads before `planning`, a backfill in `uploading` too. */
  private readingEnded: number | undefined;

  constructor(
    private readonly c: RunCounters,
    private since: number,
  ) {
    this.phase = c.phase;
  }

  /** Milliseconds in the current phase at `now`. */
  elapsed(now: number): number {
    if (this.c.phase !== this.phase) {
      this.phase = this.c.phase;
      this.since = now;
      // A run's upload follows its reading (a planning shorter than a sample may not be seen);
      // a backfill's reads as it goes, with nothing counted to send.
      if (this.phase !== 'waiting' && this.phase !== 'reading' && !(this.phase === 'uploading' && this.c.toSend === 0)) this.readingEnded ??= now;
    }
    return now - this.since;
  }

  /** The time rows per second are counted to at `now`: the end of the reading, once it ended. */
  readUntil(now: number): number {
    this.elapsed(now);
    return Math.min(now, this.readingEnded ?? now);
  }
}

/**
 * A log line every `intervalMs`, per run: the counts, the share of the phase done (`percent`)
 * and, when it is known, the phase's time left (`etaSeconds`, as the bar's ETA).
 */
export class LogProgress implements ProgressDisplay {
  constructor(
    private readonly logger: Logger,
    private readonly intervalMs: number,
  ) {}

  start(job: string, c: RunCounters, runId?: string): RunProgress {
    const started = performance.now();
    const clock = new PhaseClock(c, started);
    const sampler = setInterval(() => clock.elapsed(performance.now()), PHASE_SAMPLE_MS);
    sampler.unref();
    const timer = setInterval(() => {
      const now = performance.now();
      const f = fraction(c);
      const eta = phaseEtaSeconds(c, clock.elapsed(now));
      const readUntil = clock.readUntil(now);
      this.logger.info(
        {
          job,
          ...(runId === undefined ? {} : { run: runId }),
          phase: c.phase,
          rowsRead: c.rowsRead,
          rowsPerSecond: rowsPerSecond(c, readUntil, started),
          ...(c.phase === 'listing' ? { listed: c.listed } : {}),
          sent: c.sent,
          toSend: c.toSend,
          requests: c.requests(),
          retries: c.retries(),
          ...(f === undefined ? {} : { percent: Math.round(f * 100) }),
          ...(eta === undefined ? {} : { etaSeconds: eta }),
        },
        'progress',
      );
    }, this.intervalMs);
    timer.unref();
    return {
      stop: () => {
        clearInterval(timer);
        clearInterval(sampler);
      },
    };
  }
}

/** The cursor shown and line wrapping on again, and the bar's line ended: the terminal as the bar found it. */
const RESTORE_TERMINAL = '\x1b[?25h\x1b[?7h\n';

/** What a bar's line shows besides the bar: its phase and its counts. */
interface BarFields {
  phase: string;
  counts: string;
}

const BAR_SIZE = 40;
/** Below this many characters a bar says too little to cost the counts their room. */
const MIN_BAR_SIZE = 10;

/**
 * A bar's line, at most `width - 1` characters where it can be: the bar narrows (down to none)
 * so that the counts fit, rather than the terminal cutting them off the end of the line.
 * The ETA is the phase's own (etaText): cli-progress's `{eta}` is its own over the whole bar.
 */
export function barLine(head: string, progress: number, counts: string, width: number): string {
  const tail = `${Math.floor(progress * 100)}% | ${counts}`;
  const size = Math.min(BAR_SIZE, width - 1 - `${head} || ${tail}`.length);
  if (size < MIN_BAR_SIZE) return `${head} | ${tail}`;
  const done = Math.min(size, Math.max(0, Math.round(progress * size)));
  return `${head} |${'\u2588'.repeat(done)}${'\u2591'.repeat(size - done)}| ${tail}`;
}

/**
 * A progress bar on the terminal (stderr). Log lines written meanwhile go above it (see
 * TerminalOutput): cli-progress's MultiBar is used for its one bar because it redraws in place
 * with relative cursor moves, where a SingleBar restores the cursor position saved when it
 * started, and everything logged since would be written over.
 *
 * One bar at a time: TerminalOutput keeps log lines above a single bar line. The commands that
 * show bars (run, backfill, demo) run their jobs one after another; a run started while another
 * run's bar is shown gets no bar (and its stop leaves the other's alone).
 */
function cliProgressModule(): typeof CliProgress {
  return createRequire(import.meta.url)('cli-progress') as typeof CliProgress;
}

export class BarProgress implements ProgressDisplay {
  private shown = false;

  constructor(
    private readonly terminal: TerminalOutput,
    private readonly stream: NodeJS.WritableStream = process.stderr,
  ) {}

  start(job: string, c: RunCounters): RunProgress {
    if (this.shown) return { stop: () => undefined };
    this.shown = true;
    const started = performance.now();
    const cliProgress = cliProgressModule();
    const bars = new cliProgress.MultiBar(
      {
        stream: this.stream,
        format: (_options, params, fields: BarFields) => barLine(`${job} ${fields.phase}`, params.progress, fields.counts, params.maxWidth),
        hideCursor: true,
        clearOnComplete: false,
        fps: 5,
        // Drawn on every tick, not only when its text changes: a log line may have cleared it.
        forceRedraw: true,
      },
      cliProgress.Presets.shades_classic,
    );
    const clock = new PhaseClock(c, started);
    const fieldsNow = (): BarFields => {
      const now = performance.now();
      const counts = [
        `${c.rowsRead.toLocaleString('en-US')} rows, ${rowsPerSecond(c, clock.readUntil(now), started).toLocaleString('en-US')} rows/s`,
        // A backfill sends as it reads: no count to send is known.
        c.phase === 'listing'
          ? `${c.listed.toLocaleString('en-US')} listed`
          : c.toSend > 0 ? `${c.sent.toLocaleString('en-US')}/${c.toSend.toLocaleString('en-US')} sent` : `${c.sent.toLocaleString('en-US')} sent`,
        `${c.requests()} requests, ${c.retries()} retries`,
        `ETA ${formatEta(phaseEtaSeconds(c, clock.elapsed(now)))}`,
      ];
      return { phase: c.phase.padEnd(9), counts: counts.join(' | ') };
    };
    const bar = bars.create(1000, 0, fieldsNow());
    this.terminal.showBar(() => bars.update());
    const tick = (): void => {
      const f = fraction(c);
      bar.update(f === undefined ? 0 : Math.round(f * 1000), fieldsNow());
    };
    const timer = setInterval(tick, 250);
    timer.unref();
    /**
     * The bar hides the cursor and turns line wrapping off while it is shown. A process that
     * exits with it still shown (a second Ctrl-C stops at once) would leave the terminal without
     * a cursor, cutting every longer line at its width, and the shell's prompt on the bar's
     * line: all restored on exit.
     */
    const showCursorOnExit = (): void => {
      this.stream.write(RESTORE_TERMINAL);
    };
    process.once('exit', showCursorOnExit);
    let stopped = false;
    return {
      stop: () => {
        if (stopped) return;
        stopped = true;
        clearInterval(timer);
        // The last counts, also for a run shorter than a tick.
        tick();
        this.terminal.hideBar();
        bars.stop();
        process.off('exit', showCursorOnExit);
        this.shown = false;
      },
    };
  }
}

/** No display (JSON output, tests). */
export class NoProgress implements ProgressDisplay {
  start(): RunProgress {
    return { stop: () => undefined };
  }
}
