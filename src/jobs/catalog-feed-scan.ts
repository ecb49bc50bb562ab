/**
 * A catalog feed read into item outcomes, in row order: each item is a product (with its
 * canonical JSON and content hash), an unchanged product that was not even read, an invalid
 * item (buildProduct's reasons), or an item the reader could not read.
 *
 * XML feeds are read the fast way (src/sources/xml-fast-feed.ts states the rules): items are
 * cut out of the bytes, and
 *  - an item whose raw fingerprint is the one saved for a product is that product, unchanged:
 *    it is neither parsed, nor validated, nor hashed. The raw fingerprint is the SHA-256 of
 *    the item's bytes and of everything else that decides what they become: the item's
 *    context in the feed (namespace bindings, depth, encoding, reader limits), the job (its
 *    name: a product is skipped only by the job whose product it is; see CatalogScan.claim),
 *    its field mapping and adsync's own reading and transform code (RAW_FINGERPRINT_SALT). It is saved
 *    per product once the service holds what the item gave (or found unchanged), never for a
 *    rejected item, so a rejected item is read on every run;
 *  - every other item is read (CutItemParser) and built (buildProduct), in worker threads when
 *    there is enough to read (catalog-workers.ts), here otherwise;
 *  - on any doubt the feed is read again with the full reader from the row after the last
 *    outcome given (the feed's own errors come from there). The second read must begin with
 *    exactly the bytes the first one took (src/sources/read-prefix.ts), or the run fails
 *    before anything is sent: a feed rewritten meanwhile is never read as a mix of two.
 * CSV and TSV feeds are read with their reader and built here.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { ByteSource } from '../sources/byte-source.js';
import { openSource, type OpenSourceOptions } from '../sources/open.js';
import { ReadPrefix } from '../sources/read-prefix.js';
import { readFeed } from '../sources/read-feed.js';
import { feedFieldMapping } from '../sources/csv-feed.js';
import type { FeedBatch, FeedItem, OpenedSource, SourceFormat } from '../sources/types.js';
import { cutXmlFeed, type CutBatch, type CutItem } from '../sources/xml-cut-feed.js';
import { readXmlFeedAfter } from '../sources/xml-fast-feed.js';
import { MAX_ITEM_PROBLEMS } from '../sources/xml-item-collector.js';
import { CutItemParser, type ParsedCutItem } from '../sources/xml-item-parser.js';
import type { CatalogState, FingerprintMatch } from '../state/store.js';
import { buildProduct } from '../transform/index.js';
import type { FieldMapping, RejectReason } from '../transform/index.js';
import { contextKeyBytes, rawFingerprintOf } from './catalog-raw-fingerprint.js';
import type { CatalogJob } from './job.js';

/**
 * One item of the feed. A product (payload: its canonical JSON) and an unchanged item are
 * occurrences for the scan as they are (ScannedProduct, UnchangedOccurrence).
 */
export type ItemOutcome =
  | { kind: 'product'; row: number; line: number; id: string; contentHash: string; payload: string | Buffer; warnings: string[]; fingerprint: Buffer | undefined }
  | { kind: 'unchanged'; row: number; line: number; id: string; warnings: readonly string[]; unchanged: true }
  | { kind: 'invalid'; row: number; line: number; id: string | undefined; reasons: RejectReason[] }
  | { kind: 'unreadable'; row: number; line: number; reason: string };

/** What one item read on its own gives (here or in a worker thread). */
export type ReadItemResult = { outcome: Exclude<ItemOutcome, { kind: 'unchanged' }>; problems: number } | { doubt: string };

export interface CatalogFeedReader {
  /** Raw size of the source (compressed size for gzip), when known. */
  readonly sizeBytes: number | undefined;
  bytesRead(): number;
  readonly outcomes: AsyncIterable<ItemOutcome[]>;
}

