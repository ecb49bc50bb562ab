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
