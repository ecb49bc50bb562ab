/**
 * The run summary: the JSON object `--json` prints (fields of DESIGN.md, extended, never
 * broken) and the human table shown on a terminal.
 */
import { hostname } from 'node:os';
import type { RunKind, RunStatus } from '../state/store.js';

export interface RunSummary {
  job: string;
  kind: RunKind;
  run_id: string;
  status: RunStatus;
  dry_run: boolean;
  /** Rows (CRM export) or items (feed) read from the source. */
  read: number;
  /** Rows with at least one valid identifier, or valid products. */
  valid: number;
  /** Rows or items written to the rejects file. */
  rejected: number;
  /** Repeated identifiers (audiences) or repeated product ids (catalogs). */
  duplicates: number;
  /** Identifiers or products that needed no request. */
  unchanged: number;
  created: number;
  updated: number;
  deleted: number;
  added: number;
  removed: number;
  requests: number;
  retries: number;
  duration_ms: number;
  rejects_file: string | null;
  /**
   * The machine that made the run: its rejects file and its log are there (several machines
   * may share a state database, and one webhook).
   */
  host: string;
  /** Why the run failed or what it refused to do; absent on success. */
  error?: string | undefined;
  /** Non-fatal notes: refused deletes, skipped removals, warnings from the service. */
  notes?: string[] | undefined;
  /** Identifier values dropped as invalid, by type (audiences). */
  invalid_identifiers?: Record<string, number> | undefined;
  /** Service warnings on accepted products (catalogs). */
  warnings?: number | undefined;
  /** Set when a backfill resumed from a checkpoint: rows skipped. */
  resumed_from_row?: number | undefined;
  /** The process exit code this run alone would end with. */
  exit_code: number;
}

export function emptySummary(job: string, kind: RunKind, runId: string, dryRun: boolean): RunSummary {
  return {
    job,
    kind,
    run_id: runId,
    status: 'running',
    dry_run: dryRun,
    read: 0,
    valid: 0,
    rejected: 0,
    duplicates: 0,
    unchanged: 0,
    created: 0,
    updated: 0,
    deleted: 0,
    added: 0,
    removed: 0,
    requests: 0,
    retries: 0,
    duration_ms: 0,
    rejects_file: null,
    host: hostname(),
    exit_code: 0,
  };
}

/**
 * What `--json` prints for a job file that could not be loaded (invalid, unreadable): the
 * fields of a failed run's summary, with no run (run_id null, no host), the kind when the
 * file says it (else absent), and the job file.
 */
export interface UnloadedJobSummary extends Omit<RunSummary, 'kind' | 'run_id' | 'host'> {
  kind?: RunKind | undefined;
  run_id: null;
  job_file: string;
}

export function unloadedJobSummary(
  job: { name: string; kind: RunKind | undefined; file: string },
  error: string,
  exitCode: number,
  dryRun: boolean,
): UnloadedJobSummary {
  // The order of a run's summary: job, kind, run_id, status, ...
  // No run, so no machine that made one: the object is printed where the command runs.
  const { job: name, kind: _kind, run_id: _runId, status: _status, host: _host, ...counts } = emptySummary(job.name, 'catalog', '', dryRun);
  return {
    job: name,
    ...(job.kind === undefined ? {} : { kind: job.kind }),
    run_id: null,
    status: 'failed',
    ...counts,
    error,
    exit_code: exitCode,
    job_file: job.file,
  };
}

function n(value: number): string {
  return value.toLocaleString('en-US');
}

/**
 * A small table for people at a terminal. `validation`: the report of `adsync validate`,
 * which sends nothing: what was read and found, without the counts of sending. "invalid
 * values": identifiers dropped (rows keep their other identifiers; rejected counts rows).
 */
export function formatSummaryTable(s: RunSummary, options: { validation?: boolean } = {}): string {
  const isCatalog = s.kind === 'catalog';
  const validation = options.validation === true;
  const sending: [string, string][] = validation
    ? []
    : [
        ['unchanged', n(s.unchanged)],
        ...(isCatalog
          ? ([
              ['created', n(s.created)],
              ['updated', n(s.updated)],
              ['deleted', n(s.deleted)],
            ] as [string, string][])
          : ([
              ['added', n(s.added)],
              ['removed', n(s.removed)],
            ] as [string, string][])),
        ['requests', `${n(s.requests)} (${n(s.retries)} retries)`],
        ...(s.warnings !== undefined && s.warnings > 0 ? ([['warnings', `${n(s.warnings)} (accepted by the service with warnings: see the log)`]] as [string, string][]) : []),
      ];
  const invalid = Object.entries(s.invalid_identifiers ?? {}).filter(([, count]) => count > 0);
  const rows: [string, string][] = [
    ['status', validation ? (s.status === 'success' ? 'valid' : s.status) : `${s.status}${s.dry_run ? ' (dry run: nothing was sent)' : ''}`],
    ['read', n(s.read)],
    ['valid', n(s.valid)],
    ['rejected', n(s.rejected)],
    ['duplicates', n(s.duplicates)],
    ...(invalid.length > 0 ? ([['invalid values', invalid.map(([type, count]) => `${type} ${n(count)}`).join(', ')]] as [string, string][]) : []),
    ...sending,
    ['duration', `${(s.duration_ms / 1000).toFixed(1)} s`],
  ];
  if (s.rejects_file) rows.push(['rejects file', s.rejects_file]);
  const width = Math.max(...rows.map(([k]) => k.length));
  const title = validation ? `${s.job} (${s.kind.replace(/_/g, ' ')}) validated: nothing was sent` : `${s.job} (${s.kind.replace(/_/g, ' ')}) run ${s.run_id}`;
  const lines = [title, ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`)];
  if (s.error) lines.push(`  error: ${s.error}`);
  for (const note of s.notes ?? []) lines.push(`  note: ${note}`);
  return `${lines.join('\n')}\n`;
}
