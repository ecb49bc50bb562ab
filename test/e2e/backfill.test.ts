/**
 * Backfills: a large file uploaded in full, checkpointed after every acknowledged batch.
 * Killed (SIGKILL) at several points, the same command resumes from the checkpoint (and
 * says so) and the end result is exactly that of an uninterrupted run. With `mode: remove` a
 * backfill removes exactly the file's identifiers; a do-not-reach job's backfill lands in
 * the do-not-reach list.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openTestDatabase } from '../helpers/sqlite.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { collect, createWorkspace, summaries, type Workspace } from '../helpers/e2e.js';

const sha = (s: string): string => createHash('sha256').update(s).digest('hex');
const USERS_ROUTE = 'POST /12/accounts/:account_id/custom_audiences/:custom_audience_id/users';
const ROWS = 150_000;
const JOB = 'account_id: emu-account\nconcurrency: 1\nsource: { path: exports/daily.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email, partner_user_id: Id }\n';

let ws: Workspace;
beforeEach(async () => {
  ws = await createWorkspace();
});
afterEach(async () => {
  await ws.close();
});

function writeHistory(): void {
  const lines = ['Id,Email'];
  for (let i = 1; i <= ROWS; i++) lines.push(i % 1000 === 0 ? `P${i},not-an-email` : `P${i},Person.${i}@Example.org`);
  ws.write('history.csv', `${lines.join('\n')}\n`);
}

function expectedMembers(): { email: string[]; partner_user_id: string[] } {
  const email: string[] = [];
  const partner: string[] = [];
  for (let i = 1; i <= ROWS; i++) {
    if (i % 1000 !== 0) email.push(sha(`person.${i}@example.org`));
    partner.push(`P${i}`);
  }
  return { email: email.sort(), partner_user_id: partner.sort() };
}

const requests = (): number => ws.emulator.stateSummary().requests.by_route[USERS_ROUTE] ?? 0;

async function waitFor(condition: () => boolean, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

function checkpointRows(): number | undefined {
  const db = openTestDatabase(ws.statePath, { readonly: true });
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    return (db.prepare('SELECT rows_done FROM checkpoints').get() as { rows_done: number } | undefined)?.rows_done;
  } finally {
    db.close();
  }
}

/** The rows named by the rejects files of every run so far. */
function rejectedRowsOnDisk(): number[] {
  const dir = join(ws.dir, 'rejects', 'daily');
  let files: string[];
  try {
    files = readdirSync(dir);
  } catch {
    return [];
  }
  return files.flatMap((f) =>
    readFileSync(join(dir, f), 'utf8')
      .split('\n')
      .slice(1)
      .filter(Boolean)
      .map((line) => Number(line.split(',')[0])),
  );
}

