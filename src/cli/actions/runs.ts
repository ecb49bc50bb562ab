/** The work of `adsync runs` (the run history from the state database) and `adsync unlock` (remove the lock of a run that died): commands/runs.ts. */
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { ConfigError, LockedError, oneLine } from '../../errors.js';
import { inspectLockOwner, isSchedulerProcess, lockHeldSince } from '../../jobs/job-lock.js';
import { describeTarget, isTargetLockKey, isWellFormedTargetKey, runIdOfOwner, targetHolderRun } from '../../jobs/target-lock.js';
import type { LockInfo, RunRecord, StateStore } from '../../state/store.js';
import type { CliContext } from '../context.js';
import { openStore } from '../job-session.js';

function count(r: RunRecord, key: string): string {
  const v = r.summary?.[key];
  return typeof v === 'number' ? v.toLocaleString('en-US') : '-';
}

export function formatRuns(runs: RunRecord[]): string {
  const header = ['started (UTC)', 'job', 'kind', 'status', 'duration', 'read', 'rejected', 'sent', 'run id', 'rejects file', 'error'];
  const rows = runs.map((r) => {
    const s = r.summary ?? {};
    const keys = r.kind === 'catalog' ? ['created', 'updated', 'deleted'] : ['added', 'removed'];
    // A run without counts (it failed before it had any, or is still going) shows one "-".
    const sent = keys.every((k) => typeof s[k] !== 'number')
      ? '-'
      : r.kind === 'catalog'
        ? `+${count(r, 'created')} ~${count(r, 'updated')} -${count(r, 'deleted')}`
        : `+${count(r, 'added')} -${count(r, 'removed')}`;
    return [
      new Date(r.startedAt).toISOString().replace('T', ' ').slice(0, 19),
      r.job,
      r.kind + (r.command === 'backfill' ? ' (backfill)' : ''),
      r.status + (r.dryRun ? ' (dry)' : ''),
      r.finishedAt === undefined ? '-' : `${((r.finishedAt - r.startedAt) / 1000).toFixed(1)}s`,
      count(r, 'read'),
      count(r, 'rejected'),
      sent,
      r.runId,
      typeof s.rejects_file === 'string' ? s.rejects_file : '',
      // Why a run failed or was interrupted, last: it is as long as it needs to be, on one line
      // (one recorded before adsync made every message one line may hold line breaks).
      oneLine(r.error ?? ''),
    ];
  });
  // A loop, not Math.max(...rows): spread arguments overflow the stack at ~100,000 runs (--limit).
  const widths = header.map((h) => h.length);
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return `${[line(header), ...rows.map(line)].join('\n')}\n`;
}

/**
 * Why there is nothing to read, when the state database does not exist: commands that only
 * read it make none (a mistyped ADSYNC_STATE made an empty one, and its folders).
 */
export function missingStateDatabase(ctx: CliContext): string | undefined {
  const path = ctx.settings.statePath;
  return existsSync(path) ? undefined : `there is no state database at ${path} (ADSYNC_STATE, or state: in the settings)`;
}

export interface RunsFlags {
  job?: string;
  limit: number;
  json?: boolean;
}

export async function runsCommand(ctx: CliContext, flags: RunsFlags): Promise<void> {
  const missing = missingStateDatabase(ctx);
  if (missing !== undefined) {
    ctx.io.stderr(`no runs recorded: ${missing}\n`);
    return;
  }
  const store = openStore(ctx);
  try {
    if (flags.json) {
      // One run at a time: `--limit` may ask for the whole history.
      for await (const r of store.runs.each({ job: flags.job, limit: flags.limit })) ctx.io.stdout(`${JSON.stringify({ ...r, startedAt: new Date(r.startedAt).toISOString(), finishedAt: r.finishedAt === undefined ? null : new Date(r.finishedAt).toISOString() })}\n`);
      return;
    }
    const runs = await store.runs.list({ job: flags.job, limit: flags.limit });
    if (runs.length === 0) {
      ctx.io.stderr(`no runs recorded${flags.job ? ` for job ${flags.job}` : ''} in ${store.path}\n`);
    } else {
      ctx.io.stdout(formatRuns(runs));
    }
  } finally {
    await store.close();
  }
}

