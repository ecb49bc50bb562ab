/**
 * One run per job at a time, across processes and machines sharing the state database: a
 * lock row with an owner and an expiry that the holder's heartbeat keeps pushing forward.
 * A holder that crashed stops heartbeating, so its lock expires instead of blocking forever.
 */
import type { JobLocks, LockInfo } from '../store.js';
import { writeState, type Db } from './database.js';

interface LockRow {
  job: string;
  owner: string;
  acquired_at: number;
  heartbeat_at: number;
  expires_at: number;
}

function toInfo(r: LockRow): LockInfo {
  return { job: r.job, owner: r.owner, acquiredAt: r.acquired_at, heartbeatAt: r.heartbeat_at, expiresAt: r.expires_at };
}

export class SqliteJobLocks implements JobLocks {
  constructor(private readonly db: Db) {}

  acquire(job: string, owner: string, ttlMs: number, now: number): Promise<{ acquired: true } | { acquired: false; holder: LockInfo }> {
    return writeState(this.db, () =>
      this.db
        .transaction((): { acquired: true } | { acquired: false; holder: LockInfo } => {
          const row = this.db.prepare('SELECT * FROM locks WHERE job = ?').get(job) as LockRow | undefined;
          if (row && row.owner !== owner && row.expires_at > now) return { acquired: false, holder: toInfo(row) };
          this.db
            .prepare('INSERT OR REPLACE INTO locks (job, owner, acquired_at, heartbeat_at, expires_at) VALUES (?, ?, ?, ?, ?)')
            .run(job, owner, now, now, now + ttlMs);
          return { acquired: true };
        })
        .immediate(),
    );
  }

  heartbeat(job: string, owner: string, ttlMs: number, now: number): Promise<boolean> {
    return writeState(this.db, () => this.db.prepare('UPDATE locks SET heartbeat_at = ?, expires_at = ? WHERE job = ? AND owner = ?').run(now, now + ttlMs, job, owner).changes === 1);
  }

  release(job: string, owner: string): Promise<void> {
    return writeState(this.db, () => {
      this.db.prepare('DELETE FROM locks WHERE job = ? AND owner = ?').run(job, owner);
    });
  }

  get(job: string): Promise<LockInfo | undefined> {
    const row = this.db.prepare('SELECT * FROM locks WHERE job = ?').get(job) as LockRow | undefined;
    return Promise.resolve(row ? toInfo(row) : undefined);
  }

  list(ownerPrefix = ''): Promise<LockInfo[]> {
    const rows = this.db.prepare('SELECT * FROM locks WHERE substr(owner, 1, ?) = ? ORDER BY job').all(ownerPrefix.length, ownerPrefix) as LockRow[];
    return Promise.resolve(rows.map(toInfo));
  }

  forceRelease(job: string): Promise<boolean> {
    return writeState(this.db, () => this.db.prepare('DELETE FROM locks WHERE job = ?').run(job).changes === 1);
  }
}
