/**
 * A large export read on two threads gives exactly what a one-thread read gives: the same
 * membership, the same summary, the same rejects file byte for byte (rows and lines of the
 * second half included, and the rejects the second part held in a temporary file while the
 * first was read), with quoted multi-line fields around the cut.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PARALLEL_MIN_BYTES } from '../../src/jobs/parallel-export-read.js';
import { createWorkspace, summaries, type Workspace } from '../helpers/e2e.js';

let one: Workspace;
let two: Workspace;
let csv = '';

function generate(): string {
  let seed = 7;
  const rand = (): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const lines = ['Customer ID,Full Name,E-mail,Phone,Twitter,Country'];
  for (let i = 1; i <= 300_000; i++) {
    const r = rand();
    const name = r < 0.15 ? `"Name ${i}\nsecond line, with comma"` : r < 0.2 ? `"Quoted ""nick"" ${i}"` : `Name ${i}`;
    const email = i % 997 === 0 ? 'not-an-email' : i % 50_000 === 123 ? 'dup@example.com' : ` User.${i}@Example.com `;
    // Invalid phones and handles on odd rows (dropped, the rows kept): the second part holds
    // more rejects than HELD_REJECTS_SIZE while the first is read, and spills them to a file.
    const phone = i % 3 === 0 ? `(415) 555-${String(1000 + (i % 9000)).padStart(4, '0')}` : i % 2 === 1 ? '12' : '';
    const handle = i % 5 === 0 ? `@h${i}` : i % 2 === 1 ? 'not a handle' : '';
    if (i % 20_011 === 0) lines.push(`P${i},ragged row,only three`);
    else if (i % 30_007 === 0) lines.push(`,"Nobody ${i}\nat all",,,,`);
    else lines.push(`P${i},${name},${email},${phone},${handle},US`);
  }
  return `${lines.join('\n')}\n`;
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
    ws.write('exports/crm.csv', csv);
    ws.write('adsync.yaml', `${ws.read('adsync.yaml')}read_threads: ${threads}\n`);
  }
});
afterAll(async () => {
  await one?.close();
  await two?.close();
});

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
    const pick = (s: Record<string, unknown> | undefined) => ({ ...s, run_id: undefined, duration_ms: undefined, rejects_file: undefined });
    expect(pick(sb)).toEqual(pick(sa));
    expect(sa).toMatchObject({ read: 300_000 });
    expect(Number(sa?.rejected)).toBeGreaterThan(20); // ragged and empty rows in both halves
    expect(Number(sa?.duplicates)).toBeGreaterThan(0);
    expect(readFileSync(String(sb?.rejects_file), 'utf8')).toBe(readFileSync(String(sa?.rejects_file), 'utf8'));
    expect(two.emulator.state().custom_audiences['emu-audience']?.members).toEqual(one.emulator.state().custom_audiences['emu-audience']?.members);
  });
});
