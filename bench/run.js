#!/usr/bin/env node
/**
 * adsync's benchmark suite: `npm run bench` (builds dist/, then runs this file).
 *
 * Generates its inputs (seeded, cached in bench/.data/), runs each scenario with the real CLI
 * (`node bin/adsync.js run --json <job>`) as a child process against the emulator, also a
 * child process (`adsync emulator --port 0`), measures wall time, peak RSS, CPU and requests,
 * runs the reference loops alone (nothing else running) in the same run, prints a table and
 * writes bench/results.json. See BENCHMARKS.md for the method and the latest numbers.
 *
 * Scenarios: 1 audience first run (1M rows: email, phone, handle, partner id); 1b the same,
 * email-only export; 2 unchanged re-run of 1; 3 10M rows (peak RSS vs 1); 4 catalog, 200k
 * items, first run and unchanged re-run (4r); 5 requests vs the minimum the limits allow
 * (from the runs of 1 and 1b).
 *
 * Options (or the BENCH_* environment variable named after each):
 *   --only 1,1b,2      run only these scenarios (2 also runs 1; 5 also runs 1 and 1b)
 *   --skip 3           skip these scenarios (e.g. the 10M-row scenario 3, many minutes)
 *   --rows N           rows of scenarios 1, 1b, 2 (default 1000000; 200k, 1e6, 1_000_000 ok)
 *   --rows3 N          rows of scenario 3 (default 10000000)
 *   --items N          items of scenario 4 (default 200000)
 *   --seed N           generator seed (default 1)
 *   --repeat N         run each timed command N times, report the median wall time (default 1)
 *   --profile          run adsync (and the emulator) under node --cpu-prof; summaries are
 *                      printed, kept in bench/.data/work/<group>/profiles/ and in results.json
 *                      (timings of a profiled run are flagged: profiling costs ~5-10%)
 *   --reuse-snapshot   measure the dist/ snapshot of the previous run again instead of copying
 *                      dist/ anew (e.g. to profile exactly the code of a table)
 *   --out FILE         results file (default bench/results.json)
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpus, totalmem } from 'node:os';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { formatSummary, profileFiles, summarizeProfile } from './lib/cpuprofile.js';
import { requestDelta, startEmulatorProcess, USERS_ROUTE } from './lib/emulator.js';
import { CRM_GENERATOR_VERSION, generateCrm } from './lib/gen-crm.js';
import { FEED_GENERATOR_VERSION, generateFeed } from './lib/gen-feed.js';
import { lastJsonLine, measureNode, median, RSS_METHOD } from './lib/measure.js';
import { audienceRequestMinimum } from './lib/request-minimum.js';
import { printTable } from './lib/table.js';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const DATA = join(ROOT, 'bench', '.data');
/**
 * adsync as built when the bench started: dist/ and bin/ copied here, so that a rebuild by
 * someone else during a long run cannot change (or break) the code under measurement.
 * Packages still resolve from the checkout's node_modules (a parent folder).
 */
const SNAPSHOT = join(DATA, 'snapshot');
const ADSYNC_BIN = join(SNAPSHOT, 'bin', 'adsync.js');
const SCENARIOS = ['1', '1b', '2', '3', '4', '5'];

// ---------------------------------------------------------------- options

function parseCount(text, name) {
  const m = /^([\d_.]+(?:e\d+)?)\s*([kKmM]?)$/.exec(String(text).trim());
  const n = m ? Number(m[1].replace(/_/g, '')) * (m[2] === '' ? 1 : /k/i.test(m[2]) ? 1e3 : 1e6) : NaN;
  if (!Number.isFinite(n) || n < 1 || !Number.isInteger(Math.round(n))) throw new Error(`--${name}: expected a positive count, got "${text}"`);
  return Math.round(n);
}

function list(text) {
  return String(text)
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
}

