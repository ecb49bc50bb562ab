/** The work of `adsync schedule [--jobs <dir>]` (commands/schedule.ts): the long-running scheduler. SIGTERM/SIGINT stop it cleanly (exit 0), SIGHUP reloads. */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import { loadSettings } from '../../config/settings.js';
import { ConfigError, reportedMessage, toAdsyncError } from '../../errors.js';
import { sendAlert } from '../../jobs/alerts.js';
import { loadJob } from '../../jobs/load-job.js';
import { LogProgress } from '../../jobs/progress.js';
import { Scheduler } from '../../jobs/scheduler.js';
import type { StateStore } from '../../state/store.js';
import type { CliContext } from '../context.js';
import { openStore, runEnvironment } from '../job-session.js';

/**
 * The scheduler could not start (its jobs folder or state database cannot be used): none of
 * its jobs runs, so the settings' webhook is told (`adsync.schedule`) before the command fails.
 * A settings file (or log level) that cannot be read gives no webhook to tell: the exit code says it.
 */
async function alertNotStarted(ctx: CliContext, dir: string, error: unknown): Promise<void> {
  let webhookUrl: string | undefined;
  let logger: Logger;
  try {
    webhookUrl = ctx.settings.alerts.webhookUrl;
    logger = ctx.logger;
  } catch {
    return;
  }
  if (webhookUrl === undefined) return;
  const reason = `the scheduler could not start: ${reportedMessage(toAdsyncError(error))}`;
  await sendAlert(webhookUrl, { event: 'adsync.schedule', reason, jobs_dir: dir }, logger);
}

export async function scheduleCommand(ctx: CliContext, flags: { jobs: string }): Promise<void> {
  const dir = resolve(ctx.cwd, flags.jobs);
  let store: StateStore;
  try {
    if (!existsSync(dir)) throw new ConfigError(`jobs folder ${flags.jobs} does not exist`, { hint: 'give one with --jobs <dir>' });
    if (!statSync(dir).isDirectory()) {
      throw new ConfigError(`jobs folder ${flags.jobs} is a file, not a folder`, {
        hint: '--jobs names the folder of the job files (adsync schedule runs each one that has a schedule:); to run one job file now, use adsync run <job-file>',
      });
    }
    store = openStore(ctx);
  } catch (error) {
    await alertNotStarted(ctx, dir, error);
    throw error;
  }
  const scheduler = new Scheduler({
    jobsDir: dir,
    environment: runEnvironment(ctx, store, new LogProgress(ctx.logger, ctx.settings.progressIntervalMs)),
    logger: ctx.logger,
    loadJob: (file) => loadJob(file, ctx.settings, { cwd: ctx.cwd }),
    readSettings: () => loadSettings({ path: ctx.globalOptions().config, env: ctx.env, cwd: ctx.cwd }),
  });
  const onHup = (): void => {
    scheduler.reload().catch((error: unknown) => ctx.logger.error({ error: String(error) }, 'reload failed'));
  };
  process.on('SIGHUP', onHup);
  try {
    try {
      await scheduler.start();
    } catch (error) {
      await alertNotStarted(ctx, dir, error);
      throw error;
    }
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
}
