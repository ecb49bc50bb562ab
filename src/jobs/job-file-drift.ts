/**
 * Whether a scheduled job's file still is the one the scheduler loaded. The scheduler reads job
 * files at start and at SIGHUP only: a file edited or removed without a reload goes on running
 * as it was loaded, and without a word an operator takes the edit for applied. Told once per
 * change: a tick every second does not repeat it.
 */
import { statSync } from 'node:fs';
import { fileVersionOf, type FileVersion } from '../sources/file-version.js';

/** What a job file is now, against the version loaded. */
export type JobFileDrift = 'changed' | 'gone' | undefined;

/** The version of the file (through a link: its target's), or undefined when it cannot be read. */
export function jobFileVersion(file: string): FileVersion | undefined {
  try {
    return fileVersionOf(statSync(file));
  } catch {
    return undefined;
  }
}

export class JobFileWatch {
  /** The drift last told, as `gone` or the version it was seen changed to. */
  private told: string | undefined;

  /** `loaded`: the file's version taken before it was read (an edit racing the read is told, never missed). */
  constructor(
    readonly file: string,
    private readonly loaded: FileVersion | undefined,
  ) {}

  /** The file's drift since it was loaded, when it is new (not told before); undefined otherwise. */
  check(): JobFileDrift {
    const now = jobFileVersion(this.file);
    const same = now !== undefined && this.loaded !== undefined && now.size === this.loaded.size && now.mtimeMs === this.loaded.mtimeMs;
    if (same) {
      this.told = undefined;
      return undefined;
    }
    const key = now === undefined ? 'gone' : `${now.size}:${now.mtimeMs}`;
    if (key === this.told) return undefined;
    this.told = key;
    return now === undefined ? 'gone' : 'changed';
  }
}
