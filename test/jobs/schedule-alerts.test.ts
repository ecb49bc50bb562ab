/**
 * The scheduler's alerts for jobs that cannot run, against a real webhook receiver on
 * 127.0.0.1 (the e2e tests in test/e2e/scheduler.test.ts run them through `adsync schedule`):
 * - a job file's problem is sent once, again when it changes or comes back, and again at the
 *   next reading of the folder when it could not be delivered;
 * - a run that crashes instead of ending with a summary alerts, at every tick it crashes. No
 *   real path makes runJob throw today; a progress display that throws (it is called outside the
 *   runner's catch) stands for the bug that would.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config/settings.js';
import { loadJob } from '../../src/jobs/load-job.js';
import { ScheduleAlerts, type JobFileProblem } from '../../src/jobs/schedule-alerts.js';
import { Scheduler } from '../../src/jobs/scheduler.js';
import { silentLogger } from '../../src/logging/logger.js';
import { openStateStore } from '../../src/state/index.js';
import { closedPort, startHook, type Hook } from '../helpers/webhook.js';

let hook: Hook | undefined;
afterEach(async () => {
  await hook?.close();
  hook = undefined;
});

describe('ScheduleAlerts', () => {
  it('sends a job file problem once; again when it changes, when it comes back after the file was fine, and when it could not be delivered', { timeout: 30_000 }, async () => {
    hook = await startHook();
    const alerts = new ScheduleAlerts(silentLogger());
    const problem = (reason: string, webhookUrl = hook!.url('/hook')): ReadonlyMap<string, JobFileProblem> => new Map([['/jobs/a.yaml', { job: 'a', reason, webhookUrl }]]);
    const reasons = async (): Promise<string[]> => {
      await alerts.settled();
      return hook!.calls.map((c) => (JSON.parse(c.body) as { reason: string }).reason);
    };

    alerts.jobFileProblems(problem('first'));
    alerts.jobFileProblems(problem('first'));
    expect(await reasons()).toEqual(['first']);
    alerts.jobFileProblems(problem('second'));
    alerts.jobFileProblems(problem('second'));
    expect(await reasons()).toEqual(['first', 'second']);
    // The file is fine (or gone) for one reading, then broken the same way again.
    alerts.jobFileProblems(new Map());
    alerts.jobFileProblems(problem('second'));
    expect(await reasons()).toEqual(['first', 'second', 'second']);

    // A webhook that refuses the connection: the same problem is sent at the next reading.
    alerts.jobFileProblems(problem('third', `http://127.0.0.1:${await closedPort()}/hook`));
    expect(await reasons()).toEqual(['first', 'second', 'second']);
    alerts.jobFileProblems(problem('third'));
    alerts.jobFileProblems(problem('third'));
    expect(await reasons()).toEqual(['first', 'second', 'second', 'third']);
    expect(JSON.parse(hook.calls[3]!.body)).toEqual({ event: 'adsync.job', reason: 'third', job: 'a', job_file: '/jobs/a.yaml' });
  });
});

describe('Scheduler', () => {
  it('alerts the job\'s webhook for a run that crashed instead of ending with a summary, at every tick', { timeout: 30_000 }, async () => {
    hook = await startHook();
    const dir = mkdtempSync(join(tmpdir(), 'adsync-crash-'));
    const file = join(dir, 'crashing.yaml');
    writeFileSync(join(dir, 'a.csv'), 'Email\na@example.com\n');
    writeFileSync(
      file,
      `account_id: emu-account\nschedule: "* * * * * *"\nalerts: { webhook_url: "${hook.url('/hooks/crash')}" }\nsource: { path: a.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email }\n`,
    );
    const settings = loadSettings({ env: {}, cwd: dir });
    const store = openStateStore(join(dir, 'state.sqlite'));
    const scheduler = new Scheduler({
      jobsDir: dir,
      environment: {
        settings,
        store,
        logger: silentLogger(),
        env: {},
        progress: {
          start: () => {
            throw new Error('the progress display broke');
          },
        },
        owner: 'test:1:abcdef',
        stop: new AbortController().signal,
      },
      logger: silentLogger(),
      loadJob: (path) => loadJob(path, settings, { cwd: dir }),
    });
    try {
      await scheduler.start();
      await hook.waitForCalls(2);
    } finally {
      await scheduler.stop();
      await store.close();
    }
    const expected = JSON.stringify({ event: 'adsync.job', reason: 'run crashed: the progress display broke', job: 'crashing', job_file: file });
    expect(hook.calls.slice(0, 2).map((c) => [c.url, c.body])).toEqual([
      ['/hooks/crash', expected],
      ['/hooks/crash', expected],
    ]);
  });
});