describe('adsync backfill', () => {
  it('resumes after SIGKILLs at several points and ends exactly like an uninterrupted run', { timeout: 180_000 }, async () => {
    ws.write('daily.yaml', JOB);
    writeHistory();
    // Every answer is held back a while, so kills land with batches in flight.
    ws.fault({ route: 'POST /12/**/users', kind: 'delay', ms: 700, times: 1000 });

    let lastCheckpoint = 0;
    for (const killAfterRequests of [2, 3]) {
      const child = ws.spawn(['backfill', 'daily.yaml', '--source', 'history.csv', '--json']);
      const done = collect(child);
      await waitFor(() => requests() >= killAfterRequests);
      await new Promise((r) => setTimeout(r, 300));
      child.kill('SIGKILL');
      expect((await done).signal).toBe('SIGKILL');
      const rows = checkpointRows();
      expect(rows).toBeDefined();
      expect(rows).toBeGreaterThanOrEqual(lastCheckpoint);
      lastCheckpoint = rows ?? 0;
    }
    expect(lastCheckpoint).toBeGreaterThan(0);

    ws.emulator.clearFaults();
    const final = await ws.cli(['backfill', 'daily.yaml', '--source', 'history.csv', '--json']);
    expect(final.code, final.stderr).toBe(0);
    const s = summaries(final)[0];
    expect(s).toMatchObject({ status: 'success', resumed_from_row: lastCheckpoint, read: ROWS - lastCheckpoint });
    expect(final.stdout + final.stderr).toContain(`resumed from row ${lastCheckpoint + 1}`);
    expect(ws.emulator.state().custom_audiences['emu-audience']?.members).toMatchObject(expectedMembers());
    expect(checkpointRows()).toBeUndefined();

    // The state knows every member: a normal run of the same file has nothing to send.
    ws.write('exports/daily.csv', ws.read('history.csv'));
    const run = await ws.cli(['run', 'daily.yaml', '--json']);
    expect(summaries(run)[0]).toMatchObject({ status: 'success', added: 0, removed: 0, requests: 0 });
  });

  it('SIGTERM: commits the batch in flight, ends interrupted saying to run the same command, which resumes and ends exactly', { timeout: 120_000 }, async () => {
    ws.write('daily.yaml', JOB);
    writeHistory();
    ws.fault({ route: 'POST /12/**/users', kind: 'delay', ms: 700, times: 1000 });
    const child = ws.spawn(['backfill', 'daily.yaml', '--source', 'history.csv', '--json']);
    const done = collect(child);
    await waitFor(() => requests() >= 1);
    child.kill('SIGTERM');
    const stopped = await done;
    expect(stopped.code, stopped.stderr).toBe(1);
    expect(summaries(stopped)[0]).toMatchObject({
      status: 'interrupted',
      error: 'stopped by a signal after committing the work in flight; run the same backfill command again: it resumes after the last acknowledged row',
    });
    // The batch in flight was acknowledged and checkpointed, and no other was sent.
    expect(requests()).toBe(1);
    const checkpoint = checkpointRows() ?? 0;
    expect(checkpoint).toBeGreaterThan(0);

    ws.emulator.clearFaults();
    const resumed = await ws.cli(['backfill', 'daily.yaml', '--source', 'history.csv', '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(summaries(resumed)[0]).toMatchObject({ status: 'success', resumed_from_row: checkpoint, read: ROWS - checkpoint });
    expect(ws.emulator.state().custom_audiences['emu-audience']?.members).toMatchObject(expectedMembers());
  });

  it('a kill never loses the rejects of the rows below the checkpoint: the resumed run does not read them again', { timeout: 120_000 }, async () => {
    ws.write('daily.yaml', JOB);
    writeHistory();
    // Every 1000th row drops its email (a reject line): 150 lines, far less than a buffer.
    const rejectedRows = (upTo: number): number[] => between(1, Math.floor(upTo / 1000)).map((k) => k * 1000);
    ws.fault({ route: 'POST /12/**/users', kind: 'delay', ms: 700, times: 1000 });
    const child = ws.spawn(['backfill', 'daily.yaml', '--source', 'history.csv', '--json']);
    const done = collect(child);
    const checkpointSoFar = (): number => {
      try {
        return checkpointRows() ?? 0;
      } catch {
        return 0; // the state database is still being created
      }
    };
    await waitFor(() => checkpointSoFar() >= 1000);
    child.kill('SIGKILL');
    expect((await done).signal).toBe('SIGKILL');
    const checkpoint = checkpointRows() ?? 0;
    expect(rejectedRowsOnDisk().filter((row) => row <= checkpoint)).toEqual(rejectedRows(checkpoint));

    ws.emulator.clearFaults();
    const resumed = await ws.cli(['backfill', 'daily.yaml', '--source', 'history.csv', '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    // The dropped emails are counted, as in a run: those of the rows this run read.
    expect(summaries(resumed)[0]).toMatchObject({ resumed_from_row: checkpoint, rejected: 0, invalid_identifiers: { email: rejectedRows(ROWS).length - rejectedRows(checkpoint).length } });
    // Between them, the two runs' rejects files name every row with a dropped email.
    expect([...new Set(rejectedRowsOnDisk())].sort((a, b) => a - b)).toEqual(rejectedRows(ROWS));
  });

  it('a service that stays down: exit 1, saying why retrying stopped and to run the same command again', async () => {
    ws.write('daily.yaml', `${JOB}retry: { retries: 2, min_delay_ms: 10, max_delay_ms: 20, budget_ms: 5000 }\n`);
    writeHistory();
    ws.fault({ route: 'POST /12/**/users', kind: 'status', status: 503, times: 50 });
    const failed = await ws.cli(['backfill', 'daily.yaml', '--source', 'history.csv']);
    expect(failed.code, failed.stderr).toBe(1);
    expect(failed.stderr).toMatch(/answered HTTP 503: SERVICE_UNAVAILABLE.* \(gave up after 3 attempts in \d+\.\d s \(retry\.retries: 2\); run the same backfill command again: it resumes after the last acknowledged row\)/);
    // The service is back: the same command resumes, from the first row (none was acknowledged).
    ws.emulator.clearFaults();
    const resumed = await ws.cli(['backfill', 'daily.yaml', '--source', 'history.csv', '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(summaries(resumed)[0]).toMatchObject({ status: 'success', resumed_from_row: 0 });
    expect(resumed.stdout + resumed.stderr).toContain('resumed from row 1 (no row was acknowledged by an earlier run)');
  }, 60_000);

  it('a file that changed since the unfinished backfill: refused, saying so and that only --restart can upload it', async () => {
    ws.write('daily.yaml', JOB);
    ws.write('grows.csv', 'Id,Email\nX1,x1@example.org\n');
    ws.fault({ route: 'POST /12/**/users', kind: 'status', status: 400, times: 1 });
    const failed = await ws.cli(['backfill', 'daily.yaml', '--source', 'grows.csv', '--json']);
    expect(failed.code).toBe(1);
    // Said in words, not 'rows 1-0'.
    expect(summaries(failed)[0]?.notes).toEqual(['stopped with no row acknowledged: run the same command again to resume']);
    expect(checkpointRows()).toBe(0);
    ws.write('grows.csv', 'Id,Email\nX1,x1@example.org\nX2,x2@example.org\n');
    const refused = await ws.cli(['backfill', 'daily.yaml', '--source', 'grows.csv']);
    expect(refused.code).toBe(2);
    expect(refused.stderr.split('\n').filter((l) => l.startsWith('adsync: '))).toEqual([
      `adsync: job daily failed: job daily has an unfinished backfill of an earlier version of ${join(ws.dir, 'grows.csv')} (0 rows done); the file has changed since (size or modification time) (the earlier version cannot be resumed: add --restart to upload this one from the start)`,
    ]);
    const restarted = await ws.cli(['backfill', 'daily.yaml', '--source', 'grows.csv', '--restart', '--json']);
    expect(summaries(restarted)[0]).toMatchObject({ status: 'success', read: 2, added: 4 });
  });

  it('a job file whose target or mapping changed since the unfinished backfill: refused, naming what changed; put back, it resumes', async () => {
    ws.write('daily.yaml', JOB);
    writeHistory();
    // The first request is acknowledged, the second refused: the rows after the first are left to resume.
    ws.fault({ route: 'POST /12/**/users', kind: 'delay', ms: 0, times: 1 });
    ws.fault({ route: 'POST /12/**/users', kind: 'status', status: 400, times: 1 });
    expect((await ws.cli(['backfill', 'daily.yaml', '--source', 'history.csv'])).code).toBe(1);
    ws.emulator.clearFaults();
    const done = checkpointRows() ?? 0;
    expect(done).toBeGreaterThan(0);
    const sent = requests();
    // Another audience, a column dropped: rows 1-done would never reach them.
    ws.write('daily.yaml', JOB.replace('custom_audience_id: emu-audience', 'custom_audience_id: other-audience').replace(', partner_user_id: Id', ''));
    const refused = await ws.cli(['backfill', 'daily.yaml', '--source', 'history.csv', '--json']);
    expect(refused.code).toBe(2);
    expect(refused.stderr.split('\n').filter((l) => l.startsWith('adsync: '))).toEqual([
      `adsync: job daily failed: job daily has an unfinished backfill of ${join(ws.dir, 'history.csv')} (${done} rows done) sent with other settings than ${join(ws.dir, 'daily.yaml')} now has: ` +
        'audience.custom_audience_id was "emu-audience", now "other-audience"; audience.identifiers was {"email":"Email","partner_user_id":"Id"}, now {"email":"Email"} ' +
        `(resuming would leave rows 1-${done} as the earlier settings sent them: put the job file back to finish that backfill, or add --restart to upload the whole file with these settings)`,
    ]);
    expect(requests()).toBe(sent);
    // The same settings written in another order are the same settings.
    ws.write('daily.yaml', JOB.replace('{ email: Email, partner_user_id: Id }', '{ partner_user_id: Id, email: Email }'));
    const resumed = await ws.cli(['backfill', 'daily.yaml', '--source', 'history.csv', '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(summaries(resumed)[0]).toMatchObject({ status: 'success', resumed_from_row: done });
    expect(ws.emulator.state().custom_audiences['emu-audience']?.members).toMatchObject(expectedMembers());
  });

  it('a job file fixed after its first request was refused (a mistyped audience id): the backfill resumes from row 1 with the fixed settings', async () => {
    ws.write('daily.yaml', JOB.replace('custom_audience_id: emu-audience', 'custom_audience_id: emu-audiense'));
    ws.write('small.csv', 'Id,Email\nX1,x1@example.org\n');
    const missing = await ws.cli(['backfill', 'daily.yaml', '--source', 'small.csv']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('TAILORED_AUDIENCE_NOT_FOUND');
    expect(checkpointRows()).toBe(0);
    ws.write('daily.yaml', JOB);
    const fixed = await ws.cli(['backfill', 'daily.yaml', '--source', 'small.csv', '--json']);
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(summaries(fixed)[0]).toMatchObject({ status: 'success', resumed_from_row: 0, read: 1, added: 2 });
  });

  it('a file refused at its header leaves no unfinished backfill: the fixed file is uploaded, not refused as a changed one', async () => {
    ws.write('daily.yaml', JOB);
    ws.write('fixed.csv', 'Id,E-mail\nX1,x1@example.org\n');
    const header = await ws.cli(['backfill', 'daily.yaml', '--source', 'fixed.csv']);
    expect(header.code).toBe(2);
    expect(header.stderr).toContain('has no column for email -> "Email"');
    expect(checkpointRows()).toBeUndefined();
    ws.write('fixed.csv', 'Id,Email\nX1,x1@example.org\n');
    const fixed = await ws.cli(['backfill', 'daily.yaml', '--source', 'fixed.csv', '--json']);
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(summaries(fixed)[0]).toMatchObject({ status: 'success', read: 1, added: 2 });
  });

  it('a file written to while the backfill reads it: exit 1, saying so, and the same command uploads it from the start', { timeout: 60_000 }, async () => {
    ws.write('daily.yaml', JOB);
    writeHistory();
    ws.fault({ route: 'POST /12/**/users', kind: 'delay', ms: 500, times: 1000 });
    const child = ws.spawn(['backfill', 'daily.yaml', '--source', 'history.csv', '--json']);
    const done = collect(child);
    await waitFor(() => requests() >= 1);
    // An export still being written (or cut short in place): the same file, another size.
    appendFileSync(join(ws.dir, 'history.csv'), 'LATE1,late.1@example.org\n');
    const changed = await done;
    expect(changed.code, changed.stderr).toBe(1);
    expect(summaries(changed)[0]).toMatchObject({ status: 'failed', exit_code: 1 });
    expect(changed.stderr).toContain(`adsync: job daily failed: ${join(ws.dir, 'history.csv')} changed while adsync was reading it (it had `);
    expect(changed.stderr).toContain('(it is still being written, or was rewritten. Run the same command once the file is complete: it uploads it from the start)');
    expect(checkpointRows()).toBeUndefined();
    ws.emulator.clearFaults();
    const again = await ws.cli(['backfill', 'daily.yaml', '--source', 'history.csv', '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(summaries(again)[0]).toMatchObject({ status: 'success', read: ROWS + 1 });
    expect(summaries(again)[0]).not.toHaveProperty('resumed_from_row');
    expect(ws.emulator.state().custom_audiences['emu-audience']?.members.partner_user_id).toContain('LATE1');
  });

  it('refuses to resume with a different file, and --restart starts over', async () => {
    ws.write('daily.yaml', JOB);
    writeHistory();
    ws.fault({ route: 'POST /12/**/users', kind: 'status', status: 400, times: 1 });
    const failed = await ws.cli(['backfill', 'daily.yaml', '--source', 'history.csv', '--json']);
    expect(failed.code).toBe(1);
    expect(checkpointRows()).toBe(0);
    ws.write('other.csv', 'Id,Email\nX1,x1@example.org\n');
    const refused = await ws.cli(['backfill', 'daily.yaml', '--source', 'other.csv']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('has an unfinished backfill of');
    expect(refused.stderr).toContain('--restart');
    const restarted = await ws.cli(['backfill', 'daily.yaml', '--source', 'other.csv', '--restart', '--json']);
    expect(restarted.code, restarted.stderr).toBe(0);
    expect(summaries(restarted)[0]).toMatchObject({ added: 2, read: 1 });
  });
});

/** Members per identifier field, leaving out the fields without any. */
function nonEmpty(members: Record<string, string[]> | undefined): Record<string, string[]> {
  return Object.fromEntries(Object.entries(members ?? {}).filter(([, values]) => values.length > 0));
}

const audienceMembers = (): Record<string, string[]> => nonEmpty(ws.emulator.state().custom_audiences['emu-audience']?.members);
const doNotReachMembers = (): Record<string, string[]> => nonEmpty(ws.emulator.state().do_not_reach_lists['emu-dnr']?.members);

const between = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** The audience members of rows `P<i>,Person.<i>@Example.org`: hashed normalized emails, partner ids as they are. */
function membersOf(rows: readonly number[]): Record<string, string[]> {
  return { email: rows.map((i) => sha(`person.${i}@example.org`)).sort(), partner_user_id: rows.map((i) => `P${i}`).sort() };
}

const DNR_JOB = 'account_id: emu-account\nconcurrency: 1\nsource: { path: exports/dnr.csv }\naudience:\n  do_not_reach_list_id: emu-dnr\n  identifiers: { email: Email, phone_number: Phone }\n  default_country: US\n';

/** Do-not-reach rows: an email and a US phone written nationally. */
const dnrRow = (i: number): string => `Person.${i}@Example.org,(415) 555-${2600 + i}`;

/** The do-not-reach members of those rows: hashes of the normalized email and of the E.164 digits. */
function dnrMembersOf(rows: readonly number[]): Record<string, string[]> {
  return { email: rows.map((i) => sha(`person.${i}@example.org`)).sort(), phone_number: rows.map((i) => sha(`1415555${2600 + i}`)).sort() };
}

describe('adsync backfill: removing, and do-not-reach lists', () => {
  it('mode: remove removes exactly the identifiers of the file from the audience and keeps the others', async () => {
    const all = between(1, 30);
    ws.write('daily.yaml', JOB);
    ws.write('exports/daily.csv', `Id,Email\n${all.map((i) => `P${i},Person.${i}@Example.org`).join('\n')}\n`);
    const run = await ws.cli(['run', 'daily.yaml', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(summaries(run)[0]).toMatchObject({ status: 'success', added: 60, removed: 0 });
    expect(audienceMembers()).toEqual(membersOf(all));

    // An opt-out job on the same audience. The file's columns are in another order and its
    // values written differently from the export: the same identifiers once normalized.
    ws.write('optout.yaml', JOB.replace('  custom_audience_id: emu-audience\n', '  custom_audience_id: emu-audience\n  mode: remove\n'));
    const gone = [3, 4, 10, 17, 29];
    ws.write('optout.csv', `Email,Id\n${gone.map((i) => `"  PERSON.${i}@EXAMPLE.ORG ", P${i} `).join('\n')}\n`);
    const removal = await ws.cli(['backfill', 'optout.yaml', '--source', 'optout.csv', '--json']);
    expect(removal.code, removal.stderr).toBe(0);
    expect(summaries(removal)[0]).toMatchObject({
      status: 'success',
      kind: 'custom_audience',
      exit_code: 0,
      read: gone.length,
      valid: gone.length,
      rejected: 0,
      added: 0,
      removed: 2 * gone.length,
    });
    expect(audienceMembers()).toEqual(membersOf(all.filter((i) => !gone.includes(i))));
    expect(checkpointRows()).toBeUndefined();

    // The removals were committed to the state: a run of the whole export adds exactly them back.
    const again = await ws.cli(['run', 'daily.yaml', '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(summaries(again)[0]).toMatchObject({ status: 'success', added: 2 * gone.length, removed: 0 });
    expect(audienceMembers()).toEqual(membersOf(all));
  });

  it('a do-not-reach job backfills into the do-not-reach list, not the custom audience; mode: remove takes rows out again', async () => {
    const all = between(1, 12);
    ws.write('dnr.yaml', DNR_JOB);
    ws.write('dnr-history.csv', `Email,Phone\n${all.map(dnrRow).join('\n')}\n`);
    const added = await ws.cli(['backfill', 'dnr.yaml', '--source', 'dnr-history.csv', '--json']);
    expect(added.code, added.stderr).toBe(0);
    expect(summaries(added)[0]).toMatchObject({ status: 'success', kind: 'do_not_reach', exit_code: 0, read: all.length, rejected: 0, added: 2 * all.length, removed: 0 });
    expect(doNotReachMembers()).toEqual(dnrMembersOf(all));
    expect(audienceMembers()).toEqual({});
    expect(ws.emulator.stateSummary().requests.by_route[USERS_ROUTE] ?? 0).toBe(0);

    ws.write('dnr-remove.yaml', DNR_JOB.replace('  do_not_reach_list_id: emu-dnr\n', '  do_not_reach_list_id: emu-dnr\n  mode: remove\n'));
    const gone = [2, 5, 11];
    ws.write('dnr-optout.csv', `Email,Phone\n${gone.map(dnrRow).join('\n')}\n`);
    const removal = await ws.cli(['backfill', 'dnr-remove.yaml', '--source', 'dnr-optout.csv', '--json']);
    expect(removal.code, removal.stderr).toBe(0);
    expect(summaries(removal)[0]).toMatchObject({ status: 'success', kind: 'do_not_reach', read: gone.length, added: 0, removed: 2 * gone.length });
    expect(doNotReachMembers()).toEqual(dnrMembersOf(all.filter((i) => !gone.includes(i))));
    expect(audienceMembers()).toEqual({});
  });
});
