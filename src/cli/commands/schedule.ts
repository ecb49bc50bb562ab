/** `adsync schedule [--jobs <dir>]`: the long-running scheduler (the work: ../actions/schedule.ts). SIGTERM/SIGINT stop it cleanly (exit 0), SIGHUP reloads. */
import type { Command } from 'commander';
import type { CliContext } from '../context.js';

export function registerSchedule(program: Command, ctx: CliContext): void {
  program
    .command('schedule')
    .description('run every job file of a folder on its `schedule:` cron expression, until SIGTERM')
    .option('--jobs <dir>', 'folder of job files', 'jobs')
    .action(async (flags: { jobs: string }) => (await import('../actions/schedule.js')).scheduleCommand(ctx, flags));
}
