/**
 * A large export read on two threads gives exactly what a one-thread read gives: the same
 * membership, the same summary, the same rejects file byte for byte (rows and lines of the
 * second half included, and the rejects the second part held in a temporary file while the
 * first was read), with quoted multi-line fields around the cut; and the same counts of valid
 * and invalid values per identifier type, which the guards of a mirror run judge.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync, writeSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashIdentifier, type IdentifierType } from '../../src/hash/index.js';
import { PARALLEL_MIN_BYTES } from '../../src/jobs/parallel-export-read.js';
import type { CliResult } from '../helpers/cli.js';
import { collect, createWorkspace, summaries, type Workspace } from '../helpers/e2e.js';

let one: Workspace;
let two: Workspace;
let csv = '';

const ROWS = 300_000;

/** Row i of the export: its kind, and the identifier cells of an ordinary row. */
function rowOf(i: number): { kind: 'ragged' | 'empty' | 'row'; partner: string; email: string; phone: string; handle: string } {
  const email = i % 997 === 0 ? 'not-an-email' : i % 50_000 === 123 ? 'dup@example.com' : ` User.${i}@Example.com `;
  // Invalid phones and handles on odd rows (dropped, the rows kept): the second part holds
  // more rejects than HELD_REJECTS_SIZE while the first is read, and spills them to a file.
  const phone = i % 3 === 0 ? `(415) 555-${String(1000 + (i % 9000)).padStart(4, '0')}` : i % 2 === 1 ? '12' : '';
  const handle = i % 5 === 0 ? `@h${i}` : i % 2 === 1 ? 'not a handle' : '';
  const kind = i % 20_011 === 0 ? 'ragged' : i % 30_007 === 0 ? 'empty' : 'row';
  return { kind, partner: `P${i}`, email, phone, handle };
}

function generate(): string {
  let seed = 7;
  const rand = (): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const lines = ['Customer ID,Full Name,E-mail,Phone,Twitter,Country'];
  for (let i = 1; i <= ROWS; i++) {
    const r = rand();
    const name = r < 0.15 ? `"Name ${i}\nsecond line, with comma"` : r < 0.2 ? `"Quoted ""nick"" ${i}"` : `Name ${i}`;
    const { kind, partner, email, phone, handle } = rowOf(i);
    if (kind === 'ragged') lines.push(`${partner},ragged row,only three`);
    else if (kind === 'empty') lines.push(`,"Nobody ${i}\nat all",,,,`);
    else lines.push(`${partner},${name},${email},${phone},${handle},US`);
  }
  return `${lines.join('\n')}\n`;
}

/** The values of each identifier type in the readable rows, valid and invalid, by the normalizers. */
function valueCounts(): Record<string, { valid: number; invalid: number }> {
  const counts: Record<string, { valid: number; invalid: number }> = {};
  for (let i = 1; i <= ROWS; i++) {
    const row = rowOf(i);
    if (row.kind !== 'row') continue;
    for (const [type, raw] of [
      ['email', row.email],
      ['phone_number', row.phone],
      ['handle', row.handle],
      ['partner_user_id', row.partner],
    ] as [IdentifierType, string][]) {
      if (raw.trim() === '') continue;
      const c = (counts[type] ??= { valid: 0, invalid: 0 });
      if (hashIdentifier(type, raw, { country: 'US' }).ok) c.valid += 1;
      else c.invalid += 1;
    }
  }
  return counts;
}

/**
 * A run's summary without what differs between two runs of one read: its id, duration and
 * rejects file name, and the transport (on a loaded machine a request may outlast the tests'
 * 2 s request timeout and be sent again: retries, requests).
 */
function comparable(s: Record<string, unknown> | undefined): Record<string, unknown> {
  return { ...s, run_id: undefined, duration_ms: undefined, rejects_file: undefined, retries: undefined, requests: undefined };
}

const JOB = 'account_id: emu-account\nmax_reject_ratio: 1\nsource: { path: exports/crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: E-mail, phone_number: Phone, handle: Twitter, partner_user_id: Customer ID }\n  country_column: Country\n';

beforeAll(async () => {
  csv = generate();
  expect(csv.length).toBeGreaterThan(PARALLEL_MIN_BYTES);
  one = await createWorkspace();
  two = await createWorkspace();
  for (const [ws, threads] of [
    [one, 1],
    [two, 2],
  ] as const) {
    ws.write('crm.yaml', JOB);
    ws.write('strict.yaml', JOB.replace('max_reject_ratio: 1', 'max_reject_ratio: 0.3'));
    ws.write('exports/crm.csv', csv);
    ws.write('adsync.yaml', `${ws.read('adsync.yaml')}read_threads: ${threads}\n`);
  }
});
afterAll(async () => {
  await one?.close();
  await two?.close();
});

