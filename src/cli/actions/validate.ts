/** The work of `adsync validate <job-file>...` (commands/validate.ts): checks each job file and reads its source, calling no API. */
import { runJob } from '../../jobs/runner.js';
import { NoProgress } from '../../jobs/progress.js';
import { openStateStore } from '../../state/index.js';
import type { CliContext } from '../context.js';
import { loadJobs, reportRun, runEnvironment } from '../job-session.js';

export interface ValidateFlags {
  json?: boolean;
  rejectsWithValues?: boolean;
}

export async function validateCommand(ctx: CliContext, files: string[], flags: ValidateFlags): Promise<void> {
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
}
