/** `adsync demo` (what `npm start` runs): the demo jobs against the built-in emulator (the work: ../actions/demo.ts). */
import type { Command } from 'commander';
import type { CliContext } from '../context.js';

export function registerDemo(program: Command, ctx: CliContext): void {
  program
    .command('demo')
    .description('run the demo jobs against the built-in emulator (no credentials needed)')
    .option('--json', 'print the JSON summaries instead of tables (stdout: only those; the rest goes to stderr)')
    .option('--keep', 'keep the temporary folder with the state database and rejects files')
    .action(async (flags: { json?: boolean; keep?: boolean }) => (await import('../actions/demo.js')).demoCommand(ctx, flags));
}
