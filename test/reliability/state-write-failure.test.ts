/**
 * A state database that refuses a commit in the middle of an upload: the run stops with one
 * clear line and exit 1, never a stack trace; what the service acknowledged but the state does
 * not hold is sent again by the next run, which ends exact. Both ways of committing: on the
 * main thread (`commit_thread_min: null`) and on the commit thread (`commit_thread_min: 1`; a
 * real export's batches are large enough for it). A run's additions are staged before they are
 * sent, so what the state refuses is their confirmation (audience_pending); a removal is
 * committed once acknowledged (audience_members).
 */
import { openTestDatabase } from '../helpers/sqlite.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { collect, createWorkspace, summaries, type Workspace } from '../helpers/e2e.js';
import { audienceOf, committedAudience, committedCatalog, crmExport, emulatorAudience, emulatorCatalog, expectAudienceStateBehindService, expectNoStackTrace, feedOf, range, waitFor } from './support.js';

let ws: Workspace;
beforeEach(async () => {
  ws = await createWorkspace();
});
afterEach(async () => {
  await ws.close();
});

function renameMembers(from: string, to: string): void {
  const db = openTestDatabase(ws.statePath);
  try {
    db.exec(`ALTER TABLE ${from} RENAME TO ${to}`);
  } finally {
    db.close();
  }
}

/** What is sent, what the state refuses and how the run must say it, for additions and for removals. */
interface Refusal {
  /** The export before the run (synced first), and the one the run reads. */
  before: readonly number[] | undefined;
  after: readonly number[];
  /** The service's audience once it applied the run's batch. */
  applied: (emails: number) => boolean;
  /** The table taken away while the batch's answer is held. */
  table: string;
  /** The error line, after the database's path. */
  log: RegExp;
}

const refusals: [string, Refusal][] = [
  // A run's additions are staged before they are sent: what the state refuses is their confirmation.
  [
    'additions',
    {
      before: undefined,
      after: range(1, 40),
      applied: (n) => n > 0,
      table: 'audience_pending',
      // Delivered, not recorded (not "could not be delivered"): when an acknowledgement finds the
      // state failed (the commit thread may still be staging when the table goes), or when the
      // run's last confirmations cannot be written.
      log: /a batch the service acknowledged could not be committed to the state \(the next run sends it again\)|acknowledged additions could not be recorded in the state \(the next run sends them again\)/,
    },
  ],
  // A removal is committed once acknowledged.
  ['removals', { before: range(1, 40), after: range(1, 20), applied: (n) => n === 20, table: 'audience_members', log: /a batch the service acknowledged could not be committed to the state \(the next run sends it again\)/ }],
];

describe('a commit the state database refuses', () => {
  describe.each(refusals)('of %s', (_, refusal) => {
    it.each([
      ['on the main thread', 'null'],
      ['on the commit thread', '1'],
    ])('%s: stops the run with one clear line; the next run ends exact', { timeout: 60_000 }, async (_, min) => {
      ws.write('adsync.yaml', `${ws.read('adsync.yaml')}commit_thread_min: ${min}\n`);
      ws.write('crm.yaml', 'name: crm\naccount_id: emu-account\nconcurrency: 1\nsource: { path: exports/crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email, partner_user_id: Id }\n');
      if (refusal.before) {
        ws.write('exports/crm.csv', crmExport(refusal.before));
        expect((await ws.cli(['run', 'crm.yaml'])).code).toBe(0);
      }
      ws.write('exports/crm.csv', crmExport(refusal.after));
      // The service applies the batch, then holds its answer while the table goes away.
      ws.fault({ route: 'POST /12/**/users', kind: 'delay', ms: 1000, times: 1 });
      const before = committedAudience(ws.statePath);
      const done = collect(ws.spawn(['run', 'crm.yaml']));
      await waitFor(() => refusal.applied(ws.emulator.state().custom_audiences['emu-audience']?.members.email?.length ?? 0), 20_000, 'the service to apply the batch');
      renameMembers(refusal.table, `${refusal.table}_away`);
      const failed = await done;
      expect(failed.code, failed.stderr).toBe(1);
      expectNoStackTrace(failed);
      expect(failed.stderr).toContain(`cannot commit to the state database ${ws.statePath}: no such table: ${refusal.table}`);
      expect(failed.stderr).toMatch(refusal.log);
      expect(failed.stderr).not.toContain('a batch could not be delivered');
      renameMembers(`${refusal.table}_away`, refusal.table);
      expectAudienceStateBehindService(before, committedAudience(ws.statePath), emulatorAudience(ws));

      const rerun = await ws.cli(['run', 'crm.yaml']);
      expect(rerun.code, rerun.stderr).toBe(0);
      expect(emulatorAudience(ws)).toEqual(audienceOf(refusal.after));
      expect(committedAudience(ws.statePath)).toEqual(audienceOf(refusal.after));
    });
  });
});

