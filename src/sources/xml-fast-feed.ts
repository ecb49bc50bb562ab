/**
 * readXmlFeedFast: exactly what readXmlFeed (xml-feed.ts) yields and throws, read the fast way
 * (items cut out of the bytes, xml-cut-feed.ts, and each read on its own, xml-item-parser.ts)
 * until the first doubt, and from the item after the last one read on with readXmlFeed over a
 * fresh copy of the source (`reopen`). See xml-cut-feed.ts for when the fast way gives up.
 *
 * Also the reference for callers that do more per item (run-catalog.ts skips items whose
 * bytes it knows, and reads the others in worker threads): the same three rules hold there.
 *   1. Items are used in row order, each exactly as CutItemParser reads it.
 *   2. A feed's item-level problems are limited (MAX_ITEM_PROBLEMS): the skeleton's problems
 *      before an item plus those of the items before it, plus its own, must stay within it.
 *   3. Any doubt: read again with readXmlFeed and keep its items and rejects after the last
 *      row already used (and its error); that second read must begin with exactly the bytes
 *      the first one took (read-prefix.ts), or the feed changed meanwhile and it throws.
 */
import type { ByteSource } from './byte-source.js';
import { ReadPrefix } from './read-prefix.js';
import type { FeedBatch, FeedItem, RowReject } from './types.js';
import { cutXmlFeed, type CutFeedOptions } from './xml-cut-feed.js';
import { readXmlFeed, type XmlFeedOptions } from './xml-feed.js';
import { MAX_ITEM_PROBLEMS } from './xml-item-collector.js';
import { CutItemParser } from './xml-item-parser.js';

/**
 * readXmlFeed over a fresh copy of the source, from the item after `rowsDone` on. The copy must
 * begin with the bytes the first read took (`firstRead`), or it throws: see read-prefix.ts.
 */
export async function* readXmlFeedAfter(reopen: () => Promise<ByteSource>, rowsDone: number, options: XmlFeedOptions, firstRead: ReadPrefix): AsyncGenerator<FeedBatch, void, undefined> {
  const opened = await reopen();
  const source: ByteSource = { ...opened, stream: firstRead.verify(opened.stream, opened.name) };
  for await (const batch of readXmlFeed(source, { ...options, encoding: options.encoding ?? source.encoding })) {
    if (rowsDone === 0) {
      yield batch;
      continue;
    }
    const items = batch.items.filter((item) => item.row > rowsDone);
    const rejects = batch.rejects.filter((reject) => reject.row > rowsDone);
    if (items.length > 0 || rejects.length > 0) yield { items, rejects };
  }
}

export interface FastFeedOptions extends CutFeedOptions {
  /** Called when the fast way gives up (for logs), with the rows read so far. */
  onDoubt?: ((reason: string, rowsDone: number) => void) | undefined;
}

export async function* readXmlFeedFast(source: ByteSource, reopen: () => Promise<ByteSource>, options: FastFeedOptions = {}): AsyncGenerator<FeedBatch, void, undefined> {
  let rowsDone = 0;
  let itemProblems = 0;
  let parser: CutItemParser | undefined;
  let doubt: string | undefined;
  const firstRead = new ReadPrefix();
  const cut = cutXmlFeed({ ...source, stream: firstRead.record(source.stream) }, options);
  try {
    for await (const batch of cut) {
      const items: FeedItem[] = [];
      const rejects: RowReject[] = [];
      doubt = batch.doubt;
      for (const item of batch.items) {
        if (item.problemsBefore + itemProblems > MAX_ITEM_PROBLEMS) {
          doubt = 'too many item-level problems';
          break;
        }
        parser ??= new CutItemParser(source.name, { ...item.context.limits });
        const read = parser.parse(item.bytes, item.context, item.row, item.line);
        if (read.kind === 'doubt') {
          doubt = read.reason;
          break;
        }
        if (item.problemsBefore + itemProblems + read.problems > MAX_ITEM_PROBLEMS) {
          doubt = 'too many item-level problems';
          break;
        }
        itemProblems += read.problems;
        if (read.kind === 'item') items.push(read.item);
        else rejects.push(read.reject);
        rowsDone = item.row;
      }
      if (doubt === undefined && batch.problems + itemProblems > MAX_ITEM_PROBLEMS) doubt = 'too many item-level problems';
      if (items.length > 0 || rejects.length > 0) yield { items, rejects };
      if (doubt !== undefined) break;
    }
  } finally {
    await cut.return(undefined);
  }
  if (doubt === undefined) return;
  options.onDoubt?.(doubt, rowsDone);
  yield* readXmlFeedAfter(reopen, rowsDone, options, firstRead);
}
