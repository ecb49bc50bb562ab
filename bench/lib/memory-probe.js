/**
 * Preload (node --import), used by `npm run bench -- --profile` only: samples
 * process.memoryUsage() every 250 ms (an unref'd timer) and, on exit, writes the peak of each
 * part (rss, JS heap, external, array buffers) and a thinned timeline to the file named by
 * BENCH_MEMORY_PROBE_OUT. Says whether a large RSS is JS objects (heapUsed), Buffers
 * (external/arrayBuffers) or native memory outside V8 (rss minus both: SQLite, zlib, ...).
 */
import { writeFileSync } from 'node:fs';

const out = process.env.BENCH_MEMORY_PROBE_OUT;
if (out) {
  const started = Date.now();
  const samples = [];
  const peak = { rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0, native: 0 };
  const sample = () => {
    const m = process.memoryUsage();
    const native = m.rss - m.heapTotal - m.external;
    for (const k of ['rss', 'heapTotal', 'heapUsed', 'external', 'arrayBuffers']) peak[k] = Math.max(peak[k], m[k]);
    peak.native = Math.max(peak.native, native);
    samples.push([(Date.now() - started) / 1000, m.rss, m.heapUsed, m.external, native]);
  };
  setInterval(sample, 250).unref();
  process.on('exit', () => {
    sample();
    const MB = 1024 * 1024;
    const step = Math.max(1, Math.ceil(samples.length / 240));
    writeFileSync(
      out,
      JSON.stringify({
        peak_mb: Object.fromEntries(Object.entries(peak).map(([k, v]) => [k, Math.round(v / MB)])),
        timeline_columns: ['s', 'rss MB', 'heapUsed MB', 'external MB', 'rss - heapTotal - external MB'],
        timeline: samples.filter((_, i) => i % step === 0).map(([t, ...v]) => [Math.round(t * 10) / 10, ...v.map((x) => Math.round(x / MB))]),
      }),
    );
  });
}
