/** The work of `adsync run <job-file>...` (commands/run.ts): one run of each job. */
import { runJob } from '../../jobs/runner.js';
import type { CliContext } from '../context.js';
import { loadJobs, openStoreForJobs, progressFor, reportNotRun, reportRun, runEnvironment } from '../job-session.js';

export interface RunFlags {
  dryRun?: boolean;
  full?: boolean;
  json?: boolean;
  rejectsWithValues?: boolean;
  maxDeleteRatio?: number;
}

export async function runCommand(ctx: CliContext, files: string[], flags: RunFlags): Promise<void> {
  const jobs = loadJobs(ctx, files, { json: flags.json === true, dryRun: flags.dryRun === true });
  if (jobs.length === 0) return;
  const store = await openStoreForJobs(ctx, jobs, { json: flags.json === true, dryRun: flags.dryRun === true });
  try {
    const env = runEnvironment(ctx, store, progressFor(ctx, false));
    for (const job of jobs) {
      if (ctx.shutdown.signal.aborted) {
        reportNotRun(ctx, job, { json: flags.json === true, dryRun: flags.dryRun === true });
        continue;
      }
      const summary = await runJob(job, env, {
        command: 'run',
        dryRun: flags.dryRun === true,
        full: flags.full === true,
        rejectsWithValues: flags.rejectsWithValues === true,
        maxDeleteRatio: flags.maxDeleteRatio,
      });
      reportRun(ctx, summary, flags.json === true);
    }
  } finally {
    await store.close();
  }
}
