/**
 * readFeed: the items of a product feed, XML (RSS 2.0 / Atom) or CSV/TSV, by the source's format.
 */
import type { ByteSource } from './byte-source.js';
import { readCsvFeed } from './csv-feed.js';
import type { CsvReadOptions } from './csv.js';
import type { FeedBatch, SourceFormat } from './types.js';
import { readXmlFeed, type XmlFeedOptions } from './xml-feed.js';

export type FeedReadOptions = CsvReadOptions & XmlFeedOptions;

export function readFeed(
  source: ByteSource & { format: SourceFormat },
  options: FeedReadOptions = {},
): AsyncGenerator<FeedBatch, void, undefined> {
  return source.format === 'xml' ? readXmlFeed(source, options) : readCsvFeed(source, options);
}
