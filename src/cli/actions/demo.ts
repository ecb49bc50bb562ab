/**
 * The work of `adsync demo` (commands/demo.ts; what `npm start` runs): starts the emulator
 * in-process, runs the demo jobs of jobs/ against it with a fresh state in a temporary folder,
 * then runs them again to show that an unchanged source sends nothing. No credentials, no network. The folder (state,
 * rejects files) is removed at the end unless --keep: every `npm start` left one behind.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadJob } from '../../jobs/load-job.js';
import { runJob } from '../../jobs/runner.js';
import { openStateStore, type StateStore } from '../../state/index.js';
import type { CliContext } from '../context.js';
import { lockOwner, progressFor, reportRun } from '../job-session.js';

export const DEMO_JOBS = ['demo-audience.yaml', 'demo-catalog.yaml'];

/** What a first-time reader needs before the tables: the demo's rejects are meant. */
const DEMO_INTRO =
  'The demo export and feed hold a few invalid rows on purpose: each run rejects them (the rejects file says why) and sends the rest.';

function jobsDir(): string {
  // dist/cli/actions/demo.js -> the package root's jobs/
  return fileURLToPath(new URL('../../../jobs/', import.meta.url));
}

export async function demoCommand(ctx: CliContext, flags: { json?: boolean; keep?: boolean }): Promise<void> {
  // Settings that are not valid (a settings file, ADSYNC_* variables) fail here, before the
  // emulator listens: an error after it would leave its server keeping the process alive.
  const base = ctx.settings;
  const { startEmulator } = await import('../../emulator/index.js');
  const emulator = await startEmulator({ rateLimits: 'default' });
  const work = mkdtempSync(join(tmpdir(), 'adsync-demo-'));
  // The operator's own settings, less what would reach beyond the demo: its state and
  // rejects stay in its folder, and a demo run never alerts the production webhook.
  const settings = {
    ...base,
    adsUrl: emulator.url,
    apiUrl: emulator.url,
    statePath: join(work, 'state.sqlite'),
    rejectsDir: join(work, 'rejects'),
    alerts: { ...base.alerts, webhookUrl: undefined },
  };
  const c = emulator.credentials;
  const env = {
    ...ctx.env,
    ADSYNC_CONSUMER_KEY: c.consumerKey,
    ADSYNC_CONSUMER_SECRET: c.consumerSecret,
    ADSYNC_ACCESS_TOKEN: c.accessToken,
    ADSYNC_ACCESS_TOKEN_SECRET: c.accessTokenSecret,
  };
  // With --json, stdout holds only the summary objects (one JSON line per job run); the
  // banner, the headers and the emulator's state go to stderr.
  const out = flags.json === true ? ctx.io.stderr : ctx.io.stdout;
  let store: StateStore | undefined;
  try {
    store = openStateStore(settings.statePath, { offThreadCommitMin: settings.commitThreadMin });
    out(`adsync demo: emulator on ${emulator.url}, state in ${work}\n`);
    out(`${DEMO_INTRO}\n\n`);
    const jobs = DEMO_JOBS.map((f) => loadJob(join(jobsDir(), f), settings, { cwd: ctx.cwd }));
    const environment = { settings, store, logger: ctx.logger, env, progress: progressFor(ctx, flags.json === true), owner: lockOwner(), stop: ctx.shutdown.signal };
    for (const pass of ['first run', 'second run, same sources: nothing is sent again (the catalog only reads back its product sets)']) {
      out(`== ${pass}\n`);
      for (const job of jobs) {
        const summary = await runJob(job, environment, { command: 'run', dryRun: false, full: false, rejectsWithValues: false });
        reportRun(ctx, summary, flags.json === true);
        out('\n');
      }
    }
    const state = emulator.stateSummary();
    out(`== what the emulator now holds\n${JSON.stringify(state, null, 2)}\n`);
    out(
      flags.keep === true
        ? `\nRun history: ADSYNC_STATE=${settings.statePath} adsync runs\n`
        : `\nThe demo's state and rejects files are removed now; \`adsync demo --keep\` keeps them (then: ADSYNC_STATE=<folder>/state.sqlite adsync runs).\n`,
    );
  } finally {
    await store?.close();
    await emulator.close();
    if (flags.keep !== true) rmSync(work, { recursive: true, force: true });
  }
}
