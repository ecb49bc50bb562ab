/**
 * The log levels adsync accepts (`--log-level`, `ADSYNC_LOG_LEVEL`), apart from the logger
 * itself: the command line offers them and checks them before any command runs, and pino is
 * loaded only for a command that logs (src/cli/context.ts).
 */
import type { LevelWithSilent } from 'pino';

/** The levels of `--log-level` and `ADSYNC_LOG_LEVEL`, most severe first. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const satisfies readonly LevelWithSilent[];
