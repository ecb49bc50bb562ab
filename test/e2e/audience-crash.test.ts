/**
 * A run killed (SIGKILL) in the middle of an upload loses nothing: the rerun ends with the
 * exact membership, re-sending at most the batches that were in flight.
 */
import { createHash } from 'node:crypto';
import { openTestDatabase } from '../helpers/sqlite.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { collect, createWorkspace, summaries, type Workspace } from '../helpers/e2e.js';
import { audienceOf, committedAudience, crmExport, emulatorAudience, range, waitFor } from '../reliability/support.js';

const sha = (s: string): string => createHash('sha256').update(s).digest('hex');
const USERS_ROUTE = 'POST /12/accounts/:account_id/custom_audiences/:custom_audience_id/users';
const ROWS = 120_000;

let ws: Workspace;
beforeEach(async () => {
  ws = await createWorkspace();
});
afterEach(async () => {
  await ws.close();
});

describe('a killed audience upload', () => {
  it('resumes by re-sending only what was not acknowledged and ends exact', { timeout: 120_000 }, async () => {
    const lines = ['Id,Email'];
    for (let i = 0; i < ROWS; i++) lines.push(`P${i},User.${i}@Example.com`);
    ws.write('exports/big.csv', `${lines.join('\n')}\n`);
    // One request at a time so the kill lands between acknowledged and unacknowledged batches;
    // a timeout longer than the held answers, so the client waits for them instead of retrying.
    ws.write('big.yaml', 'account_id: emu-account\nconcurrency: 1\nrequest_timeout_ms: 30000\nsource: { path: exports/big.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email, partner_user_id: Id }\n');
    // The second batch is applied by the service but its answer is held back: the kill
    // comes while it is in flight, so the client never learns it was accepted.
    ws.fault({ route: 'POST /12/**/users', kind: 'delay', ms: 4000, times: 2 });

    const child = ws.spawn(['run', 'big.yaml', '--json']);
    const done = collect(child);
    await waitFor(() => (ws.emulator.stateSummary().requests.by_route[USERS_ROUTE] ?? 0) >= 1, 60_000);
    await new Promise((r) => setTimeout(r, 500));
    child.kill('SIGKILL');
    const killed = await done;
    expect(killed.signal, `exit code ${String(killed.code)}; stderr: ${killed.stderr.slice(-2000)}`).toBe('SIGKILL');

    const db = openTestDatabase(ws.statePath, { readonly: true });
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    // Members the state counts as sent (staged additions count once their bucket is confirmed).
    const committed = (db.prepare('SELECT COUNT(*) AS n FROM audience_membership').get() as { n: number }).n;
    db.close();
    expect(committed).toBeLessThan(ROWS * 2);

    const rerun = await ws.cli(['run', 'big.yaml', '--json']);
    expect(rerun.code, rerun.stderr).toBe(0);
    const s = summaries(rerun)[0];
    // The rerun sends what was not committed, never more than the whole export.
    expect(Number(s?.added)).toBe(ROWS * 2 - committed);
    const members = ws.emulator.state().custom_audiences['emu-audience']?.members;
    const emails: string[] = [];
    const ids: string[] = [];
    for (let i = 0; i < ROWS; i++) {
      emails.push(sha(`user.${i}@example.com`));
      ids.push(`P${i}`);
    }
    expect(members?.email).toEqual(emails.sort());
    expect(members?.partner_user_id).toEqual(ids.sort());
    const again = await ws.cli(['run', 'big.yaml', '--json']);
    expect(summaries(again)[0]).toMatchObject({ added: 0, removed: 0, requests: 0 });
  });

  it('a removal killed after the service applied it, then an export that has the members again: they are sent again', { timeout: 60_000 }, async () => {
    ws.write('crm.yaml', 'account_id: emu-account\nconcurrency: 1\nrequest_timeout_ms: 30000\nsource: { path: exports/crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email, partner_user_id: Id }\n');
    ws.write('exports/crm.csv', crmExport(range(1, 10)));
    expect((await ws.cli(['run', 'crm.yaml'])).code).toBe(0);
    // Rows 9 and 10 leave the export: their removal is applied and its answer held back.
    ws.write('exports/crm.csv', crmExport(range(1, 8)));
    ws.fault({ route: 'POST /12/**/users', kind: 'delay', ms: 20_000, times: 1 });
    const child = ws.spawn(['run', 'crm.yaml']);
    const done = collect(child);
    await waitFor(() => emulatorAudience(ws).partner_user_id.length === 8, 30_000);
    child.kill('SIGKILL');
    expect((await done).signal).toBe('SIGKILL');
    ws.emulator.clearFaults();
    // The state may still list them (it lags), never the other way round.
    expect(committedAudience(ws.statePath)).toEqual(audienceOf(range(1, 10)));

    // They are back in the export before the next run.
    ws.write('exports/crm.csv', crmExport(range(1, 10)));
    const rerun = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(summaries(rerun)[0]).toMatchObject({ status: 'success', added: 4, removed: 0 });
    expect(emulatorAudience(ws)).toEqual(audienceOf(range(1, 10)));
    expect(committedAudience(ws.statePath)).toEqual(audienceOf(range(1, 10)));
    const again = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(summaries(again)[0]).toMatchObject({ added: 0, removed: 0, requests: 0 });
  });
});
