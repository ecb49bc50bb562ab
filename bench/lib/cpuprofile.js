/**
 * Summarizes V8 .cpuprofile files (node --cpu-prof): self time by function, by file and by
 * area (an adsync folder under dist/, a package under node_modules/, node internals, GC,
 * idle), and inclusive time of adsync's own functions (time with the function on the stack).
 *
 *   node bench/lib/cpuprofile.js <file.cpuprofile | dir> [--top N]
 *
 * Time of a sample = the gap to the next sample (as Chrome DevTools counts it).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('../../', import.meta.url)));

/** A URL as a short path: dist/..., node_modules/<pkg>/..., node:... */
export function shortUrl(url) {
  if (!url) return '';
  let u = url.startsWith('file://') ? fileURLToPath(url) : url;
  if (u.startsWith(ROOT)) u = u.slice(ROOT.length + 1);
  // The bench runs a snapshot of dist/ (bench/.data/snapshot/dist/...): show it as dist/.
  if (u.startsWith('bench/.data/snapshot/')) u = u.slice('bench/.data/snapshot/'.length);
  const nm = u.lastIndexOf('node_modules/');
  if (nm >= 0) u = u.slice(nm);
  return u;
}

/** What part of the program a frame belongs to. */
export function areaOf(functionName, url) {
  if (functionName === '(garbage collector)') return 'GC';
  if (functionName === '(idle)') return 'idle (waiting: I/O, timers, network)';
  if (functionName === '(program)') return 'V8/native (program)';
  if (functionName === '(root)') return 'root';
  const s = shortUrl(url);
  if (s === '') return 'native / builtins';
  if (s.startsWith('node_modules/')) {
    const parts = s.split('/');
    return parts[1]?.startsWith('@') ? `${parts[1]}/${parts[2]}` : (parts[1] ?? s);
  }
  if (s.startsWith('node:')) return 'node internals';
  if (s.startsWith('dist/')) return `adsync ${s.split('/').slice(0, 2).join('/')}`;
  if (s.startsWith('bench/')) return 'bench';
  return s;
}

export function summarizeProfile(profile) {
  const nodes = new Map();
  for (const n of profile.nodes) nodes.set(n.id, n);
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfByNode = new Map();
  const { samples, timeDeltas } = profile;
  let total = 0;
  for (let i = 0; i < samples.length; i++) {
    const dt = i + 1 < timeDeltas.length ? timeDeltas[i + 1] : Math.max(0, profile.endTime - (profile.startTime + timeDeltas.reduce((a, b) => a + b, 0)));
    if (dt <= 0) continue;
    selfByNode.set(samples[i], (selfByNode.get(samples[i]) ?? 0) + dt);
    total += dt;
  }
  const fnKey = (cf) => `${cf.functionName || '(anonymous)'}  ${shortUrl(cf.url)}${cf.url ? `:${cf.lineNumber + 1}` : ''}`;
  const byFunction = new Map();
  const byFile = new Map();
  const byArea = new Map();
  const inclusive = new Map();
  for (const [id, t] of selfByNode) {
    const node = nodes.get(id);
    const cf = node.callFrame;
    const add = (m, k) => m.set(k, (m.get(k) ?? 0) + t);
    add(byFunction, fnKey(cf));
    add(byFile, shortUrl(cf.url) || `(${cf.functionName || 'native'})`);
    add(byArea, areaOf(cf.functionName, cf.url));
    // Inclusive time of adsync's own functions: once per function on this sample's stack.
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const f = nodes.get(cur).callFrame;
      if (!shortUrl(f.url).startsWith('dist/')) continue;
      const k = fnKey(f);
      if (seen.has(k)) continue;
      seen.add(k);
      add(inclusive, k);
    }
  }
  const sorted = (m) => [...m].sort((a, b) => b[1] - a[1]).map(([name, us]) => ({ name, ms: us / 1000, share: total > 0 ? us / total : 0 }));
  return { totalMs: total / 1000, byArea: sorted(byArea), byFile: sorted(byFile), byFunction: sorted(byFunction), inclusive: sorted(inclusive) };
}

/** The .cpuprofile files under a path (a file or a directory, not recursive). */
export function profileFiles(path) {
  if (statSync(path).isFile()) return [path];
  return readdirSync(path)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => join(path, f))
    .sort();
}

/** Text report of one summary. */
export function formatSummary(summary, top = 20) {
  const pct = (s) => `${(s * 100).toFixed(1).padStart(5)}%`;
  const ms = (m) => `${(m / 1000).toFixed(2).padStart(8)} s`;
  const section = (title, rows, n) => [`  ${title}`, ...rows.slice(0, n).map((r) => `    ${pct(r.share)} ${ms(r.ms)}  ${r.name}`)].join('\n');
  return [
    `  sampled ${(summary.totalMs / 1000).toFixed(2)} s`,
    section('self time by area', summary.byArea, 12),
    section('self time by function', summary.byFunction, top),
    section('self time by file', summary.byFile, 12),
    section("inclusive time, adsync's functions", summary.inclusive, top),
  ].join('\n');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const target = process.argv[2];
  const topAt = process.argv.indexOf('--top');
  const top = topAt > 0 ? Number(process.argv[topAt + 1]) : 25;
  if (!target) {
    process.stderr.write('usage: node bench/lib/cpuprofile.js <file.cpuprofile | dir> [--top N]\n');
    process.exit(2);
  }
  for (const file of profileFiles(target)) {
    process.stdout.write(`${file}\n${formatSummary(summarizeProfile(JSON.parse(readFileSync(file, 'utf8'))), top)}\n\n`);
  }
}
