import type { Statement } from 'better-sqlite3';
import type { RunHistory, RunKind, RunRecord, RunStatus } from '../store.js';
import { writeState, type Db } from './database.js';

interface RunRow {
  run_id: string;
  job: string;
  kind: string;
  command: string;
  status: string;
  dry_run: number;
  started_at: number;
  finished_at: number | null;
  summary: string | null;
  error: string | null;
  rejects_file: string | null;
}

function toRecord(r: RunRow): RunRecord {
  return {
    runId: r.run_id,
    job: r.job,
    kind: r.kind as RunKind,
    command: r.command,
    status: r.status as RunStatus,
    dryRun: r.dry_run === 1,
    startedAt: r.started_at,
    finishedAt: r.finished_at ?? undefined,
    summary: r.summary ? (JSON.parse(r.summary) as Record<string, unknown>) : undefined,
    error: r.error ?? undefined,
    rejectsFile: r.rejects_file ?? undefined,
  };
}

/** The error of a run that markAbandoned marked. */
const ABANDONED = 'the process running it stopped before it finished';

/**
 * Marks the job's runs still recorded as running failed (their process died; the caller holds
 * the job's lock), giving their run ids. Parameters: finished_at, error, job. It reads only the
 * runs in progress (the partial index runs_running), never the job's whole history.
 */
export const MARK_ABANDONED = "UPDATE runs SET status = 'failed', finished_at = ?, error = ? WHERE job = ? AND status = 'running' RETURNING run_id";

export class SqliteRunHistory implements RunHistory {
  constructor(private readonly db: Db) {}

  start(input: { runId: string; job: string; kind: RunKind; command: string; dryRun: boolean; startedAt: number }): Promise<void> {
    return writeState(this.db, () => {
      this.db
        .prepare('INSERT INTO runs (run_id, job, kind, command, status, dry_run, started_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
        .run(input.runId, input.job, input.kind, input.command, 'running', input.dryRun ? 1 : 0, input.startedAt);
    });
  }

  finish(
    runId: string,
    input: { status: RunStatus; finishedAt: number; summary: Record<string, unknown>; error?: string | undefined; rejectsFile?: string | undefined },
  ): Promise<void> {
    return writeState(this.db, () => {
      this.db
        .prepare('UPDATE runs SET status = ?, finished_at = ?, summary = ?, error = ?, rejects_file = ? WHERE run_id = ?')
        .run(input.status, input.finishedAt, JSON.stringify(input.summary), input.error ?? null, input.rejectsFile ?? null, runId);
    });
  }

  list(filter: { job?: string | undefined; limit?: number | undefined } = {}): Promise<RunRecord[]> {
    const { statement, params } = this.listQuery(filter);
    return Promise.resolve((statement.all(...params) as RunRow[]).map(toRecord));
  }

  async *each(filter: { job?: string | undefined; limit?: number | undefined } = {}): AsyncGenerator<RunRecord> {
    const { statement, params } = this.listQuery(filter);
    for (const row of statement.iterate(...params) as IterableIterator<RunRow>) yield toRecord(row);
  }

  private listQuery(filter: { job?: string | undefined; limit?: number | undefined }): { statement: Statement; params: unknown[] } {
    const limit = filter.limit ?? 50;
    return filter.job === undefined
      ? { statement: this.db.prepare('SELECT * FROM runs ORDER BY started_at DESC, rowid DESC LIMIT ?'), params: [limit] }
      : { statement: this.db.prepare('SELECT * FROM runs WHERE job = ? ORDER BY started_at DESC, rowid DESC LIMIT ?'), params: [filter.job, limit] };
  }

  get(runId: string): Promise<RunRecord | undefined> {
    const row = this.db.prepare('SELECT * FROM runs WHERE run_id = ?').get(runId) as RunRow | undefined;
    return Promise.resolve(row ? toRecord(row) : undefined);
  }

  markAbandoned(job: string, now: number): Promise<string[]> {
    return writeState(this.db, () =>
      (
        this.db
          .prepare(MARK_ABANDONED)
          .all(now, ABANDONED, job) as { run_id: string }[]
      ).map((r) => r.run_id),
    );
  }

  reportAbandoned(runId: string, reportedBy: string): Promise<boolean> {
    return writeState(
      this.db,
      () =>
        this.db
          .prepare("UPDATE runs SET error = ? WHERE run_id = ? AND status = 'failed' AND error = ?")
          .run(`${ABANDONED} (reported by run ${reportedBy}, which took its lock over)`, runId, ABANDONED).changes === 1,
    );
  }

  reportsItself(runId: string): Promise<boolean> {
    return writeState(this.db, () =>
      this.db
        .transaction(() => {
          // Undo the mark: the run is ending itself, and its taker then finds nothing to report.
          const undone = this.db.prepare("UPDATE runs SET status = 'running', finished_at = NULL, error = NULL WHERE run_id = ? AND status = 'failed' AND error = ?").run(runId, ABANDONED).changes;
          if (undone === 1) return true;
          const row = this.db.prepare('SELECT status FROM runs WHERE run_id = ?').get(runId) as { status: string } | undefined;
          return row?.status === 'running';
        })
        .immediate(),
    );
  }
}
