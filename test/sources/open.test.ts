import { appendFile, copyFile, mkdir, readFile, rename, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { SourceError } from '../../src/errors.js';
import { readCsv } from '../../src/sources/csv.js';
import { openSource } from '../../src/sources/open.js';
import type { OpenedSource } from '../../src/sources/types.js';
import { errorOf, fixturePath, readAllCsv, withTempDir } from './helpers.js';

async function readOpened(opened: OpenedSource) {
  return readAllCsv(readCsv(opened));
}

describe('openSource on local files', () => {
  it('opens a CSV file with its format, size and progress', async () => {
    const path = fixturePath('crm-messy.csv');
    const opened = await openSource({ path });
    expect(opened.name).toBe(path);
    expect(opened.format).toBe('csv');
    expect(opened.sizeBytes).toBe((await stat(path)).size);
    expect(opened.bytesRead()).toBe(0);
    const result = await readOpened(opened);
    expect(result.rows).toHaveLength(6);
    expect(opened.bytesRead()).toBe(opened.sizeBytes);
  });

  it('gives identical rows for the gzip of the same file, counting compressed bytes', async () => {
    await withTempDir(async (dir) => {
      const plainPath = fixturePath('crm-messy.csv');
      const gzPath = join(dir, 'crm-messy.csv.gz');
      await writeFile(gzPath, gzipSync(await readFile(plainPath)));
      const plain = await readOpened(await openSource({ path: plainPath }));
      const opened = await openSource({ path: gzPath });
      expect(opened.format).toBe('csv');
      expect(opened.sizeBytes).toBe((await stat(gzPath)).size);
      expect(await readOpened(opened)).toEqual(plain);
      expect(opened.bytesRead()).toBe(opened.sizeBytes);
    });
  });

  it('tells gzip by its magic bytes, whatever the extension; reads a .gz that is not compressed as it is', async () => {
    await withTempDir(async (dir) => {
      const plainPath = fixturePath('crm-messy.csv');
      const plain = await readOpened(await openSource({ path: plainPath }));
      const hidden = join(dir, 'export.csv');
      await writeFile(hidden, gzipSync(await readFile(plainPath)));
      expect(await readOpened(await openSource({ path: hidden }))).toEqual(plain);
      const notCompressed = join(dir, 'export2.csv.gz');
      await copyFile(plainPath, notCompressed);
      expect(await readOpened(await openSource({ path: notCompressed }))).toEqual(plain);
    });
  });

  it('ends a truncated gzip with a SourceError "is cut short (unexpected end of gzip data)"', async () => {
    await withTempDir(async (dir) => {
      const rows = Array.from({ length: 20000 }, (_, i) => `user${i}@example.com,${i}`).join('\n');
      const full = gzipSync(Buffer.from(`email,n\n${rows}\n`));
      const path = join(dir, 'cut.csv.gz');
      await writeFile(path, full.subarray(0, Math.floor(full.length / 2)));
      const reader = readCsv(await openSource({ path }));
      let rowsRead = 0;
      const error = await errorOf(async () => {
        for await (const batch of reader) rowsRead += batch.rows.length;
      });
      expect(error).toBeInstanceOf(SourceError);
      expect(error.message).toMatch(new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is cut short \\(unexpected end of gzip data\\) after line \\d+$`));
      expect(rowsRead).toBeGreaterThan(0);
      expect(rowsRead).toBeLessThan(20000);
    });
  });

  it('ends damaged gzip data with a SourceError', async () => {
    await withTempDir(async (dir) => {
      const bytes = gzipSync(Buffer.from('a,b\n1,2\n'.repeat(1000)));
      bytes.fill(0x55, 20, 40);
      const path = join(dir, 'damaged.csv.gz');
      await writeFile(path, bytes);
      const error = await errorOf(async () => readOpened(await openSource({ path })));
      expect(error).toBeInstanceOf(SourceError);
      expect(error.message).toMatch(/damaged\.csv\.gz (is not valid gzip data|is cut short)/);
    });
  });

  it('says of bytes after the compressed data that they are, not that the file is bad "at the start"', async () => {
    await withTempDir(async (dir) => {
      const path = join(dir, 'appended.csv.gz');
      await writeFile(path, Buffer.concat([gzipSync(Buffer.from('a,b\n1,2\n'.repeat(1000))), Buffer.from('trailing garbage\n')]));
      const error = await errorOf(async () => readAllCsv(readCsv(await openSource({ path }))));
      expect(error).toBeInstanceOf(SourceError);
      expect(error.message).toBe(`${path} is not valid gzip data (incorrect header check): the file is damaged, or has bytes after its compressed data`);
    });
  });

  it('infers the format from the extension after .gz', async () => {
    await withTempDir(async (dir) => {
      const cases: [string, string][] = [
        ['a.csv', 'csv'],
        ['a.CSV.gz', 'csv'],
        ['a.tsv', 'tsv'],
        ['a.tab', 'tsv'],
        ['a.txt.gz', 'tsv'],
        ['a.xml', 'xml'],
        ['a.rss', 'xml'],
        ['a.atom.gz', 'xml'],
      ];
      for (const [file, format] of cases) {
        const path = join(dir, file);
        await writeFile(path, 'x');
        const opened = await openSource({ path });
        expect({ file, format: opened.format }).toEqual({ file, format });
        await readOpened(opened).catch(() => undefined);
      }
    });
  });

  it('takes spec.format, delimiter and encoding over the extension', async () => {
    await withTempDir(async (dir) => {
      const path = join(dir, 'export.dat');
      await writeFile(path, 'a;b\n1;2\n');
      const opened = await openSource({ path, format: 'csv', delimiter: ';', encoding: 'latin1' });
      expect(opened).toMatchObject({ format: 'csv', delimiter: ';', encoding: 'latin1' });
      expect((await readOpened(opened)).rows).toEqual([{ row: 1, line: 2, values: ['1', '2'] }]);
    });
  });

  it('asks for source.format when the extension says nothing', async () => {
    await withTempDir(async (dir) => {
      const path = join(dir, 'export.dat');
      await writeFile(path, 'a,b\n');
      const error = await errorOf(() => openSource({ path }));
      expect(error).toBeInstanceOf(SourceError);
      expect(error.message).toBe(`cannot tell the format of ${path}: ".dat" is not a known extension`);
      expect((error as SourceError).hint).toBe('set source.format to csv, tsv or xml in the job file');
      const bare = join(dir, 'export');
      await writeFile(bare, 'a,b\n');
      expect((await errorOf(() => openSource({ path: bare }))).message).toBe(`cannot tell the format of ${bare}: it has no extension`);
    });
  });

  it('says a missing file "does not exist" and a directory is not a file', async () => {
    await withTempDir(async (dir) => {
      const missing = join(dir, 'nope.csv');
      const error = await errorOf(() => openSource({ path: missing }));
      expect(error).toBeInstanceOf(SourceError);
      expect(error.message).toBe(`${missing} does not exist`);
      const folder = join(dir, 'folder.csv');
      await mkdir(folder);
      const dirError = await errorOf(() => openSource({ path: folder }));
      expect(dirError).toBeInstanceOf(SourceError);
      expect(dirError.message).toBe(`${folder} is a directory, not a file`);
    });
  });

  it('refuses an unknown source.format', async () => {
    const error = await errorOf(() => openSource({ path: fixturePath('crm-messy.csv'), format: 'json' as 'csv' }));
    expect(error).toBeInstanceOf(SourceError);
  });

  it('stops reading with a SourceError when the signal aborts', async () => {
    await withTempDir(async (dir) => {
      const path = join(dir, 'big.csv');
      await writeFile(path, `a,b\n${'1,2\n'.repeat(200_000)}`);
      const controller = new AbortController();
      const reader = readCsv(await openSource({ path }, { signal: controller.signal }));
      const error = await errorOf(async () => {
        for await (const batch of reader) if (batch.rows.length > 0) controller.abort();
      });
      expect(error).toBeInstanceOf(SourceError);
      expect(error.message).toMatch(/^reading .*big\.csv was aborted after line \d+$/);
    });
  });
});

describe('a file that changes while it is read', () => {
  const rowsOf = (from: number, to: number): string => Array.from({ length: to - from + 1 }, (_, i) => `user${from + i}@example.com,${from + i}\n`).join('');

  it('ends with a SourceError when the file grows while it is read (an export still being written)', async () => {
    await withTempDir(async (dir) => {
      const path = join(dir, 'growing.csv');
      await writeFile(path, `email,n\n${rowsOf(1, 20_000)}`);
      const reader = readCsv(await openSource({ path }));
      let rows = 0;
      const error = await errorOf(async () => {
        for await (const batch of reader) {
          if (rows === 0) await appendFile(path, rowsOf(20_001, 20_100));
          rows += batch.rows.length;
        }
      });
      expect(error).toBeInstanceOf(SourceError);
      expect(error.message).toMatch(new RegExp(`^${path} changed while adsync was reading it \\(it had \\d+ bytes when opened; \\d+ were read and it has \\d+ now\\)$`));
      expect((error as SourceError).hint).toMatch(/still being written/);
    });
  });

  it('ends with a SourceError when the file is written in place, its size unchanged, while it is read', async () => {
    await withTempDir(async (dir) => {
      const path = join(dir, 'rewritten.csv');
      const content = `email,n\n${rowsOf(1, 20_000)}`;
      await writeFile(path, content);
      // Written long ago: the write below changes the modification time whatever its granularity.
      await utimes(path, new Date('2020-01-01'), new Date('2020-01-01'));
      const reader = readCsv(await openSource({ path }));
      const error = await errorOf(async () => {
        let first = true;
        for await (const _batch of reader) {
          // Its first bytes overwritten in place (no truncation: only the modification time tells).
          if (first) await writeFile(path, 'x@example.com,1\n', { flag: 'r+' });
          first = false;
        }
      });
      expect(error).toBeInstanceOf(SourceError);
      expect(error.message).toBe(`${path} changed while adsync was reading it (its modification time changed)`);
    });
  });

  it('reads a file that is replaced by a rename while it is read as the file it opened', async () => {
    await withTempDir(async (dir) => {
      const path = join(dir, 'export.csv');
      await writeFile(path, `email,n\n${rowsOf(1, 20_000)}`);
      const next = join(dir, 'export.csv.tmp');
      await writeFile(next, `email,n\n${rowsOf(1, 10)}`);
      const reader = readCsv(await openSource({ path }));
      let rows = 0;
      let first = true;
      for await (const batch of reader) {
        if (first) await rename(next, path);
        first = false;
        rows += batch.rows.length;
      }
      expect(rows).toBe(20_000);
    });
  });

  it('reads a file whose modification time is in the past as usual', async () => {
    await withTempDir(async (dir) => {
      const path = join(dir, 'old.csv');
      await writeFile(path, `email,n\n${rowsOf(1, 100)}`);
      await utimes(path, new Date('2020-01-01'), new Date('2020-01-01'));
      expect((await readOpened(await openSource({ path }))).rows).toHaveLength(100);
    });
  });
});

describe('a 50 MB single line', () => {
  it('is rejected with a reason, without holding it in memory, and the next rows are read', async () => {
    await withTempDir(async (dir) => {
      const path = join(dir, 'one-long-line.csv');
      const line = Buffer.alloc(50 * 1024 * 1024, 0x78);
      await writeFile(path, Buffer.concat([Buffer.from('email,name\na@x.io,Ann\n'), line, Buffer.from('\nb@x.io,Bob\n')]));
      const before = process.memoryUsage().heapUsed;
      const result = await readOpened(await openSource({ path }));
      expect(result.rows).toEqual([
        { row: 1, line: 2, values: ['a@x.io', 'Ann'] },
        { row: 3, line: 4, values: ['b@x.io', 'Bob'] },
      ]);
      expect(result.rejects).toEqual([{ row: 2, line: 3, reason: 'row is longer than 1048576 bytes (a line of 52428800 bytes); skipped' }]);
      // The line never became a string: the heap did not grow by anything like 50 MB.
      expect(process.memoryUsage().heapUsed - before).toBeLessThan(30 * 1024 * 1024);
    });
  });
});
