/**
 * The scheduler, as a real long-running process: runs on a short cron expression, skips
 * an overlapping tick, never runs one job twice at once even across two processes, stops
 * cleanly on SIGTERM with the state consistent (announcing no further run), and skips an
 * invalid job file; follows job files that are symbolic links; stops the progress lines of
 * each of two concurrent runs when it ends. Alerts a webhook on 127.0.0.1 when a job cannot run
 * at all: a job file that does not load or whose job name is taken (once per problem, without
 * holding up the other jobs), and a scheduler that cannot start.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import http from 'node:http';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { openTestDatabase } from '../helpers/sqlite.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { BIN, type CliResult } from '../helpers/cli.js';
import { collect, createWorkspace, jsonLines, type Workspace } from '../helpers/e2e.js';
import { startHook, type Hook } from '../helpers/webhook.js';

let ws: Workspace;
let slowSource: http.Server | undefined;
/** The schedulers a test started: one a failed test leaves running is killed after it. */
const schedulers: ChildProcess[] = [];
beforeEach(async () => {
  ws = await createWorkspace();
});
afterEach(async () => {
  for (const child of schedulers.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await ws.close();
  await new Promise<void>((r) => (slowSource ? slowSource.close(() => r()) : r()));
  slowSource = undefined;
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface RunRow {
  runId: string;
  job: string;
  status: string;
  startedAt: string;
  finishedAt: string | null;
}

async function history(job?: string): Promise<RunRow[]> {
  const r = await ws.cli(['runs', '--json', '--limit', '200', ...(job ? ['--job', job] : [])]);
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as RunRow);
}

function assertNoOverlap(runs: RunRow[]): void {
  const spans = runs.map((r) => [Date.parse(r.startedAt), r.finishedAt ? Date.parse(r.finishedAt) : Infinity] as const).sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < spans.length; i++) expect(spans[i]![0]).toBeGreaterThanOrEqual(spans[i - 1]![1]);
}

/** Serves a small CRM export, each response held back `delayMs`: every run takes at least that long. */
async function serveSlowExport(delayMs: number): Promise<string> {
  slowSource = http.createServer((_req, res) => {
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.end('Email\nslow@example.com\n');
    }, delayMs);
  });
  await new Promise<void>((r) => slowSource?.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(slowSource?.address() as AddressInfo).port}/crm.csv`;
}

/** `adsync schedule` as a child process whose log is followed: `waitFor` a line (or fail, naming it). */
function startScheduler(args: string[] = ['--jobs', 'jobs']): {
  child: ChildProcess;
  done: Promise<CliResult>;
  log: () => string;
  waitFor: (what: RegExp | string, label: string, timeoutMs?: number) => Promise<void>;
} {
  const child = ws.spawn(['schedule', ...args], { ADSYNC_LOG_LEVEL: 'info' });
  schedulers.push(child);
  const done = collect(child);
  let log = '';
  child.stderr?.on('data', (d: Buffer) => (log += d.toString()));
  const seen = (what: RegExp | string): boolean => (typeof what === 'string' ? log.includes(what) : what.test(log));
  return {
    child,
    done,
    log: () => log,
    async waitFor(what, label, timeoutMs = 15_000) {
      const until = Date.now() + timeoutMs;
      while (!seen(what) && Date.now() < until) await sleep(20);
      expect(seen(what), `${label}\n${log}`).toBe(true);
    },
  };
}

/** Runs `adsync schedule` for `ms`, then SIGTERM: its result. */
async function runSchedulerFor(ms: number): Promise<CliResult> {
  const { child, done } = startScheduler();
  await sleep(ms);
  child.kill('SIGTERM');
  return done;
}

/** request_timeout_ms: the slow export's time to answer (the workspace's settings say 2 s). */
const jobYaml = (schedule: string, path: string) =>
  `account_id: emu-account\nschedule: "${schedule}"\nrequest_timeout_ms: 15000\nsource: { path: "${path}", format: csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email }\n`;

describe('adsync schedule', () => {
  it('runs a job on a short cron expression and skips a tick that overlaps a run still going', { timeout: 30_000 }, async () => {
    ws.write('jobs/every-second.yaml', jobYaml('* * * * * *', await serveSlowExport(2500)));
    const r = await runSchedulerFor(6000);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('"msg":"job scheduled"');
    expect(r.stderr).toContain('"nextRun":"');
    expect(r.stderr).toContain('skipping this tick: the previous run of the job is still going');
    // A skipped tick says since when the run goes on (a run that hangs shows as such): since the
    // start of the run in progress, the latest started before it.
    const lines = r.stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { time: number; msg: string; runningSince?: string });
    const skip = lines.findIndex((l) => l.msg.startsWith('skipping this tick'));
    const started = lines.slice(0, skip).filter((l) => l.msg === 'run started').at(-1);
    const since = Date.parse(lines[skip]?.runningSince ?? '');
    expect(since, r.stderr).toBeGreaterThan(started!.time - 1000);
    expect(since).toBeLessThanOrEqual(started!.time);
    expect(lines[skip]!.time - since).toBeGreaterThanOrEqual(900);
    const runs = await history('every-second');
    expect(runs.length).toBeGreaterThanOrEqual(1);
    expect(runs.filter((x) => x.status === 'success').length).toBeGreaterThanOrEqual(1);
    assertNoOverlap(runs);
  });

  it('never runs the same job at the same time from two scheduler processes sharing one state database', { timeout: 40_000 }, async () => {
    ws.write('jobs/shared.yaml', jobYaml('* * * * * *', await serveSlowExport(1200)));
    const a = startScheduler();
    const b = startScheduler();
    await sleep(8000);
    a.child.kill('SIGTERM');
    b.child.kill('SIGTERM');
    const [ra, rb] = await Promise.all([a.done, b.done]);
    expect(ra.code, ra.stderr).toBe(0);
    expect(rb.code, rb.stderr).toBe(0);
    // Runs refused because the other process held the lock are not recorded as runs.
    const real = (await history('shared')).filter((x) => x.status === 'success' || x.status === 'interrupted');
    expect(real.length).toBeGreaterThanOrEqual(2);
    assertNoOverlap(real);
    expect(ra.stderr + rb.stderr).toContain('run skipped: the job is running elsewhere');
  });

  it('on SIGTERM finishes and commits the batch in flight, then exits 0 with the state consistent', { timeout: 60_000 }, async () => {
    const lines = ['Id,Email'];
    for (let i = 0; i < 60_000; i++) lines.push(`P${i},u${i}@example.com`);
    ws.write('jobs/data/big.csv', `${lines.join('\n')}\n`);
    ws.write(
      'jobs/big.yaml',
      'account_id: emu-account\nschedule: "* * * * * *"\nconcurrency: 1\nrequest_timeout_ms: 20000\nsource: { path: data/big.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email, partner_user_id: Id }\n',
    );
    // The first batch (of two) is answered only after 3 s: the SIGTERM comes while it is in flight.
    ws.fault({ route: 'POST /12/**/users', kind: 'delay', ms: 3000, times: 1 });
    const { child, done, waitFor } = startScheduler();
    await waitFor('"msg":"plan"', 'the run to plan', 30_000);
    await sleep(500);
    child.kill('SIGTERM');
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('waiting for the runs in progress');
    const runs = await history('big');
    expect(runs.map((x) => x.status), r.stderr).toEqual(['interrupted']);
    // Interrupted because the scheduler was asked to stop: a warning, not an error (every
    // restart would log one for each run in progress).
    const interrupted = r.stderr.split('\n').filter((l) => l.includes('"msg":"run interrupted"')).map((l) => JSON.parse(l) as { level: number; summary: { error: string } });
    expect(interrupted.map((l) => l.level)).toEqual([40]);
    const acknowledged = /^stopped by a signal after committing the work in flight: ([\d,]+) of the 120,000 identifiers to send acknowledged; the next run sends the rest$/.exec(interrupted[0]?.summary.error ?? '');
    expect(acknowledged, interrupted[0]?.summary.error).not.toBeNull();
    // What the state database says was sent is exactly what the service holds.
    const members = ws.emulator.state().custom_audiences['emu-audience']?.members ?? {};
    const onService = (members.email?.length ?? 0) + (members.partner_user_id?.length ?? 0);
    const db = openTestDatabase(ws.statePath, { readonly: true });
    const inState = (db.prepare('SELECT COUNT(*) AS n FROM audience_membership').get() as { n: number }).n;
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();
    expect(inState).toBe(onService);
    expect(inState).toBeGreaterThan(0);
    expect(inState).toBeLessThan(120_000);
    // The summary says how many were acknowledged: what both hold.
    expect(Number(acknowledged?.[1]?.replaceAll(',', ''))).toBe(inState);
  });

  it('announces no next run once stopped: a run that ends after SIGTERM logs no "next run" line', { timeout: 30_000 }, async () => {
    ws.write('jobs/slow.yaml', jobYaml('* * * * * *', await serveSlowExport(2000)));
    const { child, done, waitFor } = startScheduler();
    await waitFor('"msg":"run started"', 'a run to start');
    child.kill('SIGTERM');
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    const afterSignal = r.stderr.slice(r.stderr.indexOf('SIGTERM received'));
    // Off a terminal the notice is a log line like the others (a log of JSON lines stays one).
    const notice = r.stderr.split('\n').find((l) => l.includes('SIGTERM received')) ?? '';
    expect(JSON.parse(notice)).toMatchObject({ level: 40, signal: 'SIGTERM', msg: 'SIGTERM received: finishing the requests in flight, then stopping (send again to stop at once)' });
    // The run in progress ended after the signal, and said how...
    expect(afterSignal, r.stderr).toMatch(/"msg":"run (success|interrupted)"/);
    // ...but no run is coming: none is announced.
    expect(afterSignal, r.stderr).not.toContain('"msg":"next run"');
    expect(afterSignal).toContain('"msg":"scheduler stopped"');
  });

  it('on SIGHUP takes up a new job file, drops a removed one and follows a changed one, without stopping', { timeout: 40_000 }, async () => {
    ws.write('jobs/data/a.csv', 'Email\na@example.com\n');
    ws.write('jobs/data/b.csv', 'Email\nb@example.com\n');
    ws.write('jobs/first.yaml', jobYaml('* * * * * *', 'data/a.csv'));
    ws.write('jobs/later.yaml', jobYaml('0 0 1 1 *', 'data/b.csv')); // once a year: not before the reload
    const { child, done, waitFor } = startScheduler();
    await waitFor(/"job":"first"[^\n]*"msg":"run finished"/, 'a first run of job first');
    expect(await history('later')).toEqual([]);

    // The operator removes one job file, makes another run every second, adds a third, and sends SIGHUP.
    rmSync(join(ws.dir, 'jobs', 'first.yaml'));
    ws.write('jobs/later.yaml', jobYaml('* * * * * *', 'data/b.csv'));
    ws.write('jobs/added.yaml', jobYaml('* * * * * *', 'data/b.csv').replace('audience:\n', 'audience:\n  mode: add\n'));
    child.kill('SIGHUP');
    await waitFor('"msg":"reloading the job files (SIGHUP)"', 'the reload');
    await waitFor('"msg":"job removed from the schedule"', 'the removed job');
    await waitFor(/"job":"later"[^\n]*"msg":"run finished"/, 'a run of job later');
    await waitFor(/"job":"added"[^\n]*"msg":"run finished"/, 'a run of the new job');
    // No run of the removed job starts after the reload (one in progress may finish).
    const firstRuns = (await history('first')).length;
    await sleep(2500);
    expect((await history('first')).length).toBe(firstRuns);
    expect(child.exitCode).toBeNull();

    child.kill('SIGTERM');
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    expect(await history('later')).toContainEqual(expect.objectContaining({ status: 'success' }));
    expect(await history('added')).toContainEqual(expect.objectContaining({ status: 'success' }));
  });

  it('on a SIGHUP that finds the jobs folder gone keeps the jobs it has, says so, and takes the folder up again at the next SIGHUP', { timeout: 40_000 }, async () => {
    ws.write('jobs/data/a.csv', 'Email\na@example.com\n');
    ws.write('jobs/kept.yaml', jobYaml('* * * * * *', join(ws.dir, 'jobs', 'data', 'a.csv')));
    const { child, done, log, waitFor } = startScheduler();
    await waitFor('"msg":"scheduler started', 'the start');
    // The operator moves the folder away (a deploy replacing it, a typo in a mv) and reloads.
    const jobs = join(ws.dir, 'jobs');
    const moved = join(ws.dir, 'jobs.old');
    renameSync(jobs, moved);
    child.kill('SIGHUP');
    await waitFor('"msg":"reload failed', 'the failed reload');
    const failed = log()
      .split('\n')
      .filter((l) => l.includes('"msg":"reload failed'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(failed, log()).toHaveLength(1);
    expect(failed[0]).toMatchObject({
      level: 50,
      jobsDir: jobs,
      error: `the jobs folder ${jobs} does not exist (any more)`,
      msg: 'reload failed: the 1 job scheduled before keeps running as it was loaded; fix the jobs folder, then send SIGHUP again',
    });
    // The job runs on meanwhile.
    const before = log().split('\n').filter((l) => l.includes('"msg":"run finished"')).length;
    await waitFor((() => new RegExp(`("msg":"run finished"[^]*){${before + 1}}`))(), 'a run after the failed reload');
    renameSync(moved, jobs);
    child.kill('SIGHUP');
    await waitFor(/"msg":"reloading the job files \(SIGHUP\)"[^]*"msg":"reloading the job files \(SIGHUP\)"/, 'the second reload');
    await sleep(300);
    child.kill('SIGTERM');
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr.split('\n').filter((l) => l.includes('"msg":"reload failed'))).toHaveLength(1);
  });

  it('on SIGHUP says when the settings file changed or broke since the start (a reload does not apply it), and not when it did not', { timeout: 30_000 }, async () => {
    ws.write('jobs/data/a.csv', 'Email\na@example.com\n');
    ws.write('jobs/daily.yaml', jobYaml('0 6 * * *', 'data/a.csv'));
    const settingsFile = join(ws.dir, 'adsync.yaml');
    const settings = ws.read('adsync.yaml');
    const { child, done, log, waitFor } = startScheduler();
    await waitFor('"msg":"scheduler started', 'the start');
    const lines = (): Record<string, unknown>[] =>
      log()
        .split('\n')
        .filter((l) => l.includes('settings file'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);

    child.kill('SIGHUP'); // nothing changed
    await waitFor('"msg":"reloading the job files (SIGHUP)"', 'the first reload');
    await sleep(300);
    expect(lines(), log()).toEqual([]);

    ws.write('adsync.yaml', `${settings}timezone: Asia/Tokyo\n`);
    ws.write('jobs/added.yaml', jobYaml('0 6 * * *', 'data/a.csv'));
    child.kill('SIGHUP');
    await waitFor(/"job":"added"[^\n]*"msg":"job scheduled"/, 'the added job');
    expect(lines(), log()).toEqual([
      expect.objectContaining({
        level: 40,
        settingsFile,
        msg: 'the settings file changed since the scheduler started: a reload reads the job files only, and the jobs keep the settings the scheduler started with; restart the scheduler (systemctl restart adsync) to use the new ones',
      }),
    ]);

    ws.write('adsync.yaml', `${settings}retry: [\n`);
    child.kill('SIGHUP');
    await waitFor(/"msg":"the settings file does not load/, 'the broken settings file');
    child.kill('SIGTERM');
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    expect(lines()[1]).toMatchObject({
      level: 50,
      settingsFile,
      msg: 'the settings file does not load any more: the scheduler goes on with the settings it started with, but would not start again; fix the file before it is restarted',
    });
    expect(String(lines()[1]!.error)).toMatch(/^.*adsync\.yaml/);
    // The jobs go on with the settings of the start.
    expect(r.stderr).not.toContain('job removed from the schedule');
  });

  it('says, once, when a job file was edited or removed without a SIGHUP: the runs go on with the job as loaded', { timeout: 40_000 }, async () => {
    ws.write('jobs/data/a.csv', 'Email\na@example.com\n');
    const yaml = jobYaml('* * * * * *', 'data/a.csv');
    const file = ws.write('jobs/edited.yaml', yaml);
    const { child, done, log, waitFor } = startScheduler();
    await waitFor('"msg":"run finished"', 'a first run');
    const count = (what: string): number => log().split('\n').filter((l) => l.includes(what)).length;
    const runs = (): number => count('"msg":"run finished"');

    // Written again as it was (a deploy, touch), a minute later: no change.
    ws.write('jobs/edited.yaml', yaml);
    utimesSync(file, new Date(Date.now() + 60_000), new Date(Date.now() + 60_000));
    let before = runs();
    await waitFor(new RegExp(`("msg":"run finished"[^]*){${before + 2}}`), 'two runs after the rewrite');
    expect(count('the job file changed since'), log()).toBe(0);

    ws.write('jobs/edited.yaml', `${yaml}# a comment, saved without a reload\n`);
    await waitFor('the job file changed since', 'the edit noticed');
    const changed = log().split('\n').find((l) => l.includes('the job file changed since')) ?? '';
    expect(JSON.parse(changed)).toMatchObject({
      level: 40,
      job: 'edited',
      file,
      msg: 'the job file changed since the scheduler loaded it: this run and the next ones use the job as it was loaded; send SIGHUP (systemctl reload adsync) to load the file again',
    });
    before = runs();
    await waitFor(new RegExp(`("msg":"run finished"[^]*){${before + 2}}`), 'two more runs');
    expect(count('the job file changed since')).toBe(1);

    // A reload loads it: no more word of it (the job itself is the same, and goes on).
    child.kill('SIGHUP');
    await waitFor('"msg":"reloading the job files (SIGHUP)"', 'the reload');
    before = runs();
    await waitFor(new RegExp(`("msg":"run finished"[^]*){${before + 2}}`), 'two runs after the reload');
    expect(count('the job file changed since')).toBe(1);

    rmSync(file);
    await waitFor('the job file is gone', 'the removal noticed');
    before = runs();
    await waitFor(new RegExp(`("msg":"run finished"[^]*){${before + 2}}`), 'two runs after the removal');
    child.kill('SIGTERM');
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    const gone = r.stderr.split('\n').filter((l) => l.includes('the job file is gone'));
    expect(gone).toHaveLength(1);
    expect(JSON.parse(gone[0]!)).toMatchObject({
      level: 40,
      job: 'edited',
      file,
      msg: 'the job file is gone since the scheduler loaded it: the job still runs as it was loaded; send SIGHUP (systemctl reload adsync) to take it off the schedule',
    });
  });

  it('keeps a run blocking its job while a reload drops the job (a job file saved broken) and the next brings it back', { timeout: 40_000 }, async () => {
    const good = jobYaml('* * * * * *', await serveSlowExport(5000));
    ws.write('jobs/edited.yaml', good);
    const { child, done, log, waitFor } = startScheduler();
    await waitFor('"msg":"run started"', 'a first run');
    // The operator saves the file half edited and reloads, then saves it fixed and reloads.
    ws.write('jobs/edited.yaml', 'account_id: [\n');
    child.kill('SIGHUP');
    await waitFor('"msg":"job removed from the schedule"', 'the broken file dropping the job');
    ws.write('jobs/edited.yaml', good);
    child.kill('SIGHUP');
    await waitFor(/"msg":"job scheduled"[^]*"msg":"job scheduled"/, 'the fixed file scheduling the job again');
    await waitFor(/"job":"edited"[^\n]*"msg":"run finished"/, 'the first run to end', 20_000);
    child.kill('SIGTERM');
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    // The ticks after the job came back were skipped while its first run was going: one run
    // at a time, and none taken for a crashed one.
    const starts = log().split('\n').filter((l) => l.includes('"msg":"run started"'));
    const firstEnd = log().indexOf('"msg":"run finished"');
    expect(starts.filter((l) => log().indexOf(l) < firstEnd), r.stderr).toHaveLength(1);
    expect(r.stderr).not.toContain('earlier run of job edited stopped before');
    const runs = await history('edited');
    expect(runs.map((x) => x.status)).not.toContain('failed');
    assertNoOverlap(runs);
  });

  it('still runs a tick that it reaches a few seconds late (its main thread held up), once', { timeout: 30_000 }, async () => {
    ws.write('jobs/data/a.csv', 'Email\na@example.com\n');
    ws.write('jobs/every-four.yaml', jobYaml('*/4 * * * * *', 'data/a.csv'));
    const { child, done, log, waitFor } = startScheduler();
    await waitFor('"msg":"scheduler started', 'the start');
    // Held (as SQLite's busy wait or a paused VM holds it) from 0.5 s before a tick to 2 s after.
    const tick = Math.ceil((Date.now() + 1000) / 4000) * 4000;
    await sleep(tick - 500 - Date.now());
    child.kill('SIGSTOP');
    await sleep(2500);
    const before = log().split('\n').filter((l) => l.includes('"msg":"run started"')).length;
    child.kill('SIGCONT');
    // The late tick's run starts at once, not at the next tick 2 s later.
    await sleep(1000);
    const started = log().split('\n').filter((l) => l.includes('"msg":"run started"'));
    child.kill('SIGTERM');
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    expect(started.length - before, r.stderr).toBe(1);
    expect(r.stderr).not.toContain('missed');
  });

  it('logs the ticks it missed while held up (a suspended machine) as one line per job, however many', { timeout: 30_000 }, async () => {
    ws.write('jobs/data/a.csv', 'Email\na@example.com\n');
    ws.write('jobs/every-second.yaml', jobYaml('* * * * * *', 'data/a.csv'));
    const { child, done, log, waitFor } = startScheduler();
    await waitFor('"msg":"run finished"', 'a first run');
    // Suspended for 5 s: five ticks or so go by, each one's next due before the process wakes.
    child.kill('SIGSTOP');
    await sleep(5000);
    child.kill('SIGCONT');
    await waitFor('"msg":"missed', 'the missed ticks');
    await sleep(500);
    child.kill('SIGTERM');
    const r = await done;
    expect(r.code, log()).toBe(0);
    const missed = r.stderr
      .split('\n')
      .filter((l) => l.includes('"msg":"missed'))
      .map((l) => JSON.parse(l) as { level: number; job: string; missed: number; firstTick: string; lastTick: string; msg: string });
    expect(missed, r.stderr).toHaveLength(1);
    const [line] = missed;
    expect(line).toMatchObject({ level: 40, job: 'every-second' });
    expect(line!.missed).toBeGreaterThanOrEqual(3);
    expect(Date.parse(line!.lastTick) - Date.parse(line!.firstTick)).toBe((line!.missed - 1) * 1000);
    expect(line!.msg).toBe(`missed ${line!.missed} runs: the scheduler was held up past their time by more than 60 s, or the next one was due`);
  });

  it("fires a job on its cron expression in its own time zone, the settings' time zone by default", { timeout: 30_000 }, async () => {
    // Kolkata is UTC+5:30: its minute is never UTC's. An expression for this minute and the
    // next one in Kolkata time fires every second there, and never in UTC meanwhile.
    const kolkataMinute = Number(new Intl.DateTimeFormat('en-GB', { timeZone: 'Asia/Kolkata', minute: 'numeric' }).format(new Date()));
    const expression = `* ${kolkataMinute},${(kolkataMinute + 1) % 60} * * * *`;
    const addJob = (name: string, timezone: string | undefined): void => {
      ws.write(`jobs/data/${name}.csv`, `Email\n${name}@example.com\n`);
      const yaml = jobYaml(expression, `data/${name}.csv`).replace('audience:\n', 'audience:\n  mode: add\n');
      ws.write(`jobs/${name}.yaml`, timezone ? `timezone: ${timezone}\n${yaml}` : yaml);
    };
    addJob('kolkata', 'Asia/Kolkata');
    addJob('utc', 'UTC');
    addJob('default', undefined);
    ws.write('adsync.yaml', `${ws.read('adsync.yaml')}timezone: Asia/Kolkata\n`);
    const r = await runSchedulerFor(3500);
    expect(r.code, r.stderr).toBe(0);
    expect(await history('kolkata'), r.stderr).toContainEqual(expect.objectContaining({ status: 'success' }));
    expect(await history('default'), r.stderr).toContainEqual(expect.objectContaining({ status: 'success' }));
    expect(await history('utc'), r.stderr).toEqual([]);
  });

  it('reads jobs/ by default, says which jobs have no schedule and that nothing is scheduled, and waits for a signal all the same; a missing folder, or a file given for it, is exit 2', { timeout: 30_000 }, async () => {
    ws.write('jobs/data/a.csv', 'Email\na@example.com\n');
    ws.write('jobs/manual.yaml', 'account_id: emu-account\nsource: { path: data/a.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email }\n');
    const { child, done, log, waitFor } = startScheduler([]);
    await waitFor('"msg":"scheduler started', 'the start');
    // Nothing is scheduled, and still it waits (it used to end at once, exit 13): for SIGHUP
    // to bring jobs, or SIGTERM.
    await sleep(1000);
    expect(child.exitCode, log()).toBeNull();
    // A job file with a schedule, then SIGHUP: it runs.
    ws.write('jobs/later.yaml', jobYaml('* * * * * *', 'data/a.csv'));
    child.kill('SIGHUP');
    await waitFor(/"job":"later"[^\n]*"msg":"run finished"/, 'a run of job later');
    child.kill('SIGTERM');
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    const lines = jsonLines(r.stderr);
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'job has no schedule: not scheduled (run it with `adsync run`)', job: 'manual', file: join(ws.dir, 'jobs', 'manual.yaml') }));
    expect(lines).toContainEqual(expect.objectContaining({ level: 40, msg: 'no job with a schedule: nothing to run', jobsDir: join(ws.dir, 'jobs') }));
    expect(lines).toContainEqual(expect.objectContaining({ jobsDir: join(ws.dir, 'jobs'), jobs: 0 }));
    expect((await history()).map((x) => [x.job, x.status])).toContainEqual(['later', 'success']);

    const missing = await ws.cli(['schedule', '--jobs', 'nowhere']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^adsync: jobs folder nowhere does not exist/m);
    // A job file given for the folder (`--jobs jobs/manual.yaml`) exists: say what it is.
    const file = await ws.cli(['schedule', '--jobs', 'jobs/manual.yaml']);
    expect(file.code).toBe(2);
    expect(file.stderr).toBe(
      'adsync: jobs folder jobs/manual.yaml is a file, not a folder\n' +
        '  hint: --jobs names the folder of the job files (adsync schedule runs each one that has a schedule:); to run one job file now, use adsync run <job-file>\n',
    );
  });

  it('stops the progress log line of each run when it finishes, also with two runs at once', { timeout: 40_000 }, async () => {
    // Two jobs on the same tick, each run held >= 1.5 s by its source: the runs overlap, and a
    // progress line per second each. Their display used to be one timer, the second run's
    // overwriting the first's: the first run's timer was never stopped and logged forever.
    const url = await serveSlowExport(1500);
    ws.write('jobs/one.yaml', jobYaml('* * * * * *', url).replace('audience:\n', 'audience:\n  mode: add\n'));
    // On another target: jobs on one audience take turns (target-lock.test.ts).
    ws.write('jobs/two.yaml', jobYaml('* * * * * *', url).replace('audience:\n', 'audience:\n  mode: add\n').replace('custom_audience_id: emu-audience', 'do_not_reach_list_id: emu-dnr'));
    ws.write('adsync.yaml', `${ws.read('adsync.yaml')}progress_interval_seconds: 1\n`);
    const { child, done, waitFor } = startScheduler();
    await waitFor(/"job":"one"[^\n]*"msg":"run finished"/, 'a run of job one');
    await waitFor(/"job":"two"[^\n]*"msg":"run finished"/, 'a run of job two');
    // A few intervals more: a leaked timer would log its finished run again meanwhile.
    await sleep(4000);
    child.kill('SIGTERM');
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    const lines = jsonLines(r.stderr);
    const startedAt = new Map<unknown, number>();
    const finishedAt = new Map<unknown, number>();
    lines.forEach((l, i) => {
      if (l.msg === 'run started') startedAt.set(l.run, i);
      if (l.msg === 'run finished') finishedAt.set(l.run, i);
    });
    // A run of each job was going at the same time as one of the other.
    const spans = (job: string) => lines.filter((l) => l.job === job && l.msg === 'run finished').map((l) => [startedAt.get(l.run) ?? -1, finishedAt.get(l.run) ?? -1] as const);
    const overlapping = spans('one').some(([s1, f1]) => spans('two').some(([s2, f2]) => s1 < f2 && s2 < f1));
    expect(overlapping, r.stderr).toBe(true);
    const progress = lines.map((l, i) => [l, i] as const).filter(([l]) => l.msg === 'progress');
    expect(progress.length, r.stderr).toBeGreaterThan(0);
    const late = progress.filter(([l, i]) => finishedAt.has(l.run) && i > (finishedAt.get(l.run) ?? Infinity)).map(([l]) => `${String(l.job)} ${String(l.run)} ${String(l.phase)}`);
    expect(late, r.stderr).toEqual([]);
  });

  it('follows job files that are symbolic links; reports a dangling one like an unreadable job file and runs the others', { timeout: 30_000 }, async () => {
    // The /etc/adsync/jobs layout: the folder holds links to job files kept elsewhere.
    ws.write('library/linked.yaml', jobYaml('* * * * * *', 'data/a.csv'));
    ws.write('jobs/data/a.csv', 'Email\nlinked@example.com\n'); // source.path: relative to the link's folder
    mkdirSync(join(ws.dir, 'jobs'), { recursive: true });
    symlinkSync(join(ws.dir, 'library', 'linked.yaml'), join(ws.dir, 'jobs', 'linked.yaml'));
    symlinkSync(join(ws.dir, 'library', 'gone.yaml'), join(ws.dir, 'jobs', 'gone.yaml'));
    symlinkSync(join(ws.dir, 'library'), join(ws.dir, 'jobs', 'folder.yml')); // a link to a folder is no job file
    const r = await runSchedulerFor(3000);
    expect(r.code, r.stderr).toBe(0);
    const lines = jsonLines(r.stderr);
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'job scheduled', job: 'linked' }));
    expect(lines).toContainEqual(
      expect.objectContaining({
        msg: 'job file is not valid: skipped (the other jobs still run)',
        file: join(ws.dir, 'jobs', 'gone.yaml'),
        error: `jobs/gone.yaml is a symbolic link to ${join(ws.dir, 'library', 'gone.yaml')}, which does not exist`,
      }),
    );
    expect(r.stderr).not.toContain('folder.yml');
    expect(await history('linked'), r.stderr).toContainEqual(expect.objectContaining({ status: 'success' }));
    expect(ws.emulator.state().custom_audiences['emu-audience']?.members.email).toHaveLength(1);
  });

  it('reports an invalid job file and still runs the others', { timeout: 30_000 }, async () => {
    ws.write('jobs/good.yaml', jobYaml('* * * * * *', 'data/ok.csv'));
    ws.write('jobs/data/ok.csv', 'Email\nok@example.com\n');
    ws.write('jobs/bad.yaml', 'account_id: emu-account\nschedule: "every day"\nsource: { path: x.csv }\naudience:\n  custom_audience_id: a\n  identifiers: { email: Email }\n');
    // Valid syntax, but no day is both one of the 1st to 7th of February and its fifth Monday:
    // it stopped the scheduler at start ("internal error"), which then ran on with a closed state database.
    ws.write('jobs/never.yaml', jobYaml('0 0 1-7 2 1#5', 'data/ok.csv'));
    const r = await runSchedulerFor(3000);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('internal error');
    expect(r.stderr).toContain('job file is not valid: skipped (the other jobs still run)');
    expect(r.stderr).toContain('is not a valid cron expression');
    expect(r.stderr).toContain('schedule: \\"0 0 1-7 2 1#5\\" never fires');
    expect(await history('good'), r.stderr).toContainEqual(expect.objectContaining({ status: 'success' }));
    expect(ws.emulator.state().custom_audiences['emu-audience']?.members.email).toHaveLength(1);
  });
});

