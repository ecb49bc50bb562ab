/**
 * Audience sync end to end: the real CLI against the emulator over loopback HTTP. Expected
 * memberships are written out as normalized values and hashed here with createHash, not by
 * the code under test.
 */
import { createHash } from 'node:crypto';
import { openTestDatabase } from '../helpers/sqlite.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWorkspace, summaries, type Workspace } from '../helpers/e2e.js';
import { json, startScriptedServer, type ScriptedServer } from '../helpers/scripted-server.js';

const sha = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');
const USERS_ROUTE = 'POST /12/accounts/:account_id/custom_audiences/:custom_audience_id/users';
const DNR_ROUTE = 'POST /12/batch/accounts/:account_id/do_not_reach_lists/:do_not_reach_list_id/users';
const FIXTURE = readFileSync(join(import.meta.dirname, '..', 'fixtures', 'audience', 'messy-crm.csv'));

type Members = Record<string, string[]>;

function expected(spec: { email?: string[]; phone_number?: string[]; handle?: string[]; partner_user_id?: string[] }): Members {
  return {
    email: (spec.email ?? []).map(sha).sort(),
    phone_number: (spec.phone_number ?? []).map(sha).sort(),
    handle: (spec.handle ?? []).map(sha).sort(),
    twitter_id: [],
    device_id: [],
    partner_user_id: [...(spec.partner_user_id ?? [])].sort(),
  };
}

// The messy export, row by row (see test/fixtures/audience/messy-crm.csv):
const FIRST = {
  email: [
    'ada@example.com', 'grace.hopper@navy.mil', 'alan@turing.org', 'edsger@example.nl', 'barbara@mit.edu', 'frances@example.com', 'ken@example.com',
    'taro@example.jp', 'maria@example.com.br', 'raj@example.in', 'bruce@example.com.au', 'juan@example.mx', 'zed@example.com', 'nat@example.com',
  ],
  phone_number: [
    '14155552671', '442079460958', '442079460018', '31201234567', '493012345678', '33142685300', '12127365000', '81312345678', '5511912345678',
    '919876543210', '61298765432', '525512345678', '447911123456',
  ],
  handle: ['adal', 'alan_turing', 'ken'],
  partner_user_id: ['C001', 'C002', 'C003', 'C004', 'C005', 'C006', 'C008', 'C009', 'C011', 'C012', 'C013', 'C014', 'C015', 'C016', 'C017'],
};

// The next export: C003 (Alan) and C008 (Frances) gone, C009 changed email, C020 new. The junk
// row has no handle this time: one invalid handle of three would be more than max_reject_ratio
// of the column's values, and a mirror run refuses its removals then (see the guard tests).
const SECOND_CSV = [
  'Customer ID,Full Name,E-mail,Phone,Twitter,Country',
  'C001,Ada Lovelace,ada@example.com,(415) 555-2671,@AdaL,US',
  'C002,Grace Hopper,grace.hopper@navy.mil,+44 20 7946 0958,,GB',
  'C004,Edsger Dijkstra,edsger@example.nl,+31 20 123 4567,,NL',
  'C005,Barbara Liskov,barbara@mit.edu,030 12345678,,DE',
  'C006,Junk Row,not-an-email,12,,US',
  'C009,Ken Thompson,ken@bell-labs.com,(212) 736-5000,ken,US',
  'C011,Taro Yamada,taro@example.jp,03-1234-5678,,JP',
  'C012,Maria Silva,maria@example.com.br,(11) 91234-5678,,BR',
  'C013,Raj Patel,raj@example.in,+91 98765 43210,,IN',
  'C014,Bruce Wayne,bruce@example.com.au,(02) 9876 5432,,AU',
  'C015,Juan Perez,juan@example.mx,55 1234 5678,,MX',
  'C016,Zed Unknown,zed@example.com,020 7946 0000,,XX',
  'C017,Nat Nocountry,nat@example.com,07911 123456,,',
  'C020,New Person,new@example.com,,,',
  '',
].join('\n');

