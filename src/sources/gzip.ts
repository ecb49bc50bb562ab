/**
 * Gzip: told by the magic bytes 1f 8b (whatever the extension says), undone as a stream.
 */
import { pipeline, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';

const GUNZIP_CHUNK_BYTES = 64 * 1024;

export function startsWithGzipMagic(head: Buffer | undefined): boolean {
  return head !== undefined && head[0] === 0x1f && head[1] === 0x8b;
}

/**
 * The decompressed bytes of `compressed`. Errors of either stream (a truncated file gives
 * Z_BUF_ERROR) surface on the returned stream; destroying it destroys `compressed` too.
 */
export function gunzip(compressed: Readable): Readable {
  return pipeline(compressed, createGunzip({ chunkSize: GUNZIP_CHUNK_BYTES }), () => undefined);
}
