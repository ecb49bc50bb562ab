/** `adsync backfill <job-file> --source <file>`: a one-off, checkpointed full upload of a large file. */
import type { Command } from 'commander';
import { runJob } from '../../jobs/runner.js';
import type { CliContext } from '../context.js';
import { loadJobs, openStoreForJobs, progressFor, reportRun, runEnvironment } from '../job-session.js';

interface BackfillFlags {
  source: string;
  restart?: boolean;
  json?: boolean;
  rejectsWithValues?: boolean;
}

export function registerBackfill(program: Command, ctx: CliContext): void {
  program
    .command('backfill')
    .description("upload a large file in full with the job's target and mapping; resumes where a killed run stopped")
    .argument('<job-file>', 'job file (YAML) naming the audience or catalog and the column mapping')
    .requiredOption('--source <file>', 'the file to upload (csv, tsv, xml, or .gz of them)')
    .option('--restart', 'ignore an unfinished backfill of this job and start over')
    .option('--json', 'print the JSON summary on stdout')
    .option('--rejects-with-values', 'write the raw rejected values (personal data) into the rejects file')
    .action(async (file: string, flags: BackfillFlags) => {
      const [job] = loadJobs(ctx, [file], { sourceOverride: flags.source, json: flags.json === true });
      if (!job) return;
      const store = await openStoreForJobs(ctx, [job], { json: flags.json === true, dryRun: false });
      try {
        const summary = await runJob(job, runEnvironment(ctx, store, progressFor(ctx, false)), {
          command: 'backfill',
          dryRun: false,
          full: true,
          restart: flags.restart === true,
          rejectsWithValues: flags.rejectsWithValues === true,
        });
        reportRun(ctx, summary, flags.json === true);
      } finally {
        await store.close();
      }
    });
}