/** Reads cut items (in row order) and gives their results in the same order. */
export interface CutItemReader {
  /** `itemsCut`: items cut from the feed so far (read or skipped), for deciding how to read. */
  read(items: readonly CutItem[], itemsCut: number): Promise<ReadItemResult[]>;
  close(): Promise<void>;
}

/** Makes the reader of one feed's cut items (`name`: the source, for messages). */
export type CatalogFeedReaderFactory = (name: string) => CutItemReader;

/** The raw fingerprints of a batch of cut items and the products saved with them. */
export interface ItemMatches {
  /** Per item, the product whose saved raw fingerprint the item has; undefined when none. */
  matches: readonly (FingerprintMatch | undefined)[];
  /** Per item, its raw fingerprint: given for every item without a match, maybe not for the others. */
  fingerprints: readonly (Buffer | undefined)[];
}

/** Fingerprints cut items and finds the products saved with them, a batch at a time, answering in the order asked. */
export interface ItemMatcher {
  match(items: readonly CutItem[]): Promise<ItemMatches>;
  close(): Promise<void>;
}

/** Makes the matcher of one read against the saved state. */
export type ItemMatcherFactory = (state: CatalogState) => ItemMatcher;

export interface CatalogFeedOptions {
  /** Skip items whose raw fingerprint is saved for a product of this catalog (never with --full). */
  fingerprints?: CatalogState | undefined;
  /** Looks the items up for `fingerprints`; by default here (inThreadMatcher). */
  itemMatcher?: ItemMatcherFactory | undefined;
  /** Reads the items that are not skipped; by default here, one at a time. */
  itemReader?: CatalogFeedReaderFactory | undefined;
  /** Batches of items (one per chunk of the feed; on a re-run, at least MIN_BATCH_ITEMS) read ahead of the one being used. */
  readAhead?: number | undefined;
  /** Called when the fast way gives up (for logs). */
  onDoubt?: ((reason: string, rowsDone: number) => void) | undefined;
  /** For opening the feed, each time it is read: the stop signal (it aborts a download too) and the HTTP timeout. */
  source?: OpenSourceOptions | undefined;
}

/**
 * Bump to make every saved raw fingerprint stale (the next run reads every item again).
 * Changes to the code below are picked up without it: the salt hashes that code.
 */
const RAW_FINGERPRINT_VERSION = 1;
/** The code that decides what an item's bytes become, relative to this file. */
const FINGERPRINTED_CODE: readonly { dir: string; names: RegExp }[] = [
  { dir: '../transform/', names: /\.(?:js|ts)$/ },
  { dir: '../sources/', names: /^(?:xml-[a-z-]+|windows-1252|utf8-validator|content-sniff)\.(?:js|ts)$/ },
];

let codeFingerprint: string | undefined;

/** SHA-256 of adsync's reading and transform code and of saxes' version. */
function readingCodeFingerprint(): string {
  if (codeFingerprint !== undefined) return codeFingerprint;
  const hash = createHash('sha256');
  hash.update(`adsync raw fingerprints ${RAW_FINGERPRINT_VERSION}\n`);
  for (const { dir, names } of FINGERPRINTED_CODE) {
    const path = fileURLToPath(new URL(dir, import.meta.url));
    for (const name of readdirSync(path).filter((n) => names.test(n)).sort()) {
      hash.update(`${dir}${name}\n`);
      hash.update(readFileSync(`${path}/${name}`));
    }
  }
  const saxes = createRequire(import.meta.url)('saxes/package.json') as { version?: string };
  hash.update(`saxes ${saxes.version ?? ''}\n`);
  codeFingerprint = hash.digest('hex');
  return codeFingerprint;
}

/** The part of every raw fingerprint of a job that is not the item: see the module comment. */
export function rawFingerprintSalt(job: CatalogJob): string {
  const mapping = Object.entries(job.catalog.fields).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256').update(readingCodeFingerprint()).update(JSON.stringify([job.name, mapping])).digest('hex');
}

const keyBytesOf = new WeakMap<object, Buffer>();

