/**
 * Memory stays flat as the input grows: a generated 200k-row CSV and a 20k-item XML feed are
 * streamed through the readers and the heap (after a full GC) is sampled at 25%, 50%, 75% and
 * 100% of the input. The growth from the first sample to the largest must stay under a few MB,
 * where holding the rows read would cost tens of MB (the control case, a consumer that keeps
 * every row, proves the measurement would see it).
 *
 * Throughput is printed, not asserted (timing depends on the machine).
 */
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { beforeAll, describe, expect, it } from 'vitest';
import { readCsv } from '../../src/sources/csv.js';
import { openSource } from '../../src/sources/open.js';
import { readXmlFeed } from '../../src/sources/xml-feed.js';
import { withTempDir } from './helpers.js';

const CSV_ROWS = 200_000;
const XML_ITEMS = 20_000;
const MAX_GROWTH_BYTES = 8 * 1024 * 1024;

let collectGarbage: () => void;

beforeAll(() => {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed !== undefined) {
    collectGarbage = exposed;
    return;
  }
  setFlagsFromString('--expose-gc');
  collectGarbage = runInNewContext('gc') as () => void;
});

function heapAfterGc(): number {
  collectGarbage();
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

async function writeLines(path: string, count: number, head: string, line: (i: number) => string, tail = ''): Promise<void> {
  const out = createWriteStream(path);
  let buffer = head;
  for (let i = 0; i < count; i++) {
    buffer += line(i);
    if (buffer.length > 1 << 16) {
      if (!out.write(buffer)) await once(out, 'drain');
      buffer = '';
    }
  }
  out.end(buffer + tail);
  await once(out, 'finish');
}

const csvLine = (i: number): string =>
  `user${i}@example.com,+1 415 555 ${String(i % 10000).padStart(4, '0')},@handle${i},US,"Doe, Jane ${i}",C${String(i).padStart(8, '0')}\n`;

const xmlItem = (i: number): string => `<item>
<g:id>SKU${String(i).padStart(8, '0')}</g:id>
<title><![CDATA[Product ${i} & friends]]></title>
<description>A fine product number ${i}, made of wood &amp; steel. Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.</description>
<link>https://shop.example.com/p/${i}</link>
<g:image_link>https://img.example.com/${i}.jpg</g:image_link>
<g:additional_image_link>https://img.example.com/${i}-1.jpg</g:additional_image_link>
<g:additional_image_link>https://img.example.com/${i}-2.jpg</g:additional_image_link>
<g:availability>in stock</g:availability>
<g:condition>new</g:condition>
<g:price>${(i % 1000) + 0.99} USD</g:price>
<g:brand>Acme</g:brand>
<g:gtin>0${String(4006381333931 + i)}</g:gtin>
<g:google_product_category>Home &amp; Garden &gt; Kitchen</g:google_product_category>
<g:shipping><g:country>US</g:country><g:service>Standard</g:service><g:price>4.95 USD</g:price></g:shipping>
<g:item_group_id>G${Math.floor(i / 4)}</g:item_group_id>
<g:color>red</g:color>
<g:size>M</g:size>
</item>
`;

/** Heap samples at each quarter of `total`, fed by `onProgress(done)`. */
class QuarterSampler {
  readonly samples: number[] = [];
  private next = 1;
  constructor(private readonly total: number) {}
  onProgress(done: number): void {
    while (this.next <= 4 && done >= (this.total * this.next) / 4) {
      this.samples.push(heapAfterGc());
      this.next++;
    }
  }
  growth(): number {
    const first = this.samples[0] ?? 0;
    return Math.max(...this.samples) - first;
  }
}

async function streamCsv(path: string, keepRows: boolean): Promise<{ growth: number; rows: number; ms: number }> {
  const sampler = new QuarterSampler(CSV_ROWS);
  const kept: unknown[] = [];
  let rows = 0;
  const started = performance.now();
  for await (const batch of readCsv(await openSource({ path }))) {
    rows += batch.rows.length;
    if (keepRows) kept.push(...batch.rows);
    sampler.onProgress(rows);
  }
  const ms = performance.now() - started;
  expect(kept.length).toBe(keepRows ? CSV_ROWS : 0);
  return { growth: sampler.growth(), rows, ms };
}

describe('memory stays flat as the input grows', () => {
  it(`streams a ${CSV_ROWS}-row CSV with a flat heap`, async () => {
    await withTempDir(async (dir) => {
      const path = join(dir, 'crm.csv');
      await writeLines(path, CSV_ROWS, 'Email,Phone,Twitter,Country,Name,Customer ID\n', csvLine);
      const flat = await streamCsv(path, false);
      expect(flat.rows).toBe(CSV_ROWS);
      console.log(`CSV: ${CSV_ROWS} rows in ${flat.ms.toFixed(0)} ms (with heap sampling) = ${Math.round((CSV_ROWS / flat.ms) * 1000)} rows/s; heap growth ${(flat.growth / 1e6).toFixed(2)} MB`);
      expect(flat.growth).toBeLessThan(MAX_GROWTH_BYTES);

      // Control: a consumer that keeps every row makes the same measurement grow far past the limit.
      const leaky = await streamCsv(path, true);
      console.log(`CSV control (every row kept): heap growth ${(leaky.growth / 1e6).toFixed(2)} MB`);
      expect(leaky.growth).toBeGreaterThan(4 * MAX_GROWTH_BYTES);
    });
  }, 120_000);

  it(`streams a ${XML_ITEMS}-item XML feed with a flat heap`, async () => {
    await withTempDir(async (dir) => {
      const path = join(dir, 'feed.xml');
      await writeLines(
        path,
        XML_ITEMS,
        '<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0" xmlns:g="http://base.google.com/ns/1.0">\n<channel>\n<title>Shop</title>\n',
        xmlItem,
        '</channel>\n</rss>\n',
      );
      const sampler = new QuarterSampler(XML_ITEMS);
      let items = 0;
      const started = performance.now();
      for await (const batch of readXmlFeed(await openSource({ path }))) {
        items += batch.items.length;
        expect(batch.rejects).toEqual([]);
        sampler.onProgress(items);
      }
      const ms = performance.now() - started;
      expect(items).toBe(XML_ITEMS);
      console.log(`XML: ${XML_ITEMS} items in ${ms.toFixed(0)} ms (with heap sampling) = ${Math.round((XML_ITEMS / ms) * 1000)} items/s; heap growth ${(sampler.growth() / 1e6).toFixed(2)} MB`);
      expect(sampler.growth()).toBeLessThan(MAX_GROWTH_BYTES);
    });
  }, 120_000);
});