function options() {
  const { values } = parseArgs({
    options: {
      only: { type: 'string' },
      skip: { type: 'string' },
      rows: { type: 'string' },
      rows3: { type: 'string' },
      items: { type: 'string' },
      seed: { type: 'string' },
      repeat: { type: 'string' },
      profile: { type: 'boolean' },
      'reuse-snapshot': { type: 'boolean' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    const text = readFileSync(fileURLToPath(import.meta.url), 'utf8');
    process.stdout.write(`${/\/\*\*([\s\S]*?)\*\//.exec(text)[1].replace(/^ \* ?/gm, '')}\n`);
    process.exit(0);
  }
  const env = process.env;
  const pick = (key) => values[key] ?? env[`BENCH_${key.toUpperCase()}`];
  const only = pick('only') ? list(pick('only')) : [...SCENARIOS];
  const skip = pick('skip') ? list(pick('skip')) : [];
  for (const s of [...only, ...skip]) if (!SCENARIOS.includes(s)) throw new Error(`unknown scenario "${s}"; the scenarios are ${SCENARIOS.join(', ')}`);
  const selected = new Set(only.filter((s) => !skip.includes(s)));
  // Dependencies: a re-run needs the first run; the request counts come from 1 and 1b.
  if (selected.has('2')) selected.add('1');
  if (selected.has('5')) {
    selected.add('1');
    selected.add('1b');
  }
  return {
    selected,
    rows: parseCount(pick('rows') ?? 1_000_000, 'rows'),
    rows3: parseCount(pick('rows3') ?? 10_000_000, 'rows3'),
    items: parseCount(pick('items') ?? 200_000, 'items'),
    seed: parseCount(pick('seed') ?? 1, 'seed'),
    repeat: parseCount(pick('repeat') ?? 1, 'repeat'),
    profile: values.profile === true || env.BENCH_PROFILE === '1',
    reuseSnapshot: values['reuse-snapshot'] === true || env.BENCH_REUSE_SNAPSHOT === '1',
    out: resolve(pick('out') ?? join(ROOT, 'bench', 'results.json')),
  };
}

// ---------------------------------------------------------------- helpers

const t0 = Date.now();
function say(message) {
  const s = ((Date.now() - t0) / 1000).toFixed(0).padStart(5);
  process.stderr.write(`[bench ${s}s] ${message}\n`);
}

function mb(bytes) {
  return bytes / 1024 / 1024;
}

function crmFile(kind, rows, seed) {
  return join(DATA, `crm-${kind}-${rows}r-s${seed}-g${CRM_GENERATOR_VERSION}.csv`);
}

function feedFile(items, seed) {
  return join(DATA, `feed-${items}i-s${seed}-g${FEED_GENERATOR_VERSION}.xml`);
}

function ensureCrm(kind, rows, seed) {
  const path = crmFile(kind, rows, seed);
  if (!existsSync(path)) {
    say(`generating ${path} (${rows.toLocaleString('en-US')} rows)`);
    const started = Date.now();
    generateCrm({ path, rows, seed, kind });
    say(`  done in ${((Date.now() - started) / 1000).toFixed(1)} s, ${mb(statSync(path).size).toFixed(0)} MB`);
  }
  return path;
}

function ensureFeed(items, seed) {
  const path = feedFile(items, seed);
  if (!existsSync(path)) {
    say(`generating ${path} (${items.toLocaleString('en-US')} items)`);
    const started = Date.now();
    generateFeed({ path, items, seed });
    say(`  done in ${((Date.now() - started) / 1000).toFixed(1)} s, ${mb(statSync(path).size).toFixed(0)} MB`);
  }
  return path;
}

const FULL_AUDIENCE = {
  identifiers: { email: 'Email', phone_number: 'Phone', handle: 'Twitter', partner_user_id: 'Customer ID' },
  countryColumn: 'Country',
  defaultCountry: 'US',
};
const EMAIL_AUDIENCE = { identifiers: { email: 'Email' } };

function audienceJobYaml(name, file, audience) {
  const ids = Object.entries(audience.identifiers)
    .map(([k, v]) => `    ${k}: ${JSON.stringify(v)}`)
    .join('\n');
  return [
    `name: ${name}`,
    'account_id: emu-account',
    'source:',
    `  path: ${JSON.stringify(file)}`,
    'audience:',
    '  custom_audience_id: emu-audience',
    '  mode: mirror',
    '  identifiers:',
    ids,
    ...(audience.countryColumn ? [`  country_column: ${JSON.stringify(audience.countryColumn)}`] : []),
    ...(audience.defaultCountry ? [`  default_country: ${audience.defaultCountry}`] : []),
    '',
  ].join('\n');
}

function catalogJobYaml(name, file) {
  return [`name: ${name}`, 'account_id: emu-account', 'source:', `  path: ${JSON.stringify(file)}`, 'catalog:', '  product_catalog_id: emu-catalog', '  mode: mirror', ''].join('\n');
}

/**
 * A fresh work folder for a group of scenarios: settings, job, state, rejects, logs, profiles.
 * settingsExtra: more lines for the settings file.
 */
function workspace(group, jobYaml, settingsExtra = []) {
  const dir = join(DATA, 'work', group);
  rmSync(dir, { recursive: true, force: true });
  for (const sub of ['state', 'rejects', 'logs', 'profiles', 'scratch']) mkdirSync(join(dir, sub), { recursive: true });
  writeFileSync(join(dir, 'adsync.yaml'), [`rejects_dir: ${JSON.stringify(join(dir, 'rejects'))}`, 'progress_interval_seconds: 10', ...settingsExtra, ''].join('\n'));
  writeFileSync(join(dir, 'job.yaml'), jobYaml);
  return {
    dir,
    job: join(dir, 'job.yaml'),
    statePath: join(dir, 'state', 'state.sqlite'),
    env(emulator) {
      return { ...emulator.env, ADSYNC_STATE: join(dir, 'state', 'state.sqlite'), ADSYNC_CONFIG: join(dir, 'adsync.yaml') };
    },
    resetState() {
      rmSync(join(dir, 'state'), { recursive: true, force: true });
      mkdirSync(join(dir, 'state'), { recursive: true });
    },
  };
}

// ---------------------------------------------------------------- measurements

/** One run of a reference loop, alone (nothing else of the bench runs meanwhile). */
async function referenceOnce(script, file, ws, label, i, n) {
  say(`${label}: reference loop ${script} (${i + 1}/${n})`);
  const m = await measureNode({
    args: [join(ROOT, 'bench', 'reference', script), file],
    cwd: ROOT,
    env: {},
    logPath: join(ws.dir, 'logs', `reference-${label}-${i + 1}.log`),
    scratchDir: join(ws.dir, 'scratch'),
  });
  const out = lastJsonLine(m.stdout);
  if (m.exitCode !== 0 || !out) throw new Error(`reference loop ${script} failed (exit ${m.exitCode}); see ${join(ws.dir, 'logs')}`);
  say(`  ${m.wallSeconds.toFixed(2)} s wall, ${m.peakRssMb.toFixed(0)} MB peak RSS, others used ${m.otherCpuSeconds.toFixed(1)} s CPU meanwhile`);
  return { ...m, stdout: undefined, result: out };
}

/** The median wall time of reference runs (and the runs). */
function aggregateReference(script, runs) {
  return { script: `bench/reference/${script}`, wall_s: median(runs.map((r) => r.wallSeconds)), peak_rss_mb: Math.max(...runs.map((r) => r.peakRssMb)), result: runs[0].result, runs: runs.map(strip) };
}

/**
 * Reference and adsync runs interleaved (ref, adsync, ref, adsync, ...) so that both see the
 * same machine when it is shared; before(i) prepares each adsync run (reset, fresh state).
 */
async function paired({ script, file, ws, emulator, label, opts, before }) {
  const refs = [];
  const runs = [];
  for (let i = 0; i < opts.repeat; i++) {
    refs.push(await referenceOnce(script, file, ws, label, i, opts.repeat));
    if (before) await before(i);
    runs.push(await adsyncOnce(ws, emulator, label, i, opts.repeat, opts));
  }
  return { reference: aggregateReference(script, refs), run: aggregateAdsync(runs, label, opts) };
}

function strip(m) {
  return {
    wall_s: round(m.wallSeconds, 3),
    peak_rss_mb: round(m.peakRssMb, 1),
    cpu_s: round(m.cpuSeconds, 2),
    emulator_cpu_s: m.emulatorCpuSeconds === undefined ? undefined : round(m.emulatorCpuSeconds, 2),
    other_cpu_s: round(m.otherCpuSeconds, 2),
    load_before: m.loadAverageBefore,
    exit_code: m.exitCode,
  };
}

function round(n, digits) {
  if (n === undefined || n === null || !Number.isFinite(n)) return n;
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** One `adsync run --json <job>`: the measurement, the JSON summary, the requests counted. */
async function adsyncOnce(ws, emulator, label, i, n, opts) {
  const profileDir = join(ws.dir, 'profiles', label);
  const memoryOut = join(profileDir, 'memory.json');
  const nodeArgs = opts.profile ? ['--cpu-prof', '--cpu-prof-dir', profileDir, '--import', join(ROOT, 'bench', 'lib', 'memory-probe.js')] : [];
  if (opts.profile) rmSync(profileDir, { recursive: true, force: true });
  if (opts.profile) mkdirSync(profileDir, { recursive: true });
  say(`${label}: adsync run (${i + 1}/${n})`);
  const stateBefore = await emulator.summary();
  const logPath = join(ws.dir, 'logs', `adsync-${label}-${i + 1}.log`);
  const env = { ...ws.env(emulator), ...(opts.profile ? { BENCH_MEMORY_PROBE_OUT: memoryOut } : {}) };
  const m = await measureNode({ args: [ADSYNC_BIN, 'run', '--json', ws.job], nodeArgs, cwd: ws.dir, env, logPath, emulator, scratchDir: join(ws.dir, 'scratch') });
  if (opts.profile && existsSync(memoryOut)) m.memory = JSON.parse(readFileSync(memoryOut, 'utf8'));
  const stateAfter = await emulator.summary();
  const summary = lastJsonLine(m.stdout);
  const requests = requestDelta(stateBefore, stateAfter);
  say(
    `  exit ${m.exitCode}, ${m.wallSeconds.toFixed(2)} s wall, ${m.peakRssMb.toFixed(0)} MB peak RSS, ${m.cpuSeconds.toFixed(1)} s CPU ` +
      `(emulator ${m.emulatorCpuSeconds.toFixed(1)} s, others ${m.otherCpuSeconds.toFixed(1)} s), ${requests.total} requests`,
  );
  if (m.exitCode !== 0) say(`  adsync exited ${m.exitCode}: see ${logPath}`);
  return { m, summary, requests, profileDir, stateAfter, logPath };
}

/** Medians over repeated adsync runs (peak RSS: the largest); the last run's details. */
function aggregateAdsync(runs, label, opts) {
  const last = runs[runs.length - 1];
  let profile;
  if (opts.profile && existsSync(last.profileDir)) profile = profileReport(last.profileDir, label);
  return {
    wall_s: median(runs.map((r) => r.m.wallSeconds)),
    peak_rss_mb: Math.max(...runs.map((r) => r.m.peakRssMb)),
    cpu_s: median(runs.map((r) => r.m.cpuSeconds)),
    emulator_cpu_s: median(runs.map((r) => r.m.emulatorCpuSeconds)),
    other_cpu_s: median(runs.map((r) => r.m.otherCpuSeconds)),
    exit_code: runs.every((r) => r.m.exitCode === 0) ? 0 : runs.find((r) => r.m.exitCode !== 0).m.exitCode,
    summary: last.summary,
    requests: last.requests,
    emulator_after: emulatorHolds(last.stateAfter),
    runs: runs.map((r) => ({ ...strip(r.m), requests: r.requests.total, status: r.summary?.status })),
    rss_timeline_mb: last.m.rssTimeline,
    memory: last.m.memory,
    phases: phasesOf(last.logPath, last.m.wallSeconds),
    profile,
  };
}

/**
 * When each phase of the run began, from adsync's log (JSON lines on stderr): the first
 * progress line of each phase, and the 'plan' line (end of reading). Seconds from start.
 */
function phasesOf(logPath, wall) {
  try {
    const lines = readFileSync(logPath, 'utf8').split('\n').filter((l) => l.startsWith('{'));
    const entries = lines.map((l) => JSON.parse(l));
    const start = entries.find((e) => e.msg === 'run started')?.time;
    const end = entries.find((e) => e.msg === 'run finished')?.time;
    if (start === undefined) return undefined;
    const phases = {};
    for (const e of entries) {
      const key = e.msg === 'plan' ? 'plan (reading done)' : e.phase ? `first ${e.phase} progress` : undefined;
      if (key && phases[key] === undefined) phases[key] = round((e.time - start) / 1000, 1);
    }
    if (end !== undefined) phases['run finished'] = round((end - start) / 1000, 1);
    phases['process exit (wall)'] = round(wall, 1);
    return phases;
  } catch {
    return undefined;
  }
}

/** adsync alone, `repeat` times (re-runs, and scenario 3). */
async function adsyncRepeated(ws, emulator, label, opts, repeat = opts.repeat) {
  const runs = [];
  for (let i = 0; i < repeat; i++) runs.push(await adsyncOnce(ws, emulator, label, i, repeat, opts));
  return aggregateAdsync(runs, label, opts);
}

/** The diagnostics of a run that every row carries. */
/** The row fields every adsync run gives: times, rate over `count` `unit`s, memory, CPU, requests, and its details. */
function measured(run, count, unit) {
  return {
    wall_s: run.wall_s,
    rate_per_s: count / run.wall_s,
    unit,
    peak_rss_mb: run.peak_rss_mb,
    cpu_s: run.cpu_s,
    emulator_cpu_s: run.emulator_cpu_s,
    other_cpu_s: run.other_cpu_s,
    requests_sent: run.requests.total,
    requests: run.requests,
    adsync_summary: run.summary,
    runs: run.runs,
    phases: run.phases,
    emulator_after: run.emulator_after,
    memory: run.memory,
    rss_timeline_mb: run.rss_timeline_mb,
    profile: run.profile,
  };
}

/** Before each measured first run: an empty emulator and no state. */
function freshStart(ws, emulator) {
  return async () => {
    await emulator.reset();
    ws.resetState();
  };
}

/** What the emulator holds after a run: audience members per field, catalog products. */
function emulatorHolds(state) {
  return {
    audience_members: state.custom_audiences?.['emu-audience']?.members,
    catalog_products: state.catalogs?.['emu-catalog']?.products,
  };
}

function profileReport(dir, label) {
  const files = profileFiles(dir);
  const reports = files.map((file) => ({ file, summary: summarizeProfile(JSON.parse(readFileSync(file, 'utf8'))) }));
  const text = reports.map((r, i) => `${label}: profile ${i + 1}/${reports.length} ${r.file}\n${formatSummary(r.summary, 25)}`).join('\n\n');
  writeFileSync(join(dir, 'summary.txt'), `${text}\n`);
  process.stderr.write(`${text}\n`);
  const top = (rows, n) => rows.slice(0, n).map((r) => ({ name: r.name, s: round(r.ms / 1000, 3), share: round(r.share, 4) }));
  return reports.map((r) => ({
    file: r.file,
    sampled_s: round(r.summary.totalMs / 1000, 2),
    by_area: top(r.summary.byArea, 12),
    self: top(r.summary.byFunction, 25),
    inclusive: top(r.summary.inclusive, 25),
  }));
}

// ---------------------------------------------------------------- scenarios

/**
 * The reference loop and adsync should reject about the same phone numbers (both use
 * libphonenumber-js with the 'max' metadata); a large difference means the two do different
 * work and the ratio is not comparable.
 */
function phoneSanity(reference, summary) {
  const ref = reference.result?.phones_invalid;
  const ours = summary?.invalid_identifiers?.phone_number ?? 0;
  if (ref === undefined || summary === undefined) return undefined;
  const rows = reference.result.rows;
  const comparable = Math.abs(ours - ref) <= 0.005 * rows;
  if (!comparable) say(`  WARNING: adsync rejected ${ours} phone numbers, the reference loop ${ref}: they do not do the same work`);
  return { reference_phones_invalid: ref, adsync_phones_invalid: ours, comparable };
}

function row(base) {
  return { ...base, checks: base.checks ?? [], met: (base.checks ?? []).every((c) => c.met) };
}

function check(name, value, op, limit) {
  const met = op === '<=' ? value <= limit : op === '>=' ? value >= limit : value === limit;
  return { name, value: round(value, 3), op, limit: round(limit, 3), met };
}

function usersRequests(requests) {
  return requests.by_route[USERS_ROUTE] ?? 0;
}

async function withEmulator(ws, rateLimits, opts, fn) {
  const nodeArgs = opts.profile ? ['--cpu-prof', '--cpu-prof-dir', join(ws.dir, 'profiles', 'emulator')] : [];
  const emulator = await startEmulatorProcess({ root: SNAPSHOT, rateLimits, logPath: join(ws.dir, 'logs', 'emulator.log'), nodeArgs });
  say(`emulator (rate limits ${rateLimits}) on ${emulator.url}, pid ${emulator.pid}`);
  try {
    return await fn(emulator);
  } finally {
    const mem = emulator.memoryMb();
    await emulator.stop();
    say(`emulator stopped (peak RSS ${mem.peak.toFixed(0)} MB)`);
    if (opts.profile && existsSync(join(ws.dir, 'profiles', 'emulator'))) profileReport(join(ws.dir, 'profiles', 'emulator'), `${ws.dir.split('/').pop()} emulator`);
  }
}

function inputOf(path, count, unit) {
  return { file: path.slice(ROOT.length + 1), [unit]: count, bytes: statSync(path).size };
}

async function audienceGroup(opts, rows, results) {
  const file = ensureCrm('full', opts.rows, opts.seed);
  const ws = workspace('audience-full', audienceJobYaml('bench-audience', file, FULL_AUDIENCE));
  await withEmulator(ws, 'default', opts, async (emulator) => {
    const { reference, run: first } = await paired({
      script: 'audience-loop.js',
      file,
      ws,
      emulator,
      label: '1',
      opts,
      before: freshStart(ws, emulator),
    });
    const refRate = opts.rows / reference.wall_s;
    results.raw.audienceFirst = first;
    const ratio = first.wall_s / reference.wall_s;
    rows.push(
      row({
        scenario: '1',
        title: 'Audience, first run (email, phone, handle, partner id)',
        input: inputOf(file, opts.rows, 'rows'),
        ...measured(first, opts.rows, 'rows'),
        requests_users: usersRequests(first.requests),
        reference: { ...reference, rate_per_s: refRate },
        ratio_to_reference: ratio,
        ratio_label: 'wall / reference wall',
        target: 'wall <= 0.75x reference; peak RSS <= 250 MB',
        checks: [check('wall / reference', ratio, '<=', 0.75), check('peak RSS MB', first.peak_rss_mb, '<=', 250), check('adsync exit code', first.exit_code, '==', 0)],
        sanity: phoneSanity(reference, first.summary),
      }),
    );
    if (!opts.selected.has('2')) return;
    const again = await adsyncRepeated(ws, emulator, '2', opts);
    const ratio2 = again.wall_s / reference.wall_s;
    rows.push(
      row({
        scenario: '2',
        title: 'Audience, unchanged re-run of scenario 1 (must send nothing)',
        input: inputOf(file, opts.rows, 'rows'),
        ...measured(again, opts.rows, 'rows'),
        requests_users: usersRequests(again.requests),
        reference: { script: reference.script, wall_s: reference.wall_s, rate_per_s: refRate, note: "scenario 1's reference loop" },
        ratio_to_reference: ratio2,
        ratio_label: 'wall / reference wall',
        target: 'wall <= 0.8x reference; 0 requests to the users endpoint',
        checks: [check('wall / reference', ratio2, '<=', 0.8), check('users endpoint requests', usersRequests(again.requests), '==', 0), check('adsync exit code', again.exit_code, '==', 0)],
      }),
    );
  });
}

async function emailGroup(opts, rows, results) {
  const file = ensureCrm('email', opts.rows, opts.seed);
  const ws = workspace('audience-email', audienceJobYaml('bench-audience-email', file, EMAIL_AUDIENCE));
  await withEmulator(ws, 'default', opts, async (emulator) => {
    const { reference, run: first } = await paired({
      script: 'audience-loop.js',
      file,
      ws,
      emulator,
      label: '1b',
      opts,
      before: freshStart(ws, emulator),
    });
    results.raw.emailFirst = first;
    const ratio = first.wall_s / reference.wall_s;
    rows.push(
      row({
        scenario: '1b',
        title: 'Audience, first run, email-only export',
        input: inputOf(file, opts.rows, 'rows'),
        ...measured(first, opts.rows, 'rows'),
        requests_users: usersRequests(first.requests),
        reference: { ...reference, rate_per_s: opts.rows / reference.wall_s },
        ratio_to_reference: ratio,
        ratio_label: 'wall / reference wall',
        target: 'wall <= 1.0x reference',
        checks: [check('wall / reference', ratio, '<=', 1.0), check('adsync exit code', first.exit_code, '==', 0)],
      }),
    );
  });
}

async function largeGroup(opts, rows, results) {
  const file = ensureCrm('full', opts.rows3, opts.seed);
  const ws = workspace('audience-large', audienceJobYaml('bench-audience-large', file, FULL_AUDIENCE));
  await withEmulator(ws, 'default', opts, async (emulator) => {
    const run = await adsyncRepeated(ws, emulator, '3', opts, 1);
    const base = results.raw.audienceFirst;
    const ratio = base ? run.peak_rss_mb / base.peak_rss_mb : undefined;
    rows.push(
      row({
        scenario: '3',
        title: `Audience, first run, ${opts.rows3.toLocaleString('en-US')} rows: peak RSS vs scenario 1`,
        input: inputOf(file, opts.rows3, 'rows'),
        ...measured(run, opts.rows3, 'rows'),
        requests_users: usersRequests(run.requests),
        reference: base ? { note: "scenario 1's adsync run", peak_rss_mb: base.peak_rss_mb } : { note: 'scenario 1 not run: no ratio' },
        ratio_to_reference: ratio,
        ratio_label: 'peak RSS / scenario 1 peak RSS',
        target: 'peak RSS <= 1.3x scenario 1',
        checks: [...(ratio === undefined ? [] : [check('peak RSS / scenario 1', ratio, '<=', 1.3)]), check('adsync exit code', run.exit_code, '==', 0)],
      }),
    );
  });
}

async function catalogGroup(opts, rows) {
  const file = ensureFeed(opts.items, opts.seed);
  // The emulator runs without rate limits (the service's 450 writes/minute would make 8000 PUTs
  // take 18 minutes); adsync's client-side limits are off for the catalog families too (they
  // are by default: only the audience families have static budgets).
  const ws = workspace('catalog', catalogJobYaml('bench-catalog', file), ['rate_limits:', '  catalog_write: null', '  catalog_read: null']);
  await withEmulator(ws, 'off', opts, async (emulator) => {
    const { reference, run: first } = await paired({
      script: 'feed-cut-loop.js',
      file,
      ws,
      emulator,
      label: '4',
      opts,
      before: freshStart(ws, emulator),
    });
    const refRate = opts.items / reference.wall_s;
    const again = await adsyncRepeated(ws, emulator, '4r', opts);
    for (const [id, run, title, minRate] of [
      ['4', first, 'Catalog, first run (emulator without rate limits)', 40_000],
      ['4r', again, 'Catalog, unchanged re-run', 60_000],
    ]) {
      const rate = opts.items / run.wall_s;
      rows.push(
        row({
          scenario: id,
          title,
          input: inputOf(file, opts.items, 'items'),
          ...measured(run, opts.items, 'items'),
          reference: { ...reference, rate_per_s: refRate },
          ratio_to_reference: run.wall_s / reference.wall_s,
          ratio_label: 'wall / reference wall (cutting items out only)',
          target: `>= ${minRate.toLocaleString('en-US')} items/s; peak RSS <= 250 MB`,
          checks: [check('items/s', rate, '>=', minRate), check('peak RSS MB', run.peak_rss_mb, '<=', 250), check('adsync exit code', run.exit_code, '==', 0)],
        }),
      );
    }
  });
}

async function requestsGroup(opts, rows, results) {
  for (const [id, raw, kind, audience, title] of [
    ['5', results.raw.audienceFirst, 'full', FULL_AUDIENCE, 'Requests, scenario 1 (email, phone, handle, partner id)'],
    ['5b', results.raw.emailFirst, 'email', EMAIL_AUDIENCE, 'Requests, scenario 1b (email only)'],
  ]) {
    if (!raw) continue;
    const file = crmFile(kind, opts.rows, opts.seed);
    say(`${id}: computing the minimum number of requests for ${file}`);
    let minimum;
    try {
      minimum = await audienceRequestMinimum({ root: SNAPSHOT, file, audience });
    } catch (error) {
      say(`  could not compute the minimum: ${error.message}`);
      rows.push(row({ scenario: id, title, error: String(error.message), checks: [{ name: 'minimum computed', met: false }] }));
      continue;
    }
    const sent = usersRequests(raw.requests);
    const ratio = sent / minimum.minimum_requests;
    const added = raw.summary?.added;
    rows.push(
      row({
        scenario: id,
        title,
        input: { file: file.slice(ROOT.length + 1), rows: opts.rows, users: minimum.users, identifiers: minimum.identifiers },
        requests_users: sent,
        requests_by_status: raw.requests.by_status,
        users_per_request: minimum.users / sent,
        identifiers_per_request: added === undefined ? undefined : added / sent,
        requests_per_million_users: (sent / minimum.users) * 1e6,
        minimum,
        minimum_per_million_users: (minimum.minimum_requests / minimum.users) * 1e6,
        exact_minimum_per_million_users: (minimum.exact_requests / minimum.users) * 1e6,
        ratio_to_reference: ratio,
        ratio_label: 'requests / minimum',
        target: 'requests <= 1.02x the minimum',
        checks: [check('requests / minimum', ratio, '<=', 1.02), ...(added === undefined ? [] : [check('identifiers sent = identifiers in the export', added, '==', minimum.identifiers)])],
      }),
    );
  }
}

// ---------------------------------------------------------------- main

function gitInfo() {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: ROOT, encoding: 'utf8' }).trim() !== '';
    return { commit, src_modified: dirty };
  } catch {
    return undefined;
  }
}

/** Copies dist/, bin/ and package.json into SNAPSHOT; returns a fingerprint of dist/. */
function snapshotAdsync(reuse) {
  if (!(reuse && existsSync(ADSYNC_BIN))) {
    if (!existsSync(join(ROOT, 'dist', 'cli', 'main.js'))) throw new Error('dist/ is missing: run `npm run build` (npm run bench does)');
    rmSync(SNAPSHOT, { recursive: true, force: true });
    mkdirSync(SNAPSHOT, { recursive: true });
    cpSync(join(ROOT, 'dist'), join(SNAPSHOT, 'dist'), { recursive: true, filter: (src) => !src.endsWith('.map') });
    cpSync(join(ROOT, 'bin'), join(SNAPSHOT, 'bin'), { recursive: true });
    cpSync(join(ROOT, 'package.json'), join(SNAPSHOT, 'package.json'));
  }
  const check = spawnSync(process.execPath, [ADSYNC_BIN, '--help'], { encoding: 'utf8' });
  if (check.status !== 0) throw new Error(`the snapshot of dist/ does not start (a build in progress?): ${check.stderr.slice(0, 500)}`);
  const hash = createHash('sha256');
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else hash.update(p.slice(SNAPSHOT.length)).update(readFileSync(p));
    }
  };
  walk(join(SNAPSHOT, 'dist'));
  return hash.digest('hex').slice(0, 12);
}

