/** `adsync run <job-file>...`: one run of each job. */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { runJob } from '../../jobs/runner.js';
import type { CliContext } from '../context.js';
import { loadJobs, openStoreForJobs, progressFor, reportNotRun, reportRun, runEnvironment } from '../job-session.js';

interface RunFlags {
  dryRun?: boolean;
  full?: boolean;
  json?: boolean;
  rejectsWithValues?: boolean;
  maxDeleteRatio?: number;
}

export function parseRatio(value: string): number {
  // Number('') and Number(' ') are 0: an empty value is not a ratio.
  const n = value.trim() === '' ? NaN : Number(value);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new InvalidArgumentError(`expected a number from 0 to 1, got "${value}"`);
  return n;
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

export function registerRun(program: Command, ctx: CliContext): void {
  program
    .command('run')
    .description('run each job once: read its source, send what changed since the last run')
    .argument('<job-file...>', 'job files (YAML)')
    .option('--dry-run', 'plan and report without writing to the API or the state')
    .option('--full', 'ignore the saved state and send everything again')
    .option('--json', 'print one JSON summary per job on stdout (logs stay on stderr)')
    .option('--rejects-with-values', 'write the raw rejected values (personal data) into the rejects file')
    .addOption(new Option('--max-delete-ratio <ratio>', "override the job's max_delete_ratio / max_remove_ratio for this run (0 to 1)").argParser(parseRatio))
    .action(async (files: string[], flags: RunFlags) => runCommand(ctx, files, flags));
}
