/**
 * The commands of the command line. Each file of this folder defines one command (its name,
 * description, arguments and options: all that `--help` and a usage error need); the command's
 * work is in the module of the same name in ../actions/, imported when its action starts. A
 * process thus loads only what its command uses: `adsync --help` none of it, `adsync run`
 * neither the emulator nor the scheduler nor the OAuth flow (and runner.ts loads only the
 * job kind's sync). Loading everything took ~0.4 s and ~13,000 page faults at every start.
 */
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { registerBackfill } from './backfill.js';
import { registerDemo } from './demo.js';
import { registerEmulator } from './emulator.js';
import { registerLocks } from './locks.js';
import { registerRun } from './run.js';
import { registerRuns } from './runs.js';
import { registerSchedule } from './schedule.js';
import { registerValidate } from './validate.js';

/** Registers every command but `auth` (see auth.ts). */
export function registerCommands(program: Command, ctx: CliContext): void {
  registerRun(program, ctx);
  registerBackfill(program, ctx);
  registerSchedule(program, ctx);
  registerValidate(program, ctx);
  registerRuns(program, ctx);
  registerLocks(program, ctx);
  registerEmulator(program, ctx);
  registerDemo(program, ctx);
}
