import { describe, expect, it } from 'vitest';
import { formatRuns } from '../../src/cli/commands/runs.js';
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
});
