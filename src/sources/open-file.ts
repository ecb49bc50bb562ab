/**
 * A local file opened for streaming: checked up front (exists, is a file, can be read), its
 * first bytes looked at for the gzip magic, then read in 64 KB chunks. A regular file that
 * changes while it is read (grows, shrinks, is rewritten in place) ends the stream with a
 * SourceError (file-version.ts) instead of ending it as if the bytes read were all of it.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { pipeline, Transform, type Readable } from 'node:stream';
import { SourceError } from '../errors.js';
import { changedWhileRead, fileVersionOf, type FileVersion } from './file-version.js';
import { startsWithGzipMagic } from './gzip.js';
import { peekFirstChunk } from './open-http.js';
import { readFailure } from './read-error.js';

export interface RawInput {
  stream: Readable;
  /** Size of the raw input in bytes, when known. */
  sizeBytes: number | undefined;
  /** Raw bytes consumed so far. */
  bytesRead(): number;
  /** The first bytes are the gzip magic. */
  gzipMagic: boolean;
  /** A FIFO or a device: what is read is gone, a second open would wait for another writer. */
  readOnce?: boolean;
}

const READ_CHUNK_BYTES = 64 * 1024;
/**
 * Chunks read ahead of the reader, at most: a reader that takes several chunks in a row (a
 * catalog re-run cuts ~4 before it looks their items up) finds them read, instead of waiting
 * for each read in turn (an unchanged re-run of a 168 MB feed spent ~10% of its time idle so,
 * and is ~5% faster with them read ahead).
 */
const READ_AHEAD_BYTES = 8 * READ_CHUNK_BYTES;

/**
 * Passes the chunks on (holding up to READ_AHEAD_BYTES of them); at the end, checks on the
 * open file that it is still the version opened, all of it read. One stat per read, nothing
 * per chunk beyond passing it on.
 */
function unchangedUntilEnd(handle: FileHandle, path: string, opened: FileVersion, bytesRead: () => number): Transform {
  return new Transform({
    highWaterMark: READ_AHEAD_BYTES,
    transform(chunk: Buffer, _encoding, callback) {
      callback(null, chunk);
    },
    flush(callback) {
      handle.stat().then(
        (now) => callback(changedWhileRead(path, opened, fileVersionOf(now), bytesRead())),
        (error: unknown) => callback(readFailure(error, path)),
      );
    },
  });
}

/**
 * A FIFO (named pipe) or a device: read in order, never at a position (a positional read of
 * a pipe failed with a bare "ESPIPE: invalid seek"); the gzip magic is looked for in its first
 * chunk, which is put back. It has no size to check at the end.
 */
async function openPipe(handle: FileHandle): Promise<RawInput> {
  const file = handle.createReadStream({ highWaterMark: READ_CHUNK_BYTES, autoClose: true });
  const head = await peekFirstChunk(file);
  return { stream: file, sizeBytes: undefined, bytesRead: () => file.bytesRead, gzipMagic: startsWithGzipMagic(head), readOnce: true };
}

export async function openFile(path: string): Promise<RawInput> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    throw readFailure(error, path);
  }
  try {
    const stats = await handle.stat();
    if (stats.isDirectory()) throw new SourceError(`${path} is a directory, not a file`, { hint: 'source.path must name a file' });
    if (!stats.isFile()) return await openPipe(handle);
    const head = Buffer.alloc(2);
    const { bytesRead: headBytes } = await handle.read(head, 0, 2, 0);
    const file = handle.createReadStream({ start: 0, highWaterMark: READ_CHUNK_BYTES, autoClose: false });
    const opened = handle;
    // Closed once the check at its end is done (or the read stopped).
    const stream = pipeline(file, unchangedUntilEnd(opened, path, fileVersionOf(stats), () => file.bytesRead), () => void opened.close().catch(() => undefined));
    return {
      stream,
      sizeBytes: stats.size,
      bytesRead: () => file.bytesRead,
      gzipMagic: headBytes === 2 && startsWithGzipMagic(head),
    };
  } catch (error) {
    await handle.close().catch(() => undefined); // a pipe's stream may have closed it already
    throw readFailure(error, path);
  }
}
