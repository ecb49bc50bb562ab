/**
 * What README promises about alerts, the rejects file's value column and the progress log
 * lines, checked with the real CLI against the emulator:
 * - a global `alerts.webhook_url` (settings file) is used by a job without alerts of its own,
 *   a job's `webhook_url: null` turns it off, and a run whose rejects pass
 *   `alerts.reject_ratio` alerts although it succeeded; a webhook that is down changes
 *   nothing about the run, and the failed delivery is logged (without the webhook's path); a
 *   run refused because the job is running elsewhere does not alert;
 * - `--rejects-with-values` adds the raw `value` column, for `run` and for `validate`;
 * - off a terminal, `progress_interval_seconds` gives `progress` JSON log lines on stderr,
 *   while `--json` keeps stdout to the summary lines.
 */
import { openTestDatabase } from '../helpers/sqlite.js';
import { appendFileSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CliResult } from '../helpers/cli.js';
import { collect, createWorkspace, jsonLines, summaries, type Workspace } from '../helpers/e2e.js';
import { closedPort, startHook, type Hook } from '../helpers/webhook.js';

let ws: Workspace;
let hook: Hook | undefined;
beforeEach(async () => {
  ws = await createWorkspace();
});
afterEach(async () => {
  await ws.close();
  await hook?.close();
  hook = undefined;
});

/** Appends lines to the workspace's settings file (its existing lines stay). */
function appendSettings(yaml: string): void {
  appendFileSync(join(ws.dir, 'adsync.yaml'), yaml);
}

/** A custom audience job; `extra` is inserted as top-level YAML. */
const audienceJob = (opts: { audienceId?: string; source?: string; extra?: string } = {}) =>
  `account_id: emu-account\n${opts.extra ?? ''}source: { path: ${opts.source ?? 'crm.csv'} }\naudience:\n  custom_audience_id: ${opts.audienceId ?? 'emu-audience'}\n  identifiers: { email: Email }\n`;

/** An export of `valid` good rows followed by `bad` rows with no identifier. */
function exportWith(valid: number, bad: number): string {
  const lines = ['Email,Name'];
  for (let i = 0; i < valid; i++) lines.push(`u${i}@example.com,User ${i}`);
  for (let i = 0; i < bad; i++) lines.push(`,Nobody ${i}`);
  return `${lines.join('\n')}\n`;
}

function secrets(): string[] {
  const c = ws.emulator.credentials;
  return [c.consumerSecret, c.accessToken, c.accessTokenSecret];
}


