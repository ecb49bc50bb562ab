/**
 * What every command gets: where to write, the environment, the global options, and a
 * logger and settings built from them on first use.
 *
 * The settings' and the logger's modules (zod and yaml, pino: ~130 ms of loading here) are
 * loaded by loadServices() before a command's action runs (main.ts's preAction hook), not with
 * the command line: `adsync --help` and a usage error need neither.
 */
import type { LevelWithSilent, Logger } from 'pino';
import type { loadSettings, Settings } from '../config/settings.js';
import { ConfigError, InternalError } from '../errors.js';
import { LOG_LEVELS } from '../logging/log-levels.js';
import type { createLogger } from '../logging/logger.js';
import { TerminalOutput } from '../logging/terminal-output.js';

/** What the settings and the logger are made with (see loadServices). */
interface ContextServices {
  loadSettings: typeof loadSettings;
  createLogger: typeof createLogger;
}

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** True when stderr is a terminal (progress bars, pretty logs, summary tables). */
  isTty: boolean;
  /** Reads one line from the terminal (the PIN prompt); undefined when there is no terminal. */
  prompt: ((question: string) => Promise<string>) | undefined;
}

export interface GlobalOptions {
  config?: string;
  logLevel?: LevelWithSilent;
}

export class CliContext {
  private settingsCache: Settings | undefined;
  private loggerCache: Logger | undefined;
  private services: ContextServices | undefined;
  /** The level when neither --log-level nor ADSYNC_LOG_LEVEL says one (see quietLogs). */
  private defaultLevel: LevelWithSilent = 'info';
  exitCode = 0;
  /** Stderr as log lines and a progress bar share it on a terminal. */
  readonly terminal: TerminalOutput;
  /** Aborted on SIGTERM/SIGINT: commands finish the chunk in flight and stop. */
  readonly shutdown = new AbortController();

  constructor(
    readonly io: CliIo,
    readonly env: NodeJS.ProcessEnv,
    readonly cwd: string,
    private readonly globals: () => GlobalOptions,
  ) {
    this.terminal = new TerminalOutput(io.stderr);
  }

  /** Loads what `settings` and `logger` are made with; before any command's action. */
  async loadServices(): Promise<void> {
    const [{ loadSettings }, { createLogger }] = await Promise.all([import('../config/settings.js'), import('../logging/logger.js')]);
    this.services ??= { loadSettings, createLogger };
  }

  /** Whether loadServices() ran: a command's action started. */
  get servicesLoaded(): boolean {
    return this.services !== undefined;
  }

  private loaded(): ContextServices {
    if (this.services === undefined) throw new InternalError('the settings and the logger were used before loadServices()');
    return this.services;
  }

  /** The global options the command line gave (--config, --log-level). */
  globalOptions(): GlobalOptions {
    return this.globals();
  }

  get settings(): Settings {
    this.settingsCache ??= this.loaded().loadSettings({ path: this.globals().config, env: this.env, cwd: this.cwd });
    return this.settingsCache;
  }

  /**
   * For a command whose output is its report (validate): warnings and errors only, unless
   * --log-level or ADSYNC_LOG_LEVEL asks for more. Call before anything logs.
   */
  quietLogs(): void {
    this.defaultLevel = 'warn';
  }

  /**
   * The log level: `--log-level`, else ADSYNC_LOG_LEVEL, else info (warn after quietLogs). An empty ADSYNC_LOG_LEVEL
   * (`ADSYNC_LOG_LEVEL=` in a systemd EnvironmentFile) counts as unset; any other value that
   * is not a level is a ConfigError (exit 2).
   */
  logLevel(): LevelWithSilent {
    const flag = this.globals().logLevel;
    if (flag !== undefined) return flag;
    const value = this.env.ADSYNC_LOG_LEVEL;
    if (value === undefined || value === '') return this.defaultLevel;
    if ((LOG_LEVELS as readonly string[]).includes(value)) return value as LevelWithSilent;
    throw new ConfigError(`ADSYNC_LOG_LEVEL is "${value}": expected one of ${LOG_LEVELS.join(', ')} (or empty for the default, info)`);
  }

  /**
   * A terminal that takes no control sequences (TERM=dumb: Emacs shell buffers, some CI
   * consoles): no progress bar, which redraws itself with them, and no colors.
   */
  get dumbTerminal(): boolean {
    return this.env.TERM === 'dumb';
  }

  get logger(): Logger {
    this.loggerCache ??= this.loaded().createLogger({
      level: this.logLevel(),
      pretty: this.io.isTty,
      // https://no-color.org: set to anything but the empty string, no colors.
      color: (this.env.NO_COLOR ?? '') === '' && !this.dumbTerminal,
      write: this.io.isTty ? (line) => this.terminal.line(line) : this.io.stderr,
    });
    return this.loggerCache;
  }

  /** Raises the exit code (never lowers it): the worst outcome of several jobs wins (3 > 2 > 1). */
  fail(code: number): void {
    this.exitCode = Math.max(this.exitCode, code);
  }
}