async function main() {
  const opts = options();
  mkdirSync(DATA, { recursive: true });
  const distFingerprint = snapshotAdsync(opts.reuseSnapshot);
  say(`adsync: dist/ snapshot ${distFingerprint} in ${SNAPSHOT}`);
  say(`scenarios ${[...opts.selected].join(', ')}; rows ${opts.rows}, rows3 ${opts.rows3}, items ${opts.items}, seed ${opts.seed}, repeat ${opts.repeat}${opts.profile ? ', PROFILED' : ''}; peak RSS by ${RSS_METHOD}`);

  const rows = [];
  const results = { raw: {} };
  const started = new Date();
  // Order: the reference of each group runs alone before its adsync runs.
  if (opts.selected.has('1')) await audienceGroup(opts, rows, results);
  if (opts.selected.has('1b')) await emailGroup(opts, rows, results);
  if (opts.selected.has('4')) await catalogGroup(opts, rows, results);
  if (opts.selected.has('3')) await largeGroup(opts, rows, results);
  if (opts.selected.has('5')) await requestsGroup(opts, rows, results);

  const order = ['1', '1b', '2', '3', '4', '4r', '5', '5b'];
  rows.sort((a, b) => order.indexOf(a.scenario) - order.indexOf(b.scenario));
  const report = {
    generated_at: started.toISOString(),
    duration_s: round((Date.now() - started.getTime()) / 1000, 1),
    machine: { cpus: cpus().length, cpu_model: cpus()[0]?.model, memory_gb: round(totalmem() / 2 ** 30, 1), node: process.version, platform: `${process.platform} ${process.arch}` },
    git: gitInfo(),
    dist_fingerprint: distFingerprint,
    options: { scenarios: [...opts.selected], rows: opts.rows, rows3: opts.rows3, items: opts.items, seed: opts.seed, repeat: opts.repeat, profiled: opts.profile, reused_snapshot: opts.reuseSnapshot },
    peak_rss_method: RSS_METHOD,
    scenarios: rows.map((r) => roundDeep(r)),
  };
  mkdirSync(resolve(opts.out, '..'), { recursive: true });
  writeFileSync(opts.out, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write('\n');
  printTable(report);
  process.stdout.write(`\nresults: ${opts.out}\n`);
}

function roundDeep(value) {
  if (typeof value === 'number') return Number.isInteger(value) ? value : round(value, Math.abs(value) >= 100 ? 1 : 3);
  if (Array.isArray(value)) return value.map(roundDeep);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, roundDeep(v)]));
  return value;
}

main().catch((error) => {
  process.stderr.write(`bench: ${error.stack ?? error}\n`);
  process.exitCode = 1;
});
