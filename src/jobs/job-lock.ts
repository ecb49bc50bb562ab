/**
 * Taking a job's lock (or a target's: see target-lock.ts). A lock whose owner is a process on this machine that no longer
 * exists (killed, crashed) is taken over at once instead of waiting for it to expire;
 * a lock held from another machine can only expire (lock.ttl_seconds) or be removed
 * with `adsync unlock` (which, by the same check, refuses to remove a live local holder's lock).
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { LockInfo, StateStore } from '../state/store.js';

/** Who holds a lock, as far as this machine can tell. */
export type LockHolder =
  /** A process of this machine: `alive` is false when it no longer exists (killed, crashed). */
  | { where: 'this-host'; host: string; pid: number; alive: boolean }
  /** A process of another machine (or an owner id not in adsync's shape): it cannot be checked. */
  | { where: 'elsewhere'; host: string; pid: number | undefined };

/** Owner ids are "<host>:<pid>:<random>" (see src/cli/job-session.ts lockOwner), and ":<run id>" after them for a target lock (target-lock.ts). */
export function inspectLockOwner(owner: string): LockHolder {
  const [host = '', pidText] = owner.split(':');
  const pid = Number(pidText);
  const validPid = Number.isInteger(pid) && pid > 0 ? pid : undefined;
  if (host !== hostname() || validPid === undefined) return { where: 'elsewhere', host, pid: validPid };
  if (validPid === process.pid) return { where: 'this-host', host, pid: validPid, alive: true };
  try {
    process.kill(validPid, 0);
    return { where: 'this-host', host, pid: validPid, alive: true };
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return { where: 'this-host', host, pid: validPid, alive: (error as NodeJS.ErrnoException).code !== 'ESRCH' };
  }
}

/** The arguments after `adsync` (or `adsync.js`) of a process of this machine; undefined when it is not adsync, or /proc/<pid>/cmdline cannot be read. */
function adsyncArguments(pid: number): string[] | undefined {
  let args: string[];
  try {
    args = readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0');
  } catch {
    return undefined;
  }
  const cli = args.findIndex((a) => /(?:^|\/)(?:adsync|adsync\.js)$/.test(a));
  return cli >= 0 ? args.slice(cli + 1) : undefined;
}

/**
 * Whether a process of this machine is `adsync schedule` (from /proc/<pid>/cmdline; false
 * where that cannot be read): stopping it stops every job it runs, not one run.
 */
export function isSchedulerProcess(pid: number): boolean {
  return adsyncArguments(pid)?.includes('schedule') === true;
}

/** The rest of a lock's story: `lock held by host:pid:random since ..., last heartbeat ...`. */
export function lockHeldSince(holder: LockInfo): string {
  return `lock held by ${holder.owner} since ${new Date(holder.acquiredAt).toISOString()}, last heartbeat ${new Date(holder.heartbeatAt).toISOString()}`;
}

export function ownerIsDeadLocalProcess(owner: string): boolean {
  const holder = inspectLockOwner(owner);
  return holder.where === 'this-host' && !holder.alive;
}

/**
 * Whether a lock's owner is an adsync process of this machine that is running (this process
 * too, for another run of its scheduler). Its lock is not taken over when its expiry has
 * passed: expiry is for holders whose life cannot be checked (another machine). An expiry of a
 * live local holder passes when the wall clock is stepped forward (NTP, a VM resumed from a
 * pause: timers, and so heartbeats, run on the monotonic clock) between two heartbeats; taking
 * it over then made two runs write at once. A pid that another program took since (not adsync
 * by its command line), or one whose command line cannot be read, expires as before.
 */
export function ownerIsLiveLocalAdsync(owner: string): boolean {
  const holder = inspectLockOwner(owner);
  if (holder.where !== 'this-host' || !holder.alive) return false;
  return holder.pid === process.pid || adsyncArguments(holder.pid) !== undefined;
}

/** How long past its expiry the lock of a live adsync process of this machine is still its own (see acquireLock). */
export const LIVE_HOLDER_GRACE_MS = 15 * 60_000;

/**
 * Takes a lock of the locks table (a job's, or a target's: see target-lock.ts), taking over one
 * whose holder is a dead process of this machine, but not an expired one whose holder is a live
 * adsync process of this machine (ownerIsLiveLocalAdsync), for LIVE_HOLDER_GRACE_MS past its expiry, unless
 * `takeOverLive` (a waiter that saw its heartbeat stand still for the ttl). `what` names the
 * lock in the log line.
 */
export async function acquireLock(
  store: StateStore,
  key: string,
  owner: string,
  ttlMs: number,
  logger: Logger,
  what = 'this job lock',
  takeOverLive = false,
): Promise<{ acquired: true } | { acquired: false; holder: LockInfo }> {
  const now = Date.now();
  if (!takeOverLive) {
    // For LIVE_HOLDER_GRACE_MS (or the ttl, if longer) past its expiry only: a clock stepped
    // forward by less is absorbed, and a holder whose heartbeat stood still longer (it hangs, or
    // its pid now belongs to another adsync process, which would otherwise keep the lock for
    // that process's life) is taken over as any expired lock is.
    const held = await store.locks.get(key);
    const grace = Math.max(ttlMs, LIVE_HOLDER_GRACE_MS);
    if (held !== undefined && held.owner !== owner && held.expiresAt <= now && now < held.expiresAt + grace && ownerIsLiveLocalAdsync(held.owner)) {
      return { acquired: false, holder: held };
    }
  }
  const first = await store.locks.acquire(key, owner, ttlMs, now);
  if (first.acquired || !ownerIsDeadLocalProcess(first.holder.owner)) return first;
  logger.warn({ deadOwner: first.holder.owner }, `the process holding ${what} is gone (killed or crashed): taking the lock over`);
  await store.locks.release(key, first.holder.owner);
  return store.locks.acquire(key, owner, ttlMs, Date.now());
}
