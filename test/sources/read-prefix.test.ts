/**
 * ReadPrefix: a second read passes through unchanged when it starts with the bytes the first
 * read consumed, however both are chunked, and throws a SourceError naming the source when
 * it does not (one byte changed, or the source is shorter).
 */
import { describe, expect, it } from 'vitest';
import { SourceError } from '../../src/errors.js';
import { ReadPrefix } from '../../src/sources/read-prefix.js';

async function* chunks(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

async function drain(stream: AsyncIterable<Buffer>, limit = Infinity): Promise<Buffer> {
  const out: Buffer[] = [];
  let n = 0;
  for await (const chunk of stream) {
    out.push(chunk);
    n += chunk.length;
    if (n >= limit) break;
  }
  return Buffer.concat(out);
}

const feed = Buffer.from(Array.from({ length: 5000 }, (_, i) => `<item>${i}</item>`).join('\n'));

describe('ReadPrefix', () => {
  it('passes a second read through when it begins with what the first read took, in any chunking', async () => {
    for (const [first, second] of [
      [7, 4096],
      [4096, 7],
      [1000, 1000],
    ] as const) {
      const prefix = new ReadPrefix();
      const taken = await drain(prefix.record(chunks(feed, first)), 30_000);
      expect(taken.length).toBeGreaterThanOrEqual(30_000);
      expect(await drain(prefix.verify(chunks(feed, second), 'feed.xml'))).toEqual(feed);
      // The same with more bytes appended after the prefix.
      const longer = Buffer.concat([feed, Buffer.from('\n<item>new</item>')]);
      expect(await drain(prefix.verify(chunks(longer, second), 'feed.xml'))).toEqual(longer);
    }
  });

  it('throws naming the source when a byte of the prefix differs or the source is shorter', async () => {
    const prefix = new ReadPrefix();
    const taken = await drain(prefix.record(chunks(feed, 1024)), 30_000);
    const flipped = Buffer.from(feed);
    flipped[taken.length - 1] = (flipped[taken.length - 1] ?? 0) ^ 1;
    for (const other of [flipped, feed.subarray(0, taken.length - 1)]) {
      const read = drain(prefix.verify(chunks(other, 500), 'shop/feed.xml'));
      await expect(read).rejects.toThrow(SourceError);
      await expect(drain(prefix.verify(chunks(other, 500), 'shop/feed.xml'))).rejects.toThrow(/^shop\/feed\.xml changed while adsync was reading it/);
    }
    // A byte after the prefix may differ: it was never read the first time.
    const after = Buffer.from(feed);
    after[taken.length] = (after[taken.length] ?? 0) ^ 1;
    expect(await drain(prefix.verify(chunks(after, 500), 'shop/feed.xml'))).toEqual(after);
  });
});