const SECOND = {
  email: [...FIRST.email.filter((e) => !['alan@turing.org', 'frances@example.com', 'ken@example.com'].includes(e)), 'ken@bell-labs.com', 'new@example.com'],
  phone_number: FIRST.phone_number.filter((p) => !['442079460018', '33142685300'].includes(p)),
  handle: ['adal', 'ken'],
  partner_user_id: [...FIRST.partner_user_id.filter((p) => !['C003', 'C008'].includes(p)), 'C020'],
};

function audienceJob(extra = ''): string {
  return `account_id: emu-account
source:
  path: exports/crm.csv
audience:
  custom_audience_id: emu-audience
  identifiers:
    email: E-mail
    phone_number: Phone
    handle: Twitter
    partner_user_id: Customer ID
  country_column: Country
  default_country: GB
${extra}`;
}

let ws: Workspace;
beforeEach(async () => {
  ws = await createWorkspace();
});
afterEach(async () => {
  await ws.close();
});

function members(id = 'emu-audience'): Members {
  return ws.emulator.state().custom_audiences[id]?.members ?? {};
}

function usersRequests(route = USERS_ROUTE): number {
  return ws.emulator.state().requests.by_route[route] ?? 0;
}

describe('audience sync (custom audience)', () => {
  it('turns a messy export into exactly the expected membership, then sends only differences', async () => {
    ws.write('crm.yaml', audienceJob());
    ws.write('exports/crm.csv', FIXTURE);

    const first = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(first.code, first.stderr).toBe(0);
    const [s1] = summaries(first);
    expect(s1).toMatchObject({
      job: 'crm',
      kind: 'custom_audience',
      status: 'success',
      dry_run: false,
      read: 17,
      valid: 16,
      rejected: 1,
      duplicates: 4,
      unchanged: 0,
      added: 45,
      removed: 0,
      invalid_identifiers: { email: 1, phone_number: 2, handle: 1 },
      exit_code: 0,
    });
    expect(members()).toEqual(expected(FIRST));
    // One request holds all 45 identifiers (15 user records grouped by row... and fits far below the limits).
    expect(usersRequests()).toBe(1);
    // The rejects file names the row and line (the quoted name of row 2 spans two lines) and holds no raw values;
    // the invalid identifiers of kept rows are there too, each said to be dropped (not counted in `rejected`).
    const rejectsFile = String(s1?.rejects_file);
    expect(readFileSync(rejectsFile, 'utf8')).toBe(
      [
        'row,line,id,field,reason',
        '6,8,,email,not an email address (dropped; the row is kept for its other identifiers)',
        '6,8,,phone_number,phone number not valid for US (dropped; the row is kept for its other identifiers)',
        '6,8,,handle,"not an X handle (1-15 letters, digits or _) (dropped; the row is kept for its other identifiers)"',
        '7,9,,,no identifier values in the row',
        "16,18,,phone_number,no country code and unknown country 'XX' (dropped; the row is kept for its other identifiers)",
        '',
      ].join('\n'),
    );

    ws.write('exports/crm.csv', SECOND_CSV);
    const second = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(second.code, second.stderr).toBe(0);
    expect(summaries(second)[0]).toMatchObject({ status: 'success', read: 14, valid: 14, rejected: 0, added: 3, removed: 8, unchanged: 37 });
    expect(members()).toEqual(expected(SECOND));
    expect(usersRequests()).toBe(3); // one Update batch, one Delete batch

    const third = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(third.code, third.stderr).toBe(0);
    expect(summaries(third)[0]).toMatchObject({ status: 'success', added: 0, removed: 0, unchanged: 40, requests: 0 });
    expect(usersRequests()).toBe(3); // an unchanged export sends no user at all
    expect(members()).toEqual(expected(SECOND));
  });

  it('keeps an identifier shared by two rows when one of the rows goes', async () => {
    ws.write('crm.yaml', audienceJob());
    ws.write('exports/crm.csv', 'Customer ID,E-mail,Phone,Twitter,Country\nA1,shared@example.com,,,\nA2,shared@example.com,,,\nA3,solo@example.com,,,\n');
    expect((await ws.cli(['run', 'crm.yaml'])).code).toBe(0);
    ws.write('exports/crm.csv', 'Customer ID,E-mail,Phone,Twitter,Country\nA2,shared@example.com,,,\nA3,solo@example.com,,,\n');
    const r = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(summaries(r)[0]).toMatchObject({ added: 0, removed: 1 });
    expect(members()).toEqual(expected({ email: ['shared@example.com', 'solo@example.com'], partner_user_id: ['A2', 'A3'] }));
  });

  it('retries a count mismatch and 503s and still ends with the exact membership', async () => {
    ws.write('crm.yaml', audienceJob());
    ws.write('exports/crm.csv', FIXTURE);
    ws.fault({ route: 'POST /12/accounts/*/custom_audiences/*/users', kind: 'count_mismatch', times: 2 });
    ws.fault({ route: 'POST /12/accounts/*/custom_audiences/*/users', kind: 'status', status: 503, times: 2 });
    const r = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(summaries(r)[0]).toMatchObject({ status: 'success', added: 45, retries: 4, requests: 5 });
    expect(members()).toEqual(expected(FIRST));
  });

  it('add mode only adds; remove mode deletes the export identifiers', async () => {
    ws.write('add.yaml', audienceJob('  mode: add\n').replace('exports/crm.csv', 'exports/add.csv'));
    ws.write('exports/add.csv', 'Customer ID,E-mail,Phone,Twitter,Country\nA1,one@example.com,,,\nA2,two@example.com,,,\n');
    expect((await ws.cli(['run', 'add.yaml'])).code).toBe(0);
    ws.write('exports/add.csv', 'Customer ID,E-mail,Phone,Twitter,Country\nA3,three@example.com,,,\n');
    expect(summaries(await ws.cli(['run', 'add.yaml', '--json']))[0]).toMatchObject({ added: 2, removed: 0 });
    expect(members().email).toEqual(['one@example.com', 'two@example.com', 'three@example.com'].map(sha).sort());

    ws.write('optout.yaml', audienceJob('  mode: remove\n').replace('exports/crm.csv', 'exports/optout.csv').replace('account_id', 'name: optout\naccount_id'));
    ws.write('exports/optout.csv', 'Customer ID,E-mail,Phone,Twitter,Country\n,two@example.com,,,\n,never-added@example.com,,,\n');
    const removal = await ws.cli(['run', 'optout.yaml', '--json']);
    expect(summaries(removal)[0]).toMatchObject({ status: 'success', removed: 2, added: 0 });
    expect(members().email).toEqual(['one@example.com', 'three@example.com'].map(sha).sort());
    // An opt-out already sent is not sent again.
    expect(summaries(await ws.cli(['run', 'optout.yaml', '--json']))[0]).toMatchObject({ removed: 0, requests: 0 });
  });

  it('re-sends everything with --full, and --dry-run sends nothing', async () => {
    ws.write('crm.yaml', audienceJob());
    ws.write('exports/crm.csv', FIXTURE);
    const dry = await ws.cli(['run', 'crm.yaml', '--dry-run', '--json']);
    expect(summaries(dry)[0]).toMatchObject({ status: 'success', dry_run: true, added: 45, requests: 0 });
    expect(usersRequests()).toBe(0);
    await ws.cli(['run', 'crm.yaml']);
    const full = await ws.cli(['run', 'crm.yaml', '--full', '--json']);
    expect(summaries(full)[0]).toMatchObject({ added: 45, unchanged: 0 });
    expect(usersRequests()).toBe(2);
  });

  it('refuses a mirror run that would remove most of the audience, and lets --max-delete-ratio through', async () => {
    ws.write('crm.yaml', audienceJob());
    ws.write('exports/crm.csv', FIXTURE);
    await ws.cli(['run', 'crm.yaml']);
    ws.write('exports/crm.csv', 'Customer ID,E-mail,Phone,Twitter,Country\nC001,ada@example.com,,,\n');
    const refused = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(refused.code).toBe(1);
    expect(summaries(refused)[0]).toMatchObject({ status: 'failed', removed: 0 });
    expect(refused.stderr).toContain('would remove 43 of 45 members');
    expect(refused.stderr).toContain('--max-delete-ratio 1');
    expect(members()).toEqual(expected(FIRST));
    const forced = await ws.cli(['run', 'crm.yaml', '--max-delete-ratio', '1', '--json']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(members()).toEqual(expected({ email: ['ada@example.com'], partner_user_id: ['C001'] }));
  });

  it('makes no removal from an export with more rejected rows than max_reject_ratio (the additions still go), and fails', async () => {
    ws.write('crm.yaml', audienceJob());
    ws.write('exports/crm.csv', FIXTURE);
    await ws.cli(['run', 'crm.yaml']);
    // The next export, and ten rows without a single usable identifier: 10 of 24 rows
    // rejected, more than the default max_reject_ratio of 0.2.
    const junk = Array.from({ length: 10 }, (_, i) => `,Junk ${i},not-an-email,12,@@@,US`);
    ws.write('exports/crm.csv', `${SECOND_CSV}${junk.join('\n')}\n`);
    const r = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(r.code).toBe(1);
    const [summary] = summaries(r);
    expect(summary).toMatchObject({ status: 'failed', read: 24, rejected: 10, removed: 0 });
    expect(r.stderr).toContain('too many rejected rows to trust the export: 8 removals were not made');
    expect(r.stderr).toContain('10 of 24 rows rejected (41.7%, more than max_reject_ratio 0.2)');
    const union = (a: string[], b: string[]): string[] => [...new Set([...a, ...b])];
    expect(members()).toEqual(
      expected({
        email: union(FIRST.email, SECOND.email),
        phone_number: union(FIRST.phone_number, SECOND.phone_number),
        handle: union(FIRST.handle, SECOND.handle),
        partner_user_id: union(FIRST.partner_user_id, SECOND.partner_user_id),
      }),
    );
  });

  it('sends again the members last sent longer ago than refresh_after_days (job, or settings), and only those', async () => {
    ws.write('crm.yaml', audienceJob());
    ws.write('exports/crm.csv', FIXTURE);
    await ws.cli(['run', 'crm.yaml']);
    // Two members were last sent 40 days ago, as far as the state knows.
    const db = openTestDatabase(ws.statePath);
    const ada = Buffer.from(sha('ada@example.com'), 'hex');
    expect(db.prepare('UPDATE audience_members SET sent_at = sent_at - 40 * 86400000 WHERE value IN (?, ?)').run(ada, Buffer.from('C002')).changes).toBe(2);
    db.close();
    const before = usersRequests();

    // The default (330 days): nothing to send.
    const unchanged = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(summaries(unchanged)[0]).toMatchObject({ status: 'success', added: 0, removed: 0 });
    expect(usersRequests()).toBe(before);

    // 30 days in the settings file: exactly those two are sent again (one request).
    ws.write('adsync.yaml', `${ws.read('adsync.yaml')}audience: { refresh_after_days: 30 }\n`);
    const refreshed = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(refreshed.code, refreshed.stderr).toBe(0);
    expect(summaries(refreshed)[0]).toMatchObject({ status: 'success', added: 2, removed: 0 });
    expect(usersRequests()).toBe(before + 1);
    // Sent now: the next run has nothing to send, even with 1 day in the job file.
    ws.write('crm.yaml', audienceJob().replace('audience:\n', 'audience:\n  refresh_after_days: 1\n'));
    const again = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(summaries(again)[0]).toMatchObject({ status: 'success', added: 0 });
    expect(usersRequests()).toBe(before + 1);
    expect(members()).toEqual(expected(FIRST));
  });

  it("paces the users endpoint by the settings' rate_limits", async () => {
    ws.write('crm.yaml', audienceJob());
    ws.write('exports/crm.csv', FIXTURE);
    await ws.cli(['run', 'crm.yaml']);
    // One request per 3 s: the next run's additions and removals (two requests) take at least that.
    ws.write('adsync.yaml', `${ws.read('adsync.yaml')}rate_limits: { audience_users: { requests: 1, window_seconds: 3 } }\n`);
    ws.write('exports/crm.csv', SECOND_CSV);
    const started = Date.now();
    const r = await ws.cli(['run', 'crm.yaml', '--json']);
    const took = Date.now() - started;
    expect(r.code, r.stderr).toBe(0);
    expect(summaries(r)[0]).toMatchObject({ requests: 2 });
    expect(took).toBeGreaterThanOrEqual(3000);
    expect(members()).toEqual(expected(SECOND));
  });

  it('never empties the audience from an export with no valid identifier', async () => {
    ws.write('crm.yaml', audienceJob());
    ws.write('exports/crm.csv', FIXTURE);
    await ws.cli(['run', 'crm.yaml']);
    ws.write('exports/crm.csv', 'Customer ID,Full Name,E-mail,Phone,Twitter,Country\n');
    const r = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('the export has no valid identifier: a mirror run would remove all 45 members; nothing was removed');
    expect(members()).toEqual(expected(FIRST));
  });
});

/**
 * A users endpoint that answers HTTP 400 with the body `refusal` gives for a request (by its
 * operations and its index), and otherwise counts the user records sent, as the service does.
 */
function refusingService(refusal: (operations: unknown[], index: number) => unknown): Promise<ScriptedServer> {
  return startScriptedServer((req, res, index) => {
    const operations = JSON.parse(req.body.toString()) as { params: { users: unknown[] } }[];
    const body = refusal(operations, index);
    if (body !== undefined) {
      json(res, 400, body);
      return;
    }
    const users = operations.reduce((n, o) => n + o.params.users.length, 0);
    json(res, 200, { request: {}, data: { success_count: users, total_count: users } });
  });
}

describe('audience sync (operations the service refuses)', () => {
  it('writes refused identifiers to the rejects file without counting them as rejected rows: their rows may have other identifiers the service took', async () => {
    // Every operation of the first two requests (the run's, the backfill's) refused
    // (operation_errors indexed like the operations), then honest answers counting the user
    // records sent.
    const service = await refusingService((operations, index) =>
      index < 2 ? { errors: [], operation_errors: operations.map(() => [{ code: 'INVALID_PARAMETER', message: 'not accepted', parameter: 'users' }]) } : undefined,
    );
    try {
      ws.write('crm.yaml', audienceJob('  mode: add\n'));
      ws.write('exports/crm.csv', 'Customer ID,E-mail,Phone,Twitter,Country\nA1,one@example.com,(415) 555-2671,@one,US\nA2,two@example.com,,,\n');
      const r = await ws.cli(['run', 'crm.yaml', '--json'], { ADSYNC_ADS_URL: service.url });
      expect(r.code).toBe(1);
      const [s] = summaries(r);
      // 2 rows read, both valid; each row's identifiers one user record (6 identifiers), all
      // refused: written as values (a run's record holds only the row's new identifiers).
      expect(s).toMatchObject({ status: 'failed', read: 2, valid: 2, rejected: 0, added: 0, error: 'the service refused 2 user records (see the rejects file)' });
      const lines = readFileSync(String(s?.rejects_file), 'utf8').trim().split('\n');
      expect(lines[0]).toBe('row,line,id,field,reason');
      expect(lines.slice(1).sort()).toEqual(
        ['1,0,,email', '1,0,,handle', '1,0,,partner_user_id', '1,0,,phone_number', '2,0,,email', '2,0,,partner_user_id'].map(
          (l) => `${l},the service refused the operation: INVALID_PARAMETER not accepted (users)`,
        ),
      );

      // A backfill sends each row as one user record: a refused record is a rejected row.
      const backfill = await ws.cli(['backfill', 'crm.yaml', '--source', 'exports/crm.csv', '--json'], { ADSYNC_ADS_URL: service.url });
      expect(summaries(backfill)[0]).toMatchObject({ status: 'failed', read: 2, valid: 2, rejected: 2, added: 0 });
      expect(service.requests).toHaveLength(2);
    } finally {
      await service.close();
    }
  });
  it('refuses the users of an operation once when the service names it in several entries, one per error', async () => {
    const error = (message: string) => ({ code: 'INVALID_PARAMETER', message });
    const service = await refusingService((_operations, index) =>
      index === 0 ? { errors: [], operation_errors: [{ index: 0, errors: [error('first')] }, { index: 0, errors: [error('second')] }] } : undefined,
    );
    try {
      ws.write('crm.yaml', audienceJob('  mode: add\n'));
      ws.write('exports/crm.csv', 'Customer ID,E-mail,Phone,Twitter,Country\nA1,one@example.com,,,\nA2,two@example.com,,,\n');
      const r = await ws.cli(['run', 'crm.yaml', '--json'], { ADSYNC_ADS_URL: service.url });
      const [s] = summaries(r);
      // 2 rows of 2 identifiers, one operation: 2 user records refused, not 4.
      expect(s).toMatchObject({ status: 'failed', added: 0, error: 'the service refused 2 user records (see the rejects file)' });
      const lines = readFileSync(String(s?.rejects_file), 'utf8').trim().split('\n').slice(1);
      expect(lines.sort()).toEqual(
        ['1,0,,email', '1,0,,partner_user_id', '2,0,,email', '2,0,,partner_user_id'].map((l) => `${l},the service refused the operation: INVALID_PARAMETER first; INVALID_PARAMETER second`),
      );
    } finally {
      await service.close();
    }
  });
  it('refuses only the operations whose entry holds an error: an empty entry ({}, [] or {index, errors: []}) in operation_errors names no error', async () => {
    // 250 emails: three operations of 100, 100 and 50 users. operation_errors is indexed like
    // the input, so the operations without an error hold an empty placeholder.
    const refused = { code: 'INVALID_PARAMETER', message: 'not accepted', parameter: 'users' };
    // Requests 0 and 2 are refused in part; 1 and 3 send again what they did not refuse.
    const answers = [
      { errors: [], operation_errors: [{}, [refused], []] },
      undefined,
      { errors: [], operation_errors: [{ index: 0, errors: [] }, { index: 1, errors: [refused] }] },
    ];
    const service = await refusingService((_operations, index) => answers[index]);
    try {
      const emails = Array.from({ length: 250 }, (_, i) => `user${String(i).padStart(3, '0')}@example.com`);
      ws.write('crm.yaml', `account_id: emu-account\nsource: { path: exports/crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  mode: add\n  identifiers: { email: Email }\n`);
      ws.write('exports/crm.csv', `Email\n${emails.join('\n')}\n`);
      const r = await ws.cli(['run', 'crm.yaml', '--json'], { ADSYNC_ADS_URL: service.url });
      const [s] = summaries(r);
      // The second operation (100 users) refused; the 150 others sent again and added.
      expect(s).toMatchObject({ status: 'failed', added: 150, error: 'the service refused 100 user records (see the rejects file)' });
      expect(readFileSync(String(s?.rejects_file), 'utf8').trim().split('\n')).toHaveLength(101);
      const resent = JSON.parse(service.requests[1]?.body.toString() ?? '[]') as { params: { users: unknown[] } }[];
      expect(resent.map((o) => o.params.users.length)).toEqual([100, 50]);

      // The same with the {index, errors} form: an entry with an empty errors list refuses nothing.
      ws.write('exports/crm.csv', `Email\n${emails.slice(0, 200).map((e) => e.replace('user', 'other')).join('\n')}\n`);
      const again = summaries(await ws.cli(['run', 'crm.yaml', '--json'], { ADSYNC_ADS_URL: service.url }))[0];
      expect(again).toMatchObject({ status: 'failed', added: 100, error: 'the service refused 100 user records (see the rejects file)' });
    } finally {
      await service.close();
    }
  });
});

describe('audience sync (a 2xx answer that holds operation_errors)', () => {
  const users = 'POST /12/accounts/emu-account/custom_audiences/emu-audience/users';
  const batchFault = { route: 'POST /12/accounts/*/custom_audiences/*/users', kind: 'operation_errors' };
  const crm = (): void => {
    ws.write('crm.yaml', 'account_id: emu-account\nsource: { path: exports/crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  mode: add\n  identifiers: { email: Email }\n');
    ws.write('exports/crm.csv', 'Email\none@example.com\ntwo@example.com\n');
  };

  it('an operation the service says is wrong: its users are refused with its reason, not retried as a count mismatch; nothing is committed', async () => {
    crm();
    ws.fault({ ...batchFault, code: 'INVALID_PARAMETER', message: 'users[1].email is not a SHA-256 hash', times: 10 });
    const r = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(r.code, r.stderr).toBe(1);
    const [s] = summaries(r);
    expect(s).toMatchObject({ status: 'failed', added: 0, requests: 1, retries: 0, error: 'the service refused 2 user records (see the rejects file)' });
    expect(r.stderr).not.toContain('success_count');
    const lines = readFileSync(String(s?.rejects_file), 'utf8').trim().split('\n').slice(1);
    expect(lines.sort()).toEqual(['1,0,,email', '2,0,,email'].map((l) => `${l},the service refused the operation: INVALID_PARAMETER users[1].email is not a SHA-256 hash`));
    expect(ws.emulator.state().custom_audiences['emu-audience']?.members.email).toEqual([]);

    // The fault gone, the next run sends both (nothing was recorded as sent).
    ws.emulator.clearFaults();
    const again = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(summaries(again)[0]).toMatchObject({ status: 'success', added: 2 });
    expect(ws.emulator.state().custom_audiences['emu-audience']?.members.email).toEqual([sha('one@example.com'), sha('two@example.com')].sort());
  });

  it('operation errors that say to retry (SERVICE_UNAVAILABLE): the batch is retried as a whole, and reported as those errors when the retries run out', async () => {
    crm();
    ws.fault({ ...batchFault, code: 'SERVICE_UNAVAILABLE', message: 'try again later', times: 100 });
    const r = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(r.code, r.stderr).toBe(1);
    const [s] = summaries(r);
    expect(s).toMatchObject({ status: 'failed', added: 0, requests: 7, retries: 6, rejected: 0, rejects_file: null });
    expect(String(s?.error)).toMatch(
      new RegExp(`^${users} answered HTTP 200 with operation_errors, so the service applied none of the batch: operation 0: SERVICE_UNAVAILABLE try again later \\(gave up after 7 attempts in [\\d.]+ s \\(retry\\.retries: 6\\); what was not acknowledged is sent by the next run\\)$`),
    );
    expect(r.stderr).not.toContain('success_count');

    // Once: retried, then applied.
    ws.emulator.clearFaults();
    ws.fault({ ...batchFault, code: 'SERVICE_UNAVAILABLE', message: 'try again later', times: 1 });
    const again = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(summaries(again)[0]).toMatchObject({ status: 'success', added: 2, requests: 2, retries: 1 });
  });
});

describe('audience sync (two jobs, one audience)', () => {
  it('shares the state per audience: a mirror job removes what an add job added, and re-adds what a remove job removed', async () => {
    const job = (source: string, mode: string): string =>
      `account_id: emu-account\nsource: { path: exports/${source} }\naudience:\n  custom_audience_id: emu-audience\n  mode: ${mode}\n  max_remove_ratio: 1\n  identifiers: { email: Email }\n`;
    ws.write('crm.yaml', job('crm.csv', 'mirror'));
    ws.write('extra.yaml', job('extra.csv', 'add'));
    ws.write('optout.yaml', job('optout.csv', 'remove'));
    ws.write('exports/crm.csv', 'Email\na@example.com\nb@example.com\n');
    ws.write('exports/extra.csv', 'Email\nx@example.com\n');
    ws.write('exports/optout.csv', 'Email\nb@example.com\n');
    const run = async (file: string): Promise<Record<string, unknown>> => {
      const r = await ws.cli(['run', file, '--json']);
      expect(r.code, r.stderr).toBe(0);
      return summaries(r)[0] ?? {};
    };

    expect(await run('crm.yaml')).toMatchObject({ added: 2, removed: 0 });
    expect(await run('extra.yaml')).toMatchObject({ added: 1, removed: 0 });
    expect(members()).toEqual(expected({ email: ['a@example.com', 'b@example.com', 'x@example.com'] }));
    expect(await run('optout.yaml')).toMatchObject({ added: 0, removed: 1 });
    expect(members()).toEqual(expected({ email: ['a@example.com', 'x@example.com'] }));

    // The mirror job: its export is the audience, whatever the other two jobs sent.
    expect(await run('crm.yaml')).toMatchObject({ added: 1, removed: 1, unchanged: 1 });
    expect(members()).toEqual(expected({ email: ['a@example.com', 'b@example.com'] }));
  });
});

describe('audience sync (do-not-reach list)', () => {
  it('works the same way: exact membership, deltas, nothing re-sent', async () => {
    ws.write(
      'dnr.yaml',
      `account_id: emu-account
source: { path: exports/dnr.csv }
audience:
  do_not_reach_list_id: emu-dnr
  identifiers: { email: Email, phone_number: Phone }
  default_country: US
`,
    );
    ws.write('exports/dnr.csv', 'Email,Phone\n Opt.Out@Example.com ,(415) 555-2671\nsecond@example.com,\n,+44 20 7946 0958\n');
    const first = await ws.cli(['run', 'dnr.yaml', '--json']);
    expect(first.code, first.stderr).toBe(0);
    expect(summaries(first)[0]).toMatchObject({ kind: 'do_not_reach', added: 4 });
    const dnr = () => ws.emulator.state().do_not_reach_lists['emu-dnr']?.members;
    expect(dnr()).toEqual({ email: ['opt.out@example.com', 'second@example.com'].map(sha).sort(), phone_number: ['14155552671', '442079460958'].map(sha).sort() });

    ws.write('exports/dnr.csv', 'Email,Phone\nopt.out@example.com,(415) 555-2671\n');
    const second = await ws.cli(['run', 'dnr.yaml', '--json']);
    expect(summaries(second)[0]).toMatchObject({ added: 0, removed: 2 });
    expect(dnr()).toEqual({ email: [sha('opt.out@example.com')], phone_number: [sha('14155552671')] });
    expect(usersRequests(DNR_ROUTE)).toBe(2);
    await ws.cli(['run', 'dnr.yaml']);
    expect(usersRequests(DNR_ROUTE)).toBe(2);
  });

  it('refuses identifier types a do-not-reach list does not take (exit 2)', async () => {
    ws.write('dnr.yaml', 'account_id: emu-account\nsource: { path: x.csv }\naudience:\n  do_not_reach_list_id: emu-dnr\n  identifiers: { email: Email, handle: Twitter }\n');
    const r = await ws.cli(['run', 'dnr.yaml']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('adsync: dnr.yaml is not valid:\n  audience.identifiers: a do-not-reach list takes only email and phone_number, not handle\n');
  });
});
