/** `adsync runs`: run history from the state database. `adsync unlock`: remove the lock of a run that died. The work: ../actions/runs.ts. */
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { RunsFlags } from '../actions/runs.js';
import type { CliContext } from '../context.js';

/** `--limit`: a whole number of runs, at least 1 (0, negatives, fractions and text are refused). */
export function parseLimit(value: string): number {
  const n = /^\s*\d+\s*$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError(`expected a whole number of runs, 1 or more, got "${value}"`);
  return n;
}

export function registerRuns(program: Command, ctx: CliContext): void {
  program
    .command('runs')
    .description('show the run history: start, job, kind, status, duration, counts, run id, rejects file, error')
    .option('--job <name>', 'only this job')
    .addOption(new Option('--limit <n>', 'how many runs').default(20).argParser(parseLimit))
    .option('--json', 'one JSON object per run')
    .action(async (flags: RunsFlags) => (await import('../actions/runs.js')).runsCommand(ctx, flags));

  program
    .command('unlock')
    .description('remove the lock of a job (or of a catalog or audience) whose run died (a lock expires on its own after lock.ttl_seconds)')
    .argument('<job-name>', 'the job name (the file name without .yaml unless the job sets name:), or a target as the waiting run names it (catalog:<id>, custom_audience:<account>:<id>, do_not_reach:<account>:<id>)')
    .option('--force', 'remove the lock even though its holder is a live process of this machine (a reused pid)')
    .action(async (job: string, flags: { force?: boolean }) => (await import('../actions/runs.js')).unlock(ctx, job, flags.force === true));
}
