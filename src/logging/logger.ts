/**
 * The process logger: pino JSON lines on stderr (stdout is reserved for --json summaries),
 * pretty-printed when stderr is a terminal. Credentials are redacted by path and, as a last
 * line of defence, every line is scrubbed of registered secret values.
 */
import { pino, type Logger, type LevelWithSilent } from 'pino';
import pretty from 'pino-pretty';
import { writeSync } from 'node:fs';
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

export interface LoggerOptions {
  level?: LevelWithSilent;
  /** Pretty output; defaults to whether stderr is a terminal. */
  pretty?: boolean;
  /** Where lines go; defaults to file descriptor 2. */
  write?: (line: string) => void;
}

function stderrWrite(line: string): void {
  writeSync(2, line);
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  const write = options.write ?? stderrWrite;
  const scrubbed = { write: (line: string): void => write(scrubSecrets(line)) };
  const usePretty = options.pretty ?? (options.write === undefined && process.stderr.isTTY === true);
  const destination = usePretty
    ? pretty({ colorize: true, sync: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname', destination: scrubbed })
    : scrubbed;
  return pino({ level, base: undefined, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, destination);
}

/** A logger that writes nothing, for library use and tests. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