/** A dry run of crm.yaml on two threads; `meanwhile` is called once the run has cut the export and started its parts. */
async function dryRunChangingTheExport(meanwhile: () => void): Promise<CliResult> {
  const child = two.spawn(['run', 'crm.yaml', '--dry-run', '--json', '--log-level', 'info']);
  let called = false;
  child.stderr?.on('data', (data: Buffer) => {
    if (!called && data.toString().includes('reading the export in 2 parts')) {
      called = true;
      meanwhile();
    }
  });
  const result = await collect(child);
  expect(called, result.stderr).toBe(true);
  return result;
}

describe('reading a large export on two threads', () => {
  it('gives exactly the membership, summary and rejects file of a one-thread read', { timeout: 180_000 }, async () => {
    const a = await one.cli(['run', 'crm.yaml', '--json', '--log-level', 'info']);
    const b = await two.cli(['run', 'crm.yaml', '--json', '--log-level', 'info']);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    expect(a.stderr).not.toContain('reading the export in 2 parts');
    expect(b.stderr).toContain('reading the export in 2 parts, one thread each');
    const [sa] = summaries(a);
    const [sb] = summaries(b);
    expect(comparable(sb)).toEqual(comparable(sa));
    expect(sa).toMatchObject({ read: ROWS });
    expect(Number(sa?.rejected)).toBeGreaterThan(20); // ragged and empty rows in both halves
    expect(Number(sa?.duplicates)).toBeGreaterThan(0);
    expect(readFileSync(String(sb?.rejects_file), 'utf8')).toBe(readFileSync(String(sa?.rejects_file), 'utf8'));
    expect(two.emulator.state().custom_audiences['emu-audience']?.members).toEqual(one.emulator.state().custom_audiences['emu-audience']?.members);
  });

  it('counts the valid and invalid values of each type as a one-thread read does: the same guard, the same numbers', { timeout: 180_000 }, async () => {
    // Phones and handles are invalid on most odd rows: more than max_reject_ratio 0.3 of their values.
    const counts = valueCounts();
    const phones = counts.phone_number ?? { valid: 0, invalid: 0 };
    const handles = counts.handle ?? { valid: 0, invalid: 0 };
    const share = (c: { valid: number; invalid: number }): string => `${((c.invalid / (c.valid + c.invalid)) * 100).toFixed(1)}%`;
    expect(phones.invalid).toBeGreaterThan(90_000);
    const a = await one.cli(['run', 'strict.yaml', '--dry-run', '--json', '--log-level', 'info']);
    const b = await two.cli(['run', 'strict.yaml', '--dry-run', '--json', '--log-level', 'info']);
    expect(b.stderr).toContain('reading the export in 2 parts, one thread each');
    for (const [ws, r] of [
      [one, a],
      [two, b],
    ] as const) {
      expect(r.code).toBe(1);
      expect(summaries(r)[0]).toMatchObject({
        status: 'failed',
        invalid_identifiers: { email: counts.email?.invalid, phone_number: phones.invalid, handle: handles.invalid },
        error:
          `${phones.invalid} of ${phones.valid + phones.invalid} phone_number values (column Phone, ${share(phones)}) and ` +
          `${handles.invalid} of ${handles.valid + handles.invalid} handle values (column Twitter, ${share(handles)}) are invalid, more than max_reject_ratio 0.3: ` +
          'the export is not trusted and nothing was removed. Fix those columns of the export (the rejects file lists the invalid values) and run again; ' +
          `if such values are expected, raise max_reject_ratio in ${ws.dir}/strict.yaml`,
      });
    }
  });

  it('reads the file it opened to its end when a new export is renamed over it during the read: never a mix of the two', { timeout: 180_000 }, async () => {
    const before = await two.cli(['run', 'crm.yaml', '--dry-run', '--json', '--log-level', 'info']);
    expect(before.stderr).toContain('reading the export in 2 parts, one thread each');
    // The exporter writes its next export (the same without its first 60,000 rows) to a
    // temporary name and renames it, as the README asks, once the run has started reading:
    // parts opened after that would read the new file from where the old one was cut.
    const path = join(two.dir, 'exports', 'crm.csv');
    const next = csv.slice(0, csv.indexOf('\n') + 1) + csv.slice(csv.indexOf('\nP60001,') + 1);
    writeFileSync(`${path}.tmp`, next);
    try {
      const during = await dryRunChangingTheExport(() => renameSync(`${path}.tmp`, path));
      expect(during.stderr).not.toContain('reading the export again on one thread');
      expect(comparable(summaries(during)[0])).toEqual(comparable(summaries(before)[0]));
    } finally {
      writeFileSync(path, csv);
    }
  });

  it('reads the export again on one thread when it is written in place during the read', { timeout: 180_000 }, async () => {
    const path = join(two.dir, 'exports', 'crm.csv');
    // Written long ago: the write below changes the modification time whatever its granularity.
    utimesSync(path, new Date('2020-01-01'), new Date('2020-01-01'));
    const at = Buffer.byteLength(csv.slice(0, csv.indexOf(' User.1@')));
    try {
      const during = await dryRunChangingTheExport(() => {
        // The first row's email changed in place, the size kept: the parts cannot tell.
        const fd = openSync(path, 'r+');
        writeSync(fd, ' Xser.1@', at);
        closeSync(fd);
      });
      expect(during.stderr).toMatch(/"reason":"[^"]*crm\.csv changed while adsync was reading it \(its modification time changed\)".*"msg":"reading the export again on one thread"/);
      expect(summaries(during)[0]).toMatchObject({ read: ROWS, removed: 0 });
    } finally {
      writeFileSync(path, csv);
    }
  });

  it('finds the header past blank lines, a sep= line and an empty row before it, as a one-thread read does', { timeout: 180_000 }, async () => {
    // Before the fix the second part took its first data row for the header: exit 2, naming
    // the cells of that row (personal data) as the export's columns.
    for (const ws of [one, two]) {
      ws.write('exports/preamble.csv', `\r\n  \r\nsep=,\r\n,,,,,\r\n${csv}`);
      ws.write('preamble.yaml', JOB.replace('exports/crm.csv', 'exports/preamble.csv'));
    }
    const a = await one.cli(['run', 'preamble.yaml', '--dry-run', '--json', '--log-level', 'info']);
    const b = await two.cli(['run', 'preamble.yaml', '--dry-run', '--json', '--log-level', 'info']);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    expect(b.stderr).toContain('reading the export in 2 parts, one thread each');
    expect(b.stderr).not.toContain('reading the export again on one thread');
    const [sa] = summaries(a);
    const [sb] = summaries(b);
    expect(comparable(sb)).toEqual(comparable(sa));
    expect(sa).toMatchObject({ read: ROWS });
    expect(readFileSync(String(sb?.rejects_file), 'utf8')).toBe(readFileSync(String(sa?.rejects_file), 'utf8'));
  });

  it('reads on one thread, right, an export whose cut would give the parts a header the reader skips (a Latin-1 non-breaking space line)', { timeout: 180_000 }, async () => {
    // Byte A0 alone is a blank line to the reader of a latin1 file (a non-breaking space), not
    // to the cutter, which took it for the header: the second part took its first row for it.
    const job = JOB.replace('source: { path: exports/crm.csv }', 'source: { path: exports/nbsp.csv, encoding: latin1 }');
    for (const ws of [one, two]) {
      ws.write('exports/nbsp.csv', Buffer.concat([Buffer.from([0xa0, 0x0d, 0x0a]), Buffer.from(csv)]));
      ws.write('nbsp.yaml', job);
    }
    const a = await one.cli(['run', 'nbsp.yaml', '--dry-run', '--json', '--log-level', 'info']);
    const b = await two.cli(['run', 'nbsp.yaml', '--dry-run', '--json', '--log-level', 'info']);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    expect(b.stderr).not.toContain('reading the export in 2 parts');
    expect(comparable(summaries(b)[0])).toEqual(comparable(summaries(a)[0]));
    expect(summaries(a)[0]).toMatchObject({ read: ROWS });
  });

  it('reads a FIFO as a one-thread read does, without waiting on the main thread for its writer nor breaking its pipe', { timeout: 60_000 }, async () => {
    const runOnFifo = async (ws: Workspace): Promise<CliResult> => {
      const path = join(ws.dir, 'exports', 'pipe.csv');
      rmSync(path, { force: true });
      execFileSync('mkfifo', [path]);
      // mode add: the earlier tests of this file filled the audience, which a mirror of one row would refuse to empty.
      ws.write('pipe.yaml', JOB.replace('exports/crm.csv', 'exports/pipe.csv').replace('custom_audience_id: emu-audience\n', 'custom_audience_id: emu-audience\n  mode: add\n'));
      const child = ws.spawn(['run', 'pipe.yaml', '--dry-run', '--json']);
      // Held up, the run never ends: killed, it fails the test instead of timing it out.
      const kill = setTimeout(() => child.kill('SIGKILL'), 20_000);
      try {
        // The exporter writes the export into the FIFO (opening it waits for the reader).
        await writeFile(path, 'Customer ID,Full Name,E-mail,Phone,Twitter,Country\nP1,One,one@example.com,,,US\n');
        return await collect(child);
      } finally {
        clearTimeout(kill);
        rmSync(path, { force: true });
      }
    };
    const a = await runOnFifo(one);
    const b = await runOnFifo(two);
    expect(b.signal, b.stderr).toBeNull();
    // Both read it (a positional read of the pipe failed with "ESPIPE: invalid seek" on both).
    expect(a.code, a.stderr).toBe(0);
    expect(summaries(a)[0]).toMatchObject({ status: 'success', read: 1, valid: 1, rejected: 0 });
    expect(b.code).toBe(a.code);
    const pick = (s: Record<string, unknown> | undefined) => ({ ...comparable(s), job: undefined, error: (s?.error as string | undefined)?.replace(/\/adsync-e2e-[^/]+\//, '/') });
    expect(pick(summaries(b)[0])).toEqual(pick(summaries(a)[0]));
  });
});
