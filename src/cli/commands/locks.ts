/** `adsync locks`: every lock of the state database and the run that holds it (the work: ../actions/locks.ts). */
import type { Command } from 'commander';
import type { CliContext } from '../context.js';

export function registerLocks(program: Command, ctx: CliContext): void {
  program
    .command('locks')
    .description("show the locks held: each job's running run, and the catalog or audience it writes to")
    .option('--json', 'one JSON object per lock')
    .action(async (flags: { json?: boolean }) => (await import('../actions/locks.js')).locksCommand(ctx, flags));
}
