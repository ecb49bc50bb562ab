/**
 * The reference loop of the catalog scenario (4): cutting each <item>...</item> out of the
 * feed's byte stream as a string, without parsing it. The floor of any streaming reader: a
 * catalog run also has to parse, validate, hash and send. Written once and NOT tuned
 * afterwards (see audience-loop.js).
 *
 * Usage: node bench/reference/feed-cut-loop.js <feed.xml>
 * Prints one JSON line: {items, chars, seconds}.
 */
import { createReadStream } from 'node:fs';

const file = process.argv[2];
const started = process.hrtime.bigint();

const stream = createReadStream(file, { encoding: 'utf8' });
let rest = '';
let items = 0;
let chars = 0;

for await (const chunk of stream) {
  const text = rest + chunk;
  let from = 0;
  for (;;) {
    const start = text.indexOf('<item>', from);
    if (start < 0) {
      from = Math.max(from, text.length - 6);
      break;
    }
    const end = text.indexOf('</item>', start);
    if (end < 0) {
      from = start;
      break;
    }
    const item = text.slice(start, end + 7);
    chars += item.length;
    items++;
    from = end + 7;
  }
  rest = text.slice(from);
}

const seconds = Number(process.hrtime.bigint() - started) / 1e9;
process.stdout.write(`${JSON.stringify({ items, chars, seconds })}\n`);
