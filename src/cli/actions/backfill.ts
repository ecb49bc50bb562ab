/** The work of `adsync backfill <job-file> --source <file>` (commands/backfill.ts): a one-off, checkpointed full upload of a large file. */
import { runJob } from '../../jobs/runner.js';
import type { CliContext } from '../context.js';
import { loadJobs, openStoreForJobs, progressFor, reportRun, runEnvironment } from '../job-session.js';

export interface BackfillFlags {
  source: string;
  restart?: boolean;
  json?: boolean;
  rejectsWithValues?: boolean;
}

export async function backfillCommand(ctx: CliContext, file: string, flags: BackfillFlags): Promise<void> {
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
}
