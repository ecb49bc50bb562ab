/**
 * A local file opened for streaming: checked up front (exists, is a file, can be read), its
 * first bytes looked at for the gzip magic, then read in 64 KB chunks.
 */
import { open, type FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { SourceError } from '../errors.js';
import { startsWithGzipMagic } from './gzip.js';
import { readFailure } from './read-error.js';

export interface RawInput {
  stream: Readable;
  /** Size of the raw input in bytes, when known. */
  sizeBytes: number | undefined;
  /** Raw bytes consumed so far. */
  bytesRead(): number;
  /** The first bytes are the gzip magic. */
  gzipMagic: boolean;
}

const READ_CHUNK_BYTES = 64 * 1024;

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
    const head = Buffer.alloc(2);
    const { bytesRead: headBytes } = await handle.read(head, 0, 2, 0);
    const stream = handle.createReadStream({ start: 0, highWaterMark: READ_CHUNK_BYTES, autoClose: true });
    return {
      stream,
      sizeBytes: stats.isFile() ? stats.size : undefined,
      bytesRead: () => stream.bytesRead,
      gzipMagic: headBytes === 2 && startsWithGzipMagic(head),
    };
  } catch (error) {
    await handle.close();
    throw readFailure(error, path);
  }
}
