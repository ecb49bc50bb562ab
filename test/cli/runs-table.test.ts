import { describe, expect, it } from 'vitest';
import { oneLine } from '../../src/errors.js';
import { formatRuns } from '../../src/cli/actions/runs.js';
import type { RunRecord } from '../../src/state/store.js';

const run = (i: number, job: string): RunRecord => ({
  runId: `20261122T120000Z-${i.toString(16).padStart(6, '0')}`,
  job,
  kind: 'custom_audience',
  command: 'run',
  status: 'success',
  dryRun: false,
  startedAt: Date.UTC(2026, 10, 22, 12) - i * 1000,
  finishedAt: Date.UTC(2026, 10, 22, 12) - i * 1000 + 2500,
  summary: { read: 10, rejected: 0, added: 3, removed: 1 },
  error: undefined,
  rejectsFile: undefined,
});

describe('adsync runs table', () => {
  it('formats 200,000 runs (adsync runs --limit 200000) without overflowing the stack, columns as wide as their widest cell', () => {
    const runs = Array.from({ length: 200_000 }, (_, i) => run(i, i === 123_456 ? 'a-much-longer-job-name' : 'crm'));
    const lines = formatRuns(runs).split('\n');
    expect(lines).toHaveLength(200_002);
    expect(lines[0]).toBe('started (UTC)        job                     kind             status   duration  read  rejected  sent   run id                   rejects file  error');
    expect(lines[1]).toBe('2026-11-22 12:00:00  crm                     custom_audience  success  2.5s      10    0         +3 -1  20261122T120000Z-000000');
    expect(lines[123_457]).toContain('  a-much-longer-job-name  custom_audience  ');
  });

  it('writes an error recorded with line breaks and a terminal escape (by an adsync before every message was one line) on its row', () => {
    const failed: RunRecord = { ...run(0, 'crm'), status: 'failed', error: 'POST /x answered HTTP 400: A\r\nB\n\n  C\u001b[2J' };
    const lines = formatRuns([failed]).split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(/ {2}POST \/x answered HTTP 400: A; B; C\\x1b\[2J$/);
  });
});

describe('oneLine', () => {
  it('turns line breaks into "; " (a space after a colon or a semicolon), tabs into spaces, other control characters into \\xNN; drops nothing else', () => {
    expect(oneLine('one\ntwo\r\nthree\rfour\u2028five\u0085six')).toBe('one; two; three; four; five; six');
    expect(oneLine('file is not valid:\n  a: bad\n  b: worse;\n c')).toBe('file is not valid: a: bad; b: worse; c');
    expect(oneLine('\n  lead and trail \r\n')).toBe('lead and trail');
    expect(oneLine('a\tb\u0000c\u007fd\u009be')).toBe('a b\\x00c\\x7fd\\x9be');
    expect(oneLine('plain, ünïcode, emoji 🎯')).toBe('plain, ünïcode, emoji 🎯');
  });
});
