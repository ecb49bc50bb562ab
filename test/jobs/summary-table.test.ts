import { describe, expect, it } from 'vitest';
import { emptySummary, formatSummaryTable } from '../../src/jobs/summary.js';

describe('the summary table', () => {
  const catalogRun = { ...emptySummary('shop', 'catalog', '20261122T120000Z-abcdef', false), status: 'success' as const, read: 5, valid: 5, created: 4, requests: 1, duration_ms: 1234 };

  it('shows the products the service accepted with warnings', () => {
    expect(formatSummaryTable({ ...catalogRun, warnings: 2 })).toBe(
      [
        'shop (catalog) run 20261122T120000Z-abcdef',
        '  status      success',
        '  read        5',
        '  valid       5',
        '  rejected    0',
        '  duplicates  0',
        '  unchanged   0',
        '  created     4',
        '  updated     0',
        '  deleted     0',
        '  requests    1 (0 retries)',
        '  warnings    2 (accepted by the service with warnings: see the log)',
        '  duration    1.2 s',
        '',
      ].join('\n'),
    );
  });

  it('has no warnings line without warnings', () => {
    expect(formatSummaryTable({ ...catalogRun, warnings: 0 })).not.toContain('warnings');
    expect(formatSummaryTable(catalogRun)).not.toContain('warnings');
  });
});
