/**
 * Progress of a run. On a terminal: a bar per job (cli-progress) with rows read, rows/s,
 * requests, retries and an ETA when the input size is known. Elsewhere (cron, CI): a plain
 * log line every few seconds. The run only updates counters; the display samples them on
 * a timer, so reporting costs the hot path nothing.
 */
import cliProgress from 'cli-progress';
import type { Logger } from 'pino';

export interface RunCounters {
  phase: 'reading' | 'planning' | 'uploading' | 'finishing';
  rowsRead: number;
  /** Raw bytes of the source consumed, and its size when known. */
  bytesRead: number;
  bytesTotal: number | undefined;
  /** Records (identifiers or products) to send, and sent so far. */
  toSend: number;
  sent: number;
  requests: () => number;
  retries: () => number;
}

export interface ProgressDisplay {
  start(job: string, counters: RunCounters): void;
  stop(): void;
}

function rate(count: number, ms: number): number {
  return ms <= 0 ? 0 : Math.round((count * 1000) / ms);
}

function fraction(c: RunCounters): number | undefined {
  if (c.phase === 'reading') return c.bytesTotal ? Math.min(1, c.bytesRead / c.bytesTotal) : undefined;
  if (c.phase === 'uploading') return c.toSend > 0 ? Math.min(1, c.sent / c.toSend) : undefined;
  return undefined;
}

/** A log line every `intervalMs`. */
export class LogProgress implements ProgressDisplay {
  private timer: NodeJS.Timeout | undefined;
  constructor(
    private readonly logger: Logger,
    private readonly intervalMs: number,
  ) {}

  start(job: string, c: RunCounters): void {
    const started = Date.now();
    this.timer = setInterval(() => {
      const f = fraction(c);
      this.logger.info(
        {
          job,
          phase: c.phase,
          rowsRead: c.rowsRead,
          rowsPerSecond: rate(c.rowsRead, Date.now() - started),
          sent: c.sent,
          toSend: c.toSend,
          requests: c.requests(),
          retries: c.retries(),
          ...(f === undefined ? {} : { percent: Math.round(f * 100) }),
        },
        'progress',
      );
    }, this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

/** A progress bar on the terminal (stderr). */
export class BarProgress implements ProgressDisplay {
  private bar: cliProgress.SingleBar | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly stream: NodeJS.WritableStream = process.stderr) {}

  start(job: string, c: RunCounters): void {
    const started = Date.now();
    this.bar = new cliProgress.SingleBar(
      {
        stream: this.stream,
        format: `${job} {phase} |{bar}| {percentage}% | {rows} rows, {rate} rows/s | {sent}/{toSend} sent | {requests} requests, {retries} retries | ETA {eta_formatted}`,
        hideCursor: true,
        clearOnComplete: false,
        etaBuffer: 20,
        fps: 5,
      },
      cliProgress.Presets.shades_classic,
    );
    this.bar.start(1000, 0, { phase: c.phase, rows: 0, rate: 0, sent: 0, toSend: 0, requests: 0, retries: 0 });
    const tick = (): void => {
      const f = fraction(c);
      this.bar?.update(f === undefined ? 0 : Math.round(f * 1000), {
        phase: c.phase.padEnd(9),
        rows: c.rowsRead.toLocaleString('en-US'),
        rate: rate(c.rowsRead, Date.now() - started).toLocaleString('en-US'),
        sent: c.sent.toLocaleString('en-US'),
        toSend: c.toSend.toLocaleString('en-US'),
        requests: c.requests(),
        retries: c.retries(),
      });
    };
    this.timer = setInterval(tick, 250);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.bar?.stop();
    this.bar = undefined;
  }
}

/** No display (JSON output, tests). */
export class NoProgress implements ProgressDisplay {
  start(): void {}
  stop(): void {}
}
