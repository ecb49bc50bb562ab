/**
 * Bytes [start, end) of a file already open as `fd`, read positionally in chunks. Several
 * readers (other threads too) may share the descriptor, and none of them closes it: its opener
 * does, once every reader is done. (fs.createReadStream({ fd, autoClose: false }) still closes
 * the descriptor when the stream is destroyed, a stop request while reading, and the opener's
 * close then failed with EBADF, or would close whatever file had been given that number since.)
 */
import { read } from 'node:fs';
import { Readable } from 'node:stream';

function readAt(fd: number, buffer: Buffer, position: number): Promise<number> {
  return new Promise((resolve, reject) => {
    read(fd, buffer, 0, buffer.length, position, (error, bytesRead) => (error ? reject(error) : resolve(bytesRead)));
  });
}

/** A byte range of an open file as a stream; `bytesRead` counts what it has read so far. */
export class FileRange {
  bytesRead = 0;

  constructor(
    private readonly fd: number,
    private readonly start: number,
    private readonly end: number,
    private readonly chunkBytes: number,
  ) {}

  /** The chunks, in order; fewer bytes than the range when the file is shorter by now. */
  async *chunks(): AsyncGenerator<Buffer> {
    for (let position = this.start + this.bytesRead; position < this.end; ) {
      const buffer = Buffer.allocUnsafe(Math.min(this.chunkBytes, this.end - position));
      const n = await readAt(this.fd, buffer, position);
      if (n === 0) return;
      this.bytesRead += n;
      position += n;
      yield n === buffer.length ? buffer : buffer.subarray(0, n);
    }
  }

  stream(): Readable {
    return Readable.from(this.chunks(), { objectMode: false });
  }
}
