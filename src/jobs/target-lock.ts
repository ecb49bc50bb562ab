/**
 * One writer per target: jobs that write to the same catalog, custom audience or do-not-reach
 * list take turns. X gives a user one catalog, so the feeds of several shops share it; an add
 * job and a remove job may share an audience. Their state is the target's (keyed as below,
 * not by job): two runs at once would each take the other's upload under way for an
 * interrupted one (a catalog), or commit answers in another order than the service applied
 * them, so that the state lists a member the service no longer holds (an audience).
 *
 * The lock is a row of the locks table keyed by the target (`catalog:<id>`,
 * `custom_audience:<account>:<id>`, `do_not_reach:<account>:<id>`: job names never hold a
 * colon, so no job's lock has such a key), held by one run: its owner is the process's lock
 * owner and the run id, so two runs of one scheduler are told apart and `adsync unlock` can
 * name the holder's job from the run history. A run that finds it held waits (a second cron
 * line on the same schedule should run after the first, not fail every time); a holder that
 * died on this machine is taken over at once, one elsewhere once its lock expires.
 */
import type { Logger } from 'pino';
import type { LockInfo, StateStore } from '../state/store.js';
import { acquireLock, lockHeldSince, ownerIsDeadLocalProcess, ownerIsLiveLocalAdsync } from './job-lock.js';
import { audienceKey, type Job } from './job.js';

/** The key of the job's target in the locks table (the key its state is kept under). */
export function targetLockKey(job: Job): string {
  return job.kind === 'catalog' ? `catalog:${job.catalog.catalogId}` : audienceKey(job);
}

/** Whether a key of the locks table is a target's (else it is a job's). */
export function isTargetLockKey(key: string): boolean {
  return key.includes(':');
}

/** Whether a key with a colon has a target's shape (targetLockKey's; an id may hold a colon): else it names no lock. */
export function isWellFormedTargetKey(key: string): boolean {
  return /^catalog:./.test(key) || /^(?:custom_audience|do_not_reach):[^:]+:./.test(key);
}

/** A target lock's key in words: `catalog 123`, `custom audience 1nmth of account 18ce54d4x5t`. */
export function describeTarget(key: string): string {
  const [kind = '', first = '', second] = key.split(':');
  if (kind === 'catalog') return `catalog ${first}`;
  const what = kind === 'do_not_reach' ? 'do-not-reach list' : 'custom audience';
  return second === undefined ? `${what} ${first}` : `${what} ${second} of account ${first}`;
}

/** The owner of a run's target lock: the process's lock owner (`host:pid:random`) and the run id. */
export function targetLockOwner(processOwner: string, runId: string): string {
  return `${processOwner}:${runId}`;
}

/** The run id of a target lock's owner (undefined for a job lock's owner). */
export function runIdOfOwner(owner: string): string | undefined {
  return owner.split(':')[3];
}

/** The run holding a target lock, in words: `job a (run R)`, from the run history. */
export async function targetHolderRun(store: StateStore, holder: LockInfo): Promise<string> {
  const runId = runIdOfOwner(holder.owner);
  const run = runId === undefined ? undefined : await store.runs.get(runId).catch(() => undefined);
  return run === undefined ? 'a run not in the run history' : `job ${run.job} (run ${run.runId})`;
}

export interface TargetWait {
  /** Milliseconds waited; 0 when the lock was free. */
  waitedMs: number;
  /** The runs waited for, in words (targetHolderRun), in turn. */
  waitedFor: string[];
}

/**
 * Whether `lock` keeps `owner` waiting at `now`: another run's, not expired (or expired, of a
 * live adsync process of this machine), and not of a dead process of this machine (acquireLock
 * takes those over). As the locks table's acquire and acquireLock decide.
 */
function heldByAnother(lock: LockInfo, owner: string, now: number): boolean {
  if (lock.owner === owner) return false;
  return lock.expiresAt > now ? !ownerIsDeadLocalProcess(lock.owner) : ownerIsLiveLocalAdsync(lock.owner);
}

/**
 * Takes the target's lock, waiting while another run holds it (polling every `pollMs`).
 * Undefined when `signal` stopped the wait (a signal, the job's lock lost): nothing was taken.
 *
 * A poll reads the lock first and writes (takes the lock) only once it looks free: a write
 * takes the state database's write lock, so a poll that wrote every time would hold up the
 * holder's commits, block this process in SQLite's busy wait (signals unanswered) while another
 * process keeps the file locked, and fail a run that only waits once that lasts over the busy
 * timeout. A read does none of that (WAL: readers never wait for the writer).
 */
export async function waitForTargetLock(input: {
  store: StateStore;
  key: string;
  owner: string;
  ttlMs: number;
  pollMs: number;
  signal: AbortSignal;
  logger: Logger;
  /** Called with each new run waited for, in words (targetHolderRun). */
  onWait?: (holder: string) => void;
}): Promise<TargetWait | undefined> {
  const { store, key, owner, ttlMs, pollMs, signal, logger } = input;
  const started = performance.now();
  const waitedFor: string[] = [];
  let lastOwner: string | undefined;
  /** The holder's last heartbeat as this run saw it, and since when (monotonic): one standing still for the ttl is stale. */
  let beat: { owner: string; at: number; seenSince: number } | undefined;
  for (;;) {
    if (signal.aborted) return undefined;
    const seen = await store.locks.get(key);
    const now = performance.now();
    if (seen !== undefined && (beat === undefined || beat.owner !== seen.owner || beat.at !== seen.heartbeatAt)) beat = { owner: seen.owner, at: seen.heartbeatAt, seenSince: now };
    // A live holder of this machine whose lock has expired (ownerIsLiveLocalAdsync) is waited
    // for while it heartbeats; one that has not for the ttl, as this run's clock counts, is not
    // (its run ended without releasing the lock, or hangs).
    const stale = beat !== undefined && now - beat.seenSince >= ttlMs;
    const lock = seen !== undefined && !stale && heldByAnother(seen, owner, Date.now())
      ? { acquired: false as const, holder: seen }
      : await acquireLock(store, key, owner, ttlMs, logger, `the lock of ${describeTarget(key)}`, stale);
    if (lock.acquired) return { waitedMs: waitedFor.length === 0 ? 0 : Math.round(performance.now() - started), waitedFor };
    if (lock.holder.owner !== lastOwner) {
      lastOwner = lock.holder.owner;
      const holder = await targetHolderRun(store, lock.holder);
      waitedFor.push(holder);
      logger.info(
        { target: describeTarget(key), holder: lock.holder.owner, expiresAt: new Date(lock.holder.expiresAt).toISOString() },
        `waiting for ${describeTarget(key)}: ${holder} is writing to it (${lockHeldSince(lock.holder)}); this run starts when that one ends (jobs on one target take turns). If that run is gone, its lock expires at ${new Date(lock.holder.expiresAt).toISOString()}, or remove it with \`adsync unlock ${key}\``,
      );
      input.onWait?.(holder);
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, pollMs);
      function done(): void {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    });
  }
}
