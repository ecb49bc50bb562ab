/**
 * A temporary folder that fills up while the plan is written fails the run before anything is
 * sent (README: Troubleshooting, ENOSPC). The spool file buffers its last megabyte; that part
 * of an audience plan (or of a catalog's product payloads) was written only when the upload
 * read it back, so a disk that filled there failed the run after the first requests had been
 * sent and committed.
 *
 * The full disk is a file size limit (`ulimit -f`, EFBIG: Node ignores SIGXFSZ) on the CLI
 * process: the limit lies between the spool file but its last megabyte and the whole of it.
 */
import { spawn } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { collect, createWorkspace, type Workspace } from '../helpers/e2e.js';
import { expectNoStackTrace, summaryOf } from './support.js';

let ws: Workspace;
beforeEach(async () => {
  ws = await createWorkspace();
});
afterEach(async () => {
  await ws.close();
});

const ROWS = 100_000;
/** KiB: above the sorted runs and the plan but its last megabyte (~7.6 MB in all). */
const FILE_SIZE_LIMIT_KIB = 7000;
const PRODUCTS = 6000;
/** KiB: above the payloads (~1 KB a product) but their last megabyte (~6.6 MB in all). */
const CATALOG_FILE_SIZE_LIMIT_KIB = 6500;

/** `adsync run <job> --json` with the files it writes limited to `kib`. */
function runLimited(job: string, kib: number) {
  return collect(spawn('bash', ['-c', `ulimit -f ${kib} && exec "$0" "$@"`, process.execPath, BIN, 'run', job, '--json'], { env: ws.env, cwd: ws.dir }));
}

function expectFailedBeforeSending(failed: Awaited<ReturnType<typeof runLimited>>, read: number): void {
  expect(failed.code, failed.stderr).toBe(1);
  expectNoStackTrace(failed);
  const summary = summaryOf(failed);
  expect(summary).toMatchObject({ status: 'failed', read, requests: 0 });
  expect(String(summary.error)).toMatch(/^cannot write a temporary file in \S+: EFBIG: file too large/);
}

function members(): number {
  return ws.emulator.state().custom_audiences['emu-audience']?.members.email?.length ?? 0;
}

describe('a temporary folder that fills up while the plan is written', () => {
  it('fails the run with nothing sent; the next run sends everything', { timeout: 60_000 }, async () => {
    const lines = ['Email'];
    for (let i = 0; i < ROWS; i++) lines.push(`u${i}@example.net`);
    ws.write('crm.csv', `${lines.join('\n')}\n`);
    ws.write('crm.yaml', 'name: crm\naccount_id: emu-account\nsource: { path: crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email }\n');

    expectFailedBeforeSending(await runLimited('crm.yaml', FILE_SIZE_LIMIT_KIB), ROWS);
    expect(members()).toBe(0);

    const rerun = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(summaryOf(rerun)).toMatchObject({ status: 'success', added: ROWS });
    expect(members()).toBe(ROWS);
  });

  it('a catalog run: fails with nothing sent; the next run sends everything', { timeout: 60_000 }, async () => {
    const description = 'x'.repeat(900);
    const rows = ['id,title,description,link,image_link,availability,condition,price,brand'];
    for (let i = 0; i < PRODUCTS; i++) rows.push(`P${i},Product ${i},Desc ${i} ${description},https://shop.example.com/p/${i},https://img.example.com/${i}.jpg,in stock,new,${(i % 100) + 1}.00 USD,Acme`);
    ws.write('feed.csv', `${rows.join('\n')}\n`);
    ws.write('feed.yaml', 'name: feed\naccount_id: emu-account\nsource: { path: feed.csv }\ncatalog:\n  product_catalog_id: emu-catalog\n  mode: upsert\n');
    const products = (): number => ws.emulator.stateSummary().catalogs['emu-catalog']?.products ?? -1;
    const seeded = products();

    expectFailedBeforeSending(await runLimited('feed.yaml', CATALOG_FILE_SIZE_LIMIT_KIB), PRODUCTS);
    expect(products()).toBe(seeded);

    const rerun = await ws.cli(['run', 'feed.yaml', '--json']);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(summaryOf(rerun)).toMatchObject({ status: 'success', created: PRODUCTS });
    expect(products()).toBe(seeded + PRODUCTS);
  });
});
