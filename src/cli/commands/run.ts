/** `adsync run <job-file>...`: one run of each job (the work: ../actions/run.ts, loaded when it runs). */
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { RunFlags } from '../actions/run.js';
import type { CliContext } from '../context.js';

export function parseRatio(value: string): number {
  // Number('') and Number(' ') are 0: an empty value is not a ratio.
  const n = value.trim() === '' ? NaN : Number(value);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new InvalidArgumentError(`expected a number from 0 to 1, got "${value}"`);
  return n;
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
    .action(async (files: string[], flags: RunFlags) => (await import('../actions/run.js')).runCommand(ctx, files, flags));
}