/** The target locks held by a run of `job` whose process held the job's lock as `owner`. */
async function targetLocksOfRun(store: StateStore, job: string, owner: string): Promise<LockInfo[]> {
  const held: LockInfo[] = [];
  for (const lock of await store.locks.list(`${owner}:`)) {
    const runId = runIdOfOwner(lock.owner);
    if (isTargetLockKey(lock.job) && runId !== undefined && (await store.runs.get(runId))?.job === job) held.push(lock);
  }
  return held;
}

export async function unlock(ctx: CliContext, key: string, force: boolean): Promise<void> {
  // A mistyped target key (catalogue:1, custom_audience:<id> without its account) is no lock:
  // "custom audience 1 is not locked" would send the operator away with the lock still there.
  if (isTargetLockKey(key) && !isWellFormedTargetKey(key)) {
    throw new ConfigError(`${key} names no lock: a job's lock is the job's name (it holds no ':'), a target's is catalog:<id>, custom_audience:<account>:<id> or do_not_reach:<account>:<id>`, {
      hint: '`adsync locks` lists every lock held, by the name `adsync unlock` takes',
    });
  }
  // A target's lock (catalog:<id>, ...) is held by a run of some job: the history names it.
  const what = isTargetLockKey(key) ? describeTarget(key) : `job ${key}`;
  const missing = missingStateDatabase(ctx);
  if (missing !== undefined) {
    ctx.io.stderr(`${what} is not locked: ${missing}\n`);
    return;
  }
  const store = openStore(ctx);
  try {
    const lock = await store.locks.get(key);
    if (!lock) {
      ctx.io.stderr(`${what} is not locked\n`);
      return;
    }
    const since = new Date(lock.acquiredAt).toISOString();
    const heartbeat = new Date(lock.heartbeatAt).toISOString();
    const run = isTargetLockKey(key) ? `${await targetHolderRun(store, lock)}, ` : '';
    const job = isTargetLockKey(key) ? undefined : key;
    const holder = inspectLockOwner(lock.owner);
    if (holder.where === 'this-host' && holder.alive && !force) {
      throw new LockedError(
        `${what} is locked by a run that is still alive: process ${holder.pid} on this host (${run}${lockHeldSince(lock)}); the lock was not removed`,
        {
          hint: isSchedulerProcess(holder.pid)
            ? `process ${holder.pid} is \`adsync schedule\`: let the run end (\`adsync runs${job === undefined ? '' : ` --job ${job}`}\`); stopping the scheduler (\`kill ${holder.pid}\`) stops every job it runs, and it then exits 0, so systemd's Restart=on-failure does not start it again`
            : `stop that run first (\`kill ${holder.pid}\`: it finishes the requests in flight, commits them and releases the lock), or let it end; if process ${holder.pid} is not adsync (its pid was reused), \`adsync unlock --force ${key}\` removes the lock`,
        },
      );
    }
    await store.locks.forceRelease(key);
    // The job's run held its target's lock too (target-lock.ts): the same run's goes with it.
    const targets = job === undefined ? [] : await targetLocksOfRun(store, job, lock.owner);
    for (const target of targets) await store.locks.release(target.job, target.owner);
    const also = targets.map((t) => `, and the lock of ${describeTarget(t.job)} that the same run held`).join('');
    const removed = `removed the lock of ${what} (${run}held by ${lock.owner} since ${since}, last heartbeat ${heartbeat})${also}`;
    if (holder.where === 'this-host') {
      ctx.io.stderr(
        holder.alive
          ? `${removed}: --force, although process ${holder.pid} on this host is alive; if it is a run of the job, it stops at its next heartbeat\n`
          : `${removed}: its process ${holder.pid} on this host is gone\n`,
      );
    } else {
      const where = holder.host !== '' && holder.host !== hostname() ? `is on another host (${holder.host})` : 'names no process of this host';
      ctx.io.stderr(
        `${removed}: its holder ${where}, so adsync cannot check whether that run is still alive; if it is, it stops at its next heartbeat (lock.heartbeat_seconds)\n`,
      );
    }
  } finally {
    await store.close();
  }
}
