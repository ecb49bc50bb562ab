/**
 * The `adsync` command line. Every command returns through here, so every failure ends as
 * one clear line on stderr and the exit code of DESIGN.md: 0 success, 1 the run failed,
 * 2 usage or configuration error, 3 authentication error.
 */
import { Command, CommanderError, Option } from 'commander';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline/promises';
import { ExitCode } from '../errors.js';
import { LOG_LEVELS } from '../logging/log-levels.js';
import { registerAuth } from './commands/auth.js';
import { registerCommands } from './commands/index.js';
import { CliContext, type CliIo, type GlobalOptions } from './context.js';
import { describeFailure } from './errors.js';

/** The streams whose reader went away, and those already watched for it. */
const readerGone = new WeakMap<NodeJS.WriteStream, boolean>();

/**
 * Writes to stdout or stderr. A reader that goes away (`adsync runs | head`, logs piped to a
 * reader that quits or dies) makes a write fail with EPIPE, emitted as an 'error' event:
 * unhandled, it printed a stack trace and killed the process, in the middle of a run (left
 * `running`, its lock to be taken over). What nobody reads any more is dropped instead, and the
 * command ends as it would have: its runs finished and recorded, its exit code theirs.
 */
function writerTo(stream: NodeJS.WriteStream): (text: string) => void {
  if (!readerGone.has(stream)) {
    readerGone.set(stream, false);
    stream.on('error', (error: NodeJS.ErrnoException) => {
      // After the first EPIPE the stream is destroyed: a write already under way fails so too.
      if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
      readerGone.set(stream, true);
    });
  }
  return (text) => {
    if (readerGone.get(stream) !== true) stream.write(text);
  };
}

export function processIo(): CliIo {
  const interactive = process.stdin.isTTY === true && process.stderr.isTTY === true;
  return {
    stdout: writerTo(process.stdout),
    stderr: writerTo(process.stderr),
    isTty: process.stderr.isTTY === true,
    prompt: interactive
      ? async (question) => {
          const rl = createInterface({ input: process.stdin, output: process.stderr });
          try {
            return await rl.question(question);
          } catch (error) {
            // Ctrl-C or Ctrl-D at the prompt: nothing was entered (the command says what then).
            if ((error as Error).name !== 'AbortError') throw error;
            process.stderr.write('\n');
            return '';
          } finally {
            rl.close();
          }
        }
      : undefined,
  };
}

/** adsync's version, from its package.json (two folders up from dist/cli/). */
function packageVersion(): string {
  const manifest = createRequire(import.meta.url)('../../package.json') as { version?: unknown };
  return typeof manifest.version === 'string' ? manifest.version : 'unknown';
}

export function buildProgram(ctx: CliContext): Command {
  const program = new Command('adsync')
    .description('Keeps X Ads product catalogs and audiences in step with your own data.')
    .version(packageVersion(), '-V, --version', "print adsync's version")
    .addOption(new Option('--config <file>', 'settings file (default: the file ADSYNC_CONFIG names, else config/adsync.yaml when present)'))
    .addOption(new Option('--log-level <level>', 'log level (default: ADSYNC_LOG_LEVEL, else info (warn for validate))').choices(LOG_LEVELS))
    .showHelpAfterError('(run `adsync --help` for usage)')
    .exitOverride()
    .configureOutput({ writeOut: (t) => ctx.io.stdout(t), writeErr: (t) => ctx.io.stderr(t) })
    // Before any command: a bad ADSYNC_LOG_LEVEL is a usage error of every command, not only
    // of those that happen to log. Then what the settings and the logger are made with, which
    // the help and a usage error do without (context.ts).
    .hook('preAction', async () => {
      ctx.logLevel();
      await ctx.loadServices();
    });
  registerCommands(program, ctx);
  registerAuth(program, ctx);
  for (const sub of program.commands) {
    sub.exitOverride();
    for (const leaf of sub.commands) leaf.exitOverride();
  }
  return program;
}

/** Runs the CLI; returns the process exit code. */
export async function main(argv: string[], io: CliIo = processIo(), env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Promise<number> {
  const holder: { program?: Command } = {};
  const ctx = new CliContext(io, env, cwd, () => holder.program?.opts<GlobalOptions>() ?? {});
  const program = buildProgram(ctx);
  holder.program = program;
  /**
   * On a terminal, a line through the terminal's output (above the progress bar, not in it);
   * elsewhere (cron, systemd), a log line like the others, so that a log of JSON lines stays one.
   */
  const say = (signal: NodeJS.Signals, text: string): void => {
    if (io.isTty) ctx.terminal.line(`adsync: ${signal} ${text}\n`);
    else {
      try {
        ctx.logger.warn({ signal }, `${signal} ${text}`);
      } catch {
        io.stderr(`adsync: ${signal} ${text}\n`); // no logger (a bad ADSYNC_LOG_LEVEL)
      }
    }
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    if (ctx.shutdown.signal.aborted) {
      say(signal, 'again: stopping now');
      process.exit(130);
    }
    say(signal, 'received: finishing the requests in flight, then stopping (send again to stop at once)');
    ctx.shutdown.abort();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return ctx.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return ExitCode.ok;
      // `adsync help` asks for the help (exit code 0); `adsync` or `adsync auth` alone lacks its
      // command (commander shows the help on stderr, exit code 1): a usage error.
      if (error.code === 'commander.help' && error.exitCode === 0) return ExitCode.ok;
      return ExitCode.usage;
    }
    const { text, exitCode } = describeFailure(error);
    try {
      ctx.logger.debug({ err: error }, 'command failed');
    } catch {
      // No logger: the failure is the log level itself (ADSYNC_LOG_LEVEL), reported below.
    }
    io.stderr(text);
    return Math.max(exitCode, ctx.exitCode);
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    // Idle keep-alive sockets would hold the process open. Only a command's action opens any,
    // and the settings it loaded first (context.ts) load the HTTP module: nothing is loaded here.
    if (ctx.servicesLoaded) (await import('../api/http.js')).closeIdleConnections();
  }
}
