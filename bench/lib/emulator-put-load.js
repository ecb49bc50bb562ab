/**
 * Load on the emulator's product upsert path alone: the CPU the emulator process spends per
 * product (and per request) on PUT /12/product_catalogs/:id/products, as in the catalog
 * scenario of the bench (scenario 4), without adsync's reading, planning and state.
 *
 *   node bench/lib/emulator-put-load.js [--items 200000] [--seed 1] [--concurrency 4]
 *        [--passes create,same,update] [--root DIR[,DIR...]] [--cpu-prof DIR] [--repeat N]
 *        [--node-args "--trace-gc ..."] [--pause-ms N (after the emulator starts, e.g. to attach perf)]
 *
 * - The products are those adsync sends for the bench feed (bench/lib/gen-feed.js, cached in
 *   bench/.data/ as run.js caches it): read with dist/sources, built with dist/transform
 *   buildProduct (the ~1.5% invalid items are rejected there and not sent, as adsync does),
 *   serialized as adsync serializes them (JSON.stringify of the built product), 25 per PUT.
 *   Every body is built as a Buffer before the clock starts.
 * - The emulator is `node bin/adsync.js emulator --port 0 --rate-limits off` in its own
 *   process, started from --root (default: this checkout; give a copy of dist/+bin/ to measure
 *   another build; with several, comma-separated, their runs alternate and each gets medians). With --cpu-prof DIR it runs under node --cpu-prof (summarize with
 *   `node bench/lib/cpuprofile.js DIR`).
 * - The PUTs go through the real client (dist/api/client.js, signed OAuth 1.0a) and
 *   putProducts of dist/api/resources/catalogs.js with the prebuilt body, `concurrency` at a
 *   time, no retries.
 * - Passes, each over every product, in order: create (a fresh catalog: CREATE_SUCCESS),
 *   same (the same bodies again: NO_CHANGE), update (inventory or a custom label changed:
 *   UPDATE_SUCCESS). Each pass checks that every product got the expected status.
 * - Per pass: the emulator's user+system CPU from /proc/<pid>/stat before and after, per
 *   product and per request; wall time; the driver's own CPU.
 *
 * The machine is shared: compare runs made one after the other, with --repeat for medians.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EMULATOR_CREDENTIALS, startEmulatorProcess } from './emulator.js';
import { FEED_GENERATOR_VERSION, generateFeed } from './gen-feed.js';

const ROOT = resolve(fileURLToPath(new URL('../../', import.meta.url)));
const CATALOG = 'emu-catalog';
const PER_PUT = 25;

function parseArgs(argv) {
  const opts = { items: 200_000, seed: 1, concurrency: 4, passes: ['create', 'same', 'update'], roots: [ROOT], cpuProf: undefined, nodeArgs: [], pauseMs: 0, repeat: 1 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${arg} needs a value`);
      return v;
    };
    if (arg === '--items') opts.items = Number(value().replace(/_/g, '').replace(/k$/i, '000'));
    else if (arg === '--seed') opts.seed = Number(value());
    else if (arg === '--concurrency') opts.concurrency = Number(value());
    else if (arg === '--passes') opts.passes = value().split(',');
    else if (arg === '--root') opts.roots = value().split(',').map((r) => resolve(r));
    else if (arg === '--cpu-prof') opts.cpuProf = resolve(value());
    else if (arg === '--repeat') opts.repeat = Number(value());
    else if (arg === '--pause-ms') opts.pauseMs = Number(value());
    else if (arg === '--node-args') opts.nodeArgs = value().split(' ').filter((a) => a !== '');
    else throw new Error(`unknown option ${arg}`);
  }
  for (const p of opts.passes) if (!['create', 'same', 'update'].includes(p)) throw new Error(`unknown pass ${p}`);
  return opts;
}

const say = (line) => process.stderr.write(`${line}\n`);

/** The payloads adsync would send for the bench feed, in feed order. */
async function feedPayloads(items, seed) {
  const path = join(ROOT, 'bench', '.data', `feed-${items}i-s${seed}-g${FEED_GENERATOR_VERSION}.xml`);
  if (!existsSync(path)) {
    say(`generating ${path}`);
    generateFeed({ path, items, seed });
  }
  const { openSource, readFeed } = await import(join(ROOT, 'dist', 'sources', 'index.js'));
  const { buildProduct } = await import(join(ROOT, 'dist', 'transform', 'build-product.js'));
  const source = await openSource({ path, format: 'xml' });
  const payloads = [];
  for await (const batch of readFeed(source)) {
    for (const item of batch.items) {
      const built = buildProduct(item);
      if (built.ok) payloads.push({ id: built.id, product: built.product, json: JSON.stringify(built.product) });
    }
  }
  return payloads;
}