describe('alerts', () => {
  it('sends a failed run of a job without alerts of its own to the global webhook of the settings file', { timeout: 20_000 }, async () => {
    hook = await startHook();
    appendSettings(`alerts:\n  webhook_url: "${hook.url('/hooks/global?channel=ops')}"\n`);
    ws.write('missing.yaml', audienceJob({ audienceId: 'no-such-audience' }));
    ws.write('crm.csv', exportWith(2, 0));

    const r = await ws.cli(['run', 'missing.yaml', '--json']);
    expect(r.code, r.stderr).toBe(1);
    const [summary] = summaries(r);
    expect(summary).toMatchObject({ job: 'missing', status: 'failed', exit_code: 1 });
    expect(String(summary?.error)).toContain('404');

    expect(hook.calls).toHaveLength(1);
    const call = hook.calls[0]!;
    expect(call).toMatchObject({ method: 'POST', url: '/hooks/global?channel=ops', type: 'application/json', userAgent: 'adsync' });
    // Exactly {"event","reason","summary"}, the summary being the one --json printed.
    expect(call.body).toBe(JSON.stringify({ event: 'adsync.run', reason: `run failed: ${String(summary?.error)}`, summary }));
    for (const secret of secrets()) expect(call.body).not.toContain(secret);
    // Where the run was made: its rejects file, its log (several machines may share a state database).
    expect(summary?.host).toBe(hostname());
    const history = await ws.cli(['runs', '--json']);
    expect((JSON.parse(history.stdout.trim()) as { summary: { host?: unknown } }).summary.host).toBe(hostname());
  });

  it("turns the global webhook off for a job with alerts: { webhook_url: null }, and a job's own webhook wins over the global one", { timeout: 20_000 }, async () => {
    hook = await startHook();
    appendSettings(`alerts:\n  webhook_url: "${hook.url('/hooks/global')}"\n`);
    ws.write('crm.csv', exportWith(2, 0));
    ws.write('silenced.yaml', audienceJob({ audienceId: 'no-such-audience', extra: 'alerts: { webhook_url: null }\n' }));
    ws.write('own.yaml', audienceJob({ audienceId: 'no-such-audience', extra: `alerts: { webhook_url: "${hook.url('/hooks/own')}" }\n` }));
    ws.write('inherits.yaml', audienceJob({ audienceId: 'no-such-audience' }));

    const r = await ws.cli(['run', 'silenced.yaml', 'own.yaml', 'inherits.yaml', '--json']);
    expect(r.code, r.stderr).toBe(1);
    expect(summaries(r).map((s) => [s.job, s.status])).toEqual([
      ['silenced', 'failed'],
      ['own', 'failed'],
      ['inherits', 'failed'],
    ]);
    // The two other jobs did alert (so the silenced one was not just lucky); it did not.
    const got = hook.calls.map((c) => [c.url, (JSON.parse(c.body) as { summary: { job: string } }).summary.job]);
    expect(got).toEqual([
      ['/hooks/own', 'own'],
      ['/hooks/global', 'inherits'],
    ]);
  });

  it('alerts for a successful run whose rejects pass alerts.reject_ratio, and not for one within it', { timeout: 20_000 }, async () => {
    hook = await startHook();
    // reject_ratio left at its default (0.05); max_reject_ratio (0.2) lets the run succeed.
    appendSettings(`alerts:\n  webhook_url: "${hook.url('/hooks/rejects')}"\n`);
    ws.write('crm.csv', exportWith(9, 1)); // 10% rejected
    ws.write('rejecting.yaml', audienceJob());
    ws.write('tolerant.yaml', audienceJob({ audienceId: 'emu-audience', extra: 'alerts: { reject_ratio: 0.15 }\n' }));

    const r = await ws.cli(['run', 'rejecting.yaml', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const [summary] = summaries(r);
    expect(summary).toMatchObject({ job: 'rejecting', status: 'success', read: 10, valid: 9, rejected: 1, exit_code: 0 });
    expect(hook.calls).toHaveLength(1);
    expect(hook.calls[0]?.url).toBe('/hooks/rejects');
    expect(hook.calls[0]?.body).toBe(JSON.stringify({ event: 'adsync.run', reason: '10.0% of rows rejected (alert threshold 5.0%)', summary }));
    for (const secret of secrets()) expect(hook.calls[0]?.body).not.toContain(secret);

    // The same 10% under a job's reject_ratio of 0.15 (the global webhook still applies): no alert.
    const quiet = await ws.cli(['run', 'tolerant.yaml', '--json']);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(summaries(quiet)[0]).toMatchObject({ job: 'tolerant', status: 'success', rejected: 1 });
    expect(hook.calls).toHaveLength(1);
  });

  it('a webhook that refuses connections changes neither the outcome nor the exit code, and the failure is logged', { timeout: 30_000 }, async () => {
    const port = await closedPort();
    const secretPath = '/services/T000/B000/s3cr3tW3bh00kPath';
    appendSettings(`alerts:\n  webhook_url: "http://127.0.0.1:${port}${secretPath}?token=q5ecret"\n`);
    ws.write('crm.csv', exportWith(9, 1)); // 10% rejected: an alert for a successful run
    ws.write('rejecting.yaml', audienceJob());
    ws.write('missing.yaml', audienceJob({ audienceId: 'no-such-audience' }));

    const ok = await ws.cli(['run', 'rejecting.yaml', '--json']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout.trimEnd().split('\n')).toHaveLength(1);
    expect(summaries(ok)[0]).toMatchObject({ job: 'rejecting', status: 'success', rejected: 1, exit_code: 0 });
    expect(ws.emulator.state().custom_audiences['emu-audience']?.members.email).toHaveLength(9);

    const failed = await ws.cli(['run', 'missing.yaml', '--json']);
    expect(failed.code, failed.stderr).toBe(1);
    expect(summaries(failed)[0]).toMatchObject({ job: 'missing', status: 'failed', exit_code: 1 });

    for (const [r, job] of [
      [ok, 'rejecting'],
      [failed, 'missing'],
    ] as const) {
      const warnings = jsonLines(r.stderr).filter((l) => l.msg === 'alert could not be delivered');
      expect(warnings, r.stderr).toHaveLength(1);
      expect(warnings[0]).toMatchObject({ level: 40, job, webhook: `http://127.0.0.1:${port}` });
      // The error names the webhook by a placeholder, not by its path.
      expect(String(warnings[0]?.error)).toContain('POST <webhook path> failed: ECONNREFUSED');
      // The webhook's path and query (a Slack-style secret) appear nowhere.
      expect(r.stderr).not.toContain('s3cr3tW3bh00kPath');
      expect(r.stderr).not.toContain('q5ecret');
    }
  });

  it('a webhook slow to answer (6 s) gets the alert once, and it is logged as sent, not as undelivered', { timeout: 30_000 }, async () => {
    hook = await startHook({ hold: new Promise((r) => setTimeout(r, 6000)) });
    appendSettings(`alerts:\n  webhook_url: "${hook.url('/hooks/slow')}"\n`);
    ws.write('missing.yaml', audienceJob({ audienceId: 'no-such-audience' }));
    ws.write('crm.csv', exportWith(2, 0));

    const r = await ws.cli(['run', 'missing.yaml', '--json', '--log-level', 'info']);
    expect(r.code, r.stderr).toBe(1);
    // It took each POST: a retry after giving up on the answer would be a second page.
    expect(hook.calls).toHaveLength(1);
    expect(jsonLines(r.stderr).filter((l) => String(l.msg).startsWith('alert ')).map((l) => l.msg)).toEqual(['alert sent']);
  });

  it('a webhook that redirects (http:// for an https hook) is not followed nor retried; the log says where it points and what to set', { timeout: 20_000 }, async () => {
    hook = await startHook({ answer: { status: 301, headers: { location: 'https://hooks.example.com/services/T000/B000/s3cr3tR3d1r3ct?token=q5ecret' } } });
    appendSettings(`alerts:\n  webhook_url: "${hook.url('/services/T000/B000/s3cr3tW3bh00kPath')}"\n`);
    ws.write('missing.yaml', audienceJob({ audienceId: 'no-such-audience' }));
    ws.write('crm.csv', exportWith(2, 0));

    const r = await ws.cli(['run', 'missing.yaml', '--json']);
    expect(r.code, r.stderr).toBe(1);
    expect(summaries(r)[0]).toMatchObject({ job: 'missing', status: 'failed', exit_code: 1 });
    expect(hook.calls).toHaveLength(1);
    const warnings = jsonLines(r.stderr).filter((l) => l.msg === 'alert could not be delivered');
    expect(warnings.map((w) => w.error)).toEqual([
      'POST <webhook path> answered HTTP 301, a redirect to https://hooks.example.com: adsync does not follow redirects; set alerts.webhook_url to the address it points to',
    ]);
    expect(r.stderr).not.toContain('s3cr3t');
    expect(r.stderr).not.toContain('q5ecret');

    // A webhook at the root has no secret path: the origin the redirect names is left whole.
    ws.write('root.yaml', audienceJob({ audienceId: 'no-such-audience', extra: `alerts: { webhook_url: "${hook.url('/')}" }\n` }));
    const root = await ws.cli(['run', 'root.yaml']);
    expect(root.code, root.stderr).toBe(1);
    expect(jsonLines(root.stderr).filter((l) => l.msg === 'alert could not be delivered').map((w) => w.error)).toEqual([
      'POST <webhook path> answered HTTP 301, a redirect to https://hooks.example.com: adsync does not follow redirects; set alerts.webhook_url to the address it points to',
    ]);
  });

  it('a run killed before it finished (no summary, no alert of its own) is alerted by the next run of the job, once', { timeout: 30_000 }, async () => {
    hook = await startHook();
    appendSettings(`alerts:\n  webhook_url: "${hook.url('/hooks/global')}"\n`);
    ws.write('crm.csv', exportWith(2, 0));
    ws.write('crm.yaml', audienceJob());
    // The upload's answer is held back: the run is killed (an OOM kill, kill -9) while it waits.
    ws.fault({ route: 'POST **', kind: 'delay', ms: 5000 });
    const killed = ws.spawn(['run', 'crm.yaml']);
    const exited = new Promise((r) => killed.on('exit', r));
    const until = Date.now() + 10_000;
    while (ws.emulator.state().custom_audiences['emu-audience']?.members.email?.length !== 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    killed.kill('SIGKILL');
    await exited;
    expect(hook.calls).toEqual([]);

    const next = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(next.code, next.stderr).toBe(0);
    const [summary] = summaries(next);
    const reason = `an earlier run of job crm stopped before it finished (killed or crashed), without a summary or an alert of its own: \`adsync runs --job crm\` lists it as failed; committed work is kept, and run ${String(summary?.run_id)} sends the rest`;
    expect(summary).toMatchObject({ job: 'crm', status: 'success', notes: [reason] });
    expect(hook.calls.map((c) => c.body)).toEqual([JSON.stringify({ event: 'adsync.job', reason, job: 'crm', job_file: join(ws.dir, 'crm.yaml') })]);

    // Said once: the run after it finds nothing to say.
    expect((await ws.cli(['run', 'crm.yaml'])).code).toBe(0);
    expect(hook.calls).toHaveLength(1);
  });

  it('does not alert for a run refused because the job is running elsewhere: that run is going', { timeout: 20_000 }, async () => {
    hook = await startHook();
    appendSettings(`alerts:\n  webhook_url: "${hook.url('/hooks/global')}"\n`);
    ws.write('crm.csv', exportWith(2, 0));
    ws.write('crm.yaml', audienceJob());
    expect((await ws.cli(['run', 'crm.yaml'])).code).toBe(0);
    // The lock of a run on another machine, renewed a moment ago.
    const db = openTestDatabase(ws.statePath);
    const now = Date.now();
    db.prepare('INSERT OR REPLACE INTO locks (job, owner, acquired_at, heartbeat_at, expires_at) VALUES (?, ?, ?, ?, ?)').run('crm', 'elsewhere:4242:abcdef', now, now, now + 600_000);
    db.close();

    const r = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(r.code, r.stderr).toBe(1);
    expect(summaries(r)[0]).toMatchObject({ job: 'crm', status: 'failed', exit_code: 1, error: expect.stringMatching(/^job crm is already running \(lock held by elsewhere:4242:abcdef since /) as string });
    expect(hook.calls).toEqual([]);
  });
});

describe('--rejects-with-values', () => {
  // Row 3's email is not an email (and holds a comma and quotes); row 5 has no identifier at all.
  const CSV = 'Email,Name\na@example.com,A\nb@example.com,B\n"say ""hi"", bob",C\nd@example.com,D\n,E\nf@example.com,F\ng@example.com,G\nh@example.com,H\ni@example.com,I\nj@example.com,J\n';

  function rejectsOf(r: CliResult): string {
    const file = summaries(r)[0]?.rejects_file;
    expect(typeof file).toBe('string');
    return readFileSync(String(file), 'utf8');
  }

  it('adds the raw value column to the rejects file of run and of validate; without it there is none', { timeout: 20_000 }, async () => {
    ws.write('crm.csv', CSV);
    ws.write('crm.yaml', audienceJob());

    const plain = await ws.cli(['validate', 'crm.yaml', '--json']);
    expect(plain.code, plain.stderr).toBe(0);
    const withoutValues = rejectsOf(plain);
    expect(withoutValues).toBe('row,line,id,field,reason\n3,4,,email,not an email address\n5,6,,,no identifier values in the row\n');

    // The value is the raw cell, CSV-quoted; a row without any identifier has an empty value.
    const expected = 'row,line,id,field,reason,value\n3,4,,email,not an email address,"say ""hi"", bob"\n5,6,,,no identifier values in the row,\n';

    const validated = await ws.cli(['validate', 'crm.yaml', '--json', '--rejects-with-values']);
    expect(validated.code, validated.stderr).toBe(0);
    expect(summaries(validated)[0]).toMatchObject({ read: 10, rejected: 2, status: 'success' });
    expect(rejectsOf(validated)).toBe(expected);

    const run = await ws.cli(['run', 'crm.yaml', '--json', '--rejects-with-values']);
    expect(run.code, run.stderr).toBe(0);
    expect(summaries(run)[0]).toMatchObject({ read: 10, valid: 8, rejected: 2, status: 'success' });
    expect(rejectsOf(run)).toBe(expected);
  });
});

describe('progress off a terminal', () => {
  it('logs a "progress" line every progress_interval_seconds with the documented fields; --json stdout holds only the summary', { timeout: 20_000 }, async () => {
    appendSettings('progress_interval_seconds: 1\n');
    const lines = ['Email'];
    for (let i = 0; i < 50; i++) lines.push(`p${i}@example.com`);
    ws.write('crm.csv', `${lines.join('\n')}\n`);
    // A request timeout well above the delay: the slow answer is waited for, not retried.
    ws.write('slow.yaml', audienceJob({ extra: 'request_timeout_ms: 20000\n' }));
    // The one users request is answered after 3.5 s: the upload phase spans at least three ticks.
    ws.fault({ route: 'POST /12/**/users', kind: 'delay', ms: 3500, times: 1 });

    const r = await ws.cli(['run', 'slow.yaml', '--json'], { ADSYNC_LOG_LEVEL: 'info' });
    expect(r.code, r.stderr).toBe(0);
    const [summary] = summaries(r);
    expect(summary).toMatchObject({ job: 'slow', status: 'success', read: 50, added: 50 });
    // stdout is exactly the one JSON summary line.
    expect(r.stdout).toBe(`${JSON.stringify(summary)}\n`);

    const logs = jsonLines(r.stderr);
    const progress = logs.filter((l) => l.msg === 'progress');
    expect(progress.length, r.stderr).toBeGreaterThanOrEqual(2);
    for (const p of progress) {
      expect(p).toMatchObject({ level: 30, job: 'slow', run: summary?.run_id });
      expect(['reading', 'planning', 'uploading', 'finishing']).toContain(p.phase);
      for (const field of ['rowsRead', 'rowsPerSecond', 'sent', 'toSend', 'requests', 'retries']) expect(typeof p[field], field).toBe('number');
      if ('percent' in p) expect(p.percent).toBeGreaterThanOrEqual(0);
    }
    // While the upload waits for its answer: everything read, 50 to send, none acknowledged yet.
    const uploading = progress.filter((p) => p.phase === 'uploading');
    expect(uploading.length, r.stderr).toBeGreaterThanOrEqual(1);
    expect(uploading[0]).toMatchObject({ rowsRead: 50, toSend: 50, sent: 0, requests: 1, retries: 0, percent: 0 });
    // Every line of stderr is a JSON log line (nothing else mixed in off a terminal).
    expect(r.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('{'))).toEqual([]);
  });
});

describe('a reader of the output that goes away', () => {
  /** Runs `adsync args`, closing the read end of `stream` once `enough` holds for what came so far. */
  async function readerLeaves(args: string[], stream: 'stdout' | 'stderr', enough: (text: string) => boolean): Promise<CliResult & { seen: string }> {
    const child = ws.spawn(args);
    let seen = '';
    child[stream]?.on('data', (d: Buffer) => {
      seen += d.toString();
      if (enough(seen)) child[stream]?.destroy();
    });
    return { ...(await collect(child)), seen };
  }

  beforeEach(() => {
    ws.write('crm.csv', `Email\n${Array.from({ length: 20 }, (_, i) => `r${i}@example.com`).join('\n')}\n`);
    ws.write('a.yaml', audienceJob());
    ws.write('b.yaml', audienceJob({ audienceId: 'emu-dnr' }).replace('custom_audience_id', 'do_not_reach_list_id'));
  });

  it('logs piped to a reader that quits (2>&1 | head -1): the run goes on to its end, recorded, exit 0, no stack trace', { timeout: 30_000 }, async () => {
    // The upload is answered after the reader has gone: the run still has lines to log then.
    ws.fault({ route: 'POST /12/**/users', kind: 'delay', ms: 1000, times: 1 });
    const r = await readerLeaves(['--log-level', 'debug', 'run', 'a.yaml', '--json'], 'stderr', (text) => text.includes('\n'));
    expect(r.seen).toContain('"msg":"run started"');
    expect(r.code, r.stdout).toBe(0);
    expect(summaries(r)).toMatchObject([{ job: 'a', status: 'success', added: 20 }]);
    const runs = await ws.cli(['runs', '--json']);
    expect(runs.stdout.split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { status: string }).status)).toEqual(['success']);
    expect(ws.emulator.state().custom_audiences['emu-audience']?.members.email).toHaveLength(20);
  });

  it('--json piped to a reader that quits after the first summary: the second job still runs, exit 0, no stack trace', { timeout: 30_000 }, async () => {
    ws.fault({ route: 'POST /12/**/do_not_reach_lists/**', kind: 'delay', ms: 1000, times: 1 });
    const r = await readerLeaves(['run', 'a.yaml', 'b.yaml', '--json'], 'stdout', (text) => text.includes('\n'));
    expect(r.seen).toMatch(/^\{"job":"a",/);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('EPIPE');
    expect(r.stderr).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
    const runs = await ws.cli(['runs', '--json']);
    expect(runs.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { job: string; status: string }).map((x) => `${x.job} ${x.status}`)).toEqual(['b success', 'a success']);
  });
});
