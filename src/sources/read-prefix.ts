/**
 * Proof that a second read of a source starts with exactly the bytes a first read consumed.
 *
 * The fast catalog reader (src/jobs/catalog-feed-scan.ts) reads a feed a second time from the
 * start when it is in doubt, and keeps from that read only the items after the last one it
 * already used. If the file (or the URL's answer) changed in between, the run would mix two
 * versions of the feed: a product that moved from the end to the beginning would be in
 * neither part, and a mirror would delete it. So the first read's bytes are counted and hashed
 * as they go by (SHA-256, ~0.5 ms per MB), and the second read throws a SourceError once its
 * first as-many bytes are known to differ (or it ends before them). The reader may have taken
 * items from those bytes by then; nothing is sent before the whole feed is read, so the run
 * fails without sending or deleting anything.
 */
import { createHash, type Hash } from 'node:crypto';
import { SourceError } from '../errors.js';
import { asBuffer } from './byte-source.js';

type Chunks = AsyncIterable<Buffer | Uint8Array | string>;

export class ReadPrefix {
  private readonly hash: Hash = createHash('sha256');
  private bytes = 0;

  /** The stream, with every chunk counted and hashed as the reader takes it. */
  async *record(stream: Chunks): AsyncGenerator<Buffer> {
    for await (const chunk of stream) {
      const buffer = asBuffer(chunk);
      this.hash.update(buffer);
      this.bytes += buffer.length;
      yield buffer;
    }
  }

  /**
   * A second read of the source (`name` for the message), passed through; it throws when its
   * first bytes are not the recorded ones. Call after the first read has stopped taking chunks.
   */
  async *verify(stream: Chunks, name: string): AsyncGenerator<Buffer> {
    const expected = this.hash.copy().digest();
    const length = this.bytes;
    const again = createHash('sha256');
    let seen = 0;
    const changed = (): SourceError =>
      new SourceError(`${name} changed while adsync was reading it (its first ${length} bytes differ on the second read)`, {
        hint: 'nothing was sent or deleted: run again once the feed is written completely (write to a temporary name, then rename)',
      });
    for await (const chunk of stream) {
      const buffer = asBuffer(chunk);
      if (seen < length) {
        const part = Math.min(buffer.length, length - seen);
        again.update(part === buffer.length ? buffer : buffer.subarray(0, part));
        seen += part;
        if (seen === length && !again.digest().equals(expected)) throw changed();
      }
      yield buffer;
    }
    if (seen < length) throw changed();
  }
}
