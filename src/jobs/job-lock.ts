/**
 * Taking a job's lock. A lock whose owner is a process on this machine that no longer
 * exists (killed, crashed) is taken over at once instead of waiting for it to expire;
 * a lock held from another machine can only expire (lock.ttl_seconds) or be removed
 * with `adsync unlock`.
 */
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { LockInfo, StateStore } from '../state/store.js';

/** Owner ids are "<host>:<pid>:<random>" (see src/cli/job-session.ts lockOwner). */
export function ownerIsDeadLocalProcess(owner: string): boolean {
  const [host, pidText] = owner.split(':');
  if (host !== hostname()) return false;
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

export async function acquireJobLock(
  store: StateStore,
  job: string,
  owner: string,
  ttlMs: number,
  logger: Logger,
): Promise<{ acquired: true } | { acquired: false; holder: LockInfo }> {
  const now = Date.now();
  const first = await store.locks.acquire(job, owner, ttlMs, now);
  if (first.acquired || !ownerIsDeadLocalProcess(first.holder.owner)) return first;
  logger.warn({ deadOwner: first.holder.owner }, 'the process holding this job lock is gone (killed or crashed): taking the lock over');
  await store.locks.release(job, first.holder.owner);
  return store.locks.acquire(job, owner, ttlMs, Date.now());
}
