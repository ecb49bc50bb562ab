/**
 * Which version of a local file a read took: its size and modification time when it was
 * opened, checked again (on the open file) once the read is done. A CRM export or a feed that
 * its exporter is still writing (or rewrites in place) while adsync reads it would otherwise
 * read as complete: its first rows only, and a mirror would remove or delete the rest. A file
 * replaced by a rename is not a change: the open file is still the one read to its end.
 */
import type { Stats } from 'node:fs';
import { SourceError } from '../errors.js';

/** A local file that changed while it was read: what was read may not be the whole of any version. */
export class SourceChangedError extends SourceError {}

export interface FileVersion {
  size: number;
  mtimeMs: number;
}

export function fileVersionOf(stats: Pick<Stats, 'size' | 'mtimeMs'>): FileVersion {
  return { size: stats.size, mtimeMs: stats.mtimeMs };
}

/**
 * The SourceError for `name` read as `opened` when `now` (the same open file after the read)
 * or the `bytesRead` in all say it changed meanwhile; undefined when it did not.
 */
export function changedWhileRead(name: string, opened: FileVersion, now: FileVersion, bytesRead: number): SourceChangedError | undefined {
  let what: string;
  if (bytesRead !== opened.size || now.size !== opened.size) what = `it had ${opened.size} bytes when opened; ${bytesRead} were read and it has ${now.size} now`;
  else if (now.mtimeMs !== opened.mtimeMs) what = 'its modification time changed';
  else return undefined;
  return new SourceChangedError(`${name} changed while adsync was reading it (${what})`, {
    hint: 'it is still being written, or was rewritten: nothing was removed or deleted. Have the exporter write to a temporary name and rename it when done, or schedule the run after the export; then run again',
  });
}
