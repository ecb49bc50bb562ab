/**
 * Where a backfill starts: from the beginning, or from the checkpoint a killed or stopped
 * backfill of the same file left. A checkpoint names its file by path, size and
 * modification time, so a changed file is never resumed by mistake; and it records the job's
 * target and mapping, so a job file edited since is not resumed either (the rows below the
 * checkpoint were sent with the earlier settings: another audience, another column).
 */
import { statSync, type Stats } from 'node:fs';
import { ConfigError } from '../errors.js';
import { displayUrlText } from '../sources/display-url.js';
import { SourceChangedError } from '../sources/file-version.js';
import type { Checkpoint } from '../state/store.js';
import type { Job } from './job.js';
import type { RunContext } from './run-context.js';

/** The local file a backfill reads, as it is now: a URL or a missing file is a ConfigError. */
function statOf(path: string): Stats {
  if (/^https?:\/\//i.test(path)) {
    throw new ConfigError(`backfill reads a local file, not ${displayUrlText(path)}`, { hint: 'download the file first, then run `adsync backfill <job> --source <file>`' });
  }
  try {
    return statSync(path);
  } catch {
    throw new ConfigError(`backfill source ${path} does not exist`);
  }
}

const keyOf = (path: string, st: Stats): string => `${path}|${st.size}|${Math.round(st.mtimeMs)}`;

/** An object's entries in key order: the same mapping written in another order is the same. */
function sorted(record: Readonly<Record<string, string | undefined>>): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * What a backfill of `job` sends and where, by the job file's names: the target, and every
 * setting that decides what a row becomes (how the file is read, the mapping). Guards,
 * retries and the like are not in it: they may change between a killed run and its resume.
 */
export function uploadSettingsOf(job: Job): Record<string, unknown> {
  const source = { 'source.format': job.source.format, 'source.delimiter': job.source.delimiter, 'source.encoding': job.source.encoding };
  if (job.kind === 'catalog') {
    return { account_id: job.accountId, 'catalog.product_catalog_id': job.catalog.catalogId, 'catalog.fields': sorted(job.catalog.fields), ...source };
  }
  const target = job.kind === 'custom_audience' ? { 'audience.custom_audience_id': job.customAudienceId } : { 'audience.do_not_reach_list_id': job.doNotReachListId };
  const a = job.audience;
  return {
    account_id: job.accountId,
    ...target,
    'audience.mode': a.mode,
    'audience.identifiers': sorted(a.identifiers),
    'audience.country_column': a.countryColumn,
    'audience.default_country': a.defaultCountry,
    ...source,
  };
}

const shown = (value: unknown): string => (value === undefined ? '(not set)' : JSON.stringify(value));

/** The settings of `now` that differ from `before` (JSON of uploadSettingsOf), as `key: was X, now Y`. */
function changedSettings(before: string, now: Record<string, unknown>): string[] {
  const was = JSON.parse(before) as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(was), ...Object.keys(now)])];
  return keys.filter((k) => shown(was[k]) !== shown(now[k])).map((k) => `${k} was ${shown(was[k])}, now ${shown(now[k])}`);
}

export interface BackfillStart<S> {
  /** The first row to send is `startRow + 1`. */
  startRow: number;
  /** What `open` gave. */
  source: S;
  checkpoint: (rowsDone: number) => Promise<void>;
  /**
   * Ends the backfill. Complete: its checkpoint is cleared. Else a checkpoint at `rowsDone`
   * and a note to run the same command again. `unit`: what a row is (rows, items).
   */
  finish: (complete: boolean, rowsDone: number, unit: string) => Promise<void>;
  /**
   * The read and upload, `work`: when the file changes while it is read (an export still being
   * written), the read fails (src/sources/file-version.ts) and the checkpoint is cleared: the
   * rows acknowledged were read from a version that is not the one to finish, and the same
   * command, once the file is complete, uploads it from the start.
   */
  reading: <T>(work: Promise<T>) => Promise<T>;
}

/**
 * Settles where the backfill starts, then opens its source with `open` (which reads and checks
 * the header) and saves a checkpoint at the start position. A source that cannot be opened
 * (a header without the mapped columns) leaves no checkpoint behind: nothing was read, and the
 * fixed file is not an "earlier version" of an unfinished backfill.
 */
export async function backfillStart<S>(ctx: RunContext, open: () => Promise<S>): Promise<BackfillStart<S>> {
  const { job, store, options } = ctx;
  const sourceKey = keyOf(job.source.path, statOf(job.source.path));
  const settings = uploadSettingsOf(job);
  const upload = JSON.stringify(settings);
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
    // Resuming from row 1 skips nothing (a first request refused: a mistyped audience id).
    // A checkpoint of an adsync before schema 4 does not say: resumed as it always was.
    const changed = existing.upload === undefined || existing.rowsDone === 0 ? [] : changedSettings(existing.upload, settings);
    if (changed.length > 0) {
      throw new ConfigError(`job ${job.name} has an unfinished backfill of ${job.source.path} (${existing.rowsDone} rows done) sent with other settings than ${job.file} now has: ${changed.join('; ')}`, {
        hint: `resuming would leave rows 1-${existing.rowsDone} as the earlier settings sent them: put the job file back to finish that backfill, or add --restart to upload the whole file with these settings`,
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
    const c: Checkpoint = { job: job.name, sourceKey, rowsDone, updatedAt: Date.now(), counts: {}, upload };
    await store.checkpoints.save(c);
  };
  const finish = async (complete: boolean, rowsDone: number, unit: string): Promise<void> => {
    if (!complete) {
      await checkpoint(rowsDone);
      const done = rowsDone === 0 ? `no ${unit === 'items' ? 'item' : 'row'} acknowledged` : `${unit} 1-${rowsDone} acknowledged`;
      ctx.notes.push(`stopped with ${done}: run the same command again to resume`);
      return;
    }
    await store.checkpoints.clear(job.name);
    ctx.logger.info({ rows: rowsDone }, 'backfill complete');
  };
  const reading = async <T>(work: Promise<T>): Promise<T> => {
    try {
      return await work;
    } catch (error) {
      if (!(error instanceof SourceChangedError)) throw error;
      await store.checkpoints.clear(job.name);
      throw new SourceChangedError(error.message, { cause: error, hint: 'it is still being written, or was rewritten. Run the same command once the file is complete: it uploads it from the start' });
    }
  };
  const source = await open();
  await checkpoint(startRow);
  return { startRow, source, checkpoint, finish, reading };
}