/** The raw fingerprint of a cut item (catalog-raw-fingerprint.ts). */
export function rawFingerprint(item: CutItem): Buffer {
  let key = keyBytesOf.get(item.context);
  if (key === undefined) {
    key = contextKeyBytes(item.context.key);
    keyBytesOf.set(item.context, key);
  }
  return rawFingerprintOf(key, item.bytes);
}

/** Fingerprints and looks up items on this thread, through the state's productsByFingerprint. */
export function inThreadMatcher(state: Pick<CatalogState, 'productsByFingerprint'>): ItemMatcher {
  return {
    async match(items) {
      const fingerprints = items.map(rawFingerprint);
      return { fingerprints, matches: await state.productsByFingerprint(fingerprints) };
    },
    close: () => Promise.resolve(),
  };
}

/**
 * Whether an item may be skipped when its fingerprint matches: its start tag holds no "&",
 * control character or non-ASCII byte, so reading it could not count an item-level problem
 * (those elsewhere in an item reject it, and a rejected item's fingerprint is never saved).
 */
function startTagIsPlain(item: CutItem): boolean {
  const bytes = item.bytes;
  for (let i = 1; i < bytes.length; i++) {
    const c = bytes[i] ?? 0;
    if (c === 0x3e) return true;
    if (c === 0x26 || c > 0x7e || (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d)) return false;
  }
  return false;
}

/** The outcome of a FeedItem or reader reject (items built here). */
export function outcomeOfItem(item: FeedItem, job: CatalogJob, fingerprint?: Buffer): Exclude<ItemOutcome, { kind: 'unchanged' | 'unreadable' }> {
  const result = buildProduct(item, job.catalog.fields);
  if (result.ok) {
    return { kind: 'product', row: item.row, line: item.line, id: result.id, contentHash: result.contentHash, payload: result.json, warnings: result.warnings, fingerprint };
  }
  return { kind: 'invalid', row: item.row, line: item.line, id: result.id, reasons: result.reasons };
}

/** The outcomes of a full reader's batch, in row order. */
function outcomesOfBatch(batch: FeedBatch, job: CatalogJob): ItemOutcome[] {
  const out: ItemOutcome[] = [];
  const rejects = batch.rejects;
  let next = 0;
  for (const item of batch.items) {
    for (let r = rejects[next]; r !== undefined && r.row < item.row; r = rejects[++next]) out.push({ kind: 'unreadable', row: r.row, line: r.line, reason: r.reason });
    out.push(outcomeOfItem(item, job));
  }
  for (let r = rejects[next]; r !== undefined; r = rejects[++next]) out.push({ kind: 'unreadable', row: r.row, line: r.line, reason: r.reason });
  return out;
}

/** Reads one cut item here: CutItemParser, then buildProduct. */
export function readCutItem(parser: CutItemParser, item: CutItem, job: Pick<CatalogJob, 'catalog'> & Partial<CatalogJob>, fingerprint: Buffer | undefined): ReadItemResult {
  const read: ParsedCutItem = parser.parse(item.bytes, item.context, item.row, item.line);
  if (read.kind === 'doubt') return { doubt: read.reason };
  if (read.kind === 'reject') return { outcome: { kind: 'unreadable', row: read.reject.row, line: read.reject.line, reason: read.reject.reason }, problems: read.problems };
  return { outcome: outcomeOfItem(read.item, job as CatalogJob, fingerprint), problems: read.problems };
}

/** Reads cut items on this thread. */
function inlineItemReader(name: string, job: CatalogJob): CutItemReader {
  let parser: CutItemParser | undefined;
  return {
    read(items) {
      return Promise.resolve(
        items.map((item) => {
          parser ??= new CutItemParser(name, item.context.limits);
          return readCutItem(parser, item, job, undefined);
        }),
      );
    },
    close: () => Promise.resolve(),
  };
}