/** The same product with one attribute changed (still valid): an UPDATE_SUCCESS. */
function changed(product) {
  const copy = { ...product };
  if (typeof copy.inventory === 'number') copy.inventory += 1;
  else copy.custom_label_4 = 'changed';
  return copy;
}

function bodies(jsonTexts) {
  const out = [];
  for (let i = 0; i < jsonTexts.length; i += PER_PUT) {
    const part = jsonTexts.slice(i, i + PER_PUT);
    out.push({ body: Buffer.from(`{"products":[${part.join(',')}]}`), count: part.length });
  }
  return out;
}

async function sendAll(client, putProducts, requests, concurrency, expected) {
  let next = 0;
  let wrong = 0;
  let firstWrong;
  const worker = async () => {
    while (next < requests.length) {
      const r = requests[next++];
      const results = await putProducts(client, CATALOG, r.body, r.count);
      if (results.length !== r.count) throw new Error(`asked for ${r.count} results, got ${results.length}`);
      for (const result of results) {
        if (result.status !== expected) {
          wrong += 1;
          firstWrong ??= result;
        }
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { wrong, firstWrong };
}

/** user and system CPU seconds of a live process (/proc/<pid>/stat fields 14 and 15, in 1/100 s). */
function cpuOf(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
}

/** CPU seconds of each thread of a live process, by thread name (V8's GC helpers are "V8 DefaultWorke"). */
function threadCpuOf(pid) {
  const out = {};
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const key = tid === String(pid) ? 'main' : name;
      out[key] = (out[key] ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

const fmt = (n, digits = 1) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

async function runOnce(opts, root, payloads, passBodies) {
  const { AdsApiClient } = await import(join(ROOT, 'dist', 'api', 'client.js'));
  const { Credentials } = await import(join(ROOT, 'dist', 'api', 'credentials.js'));
  const { putProducts } = await import(join(ROOT, 'dist', 'api', 'resources', 'catalogs.js'));
  const work = mkdtempSync(join(tmpdir(), 'emulator-put-load-'));
  const nodeArgs = [...opts.nodeArgs, ...(opts.cpuProf ? ['--cpu-prof', '--cpu-prof-dir', opts.cpuProf] : [])];
  const emulator = await startEmulatorProcess({ root, rateLimits: 'off', logPath: join(work, 'emulator.log'), nodeArgs });
  if (opts.nodeArgs.length > 0) say(`emulator pid ${emulator.pid}, output: ${join(work, 'emulator.log')}`);
  if (opts.pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, opts.pauseMs));
  const e = EMULATOR_CREDENTIALS;
  const client = new AdsApiClient({
    credentials: new Credentials('default', e.ADSYNC_CONSUMER_KEY, e.ADSYNC_CONSUMER_SECRET, e.ADSYNC_ACCESS_TOKEN, e.ADSYNC_ACCESS_TOKEN_SECRET),
    adsUrl: emulator.url,
    apiUrl: emulator.url,
    retry: { retries: 0 },
  });
  const rows = [];
  try {
    for (const pass of opts.passes) {
      const expected = { create: 'CREATE_SUCCESS', same: 'NO_CHANGE', update: 'UPDATE_SUCCESS' }[pass];
      const requests = passBodies[pass];
      const cpuBefore = cpuOf(emulator.pid);
      const threadsBefore = threadCpuOf(emulator.pid);
      const ownBefore = process.cpuUsage();
      const started = performance.now();
      const { wrong, firstWrong } = await sendAll(client, putProducts, requests, opts.concurrency, expected);
      const wall = (performance.now() - started) / 1000;
      const cpuAfter = cpuOf(emulator.pid);
      const threadsAfter = threadCpuOf(emulator.pid);
      const threads = Object.fromEntries(
        Object.entries(threadsAfter)
          .map(([name, s]) => [name, Math.round((s - (threadsBefore[name] ?? 0)) * 100) / 100])
          .filter(([, s]) => s > 0),
      );
      const user = cpuAfter.user - cpuBefore.user;
      const system = cpuAfter.system - cpuBefore.system;
      const cpu = user + system;
      const own = process.cpuUsage(ownBefore);
      if (wrong > 0) throw new Error(`${pass}: ${wrong} products did not get ${expected}; first: ${JSON.stringify(firstWrong)}`);
      rows.push({
        pass,
        products: payloads.length,
        requests: requests.length,
        wall_s: wall,
        emulator_cpu_s: cpu,
        emulator_user_s: user,
        emulator_system_s: system,
        emulator_threads_s: threads,
        emulator_us_per_product: (cpu * 1e6) / payloads.length,
        emulator_us_per_request: (cpu * 1e6) / requests.length,
        driver_cpu_s: (own.user + own.system) / 1e6,
        items_per_s: payloads.length / wall,
      });
    }
    const summary = await emulator.summary();
    rows.stored = summary.catalogs[CATALOG]?.products;
  } finally {
    await emulator.stop();
  }
  return rows;
}

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)];
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  say(`reading ${opts.items.toLocaleString('en-US')} feed items into products...`);
  const payloads = await feedPayloads(opts.items, opts.seed);
  const passBodies = {
    create: bodies(payloads.map((p) => p.json)),
    same: bodies(payloads.map((p) => p.json)),
    update: bodies(payloads.map((p) => JSON.stringify(changed(p.product)))),
  };
  say(`${payloads.length.toLocaleString('en-US')} products, ${passBodies.create.length.toLocaleString('en-US')} PUTs per pass`);
  // With several roots, their runs alternate (A, B, A, B, ...) so that all see the same machine.
  const runs = new Map(opts.roots.map((root) => [root, []]));
  for (let r = 0; r < opts.repeat; r++) {
    for (const root of opts.roots) {
      const rows = await runOnce(opts, root, payloads, passBodies);
      runs.get(root).push(rows);
      const label = opts.roots.length > 1 ? `${root} run ${r + 1}` : `run ${r + 1}`;
      for (const row of rows) {
        say(
          `${label} ${row.pass.padEnd(6)} emulator CPU ${fmt(row.emulator_cpu_s, 2)} s (user ${fmt(row.emulator_user_s, 2)}, system ${fmt(row.emulator_system_s, 2)}) = ${fmt(row.emulator_us_per_product)} µs/product, ` +
            `${fmt(row.emulator_us_per_request)} µs/request; threads ${JSON.stringify(row.emulator_threads_s)}; wall ${fmt(row.wall_s, 2)} s (${fmt(row.items_per_s, 0)} items/s); driver CPU ${fmt(row.driver_cpu_s, 2)} s`,
        );
      }
      say(`${label}: the catalog holds ${rows.stored} products`);
    }
  }
  const results = opts.roots.map((root) => ({
    root,
    passes: opts.passes.map((pass) => {
      const of = runs.get(root).map((rows) => rows.find((row) => row.pass === pass));
      return {
        pass,
        products: of[0].products,
        requests: of[0].requests,
        emulator_us_per_product: median(of.map((x) => x.emulator_us_per_product)),
        emulator_us_per_request: median(of.map((x) => x.emulator_us_per_request)),
        wall_s: median(of.map((x) => x.wall_s)),
        items_per_s: median(of.map((x) => x.items_per_s)),
        runs_us_per_product: of.map((x) => Math.round(x.emulator_us_per_product * 10) / 10),
      };
    }),
  }));
  for (const { root, passes } of results) {
    for (const p of passes) {
      say(`median of ${opts.repeat}: ${root} ${p.pass.padEnd(6)} ${fmt(p.emulator_us_per_product)} µs/product, ${fmt(p.emulator_us_per_request)} µs/request (runs: ${p.runs_us_per_product.join(', ')})`);
    }
  }
  process.stdout.write(`${JSON.stringify({ concurrency: opts.concurrency, repeat: opts.repeat, results }, null, 2)}\n`);
}

await main();