describe('a state database that cannot record the end of a run', () => {
  it('the run still prints its summary, failed with why (exit 1), and the next job runs; the lock is taken over by the next run', { timeout: 60_000 }, async () => {
    ws.write('crm.yaml', 'name: crm\naccount_id: emu-account\nsource: { path: exports/crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email, partner_user_id: Id }\n');
    ws.write('other.yaml', 'name: other\naccount_id: emu-account\nsource: { path: exports/crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email, partner_user_id: Id }\n');
    ws.write('exports/crm.csv', crmExport(range(1, 3)));
    expect((await ws.cli(['run', 'crm.yaml'])).code).toBe(0);
    ws.write('exports/crm.csv', crmExport(range(1, 6)));
    // The end of the run (its history row, its lock) cannot be written: as on a full disk.
    const db = openTestDatabase(ws.statePath);
    db.exec(`CREATE TRIGGER full_history BEFORE UPDATE ON runs WHEN NEW.job = 'crm' BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;
             CREATE TRIGGER full_locks BEFORE DELETE ON locks WHEN OLD.job = 'crm' BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;`);
    db.close();

    const r = await ws.cli(['run', 'crm.yaml', 'other.yaml', '--json']);
    expect(r.code, r.stderr).toBe(1);
    expectNoStackTrace(r);
    expect(r.stderr).not.toContain('internal error');
    const [crm, other] = summaries(r);
    const why = `the run could not be recorded in the run history: cannot write to the state database ${ws.statePath}: database or disk is full`;
    expect(crm).toMatchObject({ job: 'crm', status: 'failed', exit_code: 1, added: 6, error: expect.stringMatching(new RegExp(`^${why.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} \\(`)) as string });
    expect(r.stderr).toContain('the job lock could not be released: the next run of the job on this host takes it over');
    expect(other).toMatchObject({ job: 'other', status: 'success', exit_code: 0 });
    expect(emulatorAudience(ws)).toEqual(audienceOf(range(1, 6)));

    const fixed = openTestDatabase(ws.statePath);
    fixed.exec('DROP TRIGGER full_history; DROP TRIGGER full_locks;');
    fixed.close();
    const rerun = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(summaries(rerun)[0]).toMatchObject({ status: 'success', added: 0 });
  });
});

/** A catalog of 2 products in the state, a feed of `products` (one request at a time), and commits of new products refused, as by a full disk. */
async function refuseNewProducts(products: number): Promise<void> {
  ws.write('shop.yaml', 'name: shop\naccount_id: emu-account\nconcurrency: 1\nsource: { path: feed.xml }\ncatalog:\n  product_catalog_id: emu-catalog\n');
  ws.write('feed.xml', feedOf(range(1, 2).map((n) => ({ n, price: '10.00 USD' }))));
  expect((await ws.cli(['run', 'shop.yaml'])).code).toBe(0);
  ws.write('feed.xml', feedOf(range(1, products).map((n) => ({ n, price: '10.00 USD' }))));
  const db = openTestDatabase(ws.statePath);
  db.exec(`CREATE TRIGGER full BEFORE INSERT ON catalog_products BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;`);
  db.close();
}

describe('a catalog commit the state database refuses', () => {
  it('stops the upload at once with the file named, logged as not committed (not "could not be delivered"); the next run ends exact', { timeout: 60_000 }, async () => {
    await refuseNewProducts(3000);

    const r = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(r.code, r.stderr).toBe(1);
    expectNoStackTrace(r);
    expect(summaries(r)[0]).toMatchObject({ status: 'failed', error: expect.stringMatching(new RegExp(`^cannot write to the state database ${ws.statePath}: database or disk is full`)) as string });
    expect(r.stderr).toContain('products the service acknowledged could not be committed to the state (the next run sends them again)');
    expect(r.stderr).not.toContain('a request could not be delivered');
    // Stopped at the first refused commit (every 1000 products), not after sending all 3000.
    const puts = ws.emulator.stateSummary().requests.by_route['PUT /12/product_catalogs/:product_catalog_id/products'] ?? 0;
    expect(puts).toBeLessThan(1 + 3000 / 25);

    const fixed = openTestDatabase(ws.statePath);
    fixed.exec('DROP TRIGGER full;');
    fixed.close();
    const rerun = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(emulatorCatalog(ws).size).toBe(3000);
    expect(committedCatalog(ws.statePath).size).toBe(3000);
  });

  it('refused at the last commit of the upload: the summary still counts the products the service created', { timeout: 60_000 }, async () => {
    // Fewer than a commit's 1000 products: they are all committed at the end of the upload.
    await refuseNewProducts(202);

    const r = await ws.cli(['run', 'shop.yaml', '--json']);
    expect(r.code, r.stderr).toBe(1);
    expect(emulatorCatalog(ws).size).toBe(202);
    expect(summaries(r)[0]).toMatchObject({ status: 'failed', created: 200, error: expect.stringMatching(new RegExp(`^cannot write to the state database ${ws.statePath}: database or disk is full`)) as string });
  });
});