export async function openCatalogFeed(job: CatalogJob, options: CatalogFeedOptions = {}): Promise<CatalogFeedReader> {
  let opened: OpenedSource = await openSource(job.source, options.source);
  const sizeBytes = opened.sizeBytes;
  let extra = 0;
  const first = opened;
  const reopen = async (): Promise<OpenedSource> => {
    extra += opened.bytesRead();
    opened = await openSource(job.source, options.source);
    return opened;
  };
  // The fast XML reader may read the feed again (after a doubt): not a pipe, which it would wait on for good.
  const outcomes = first.format === 'xml' && first.readOnce !== true ? xmlOutcomes(first, reopen, job, options) : fullOutcomes(first, job);
  return {
    sizeBytes,
    // After a restart, the bytes read twice count twice: progress may pass 100% a little.
    bytesRead: () => Math.min(extra + opened.bytesRead(), sizeBytes ?? Infinity),
    outcomes,
  };
}

/** The job's field mapping for a feed of `format` (CSV/TSV columns are named by feedFieldName). */
export function feedFieldsOf(job: Pick<CatalogJob, 'catalog'>, format: SourceFormat): FieldMapping {
  return format === 'xml' ? job.catalog.fields : feedFieldMapping(job.catalog.fields);
}

async function* fullOutcomes(opened: OpenedSource, job: CatalogJob): AsyncGenerator<ItemOutcome[]> {
  const feedJob: CatalogJob = { ...job, catalog: { ...job.catalog, fields: feedFieldsOf(job, opened.format) } };
  for await (const batch of readFeed(opened)) yield outcomesOfBatch(batch, feedJob);
}

/** A batch's lookup and what it decided: the items to read (not skipped), in order, and their results. */
interface BatchStarted extends ItemMatches {
  toRead: CutItem[];
  results: Promise<ReadItemResult[]>;
}

interface BatchInFlight {
  items: readonly CutItem[];
  /** Skeleton problems at the end of the batch. */
  problems: number;
  /** Once the items are looked up (at once when nothing is known). */
  started: Promise<BatchStarted>;
}

const NOTHING_KNOWN: ItemMatches = { matches: [], fingerprints: [] };

const DEFAULT_READ_AHEAD = 6;

/**
 * When items are looked up (a re-run), they are looked up, read and stored at least this many
 * at a time (a 64 KiB chunk of a Merchant feed holds ~80): each batch costs a read transaction
 * for its lookups, one for storing its scan and a few round trips through the readers (an
 * unchanged re-run of 200,000 items: 7% faster). With nothing to look up (a first run), a
 * batch stays one chunk: batches four times larger held more items and payloads in flight
 * through the reading threads, +20 MB at the peak of a first run of 200,000 items.
 */
const MIN_BATCH_ITEMS = 256;

/** The cut batches, consecutive ones joined until they hold `min` items (a doubt or the end ends one early). */
export async function* joinedBatches(batches: AsyncIterable<CutBatch>, min: number): AsyncGenerator<CutBatch> {
  let held: CutBatch | undefined;
  for await (const batch of batches) {
    held = held === undefined ? batch : { items: held.items.concat(batch.items), problems: batch.problems, doubt: batch.doubt };
    if (held.items.length >= min || held.doubt !== undefined) {
      yield held;
      held = undefined;
    }
  }
  if (held !== undefined) yield held;
}

