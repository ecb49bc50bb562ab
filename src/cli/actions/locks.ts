/**
 * The work of `adsync locks` (commands/locks.ts): every lock of the state database, a job's or
 * a target's (target-lock.ts), with the run that holds it and whether its process is alive:
 * what a waiting or refused run is waiting for, and what `adsync unlock` would remove.
 */
import { inspectLockOwner } from '../../jobs/job-lock.js';
import { describeTarget, isTargetLockKey, runIdOfOwner, targetLockOwner } from '../../jobs/target-lock.js';
import type { LockInfo, RunRecord, StateStore } from '../../state/store.js';
import type { CliContext } from '../context.js';
import { openStore } from '../job-session.js';
import { missingStateDatabase } from './runs.js';

interface LockView {
  /** The key `adsync unlock` takes. */
  lock: string;
  what: string;
  /** The job whose run holds it, and that run, when the run history knows them. */
  job: string | null;
  run_id: string | null;
  owner: string;
  /** alive or gone (a process of this host), unknown (another host: it cannot be checked). */
  process: 'alive' | 'gone' | 'unknown';
  acquired_at: string;
  heartbeat_at: string;
  expires_at: string;
  /** A job's lock: the target lock its run holds (null while the run waits for it, or starts, and once its process is gone without one). */
  writing_to?: string | null;
}

/** The latest run of `job` still going that is not a dry run: the one holding the job's lock. */
async function lockedRun(store: StateStore, job: string): Promise<RunRecord | undefined> {
  for await (const r of store.runs.each({ job, limit: 50 })) if (r.status === 'running' && !r.dryRun) return r;
  return undefined;
}

async function view(store: StateStore, lock: LockInfo, all: readonly LockInfo[]): Promise<LockView> {
  const target = isTargetLockKey(lock.job);
  const runId = target ? runIdOfOwner(lock.owner) : undefined;
  // A job's lock: its run is the job's run still going (a job lock's owner names no run); not a
  // dry run of the job since (it takes no lock), nor one that ended.
  const run = runId !== undefined ? await store.runs.get(runId) : target ? undefined : await lockedRun(store, lock.job);
  const holder = inspectLockOwner(lock.owner);
  return {
    lock: lock.job,
    what: target ? describeTarget(lock.job) : `job ${lock.job}`,
    job: run?.job ?? (target ? null : lock.job),
    run_id: run?.runId ?? null,
    owner: lock.owner,
    process: holder.where === 'this-host' ? (holder.alive ? 'alive' : 'gone') : 'unknown',
    acquired_at: new Date(lock.acquiredAt).toISOString(),
    heartbeat_at: new Date(lock.heartbeatAt).toISOString(),
    expires_at: new Date(lock.expiresAt).toISOString(),
    ...(target ? {} : { writing_to: all.find((l) => isTargetLockKey(l.job) && run !== undefined && l.owner === targetLockOwner(lock.owner, run.runId))?.job ?? null }),
  };
}

const PROCESS_TEXT: Record<LockView['process'], string> = { alive: 'alive on this host', gone: 'gone (taken over by the next run)', unknown: 'on another host (expires)' };

export function formatLocks(locks: readonly LockView[]): string {
  const header = ['lock (adsync unlock <lock>)', 'held by', 'process', 'since (UTC)', 'last heartbeat', 'expires', 'writing to'];
  const time = (iso: string) => iso.replace('T', ' ').slice(0, 19);
  const rows = locks.map((l) => [
    l.lock,
    l.job === null ? 'a run not in the run history' : l.run_id === null ? `job ${l.job}` : `job ${l.job} (run ${l.run_id})`,
    `${l.owner.split(':').slice(0, 2).join(':')} ${PROCESS_TEXT[l.process]}`,
    time(l.acquired_at),
    time(l.heartbeat_at),
    time(l.expires_at),
    l.writing_to === undefined ? '' : l.writing_to !== null ? describeTarget(l.writing_to) : l.process === 'gone' ? '-' : '- (waiting for its catalog or audience, or starting)',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]?.length ?? 0)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return `${[line(header), ...rows.map(line)].join('\n')}\n`;
}

export async function locksCommand(ctx: CliContext, flags: { json?: boolean }): Promise<void> {
  const missing = missingStateDatabase(ctx);
  if (missing !== undefined) {
    ctx.io.stderr(`no locks: ${missing}\n`);
    return;
  }
  const store = openStore(ctx);
  try {
    const locks: LockView[] = [];
    const all = await store.locks.list();
    for (const lock of all) locks.push(await view(store, lock, all));
    if (flags.json) for (const l of locks) ctx.io.stdout(`${JSON.stringify(l)}\n`);
    else if (locks.length === 0) ctx.io.stderr(`no locks in ${store.path}\n`);
    else ctx.io.stdout(formatLocks(locks));
  } finally {
    await store.close();
  }
}
