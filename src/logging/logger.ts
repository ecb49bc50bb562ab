/**
 * The process logger: pino JSON lines on stderr (stdout is reserved for --json summaries),
 * pretty-printed when stderr is a terminal. Credentials are redacted by path and, as a last
 * line of defence, every line is scrubbed of registered secret values.
 */
import { pino, type Logger, type LevelWithSilent } from 'pino';
import type PinoPretty from 'pino-pretty';
import { writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { scrubSecrets } from './secrets.js';

export type { Logger };

export const REDACT_PATHS = [
  'consumerSecret',
  'accessToken',
  'accessTokenSecret',
  'tokenSecret',
  'oauth_token',
  'oauth_token_secret',
  'authorization',
  'headers.authorization',
  '*.consumerSecret',
  '*.accessToken',
  '*.accessTokenSecret',
  '*.tokenSecret',
  '*.oauth_token',
  '*.oauth_token_secret',
  '*.authorization',
  '*.headers.authorization',
  'credentials',
  '*.credentials',
];

export { LOG_LEVELS } from './log-levels.js';

export interface LoggerOptions {
  level?: LevelWithSilent;
  /** Pretty output; defaults to whether stderr is a terminal. */
  pretty?: boolean;
  /** Colors in pretty output (default true; the CLI turns them off when NO_COLOR is set). */
  color?: boolean;
  /** Where lines go; defaults to file descriptor 2. */
  write?: (line: string) => void;
}

/**
 * The line formatter of pino-pretty, loaded only for a terminal (cron runs, --json runs and
 * anything logging to a file or a pipe start ~20 ms sooner without it). Its formatter, not its
 * stream: the stream wants a real Writable as destination, and each line is written
 * synchronously here, so nothing is lost or reordered when the process exits.
 */
function prettyLines(color: boolean): (jsonLine: string) => string {
  const { prettyFactory } = createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
  return prettyFactory({ colorize: color, translateTime: "UTC:HH:MM:ss'Z'", ignore: 'pid,hostname' }) as (jsonLine: string) => string;
}

function stderrWrite(line: string): void {
  writeSync(2, line);
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  const write = options.write ?? stderrWrite;
  const usePretty = options.pretty ?? (options.write === undefined && process.stderr.isTTY === true);
  const format = usePretty ? prettyLines(options.color ?? true) : undefined;
  // Scrubbed before formatting (secrets are matched in the JSON line as logged) and after.
  const destination = { write: (line: string): void => write(format ? scrubSecrets(format(scrubSecrets(line))) : scrubSecrets(line)) };
  return pino({ level, base: undefined, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, destination);
}

/** A logger that writes nothing, for library use and tests. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
