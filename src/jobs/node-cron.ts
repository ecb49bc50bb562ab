/**
 * node-cron, the cron expressions of job files (load-job.ts checks them, scheduler.ts runs them),
 * required on first use through its CommonJS build so that loading a job file stays synchronous:
 * `adsync run` of a job without a `schedule:` does without it (~20 ms to load here). One instance
 * for the process: the scheduler's logger (setLogger) is that of the tasks load-job.ts makes too.
 */
import { createRequire } from 'node:module';
import type { NodeCron } from 'node-cron';

let nodeCron: NodeCron | undefined;

export function cron(): NodeCron {
  nodeCron ??= (createRequire(import.meta.url)('node-cron') as { default: NodeCron }).default;
  return nodeCron;
}
