import { stat } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { SourceError } from '../../src/errors.js';
import { readCsvSource, readFeedSource } from '../../src/sources/index.js';
import type { CsvRow, FeedItem } from '../../src/sources/types.js';
import { errorOf, fixturePath } from './helpers.js';

describe('readCsvSource', () => {
  it('opens a CSV source with its header read, then streams its batches with progress', async () => {
    const path = fixturePath('crm-messy-semicolon.csv');
    const reader = await readCsvSource({ path });
    expect(reader).toMatchObject({ name: path, format: 'csv', delimiter: ';', sizeBytes: (await stat(path)).size });
    expect(reader.header).toEqual(['Email', 'Phone', 'Name', 'Notes', 'Customer ID']);
    const rows: CsvRow[] = [];
    for await (const batch of reader.batches) rows.push(...batch.rows);
    expect(rows.map((row) => row.row)).toEqual([1, 2, 3, 6, 7, 8]);
    expect(reader.bytesRead()).toBe(reader.sizeBytes);
  });

  it('fails before any row for a missing file or a broken header', async () => {
    const missing = await errorOf(() => readCsvSource({ path: fixturePath('nope.csv') }));
    expect(missing).toBeInstanceOf(SourceError);
    expect(missing.message).toBe(`${fixturePath('nope.csv')} does not exist`);
    const xml = await errorOf(() => readCsvSource({ path: fixturePath('merchant-rss.xml') }));
    expect(xml).toBeInstanceOf(SourceError);
    expect(xml.message).toBe(`${fixturePath('merchant-rss.xml')} is an XML feed; this source must be a CSV or TSV file`);
  });

  it('can be closed after the header', async () => {
    const reader = await readCsvSource({ path: fixturePath('crm-messy.csv') });
    await reader.close();
  });
});

describe('readFeedSource', () => {
  it.each([
    ['merchant-rss.xml', 'xml', ['00123', '0000000042', 'minimal-1']],
    ['merchant-atom.xml', 'xml', ['000777', '778', '779']],
    ['merchant-products.tsv', 'tsv', ['00123', '0042']],
  ])('reads %s as FeedItems', async (name, format, ids) => {
    const reader = await readFeedSource({ path: fixturePath(name) });
    expect(reader.format).toBe(format);
    const items: FeedItem[] = [];
    for await (const batch of reader.batches) items.push(...batch.items);
    expect(items.map((item) => item.fields.id)).toEqual(ids);
    expect(reader.bytesRead()).toBe(reader.sizeBytes);
  });

  it('can be closed without reading', async () => {
    const reader = await readFeedSource({ path: fixturePath('merchant-rss.xml') });
    await reader.close();
  });
});
