/**
 * Where a backfill starts: from the beginning, or from the checkpoint a killed or stopped
 * backfill of the same file left. A checkpoint names its file by path, size and
 * modification time, so a changed file is never resumed by mistake.
 */
import { statSync } from 'node:fs';
import { ConfigError } from '../errors.js';
import { displayUrlText } from '../sources/display-url.js';
import type { Checkpoint } from '../state/store.js';
import type { RunContext } from './run-context.js';

export function sourceKeyOf(path: string): string {
  if (/^https?:\/\//i.test(path)) {
    throw new ConfigError(`backfill reads a local file, not ${displayUrlText(path)}`, { hint: 'download the file first, then run `adsync backfill <job> --source <file>`' });
  }
  let size: number;
  let mtime: number;
  try {
    const st = statSync(path);
    size = st.size;
    mtime = Math.round(st.mtimeMs);
  } catch {
    throw new ConfigError(`backfill source ${path} does not exist`);
  }
  return `${path}|${size}|${mtime}`;
}

export interface BackfillStart<S> {
  /** The first row to send is `startRow + 1`. */
  startRow: number;
  /** What `open` gave. */
  source: S;
  checkpoint: (rowsDone: number) => Promise<void>;
}

/**
 * Settles where the backfill starts, then opens its source with `open` (which reads and checks
 * the header) and saves a checkpoint at the start position. A source that cannot be opened
 * (a header without the mapped columns) leaves no checkpoint behind: nothing was read, and the
 * fixed file is not an "earlier version" of an unfinished backfill.
 */
export async function backfillStart<S>(ctx: RunContext, open: () => Promise<S>): Promise<BackfillStart<S>> {
  const { job, store, options } = ctx;
  const sourceKey = sourceKeyOf(job.source.path);
  let startRow = 0;
  const existing = await store.checkpoints.get(job.name);
  if (existing && !options.restart) {
    if (existing.sourceKey !== sourceKey) {
      // The key is path|size|mtime; the path itself may hold a '|'.
      const path = existing.sourceKey.split('|').slice(0, -2).join('|');
      if (path === job.source.path) {
        throw new ConfigError(`job ${job.name} has an unfinished backfill of an earlier version of ${path} (${existing.rowsDone} rows done); the file has changed since (size or modification time)`, {
          hint: 'the earlier version cannot be resumed: add --restart to upload this one from the start',
        });
      }
      throw new ConfigError(`job ${job.name} has an unfinished backfill of ${path} (${existing.rowsDone} rows done)`, {
        hint: 'run the same command with that file to finish it, or add --restart to start this one over',
      });
    }
    startRow = existing.rowsDone;
    ctx.summary.resumed_from_row = startRow;
    const done = startRow === 0 ? 'no row was acknowledged by an earlier run' : `rows 1-${startRow} were acknowledged by an earlier run`;
    ctx.logger.info({ rowsDone: startRow }, `resuming the backfill from row ${startRow + 1}: ${done}`);
    ctx.notes.push(`resumed from row ${startRow + 1} (${done})`);
  } else if (existing) {
    ctx.logger.info({ rowsDone: existing.rowsDone }, 'starting the backfill over (--restart)');
  }
  const checkpoint = async (rowsDone: number): Promise<void> => {
    // The rows up to the checkpoint are never read again: their rejects must be in the
    // rejects file (not in its buffer) before a kill can lose the process.
    ctx.rejects.flush();
    const c: Checkpoint = { job: job.name, sourceKey, rowsDone, updatedAt: Date.now(), counts: {} };
    await store.checkpoints.save(c);
  };
  const source = await open();
  await checkpoint(startRow);
  return { startRow, source, checkpoint };
}
