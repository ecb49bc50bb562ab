/**
 * `adsync schedule` lives for months, running jobs every few minutes in one process: a finished
 * run must leave nothing of itself behind. Each test makes runs in this process, as the
 * scheduler does (runJob with one state store, one logger and the process's stop signal for
 * all of them), and then checks, after a full garbage collection, that no run is still held in
 * memory: the progress display is handed each run's counters, which its RunContext keeps, so a
 * run that is still reachable shows as a counters object that was not collected. The process's
 * stop signal must have no listener left either.
 */
import { getEventListeners } from 'node:events';
import { closeSync, openSync, writeSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config/settings.js';
import { silentLogger } from '../../src/logging/logger.js';
import { loadJob } from '../../src/jobs/load-job.js';
import { PARALLEL_MIN_BYTES } from '../../src/jobs/parallel-export-read.js';
import { NoProgress, type ProgressDisplay, type RunCounters, type RunProgress } from '../../src/jobs/progress.js';
import type { RunEnvironment } from '../../src/jobs/run-context.js';
import { runJob } from '../../src/jobs/runner.js';
import type { RunSummary } from '../../src/jobs/summary.js';
import { openStateStore } from '../../src/state/index.js';
import type { StateStore } from '../../src/state/store.js';
import { catalogJob, feedItem, ids, rssFeed } from '../fixtures/catalog/catalog-e2e.js';
import { workspacePerTest, type Workspace } from '../helpers/e2e.js';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const workspace = workspacePerTest();
let store: StateStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

/** A progress display that shows nothing and remembers each run's counters, weakly. */
class RunTracker implements ProgressDisplay {
  readonly runs: WeakRef<RunCounters>[] = [];

  start(_job: string, counters: RunCounters): RunProgress {
    this.runs.push(new WeakRef(counters));
    return new NoProgress().start();
  }

  /** The runs still in memory after a full garbage collection. */
  async alive(): Promise<number> {
    // A WeakRef dereferenced in this turn holds its target until the turn ends: collect in the next.
    await new Promise((resolve) => setTimeout(resolve, 0));
    collectGarbage();
    await new Promise((resolve) => setTimeout(resolve, 0));
    return this.runs.filter((run) => run.deref() !== undefined).length;
  }
}

/** `runs` scheduled runs of each job file (relative to the workspace), in turn, in this process; their summaries. */
async function runInProcess(ws: Workspace, files: readonly string[], runs: number, tracker: RunTracker, processStop: AbortSignal): Promise<RunSummary[]> {
  const settings = loadSettings({ env: ws.env, cwd: ws.dir });
  store = openStateStore(settings.statePath, { offThreadCommitMin: settings.commitThreadMin });
  const logger = silentLogger();
  const env: RunEnvironment = { settings, store, logger, env: ws.env, progress: tracker, owner: 'test:1:soak', stop: processStop };
  const summaries: RunSummary[] = [];
  for (let i = 0; i < runs; i++) {
    for (const file of files) {
      const job = loadJob(`${ws.dir}/${file}`, settings, { cwd: ws.dir });
      summaries.push(await runJob(job, env, { command: 'run', dryRun: false, full: false, rejectsWithValues: false }));
    }
  }
  return summaries;
}

/** A CRM export of at least `bytes`: ten distinct emails over and over (few to send), each row padded by a note. */
function writeLargeExport(path: string, bytes: number): void {
  const fd = openSync(path, 'w');
  try {
    const note = 'x'.repeat(200);
    const rows: string[] = [];
    for (let i = 0; i < 1000; i++) rows.push(`user${i % 10}@example.com,${note}`);
    const block = `${rows.join('\n')}\n`;
    writeSync(fd, 'Email,Note\n');
    for (let written = 0; written < bytes; written += block.length) writeSync(fd, block);
  } finally {
    closeSync(fd);
  }
}

describe('a long-lived process keeps nothing of the runs it made', () => {
  it('an export large enough to be read on several threads: each run is let go once it ended', { timeout: 120_000 }, async () => {
    const ws = await workspace();
    writeLargeExport(`${ws.dir}/crm.csv`, PARALLEL_MIN_BYTES + 1024 * 1024);
    ws.write('jobs/big.yaml', 'account_id: emu-account\nsource: { path: ../crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  mode: add\n  identifiers: { email: Email }\n');
    ws.write('adsync.yaml', `${ws.read('adsync.yaml')}read_threads: 2\n`);
    const tracker = new RunTracker();
    const processStop = new AbortController();
    const summaries = await runInProcess(ws, ['jobs/big.yaml'], 3, tracker, processStop.signal);
    expect(summaries.map((s) => [s.status, s.error])).toEqual([
      ['success', undefined],
      ['success', undefined],
      ['success', undefined],
    ]);
    expect(summaries[0]?.added).toBe(10);
    expect(tracker.runs).toHaveLength(3);
    expect(await tracker.alive()).toBe(0);
    expect(getEventListeners(processStop.signal, 'abort')).toHaveLength(0);
  });

  it('audience and catalog runs that send, find nothing to send, fail at the service or cannot read their source: each run is let go once it ended', { timeout: 120_000 }, async () => {
    const ws = await workspace();
    ws.write('adsync.yaml', `${ws.read('adsync.yaml')}commit_thread_min: 1\n`);
    ws.write('crm.csv', 'Email\na@example.com\nb@example.com\n');
    ws.write('feed.xml', rssFeed(ids(3).map((id) => feedItem(id))));
    const audience = (target: string, path: string): string =>
      `account_id: emu-account\nsource: { path: ${path}, format: csv }\naudience:\n  ${target}\n  identifiers: { email: Email }\n`;
    ws.write('jobs/mirror.yaml', audience('custom_audience_id: emu-audience', '../crm.csv'));
    ws.write('jobs/dnr.yaml', audience('do_not_reach_list_id: emu-dnr', '../crm.csv'));
    ws.write('jobs/shop.yaml', catalogJob({ source: '../feed.xml' }));
    ws.write('jobs/no-audience.yaml', audience('custom_audience_id: no-such-audience', '../crm.csv'));
    ws.write('jobs/no-source.yaml', audience('custom_audience_id: emu-audience', '../gone.csv'));
    ws.write('jobs/no-server.yaml', audience('custom_audience_id: emu-audience', 'http://127.0.0.1:1/crm.csv'));
    const files = ['mirror', 'dnr', 'shop', 'no-audience', 'no-source', 'no-server'].map((name) => `jobs/${name}.yaml`);
    const tracker = new RunTracker();
    const processStop = new AbortController();
    const summaries = await runInProcess(ws, files, 2, tracker, processStop.signal);
    expect(summaries.map((s) => `${s.job} ${s.status}`)).toEqual([0, 1].flatMap(() => ['mirror success', 'dnr success', 'shop success', 'no-audience failed', 'no-source failed', 'no-server failed']));
    expect(summaries.slice(0, 3).map((s) => s.added + s.created)).toEqual([2, 2, 3]);
    expect(await tracker.alive()).toBe(0);
    expect(getEventListeners(processStop.signal, 'abort')).toHaveLength(0);
  });
});
