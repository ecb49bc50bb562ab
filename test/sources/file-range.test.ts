import { closeSync, fstatSync, mkdtempSync, openSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileRange } from '../../src/sources/file-range.js';

const path = join(mkdtempSync(join(tmpdir(), 'adsync-range-')), 'export.csv');
writeFileSync(path, Buffer.from('0123456789'.repeat(10)));

describe('FileRange', () => {
  it('reads exactly its byte range in chunks, counting the bytes read', async () => {
    const fd = openSync(path, 'r');
    try {
      const range = new FileRange(fd, 5, 47, 8);
      const chunks: Buffer[] = [];
      for await (const chunk of range.chunks()) chunks.push(chunk);
      expect(chunks.map((c) => c.length)).toEqual([8, 8, 8, 8, 8, 2]);
      expect(Buffer.concat(chunks).toString()).toBe('0123456789'.repeat(10).slice(5, 47));
      expect(range.bytesRead).toBe(42);
    } finally {
      closeSync(fd);
    }
  });

  it('a stream destroyed half way (a stop request) leaves the descriptor open for its opener to close', async () => {
    const fd = openSync(path, 'r');
    const stream = new FileRange(fd, 0, 100, 4).stream();
    for await (const chunk of stream) {
      expect((chunk as Buffer).length).toBe(4);
      stream.destroy();
      break;
    }
    await new Promise((resolve) => setImmediate(resolve));
    expect(() => fstatSync(fd)).not.toThrow();
    expect(() => closeSync(fd)).not.toThrow();
  });

  it('ends early, short of its range, when the file is shorter than the range', async () => {
    const fd = openSync(path, 'r');
    try {
      const range = new FileRange(fd, 90, 200, 64);
      let total = 0;
      for await (const chunk of range.chunks()) total += chunk.length;
      expect(total).toBe(10);
      expect(range.bytesRead).toBe(10);
    } finally {
      closeSync(fd);
    }
  });
});
