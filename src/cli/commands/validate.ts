/** `adsync validate <job-file>...`: checks each job file and reads its source, calling no API (the work: ../actions/validate.ts). */
import type { Command } from 'commander';
import type { ValidateFlags } from '../actions/validate.js';
import type { CliContext } from '../context.js';

export function registerValidate(program: Command, ctx: CliContext): void {
  program
    .command('validate')
    .description('check job files and read their sources without calling the API')
    .argument('<job-file...>', 'job files (YAML)')
    .option('--json', 'print one JSON summary per job on stdout')
    .option('--rejects-with-values', 'write the raw rejected values into the rejects file')
    .action(async (files: string[], flags: ValidateFlags) => (await import('../actions/validate.js')).validateCommand(ctx, files, flags));
}
