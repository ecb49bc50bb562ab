import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { SourceError } from '../../src/errors.js';
import { feedFieldName, readCsvFeed } from '../../src/sources/csv-feed.js';
import { readFeed } from '../../src/sources/index.js';
import { openSource } from '../../src/sources/open.js';
import { fixturePath, plainItems, readAllFeed, sourceOf, streamOf } from './helpers.js';

describe('feedFieldName', () => {
  it.each([
    ['id', 'id'],
    ['  Image Link ', 'image_link'],
    ['g:price', 'price'],
    ['G:Sale Price', 'sale_price'],
    ['additional image  link', 'additional_image_link'],
    ['custom_label_0', 'custom_label_0'],
  ])('%j -> %j', (header, name) => {
    expect(feedFieldName(header)).toBe(name);
  });
});

describe('readCsvFeed', () => {
  it('reads a Google Merchant TSV export into FeedItems', async () => {
    const bytes = await readFile(fixturePath('merchant-products.tsv'));
    const result = await readAllFeed(readCsvFeed({ name: 'merchant-products.tsv', stream: streamOf(bytes, 13), format: 'tsv' }));
    expect(result.error).toBeUndefined();
    expect(plainItems(result.items)).toEqual([
      {
        row: 1,
        line: 2,
        fields: {
          id: '00123',
          title: 'Acme Skates',
          image_link: 'https://img.example.com/1.jpg',
          price: '49.99 USD',
          additional_image_link: ['https://img.example.com/1a.jpg', 'https://img.example.com/1b.jpg'],
          availability: 'in stock',
          gtin: '04006381333931',
          description: 'Fast, "quoted" skates',
        },
      },
      {
        row: 2,
        line: 3,
        fields: {
          id: '0042',
          title: 'Padded title',
          image_link: 'https://img.example.com/42.jpg',
          price: '5.00 USD',
          additional_image_link: ['https://img.example.com/42a.jpg,https://img.example.com/42b.jpg', ''],
          availability: 'out of stock',
          gtin: '',
          description: '',
        },
      },
    ]);
    expect(result.rejects).toEqual([{ row: 3, line: 4, reason: 'row has 2 fields, header has 9' }]);
  });

  it('gives null-prototype fields, so any column name is a plain field', async () => {
    const result = await readAllFeed(readCsvFeed(sourceOf('__proto__,constructor\np,c\n')));
    const fields = result.items[0]?.fields ?? {};
    expect(Object.getPrototypeOf(fields)).toBeNull();
    expect(Object.entries(fields)).toEqual([
      ['__proto__', 'p'],
      ['constructor', 'c'],
    ]);
  });

  it('refuses a header that names no field', async () => {
    const result = await readAllFeed(readCsvFeed(sourceOf('id,g:\n1,2\n', 'feed.csv')));
    expect(result.error).toBeInstanceOf(SourceError);
    expect((result.error as SourceError).message).toBe('feed.csv: column 2 ("g:") names no field');
  });
});

describe('readFeed', () => {
  it('dispatches on the format: XML, CSV and TSV feeds', async () => {
    const xml = await readAllFeed(readFeed(await openSource({ path: fixturePath('merchant-rss.xml') })));
    expect(xml.items.map((item) => item.fields.id)).toEqual(['00123', '0000000042', 'minimal-1']);
    const tsv = await readAllFeed(readFeed(await openSource({ path: fixturePath('merchant-products.tsv') })));
    expect(tsv.items.map((item) => item.fields.id)).toEqual(['00123', '0042']);
    const csv = await readAllFeed(readFeed({ name: 'feed.csv', format: 'csv', stream: streamOf('id;title\n7;Seven\n') }));
    expect(plainItems(csv.items)).toEqual([{ row: 1, line: 2, fields: { id: '7', title: 'Seven' } }]);
  });
});
