import type { Checkpoint, Checkpoints } from '../store.js';
import type { Db } from './database.js';

export class SqliteCheckpoints implements Checkpoints {
  constructor(private readonly db: Db) {}

  get(job: string): Promise<Checkpoint | undefined> {
    const row = this.db.prepare('SELECT * FROM checkpoints WHERE job = ?').get(job) as
      | { job: string; source_key: string; rows_done: number; updated_at: number; counts: string; upload: string | null }
      | undefined;
    return Promise.resolve(
      row
        ? {
            job: row.job,
            sourceKey: row.source_key,
            rowsDone: row.rows_done,
            updatedAt: row.updated_at,
            counts: JSON.parse(row.counts) as Record<string, number>,
            ...(row.upload === null ? {} : { upload: row.upload }),
          }
        : undefined,
    );
  }

  save(c: Checkpoint): Promise<void> {
    this.db
      .prepare('INSERT OR REPLACE INTO checkpoints (job, source_key, rows_done, updated_at, counts, upload) VALUES (?, ?, ?, ?, ?, ?)')
      .run(c.job, c.sourceKey, c.rowsDone, c.updatedAt, JSON.stringify(c.counts), c.upload ?? null);
    return Promise.resolve();
  }

  clear(job: string): Promise<void> {
    this.db.prepare('DELETE FROM checkpoints WHERE job = ?').run(job);
    return Promise.resolve();
  }
}
