/**
 * Sources: one adapter per input format, each yielding records tagged with their row (or item)
 * number and line.
 *
 * - readCsvSource(spec) / readFeedSource(spec): open a job's source and read it, in one call.
 * - openSource(spec): a file or http(s) URL as decompressed bytes, format settled.
 * - readCsv(opened): CSV/TSV rows of strings in header order (CRM exports).
 * - readFeed(opened): product feed items, from XML (readXmlFeed) or CSV/TSV (readCsvFeed).
 */
export type { ByteSource } from './byte-source.js';
export { readCsv, DEFAULT_MAX_ROW_BYTES, type CsvReader, type CsvReadOptions } from './csv.js';
export { readCsvFeed, feedFieldName } from './csv-feed.js';
export { openSource, DEFAULT_HTTP_TIMEOUT_MS, type OpenSourceOptions } from './open.js';
export { readFeed, type FeedReadOptions } from './read-feed.js';
export { readCsvSource, readFeedSource, type CsvSourceReader, type FeedSourceReader } from './read-source.js';
export { extensionOf, formatOfPath } from './source-format.js';
export { readXmlFeed, type XmlFeedOptions } from './xml-feed.js';
export { DEFAULT_XML_FEED_LIMITS, GOOGLE_NAMESPACE, type XmlFeedLimits } from './xml-item-collector.js';
export type * from './types.js';
