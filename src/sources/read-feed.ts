/**
 * readFeed: the items of a product feed, XML (RSS 2.0 / Atom) or CSV/TSV, by the source's format.
 * The XML reader (saxes and its own modules) is imported when a feed is XML: an audience run,
 * which reads its CSV export through read-source.ts too, does without it.
 */
import type { ByteSource } from './byte-source.js';
import { readCsvFeed } from './csv-feed.js';
import type { CsvReadOptions } from './csv.js';
import type { FeedBatch, SourceFormat } from './types.js';
import type { XmlFeedOptions } from './xml-feed.js';

export type FeedReadOptions = CsvReadOptions & XmlFeedOptions;

export function readFeed(
  source: ByteSource & { format: SourceFormat },
  options: FeedReadOptions = {},
): AsyncGenerator<FeedBatch, void, undefined> {
  return source.format === 'xml' ? readXml(source, options) : readCsvFeed(source, options);
}

async function* readXml(source: ByteSource, options: XmlFeedOptions): AsyncGenerator<FeedBatch, void, undefined> {
  const { readXmlFeed } = await import('./xml-feed.js');
  yield* readXmlFeed(source, options);
}
