/**
 * Worker thread of a catalog run: reads feed items cut out by the main thread
 * (CutItemParser), builds their products (buildProduct: validation, canonical JSON, content
 * hash) and computes their raw fingerprints, batch by batch, in the order they come. See
 * catalog-workers.ts.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { CutItemParser, type ItemContextSpec } from '../sources/xml-item-parser.js';
// Not through ../transform/index.js: that also exports the zod schemas (productSchema, the field
// mapping's), which this thread never uses and would load zod (~70 ms) for.
import { buildProduct } from '../transform/build-product.js';
import { contextKeyBytes, rawFingerprintOf } from './catalog-raw-fingerprint.js';
import type { FromReadWorker, ItemResultTuple, ReadMessage, ReadWorkerData, ToReadWorker } from './catalog-read-messages.js';

const data = workerData as ReadWorkerData;
const contexts = new Map<number, { spec: ItemContextSpec; key: Buffer }>();
let parser: CutItemParser | undefined;

function post(message: FromReadWorker, transfer: ArrayBuffer[] = []): void {
  parentPort?.postMessage(message, transfer);
}

function read(message: ReadMessage): void {
  const bytes = Buffer.from(message.bytes);
  const count = message.rows.length;
  const results: ItemResultTuple[] = new Array<ItemResultTuple>(count);
  const fingerprints = Buffer.alloc(count * 32);
  const payloadEnds = new Int32Array(count);
  let payloads = Buffer.allocUnsafeSlow(Math.max(4096, message.bytes.byteLength));
  let payloadBytes = 0;
  let start = 0;
  for (let i = 0; i < count; i++) {
    const end = message.ends[i] ?? start;
    const item = bytes.subarray(start, end);
    start = end;
    const context = contexts.get(message.contexts[i] ?? 0);
    if (context === undefined) {
      results[i] = ['d', 'unknown item context'];
      continue;
    }
    parser ??= new CutItemParser(data.name, context.spec.limits);
    const row = message.rows[i] ?? 0;
    const read = parser.parse(item, context.spec, row, message.lines[i] ?? 0);
    if (read.kind === 'doubt') {
      results[i] = ['d', read.reason];
    } else if (read.kind === 'reject') {
      results[i] = ['u', read.problems, read.reject.reason];
    } else {
      const built = buildProduct(read.item, data.fields);
      if (built.ok) {
        rawFingerprintOf(context.key, item).copy(fingerprints, i * 32);
        if (payloadBytes + built.json.length * 3 > payloads.length) {
          const bigger = Buffer.allocUnsafeSlow(Math.max(payloads.length * 2, payloadBytes + built.json.length * 3));
          payloads.copy(bigger, 0, 0, payloadBytes);
          payloads = bigger;
        }
        payloadBytes += payloads.write(built.json, payloadBytes, 'utf8');
        results[i] = ['p', read.problems, built.id, built.contentHash, built.warnings];
      } else {
        results[i] = ['i', read.problems, built.id ?? null, built.reasons.map((r) => [r.field, r.reason])];
      }
    }
    payloadEnds[i] = payloadBytes;
  }
  const out = fingerprints.buffer.slice(fingerprints.byteOffset, fingerprints.byteOffset + fingerprints.length);
  const json = payloads.buffer.slice(payloads.byteOffset, payloads.byteOffset + payloadBytes);
  post({ type: 'read', batch: message.batch, results, fingerprints: out, payloads: json, payloadEnds }, [out, json, payloadEnds.buffer]);
}

parentPort?.on('message', (message: ToReadWorker) => {
  try {
    if (message.type === 'context') contexts.set(message.id, { spec: message.spec, key: contextKeyBytes(message.key) });
    else read(message);
  } catch (error) {
    post({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
});
