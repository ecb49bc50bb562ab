/** `adsync backfill <job-file> --source <file>`: a one-off, checkpointed full upload of a large file (the work: ../actions/backfill.ts). */
import type { Command } from 'commander';
import type { BackfillFlags } from '../actions/backfill.js';
import type { CliContext } from '../context.js';

export function registerBackfill(program: Command, ctx: CliContext): void {
  program
    .command('backfill')
    .description("upload a large file in full with the job's target and mapping; resumes where a killed run stopped")
    .argument('<job-file>', 'job file (YAML) naming the audience or catalog and the column mapping')
    .requiredOption('--source <file>', 'the file to upload (csv, tsv, xml, or .gz of them)')
    .option('--restart', 'ignore an unfinished backfill of this job and start over')
    .option('--json', 'print the JSON summary on stdout')
    .option('--rejects-with-values', 'write the raw rejected values (personal data) into the rejects file')
    .action(async (file: string, flags: BackfillFlags) => (await import('../actions/backfill.js')).backfillCommand(ctx, file, flags));
}
