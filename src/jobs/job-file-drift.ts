/**
 * Whether a scheduled job's file still is the one the scheduler loaded. The scheduler reads job
 * files at start and at SIGHUP only: a file edited or removed without a reload goes on running
 * as it was loaded, and without a word an operator takes the edit for applied. Told once per
 * change: a tick every second does not repeat it. The file's bytes are compared, not its
 * modification time: a file written again as it was (a deploy, `touch`) is no change.
 */
import { readFileSync } from 'node:fs';

/** What a job file is now, against the version loaded. */
export type JobFileDrift = 'changed' | 'gone' | undefined;

/** The bytes of a job file (through a link: its target's), or undefined when it cannot be read. */
export function jobFileBytes(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

export class JobFileWatch {
  /** The drift last told: `gone`, or the bytes the file was seen changed to. */
  private told: Buffer | 'gone' | undefined;

  /** `loaded`: the file's bytes read before the job was loaded (an edit racing the load is told, never missed). */
  constructor(
    readonly file: string,
    private readonly loaded: Buffer | undefined,
  ) {}

  /** The file's drift since it was loaded, when it is new (not told before); undefined otherwise. */
  check(): JobFileDrift {
    const now = jobFileBytes(this.file);
    if (now !== undefined && this.loaded !== undefined && now.equals(this.loaded)) {
      this.told = undefined;
      return undefined;
    }
    if (now === undefined) {
      if (this.told === 'gone') return undefined;
      this.told = 'gone';
      return 'gone';
    }
    if (this.told instanceof Buffer && now.equals(this.told)) return undefined;
    this.told = now;
    return 'changed';
  }
}