async function* xmlOutcomes(opened: ByteSource, reopen: () => Promise<ByteSource>, job: CatalogJob, options: CatalogFeedOptions): AsyncGenerator<ItemOutcome[]> {
  const state = options.fingerprints;
  const salt = rawFingerprintSalt(job);
  const matcher = state === undefined ? undefined : (options.itemMatcher ?? inThreadMatcher)(state);
  const reader = (options.itemReader ?? ((name: string) => inlineItemReader(name, job)))(opened.name);
  const readAhead = options.readAhead ?? DEFAULT_READ_AHEAD;
  // A second read (after a doubt) must begin with the bytes this one took: see read-prefix.ts.
  const firstRead = new ReadPrefix();
  const cut = cutXmlFeed({ ...opened, stream: firstRead.record(opened.stream) }, { salt, encoding: opened.encoding });
  const inFlight: BatchInFlight[] = [];
  let rowsDone = 0;
  let itemProblems = 0;
  let itemsCut = 0;
  let doubt: string | undefined;

  /** The outcomes of the oldest batch in flight, in row order; sets `doubt` where it stops. */
  const settle = async (batch: BatchInFlight): Promise<ItemOutcome[]> => {
    const { items } = batch;
    const { matches, toRead, fingerprints, results: reading } = await batch.started;
    const results = toRead.length === 0 ? [] : await reading;
    const out: ItemOutcome[] = [];
    let next = 0;
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if (item === undefined) continue;
      if (item.problemsBefore + itemProblems > MAX_ITEM_PROBLEMS) {
        doubt = 'too many item-level problems';
        return out;
      }
      const match = matches[i];
      if (match !== undefined && toRead[next] !== item) {
        out.push({ kind: 'unchanged', row: item.row, line: item.line, id: match.id, warnings: match.warnings, unchanged: true });
        rowsDone = item.row;
        continue;
      }
      const result = results[next++];
      if (result === undefined || 'doubt' in result) {
        doubt = result?.doubt ?? 'an item was not read';
        return out;
      }
      if (item.problemsBefore + itemProblems + result.problems > MAX_ITEM_PROBLEMS) {
        doubt = 'too many item-level problems';
        return out;
      }
      itemProblems += result.problems;
      const outcome = result.outcome;
      if (outcome.kind === 'product') outcome.fingerprint ??= fingerprints[i] ?? rawFingerprint(item);
      out.push(outcome);
      rowsDone = item.row;
    }
    if (batch.problems + itemProblems > MAX_ITEM_PROBLEMS) doubt = 'too many item-level problems';
    return out;
  };

  try {
    for await (const batch of state === undefined ? cut : joinedBatches(cut, MIN_BATCH_ITEMS)) {
      const items = batch.items;
      itemsCut += items.length;
      const cutSoFar = itemsCut;
      // Items are read once looked up; lookups (maybe on another thread) answer in order, so
      // the reader gets the batches in order.
      const start = (looked: ItemMatches): BatchStarted => {
        const { matches } = looked;
        const toRead: CutItem[] = [];
        for (let i = 0; i < items.length; i++) {
          const item = items[i];
          if (item !== undefined && (matches[i] === undefined || !startTagIsPlain(item))) toRead.push(item);
        }
        const results = toRead.length === 0 ? Promise.resolve([]) : reader.read(toRead, cutSoFar);
        // Awaited in order later; a failure meanwhile must not be an unhandled rejection.
        results.catch(() => undefined);
        return { ...looked, toRead, results };
      };
      const started = matcher === undefined || items.length === 0 ? Promise.resolve(start(NOTHING_KNOWN)) : matcher.match(items).then(start);
      started.catch(() => undefined);
      inFlight.push({ items, problems: batch.problems, started });
      const cutDoubt = batch.doubt;
      while (inFlight.length > (cutDoubt === undefined ? readAhead : 0)) {
        const oldest = inFlight.shift();
        if (oldest === undefined) break;
        const out = await settle(oldest);
        if (out.length > 0) yield out;
        if (doubt !== undefined) break;
      }
      if (doubt === undefined && cutDoubt !== undefined) doubt = cutDoubt;
      if (doubt !== undefined) break;
    }
    while (doubt === undefined && inFlight.length > 0) {
      const oldest = inFlight.shift();
      if (oldest === undefined) break;
      const out = await settle(oldest);
      if (out.length > 0) yield out;
    }
  } finally {
    await cut.return(undefined);
    await matcher?.close();
    await reader.close();
  }
  if (doubt === undefined) return;
  options.onDoubt?.(doubt, rowsDone);
  for await (const batch of readXmlFeedAfter(reopen, rowsDone, {}, firstRead)) yield outcomesOfBatch(batch, job);
}
