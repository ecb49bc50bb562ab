/** `adsync schedule [--jobs <dir>]`: the long-running scheduler. SIGTERM/SIGINT stop it cleanly (exit 0), SIGHUP reloads. */
import type { Command } from 'commander';
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError } from '../../errors.js';
import { loadJob } from '../../jobs/load-job.js';
import { LogProgress } from '../../jobs/progress.js';
import { Scheduler } from '../../jobs/scheduler.js';
import type { CliContext } from '../context.js';
import { openStore, runEnvironment } from '../job-session.js';

export function registerSchedule(program: Command, ctx: CliContext): void {
  program
    .command('schedule')
    .description('run every job file of a folder on its `schedule:` cron expression, until SIGTERM')
    .option('--jobs <dir>', 'folder of job files', 'jobs')
    .action(async (flags: { jobs: string }) => {
      const dir = resolve(ctx.cwd, flags.jobs);
      if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new ConfigError(`jobs folder ${flags.jobs} does not exist`, { hint: 'give one with --jobs <dir>' });
      const store = openStore(ctx);
      const scheduler = new Scheduler({
        jobsDir: dir,
        environment: runEnvironment(ctx, store, new LogProgress(ctx.logger, ctx.settings.progressIntervalMs)),
        logger: ctx.logger,
        loadJob: (file) => loadJob(file, ctx.settings, { cwd: ctx.cwd }),
      });
      const onHup = (): void => {
        scheduler.reload().catch((error: unknown) => ctx.logger.error({ error: String(error) }, 'reload failed'));
      };
      process.on('SIGHUP', onHup);
      try {
        await scheduler.start();
        ctx.logger.info({ jobsDir: dir, jobs: scheduler.size, pid: process.pid }, 'scheduler started (SIGTERM or Ctrl-C stops it, SIGHUP reloads the job files)');
        // Signal handlers do not keep a process alive: with no cron task (no job scheduled
        // yet, or all removed by a reload) it would end at once (exit 13, an unsettled await)
        // instead of waiting for SIGHUP or SIGTERM.
        const keepAlive = setInterval(() => undefined, 1 << 30);
        try {
          await new Promise<void>((done) => {
            if (ctx.shutdown.signal.aborted) done();
            else ctx.shutdown.signal.addEventListener('abort', () => done(), { once: true });
          });
        } finally {
          clearInterval(keepAlive);
        }
        await scheduler.stop();
        ctx.logger.info('scheduler stopped');
      } finally {
        process.off('SIGHUP', onHup);
        await store.close();
      }
    });
}
