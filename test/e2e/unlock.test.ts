/**
 * `adsync unlock <job>` removes the lock of a run that died, never the lock of a run that is
 * still going on this machine (a second run would then go at once and send everything
 * twice): that is refused with exit 1, naming the holder, its pid and how to stop it. A
 * holder whose process is gone, or one on another host (which cannot be checked, as the
 * message says), is removed; `--force` removes a live holder's lock (a reused pid). When the
 * holder is `adsync schedule`, the hint says that stopping it stops every job it runs.
 */
import http, { type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, createWorkspace, summaries, type Workspace } from '../helpers/e2e.js';
import { crmExport, deadPid, dumpState, errorLines, expectNoStackTrace, putLock as putLockRow, range, waitFor } from '../reliability/support.js';

let ws: Workspace;
let server: http.Server;
const held: ServerResponse[] = [];
let holding = true;
const content = crmExport(range(1, 20));

beforeAll(async () => {
  ws = await createWorkspace();
  // The export is served over HTTP and held until released: the run holding the lock waits.
  server = http.createServer((_req, res) => {
    if (holding) held.push(res);
    else res.writeHead(200, { 'content-type': 'text/plain' }).end(content);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  ws.write('crm.yaml', `name: crm\naccount_id: emu-account\nsource: { path: "http://127.0.0.1:${port}/crm.csv", format: csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email, partner_user_id: Id }\n`);
  expect((await ws.cli(['runs'])).code).toBe(0);
});
afterAll(async () => {
  holding = false;
  for (const res of held.splice(0)) res.writeHead(200).end(content);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await ws.close();
});

/** The job's lock (a run also holds its audience's: target-lock.test.ts). */
function lockRow(): { owner: string } | undefined {
  return (dumpState(ws.statePath).locks ?? []).map((row) => JSON.parse(row) as { job: string; owner: string }).find((lock) => lock.job === 'crm');
}

function putLock(owner: string): void {
  putLockRow(ws.statePath, 'crm', owner);
}

describe('adsync unlock', () => {
  it('refuses to remove the lock of a run that is still alive on this host; the run ends exact', { timeout: 30_000 }, async () => {
    holding = true;
    const child = ws.spawn(['run', 'crm.yaml', '--json']);
    const done = collect(child);
    await waitFor(() => held.length > 0 && lockRow() !== undefined, 15_000, 'the run to take the lock and ask for its source');
    const owner = lockRow()?.owner ?? '';
    expect(owner).toMatch(new RegExp(`^${hostname().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:${child.pid}:[0-9a-f]+$`));

    const unlock = await ws.cli(['unlock', 'crm']);
    expect(unlock.code, unlock.stderr).toBe(1);
    expectNoStackTrace(unlock);
    const lines = errorLines(unlock.stderr);
    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(`^adsync: job crm is locked by a run that is still alive: process ${child.pid} on this host \\(lock held by ${owner} since \\S+, last heartbeat \\S+\\); the lock was not removed$`),
      ),
    ]);
    expect(unlock.stderr).toContain(`hint: stop that run first (\`kill ${child.pid}\``);
    expect(unlock.stderr).toContain('`adsync unlock --force crm`');
    expect(lockRow()?.owner).toBe(owner);

    // A second run is still refused while the first one goes.
    const second = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(second.code).toBe(1);
    expect(summaries(second)[0]).toMatchObject({ status: 'failed', requests: 0 });

    holding = false;
    for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'text/plain' }).end(content);
    const first = await done;
    expect(first.code, first.stderr).toBe(0);
    expect(summaries(first)[0]).toMatchObject({ status: 'success', added: 40 });
    expect(lockRow()).toBeUndefined();
  });

  it('when the live holder is `adsync schedule`, says that stopping it stops every job it runs', { timeout: 20_000 }, async () => {
    ws.write('empty-jobs/.keep', '');
    const scheduler = ws.spawn(['schedule', '--jobs', 'empty-jobs']);
    const ended = collect(scheduler);
    try {
      await waitFor(() => existsSync(`/proc/${scheduler.pid}/cmdline`), 5000, 'the scheduler to start');
      putLock(`${hostname()}:${scheduler.pid}:abcdef`);
      const unlock = await ws.cli(['unlock', 'crm']);
      expect(unlock.code).toBe(1);
      expect(unlock.stderr).toContain(
        `hint: process ${scheduler.pid} is \`adsync schedule\`: let the run end (\`adsync runs --job crm\`); stopping the scheduler (\`kill ${scheduler.pid}\`) stops every job it runs, and it then exits 0, so systemd's Restart=on-failure does not start it again`,
      );
      expect(lockRow()).toBeDefined();
    } finally {
      scheduler.kill('SIGTERM');
      await ended;
      await ws.cli(['unlock', '--force', 'crm']);
    }
  });

  it('removes the lock of a process of this host that is gone', async () => {
    const pid = deadPid();
    putLock(`${hostname()}:${pid}:abcdef`);
    const unlock = await ws.cli(['unlock', 'crm']);
    expect(unlock.code, unlock.stderr).toBe(0);
    expect(unlock.stderr).toMatch(new RegExp(`^removed the lock of job crm \\(held by .*:${pid}:abcdef since \\S+, last heartbeat \\S+\\): its process ${pid} on this host is gone\\n$`));
    expect(lockRow()).toBeUndefined();
  });

  it('removes the lock of a holder on another host, saying it cannot be checked', async () => {
    putLock('other-host.example:1234:abcdef');
    const unlock = await ws.cli(['unlock', 'crm']);
    expect(unlock.code, unlock.stderr).toBe(0);
    expect(unlock.stderr).toContain('removed the lock of job crm (held by other-host.example:1234:abcdef since ');
    expect(unlock.stderr).toContain('its holder is on another host (other-host.example), so adsync cannot check whether that run is still alive');
    expect(lockRow()).toBeUndefined();
  });

  it('--force removes the lock of a live process of this host (a reused pid)', async () => {
    // This test's own process: alive, and not a run of the job.
    putLock(`${hostname()}:${process.pid}:abcdef`);
    const refused = await ws.cli(['unlock', 'crm']);
    expect(refused.code).toBe(1);
    expect(lockRow()).toBeDefined();
    const forced = await ws.cli(['unlock', '--force', 'crm']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stderr).toContain(`--force, although process ${process.pid} on this host is alive`);
    expect(lockRow()).toBeUndefined();
  });

  it('says when the job is not locked; without a state database makes none (nor does adsync runs)', async () => {
    const missing = join(ws.dir, 'nowhere', 'state.sqlite');
    const none = await ws.cli(['unlock', 'crm'], { ADSYNC_STATE: missing });
    expect(none.code).toBe(0);
    expect(none.stderr).toBe(`job crm is not locked: there is no state database at ${missing} (ADSYNC_STATE, or state: in the settings)\n`);
    const runs = await ws.cli(['runs', '--json'], { ADSYNC_STATE: missing });
    expect(runs.code).toBe(0);
    expect(runs.stdout).toBe('');
    expect(runs.stderr).toBe(`no runs recorded: there is no state database at ${missing} (ADSYNC_STATE, or state: in the settings)\n`);
    expect(existsSync(missing)).toBe(false);
    expect(existsSync(dirname(missing))).toBe(false);
    // The workspace's state database, which has no lock for the job.
    expect(existsSync(ws.statePath)).toBe(true);
    const unlock = await ws.cli(['unlock', 'crm']);
    expect(unlock.code).toBe(0);
    expect(unlock.stderr).toBe('job crm is not locked\n');
  });
});
