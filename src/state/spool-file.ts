/**
 * An append-only temporary file, read back by (offset, length): the payloads (product JSON) of
 * a catalog scan, and the sorted runs and plan of an audience scan. Appends are buffered (one
 * write per megabyte). The file is removed as soon as it is opened (on systems that allow
 * it), so nothing is left behind by a process that dies. It lives in the system's temporary
 * folder (`TMPDIR`).
 *
 * Catalog payloads are ~1 KB each; in a SQLite B-tree, 200,000 of them cost page splits,
 * overflow and page-sized writes, where here they cost one write per megabyte and, on a first
 * run, one read per page of the plan.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StateError } from '../errors.js';

const WRITE_BUFFER_BYTES = 1024 * 1024;

/** Reads written bytes of a spool file back: the file itself, or its descriptor in another thread (SpoolDescriptorReader). */
export interface SpoolReader {
  /** Reads [offset, offset + length) of the file into `target` at `targetOffset`. */
  readInto(target: Buffer, targetOffset: number, offset: number, length: number): void;
}

/**
 * A spool file read through its descriptor, by another thread of this process (the state's
 * commit thread reads a plan's additions this way). The descriptor belongs to the SpoolFile:
 * its owner must not close it while this reads, and must have flushed what this reads.
 */
export class SpoolDescriptorReader implements SpoolReader {
  constructor(private readonly fd: number) {}

  readInto(target: Buffer, targetOffset: number, offset: number, length: number): void {
    readFully(this.fd, target, targetOffset, offset, length);
  }
}

function readFully(fd: number, target: Buffer, targetOffset: number, offset: number, length: number): void {
  let done = 0;
  while (done < length) {
    const n = readSync(fd, target, targetOffset + done, length - done, offset + done);
    if (n === 0) throw new Error(`spool file: ${length - done} bytes missing at ${offset + done}`);
    done += n;
  }
}

export class SpoolFile implements SpoolReader {
  private readonly fd: number;
  private readonly dir: string;
  /** Set when the file could not be removed while open (removed on close). */
  private readonly pathToRemove: string | undefined;
  private readonly buffer = Buffer.allocUnsafe(WRITE_BUFFER_BYTES);
  private used = 0;
  /** Bytes in the file. */
  private written = 0;
  private closed = false;

  /** `purpose` names the file while it exists (e.g. "payloads": adsync-payloads-<pid>-<random>). */
  constructor(purpose: string, dir = tmpdir()) {
    const path = join(dir, `adsync-${purpose}-${process.pid}-${randomBytes(6).toString('hex')}`);
    this.dir = dir;
    try {
      this.fd = openSync(path, 'wx+', 0o600);
    } catch (error) {
      throw this.failure('cannot create a temporary file', error);
    }
    let pending: string | undefined;
    try {
      unlinkSync(path);
    } catch {
      pending = path;
    }
    this.pathToRemove = pending;
  }

  /** Appends one payload (text, or its UTF-8 bytes); returns its offset, and its length in bytes is `lastLength`. */
  append(payload: string | Buffer): number {
    if (typeof payload !== 'string') return this.appendBytes(payload);
    const text = payload;
    const worst = text.length * 3;
    if (this.used + worst > this.buffer.length) this.flush();
    if (worst > this.buffer.length) {
      return this.appendBytes(Buffer.from(text, 'utf8'));
    }
    const at = this.written + this.used;
    const n = this.buffer.write(text, this.used, 'utf8');
    this.used += n;
    this.lastLength = n;
    return at;
  }

  /** Bytes of the payload last appended. */
  lastLength = 0;

  private appendBytes(bytes: Buffer): number {
    if (this.used + bytes.length > this.buffer.length) this.flush();
    this.lastLength = bytes.length;
    if (bytes.length > this.buffer.length) {
      const at = this.written;
      this.writeAll(bytes, bytes.length);
      return at;
    }
    const at = this.written + this.used;
    this.used += bytes.copy(this.buffer, this.used);
    return at;
  }

  /** Bytes appended so far: the offset the next append gets. */
  get size(): number {
    return this.written + this.used;
  }

  /** Reads [offset, offset + length) of the file. */
  read(offset: number, length: number): Buffer {
    const out = Buffer.allocUnsafe(length);
    this.readInto(out, 0, offset, length);
    return out;
  }

  /** Reads [offset, offset + length) of the file into `target` at `targetOffset`. */
  readInto(target: Buffer, targetOffset: number, offset: number, length: number): void {
    if (offset + length > this.written) this.flush();
    readFully(this.fd, target, targetOffset, offset, length);
  }

  /** The open file's descriptor, for a SpoolDescriptorReader in another thread (flush() first). */
  get descriptor(): number {
    return this.fd;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
    if (this.pathToRemove !== undefined) rmSync(this.pathToRemove, { force: true });
  }

  /**
   * Writes what is buffered. Called once a plan is written: a full disk must fail the run then,
   * before anything is sent, not when the plan's last megabyte is read back in the middle of
   * the upload.
   */
  flush(): void {
    if (this.used === 0) return;
    this.writeAll(this.buffer, this.used);
    this.used = 0;
  }

  /** Writes bytes[0, length) at the end of the file. */
  private writeAll(bytes: Buffer, length: number): void {
    let done = 0;
    try {
      while (done < length) done += writeSync(this.fd, bytes, done, length - done, this.written + done);
    } catch (error) {
      throw this.failure('cannot write a temporary file', error);
    }
    this.written += length;
  }

  private failure(what: string, error: unknown): StateError {
    return temporaryFolderFailure(what, this.dir, error);
  }
}

/**
 * A full or unwritable temporary folder is the operator's to fix, not a bug: say where and what
 * to do. Also for SQLite's temporary tables (a catalog scan's), which it keeps there too.
 */
export function temporaryFolderFailure(what: string, dir: string, error: unknown): StateError {
  return new StateError(`${what} in ${dir}: ${(error as Error).message}`, {
    cause: error,
    hint: 'adsync keeps large temporary files there (an audience run ~120 bytes per identifier, a catalog run ~1 KB per product); set TMPDIR to a writable folder with room',
  });
}