describe('alerts of jobs that cannot run', () => {
  let hook: Hook | undefined;
  afterEach(async () => {
    await hook?.close();
    hook = undefined;
  });

  /** The settings' webhook: its path and query are its secret. */
  const GLOBAL_HOOK = '/hooks/T000/s3cr3tPath?token=q5ecret';
  const jobBody = (body: string) => JSON.parse(body) as { event: string; reason: string; job: string; job_file: string };

  it(
    'alerts once for each job file that cannot be loaded or whose job name is taken, at start and after a SIGHUP, without holding up the other jobs; a fixed file runs',
    { timeout: 60_000 },
    async () => {
      // The webhook answers nothing until a job has run (or 4.5 s have passed: alerts.ts gives an
      // answer 10 s before it tries again): the scheduler must not wait for it.
      let released = false;
      let release = (): void => undefined;
      hook = await startHook({ hold: new Promise<void>((r) => (release = r)).then(() => void (released = true)) });
      const holdAtMost = setTimeout(release, 4500);
      ws.write('adsync.yaml', `${ws.read('adsync.yaml')}alerts:\n  webhook_url: "${hook.url(GLOBAL_HOOK)}"\n`);
      ws.write('jobs/data/a.csv', 'Email\na@example.com\n');
      const good = jobYaml('* * * * * *', 'data/a.csv').replace('audience:\n', 'audience:\n  mode: add\n');
      ws.write('jobs/good.yaml', good);
      ws.write('jobs/later.yaml', good);
      ws.write('jobs/bad.yaml', good.replace('"* * * * * *"', '"every day"'));
      // Values in the wrong place that hold secrets: a webhook URL and a source URL with a password.
      ws.write(
        'jobs/secret.yaml',
        'account_id: emu-account\nschedule: "* * * * * *"\nalerts: "https://hooks.slack.example/services/T000/B000/xoxSecretHookPath"\nsource: "https://user:pa55word@example.com/x.csv"\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email }\n',
      );
      // A broken file that names its own webhook alerts there; one that turns alerts off, nowhere.
      ws.write('jobs/own.yaml', `alerts: { webhook_url: "${hook.url('/hooks/own')}" }\n${good.replace('"* * * * * *"', '"every hour"')}`);
      ws.write('jobs/silenced.yaml', `alerts: { webhook_url: null }\n${good.replace('"* * * * * *"', '"hourly"')}`);
      // The job name of good.yaml, which comes first: this one is skipped. It names its own webhook.
      ws.write('jobs/twin.yaml', `name: good\nalerts: { webhook_url: "${hook.url('/hooks/twin')}" }\n${good}`);

      const { child, done, log, waitFor } = startScheduler();
      await waitFor(/"job":"good"[^\n]*"msg":"run finished"/, 'a run of job good while the alerts wait for the webhook');
      await hook.waitForCalls(4);
      expect(released, 'the webhook had not answered yet').toBe(false);
      release();
      clearTimeout(holdAtMost);
      const file = (name: string) => join(ws.dir, 'jobs', name);
      const byFile = () => [...hook!.calls].sort((a, b) => jobBody(a.body).job_file.localeCompare(jobBody(b.body).job_file));
      expect(byFile().map((c) => [c.url, c.type, c.body])).toEqual([
        [
          GLOBAL_HOOK,
          'application/json',
          JSON.stringify({
            event: 'adsync.job',
            reason: 'job not scheduled: jobs/bad.yaml is not valid: schedule: "every day" is not a valid cron expression (expected 5 or 6 fields but got 2)',
            job: 'bad',
            job_file: file('bad.yaml'),
          }),
        ],
        [
          '/hooks/own',
          'application/json',
          JSON.stringify({
            event: 'adsync.job',
            reason: 'job not scheduled: jobs/own.yaml is not valid: schedule: "every hour" is not a valid cron expression (expected 5 or 6 fields but got 2)',
            job: 'own',
            job_file: file('own.yaml'),
          }),
        ],
        [
          GLOBAL_HOOK,
          'application/json',
          JSON.stringify({
            event: 'adsync.job',
            reason:
              'job not scheduled: jobs/secret.yaml is not valid: source: expected object, got a URL (not repeated here: it may hold a password or a token); alerts: expected object, got a URL (not repeated here: it may hold a password or a token)',
            job: 'secret',
            job_file: file('secret.yaml'),
          }),
        ],
        [
          '/hooks/twin',
          'application/json',
          JSON.stringify({
            event: 'adsync.job',
            reason: `job not scheduled: ${file('twin.yaml')} has the job name "good" of ${file('good.yaml')}, which is scheduled; give one of them another name (name: in the job file)`,
            job: 'good',
            job_file: file('twin.yaml'),
          }),
        ],
      ]);

      // A SIGHUP that finds the same problems sends nothing; one that finds a file broken since sends its alert.
      const reloaded = (n: number) => new RegExp(`(two job files have the same job name[^]*){${n}}`);
      child.kill('SIGHUP');
      await waitFor(reloaded(2), 'the first reload');
      ws.write('jobs/later.yaml', 'account_id: [\n');
      child.kill('SIGHUP');
      await waitFor(/"job":"later"[^\n]*"msg":"job removed from the schedule"/, 'the broken file dropping its job');
      await hook.waitForCalls(5);
      expect(hook.calls.slice(4).map((c) => [c.url, c.body])).toEqual([
        [
          GLOBAL_HOOK,
          JSON.stringify({
            event: 'adsync.job',
            reason: 'job not scheduled: jobs/later.yaml line 2, column 1: not valid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]',
            job: 'later',
            job_file: file('later.yaml'),
          }),
        ],
      ]);

      // Fixed and reloaded: the job runs, and nothing is sent for it.
      ws.write('jobs/bad.yaml', good);
      child.kill('SIGHUP');
      await waitFor(/"job":"bad"[^\n]*"msg":"run finished"/, 'a run of the fixed job');
      child.kill('SIGTERM');
      const r = await done;
      expect(r.code, r.stderr).toBe(0);
      expect(await history('bad'), r.stderr).toContainEqual(expect.objectContaining({ status: 'success' }));
      expect(hook.calls, log()).toHaveLength(5);
      for (const call of hook.calls) {
        const c = ws.emulator.credentials;
        for (const secret of ['xoxSecretHookPath', 'T000/B000', 'pa55word', 's3cr3tPath', 'q5ecret', c.consumerSecret, c.accessToken, c.accessTokenSecret]) {
          expect(call.body).not.toContain(secret);
        }
      }
      // The log names the webhook by its origin only.
      expect(r.stderr).not.toContain('s3cr3tPath');
    },
  );

  it("leaves out the folder's hidden files (an editor's lock link, a macOS ._ file), as the shell's *.yaml does: no error, no alert", { timeout: 30_000 }, async () => {
    hook = await startHook();
    ws.write('adsync.yaml', `${ws.read('adsync.yaml')}alerts:\n  webhook_url: "${hook.url(GLOBAL_HOOK)}"\n`);
    ws.write('jobs/data/a.csv', 'Email\na@example.com\n');
    ws.write('jobs/edited.yaml', jobYaml('* * * * * *', 'data/a.csv'));
    // Emacs, while edited.yaml has unsaved changes: a link to user@host.pid, which is no file.
    symlinkSync('operator@host.4242:1795370000', join(ws.dir, 'jobs', '.#edited.yaml'));
    // A folder copied from a Mac by tar: AppleDouble metadata, binary.
    ws.write('jobs/._edited.yaml', Buffer.from([0, 5, 22, 7, 0, 2, 0, 0, 0x4d, 0x61, 0x63]));
    // A job hidden on purpose (renamed to a dot file to take it off the schedule).
    ws.write('jobs/.paused.yml', jobYaml('* * * * * *', 'data/a.csv'));
    const r = await runSchedulerFor(2500);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('job file is not valid');
    expect(r.stderr).not.toContain('.#edited.yaml');
    expect(await history('edited'), r.stderr).toContainEqual(expect.objectContaining({ status: 'success' }));
    expect(await history('.paused')).toEqual([]);
    expect(r.stderr).not.toContain('"job":".paused"');
    expect(hook.calls).toEqual([]);
  });

  it('the scheduler that cannot start (its state database is not one) alerts the settings\' webhook before it exits 1', { timeout: 30_000 }, async () => {
    hook = await startHook();
    ws.write('adsync.yaml', `${ws.read('adsync.yaml')}alerts:\n  webhook_url: "${hook.url(GLOBAL_HOOK)}"\n`);
    ws.write('jobs/good.yaml', jobYaml('* * * * * *', 'data/a.csv'));
    ws.write('state/state.sqlite', 'this is not a database, it only has the name of one\n');
    const r = await ws.cli(['schedule', '--jobs', 'jobs']);
    expect(r.code, r.stderr).toBe(1);
    const error = `cannot open the state database ${ws.statePath}: file is not a database`;
    expect(r.stderr).toContain(`adsync: ${error}`);
    expect(hook.calls.map((c) => [c.url, c.body])).toEqual([
      [
        GLOBAL_HOOK,
        JSON.stringify({
          event: 'adsync.schedule',
          reason: `the scheduler could not start: ${error} (the file is not an adsync state database, or it is damaged: move it aside (keep it to look at) and run again; audience members are then sent again in full and a catalog state is rebuilt from the service (README: Troubleshooting))`,
          jobs_dir: join(ws.dir, 'jobs'),
        }),
      ],
    ]);
  });

  const asNobody = process.getuid?.() === 0 && existsSync('/usr/bin/setpriv');
  it.runIf(asNobody)("the scheduler whose user cannot read the jobs folder alerts that it could not start", { timeout: 30_000 }, async () => {
    hook = await startHook();
    // A folder every user can read, with a jobs folder only root can read and a state folder anyone can write.
    const dir = mkdtempSync(join(tmpdir(), 'adsync-unreadable-'));
    chmodSync(dir, 0o755);
    mkdirSync(join(dir, 'jobs'), { mode: 0o700 });
    mkdirSync(join(dir, 'state'));
    chmodSync(join(dir, 'state'), 0o777);
    writeFileSync(join(dir, 'adsync.yaml'), `alerts:\n  webhook_url: "${hook.url(GLOBAL_HOOK)}"\n`);
    const child = spawn('/usr/bin/setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, BIN, 'schedule', '--jobs', 'jobs'], {
      cwd: dir,
      env: { ...ws.env, HOME: dir, XDG_CONFIG_HOME: join(dir, '.config'), ADSYNC_STATE: join(dir, 'state', 'state.sqlite'), ADSYNC_CONFIG: join(dir, 'adsync.yaml') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const r = await collect(child);
    // A configuration problem said in words (exit 2), not an internal error.
    expect(r.code, r.stderr).toBe(2);
    const error = `cannot read the jobs folder ${join(dir, 'jobs')}: permission denied`;
    const hint = 'the user adsync runs as needs read and execute permission on the folder (ls -ld shows its owner and mode)';
    expect(r.stderr).toContain(`adsync: ${error}`);
    expect(r.stderr).toContain(hint);
    expect(r.stderr).not.toMatch(/internal error|bug in adsync|EACCES/);
    expect(hook.calls.map((c) => [c.url, c.body])).toEqual([
      [GLOBAL_HOOK, JSON.stringify({ event: 'adsync.schedule', reason: `the scheduler could not start: ${error} (${hint})`, jobs_dir: join(dir, 'jobs') })],
    ]);
  });
});

describe('alerts', () => {
  it('POSTs the JSON summary of a failed run to the webhook, without secrets', { timeout: 30_000 }, async () => {
    const received: { body: string; type: string | undefined }[] = [];
    let calls = 0;
    const hook = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        calls += 1;
        if (calls === 1) {
          res.writeHead(503).end(); // the first delivery fails: the alert is retried
          return;
        }
        received.push({ body, type: req.headers['content-type'] });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', () => r()));
    try {
      const url = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hooks/adsync`;
      ws.write('missing.yaml', `account_id: emu-account\nalerts: { webhook_url: "${url}" }\nsource: { path: crm.csv }\naudience:\n  custom_audience_id: no-such-audience\n  identifiers: { email: Email }\n`);
      ws.write('crm.csv', 'Email\na@example.com\n');
      const r = await ws.cli(['run', 'missing.yaml', '--json']);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('404');
      expect(received).toHaveLength(1);
      expect(received[0]?.type).toBe('application/json');
      const alert = JSON.parse(received[0]?.body ?? '{}') as { event: string; reason: string; summary: Record<string, unknown> };
      expect(alert.event).toBe('adsync.run');
      expect(alert.reason).toMatch(/^run failed: /);
      expect(alert.summary).toMatchObject({ job: 'missing', status: 'failed', exit_code: 1 });
      for (const secret of [ws.emulator.credentials.consumerSecret, ws.emulator.credentials.accessToken, ws.emulator.credentials.accessTokenSecret]) {
        expect(received[0]?.body).not.toContain(secret);
      }
    } finally {
      await new Promise<void>((r) => hook.close(() => r()));
    }
  });
});
