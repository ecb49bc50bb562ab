/** `adsync validate <job-file>...`: checks each job file and reads its source, calling no API. */
import type { Command } from 'commander';
import { runJob } from '../../jobs/runner.js';
import { NoProgress } from '../../jobs/progress.js';
import { openStateStore } from '../../state/index.js';
import type { CliContext } from '../context.js';
import { loadJobs, reportRun, runEnvironment } from '../job-session.js';

export function registerValidate(program: Command, ctx: CliContext): void {
  program
    .command('validate')
    .description('check job files and read their sources without calling the API')
    .argument('<job-file...>', 'job files (YAML)')
    .option('--json', 'print one JSON summary per job on stdout')
    .option('--rejects-with-values', 'write the raw rejected values into the rejects file')
    .action(async (files: string[], flags: { json?: boolean; rejectsWithValues?: boolean }) => {
      // The report is the output: a run's info lines ("run started", ...) would bury it.
      ctx.quietLogs();
      const jobs = loadJobs(ctx, files, { json: flags.json === true, dryRun: true });
      // Nothing of a validation is kept: the state used for deduplication is in memory.
      const store = openStateStore(':memory:');
      try {
        for (const job of jobs) {
          const summary = await runJob(job, runEnvironment(ctx, store, new NoProgress()), {
            command: 'run',
            dryRun: true,
            full: false,
            validateOnly: true,
            rejectsWithValues: flags.rejectsWithValues === true,
          });
          reportRun(ctx, summary, flags.json === true, true);
          if (summary.status === 'success') ctx.io.stderr(`${job.file}: valid; ${summary.valid} of ${summary.read} rows usable\n`);
        }
      } finally {
        await store.close();
      }
    });
}
