/**
 * Runs one command as a child process and measures it: wall time (in this process, from
 * spawn to exit), peak RSS and CPU time of the child, the CPU the emulator used meanwhile,
 * and how busy the rest of the machine was (to flag noisy runs).
 *
 * Peak RSS comes from the kernel, so it cannot miss the peak: GNU time (`/usr/bin/time -f
 * %M`, the getrusage(RUSAGE_CHILDREN) maximum) when it is installed; otherwise a preload
 * (bench/lib/rss-probe.js) writes process.resourceUsage().maxRSS (the same getrusage value,
 * RUSAGE_SELF) when the process exits. Both cover worker threads (one process); a child
 * process spawned by adsync would be reported separately by neither (time: the largest one).
 */
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadAverage, machineBusySeconds, processMemoryMb } from './proc.js';

const GNU_TIME = '/usr/bin/time';
const PROBE = fileURLToPath(new URL('./rss-probe.js', import.meta.url));

/** GNU time takes -f and -o; busybox and BSD time do not. */
function hasGnuTime() {
  if (!existsSync(GNU_TIME)) return false;
  return spawnSync(GNU_TIME, ['-f', '%M', '-o', '/dev/null', 'true'], { stdio: 'ignore' }).status === 0;
}
const USE_GNU_TIME = hasGnuTime() && process.env.BENCH_RSS_METHOD !== 'probe';

/**
 * node <nodeArgs> <args>, with env and cwd; stdout collected (it holds the JSON summary),
 * stderr to logPath. emulator: the running emulator handle (for its CPU), optional.
 */
export const RSS_METHOD = USE_GNU_TIME ? 'GNU time %M (getrusage RUSAGE_CHILDREN maxrss)' : 'preload: process.resourceUsage().maxRSS on exit';

export async function measureNode({ args, nodeArgs = [], env, cwd, logPath, emulator, scratchDir }) {
  const timeFile = join(scratchDir, `time-${process.pid}-${Date.now()}.txt`);
  const probeFile = `${timeFile}.probe.json`;
  let command;
  let commandArgs;
  const childEnv = { ...process.env, ...env, NODE_OPTIONS: '' };
  if (USE_GNU_TIME) {
    command = GNU_TIME;
    commandArgs = ['-f', '%M %e %U %S', '-o', timeFile, process.execPath, ...nodeArgs, ...args];
  } else {
    command = process.execPath;
    commandArgs = ['--import', PROBE, ...nodeArgs, ...args];
    childEnv.BENCH_RSS_PROBE_OUT = probeFile;
  }

  const emulatorCpu0 = emulator?.cpuSeconds() ?? 0;
  const busy0 = machineBusySeconds();
  const load = loadAverage();
  const started = process.hrtime.bigint();
  const child = spawn(command, commandArgs, { cwd, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  const rss = sampleRss(child.pid, USE_GNU_TIME, started);
  const log = createWriteStream(logPath);
  child.stderr.pipe(log);
  let stdout = '';
  child.stdout.on('data', (d) => {
    stdout += d.toString();
  });
  const exitCode = await new Promise((resolve) => child.once('close', (code, signal) => resolve(code ?? signal)));
  const wallSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  rss.stop();
  const busy = machineBusySeconds() - busy0;
  const emulatorCpuSeconds = (emulator?.cpuSeconds() ?? 0) - emulatorCpu0;
  await new Promise((resolve) => log.end(resolve));

  let peakRssMb;
  let cpuSeconds;
  if (USE_GNU_TIME) {
    const text = readFileSync(timeFile, 'utf8').trim().split('\n').pop() ?? '';
    const [maxKb, , user, sys] = text.split(' ').map(Number);
    peakRssMb = maxKb / 1024;
    cpuSeconds = user + sys;
    rmSync(timeFile, { force: true });
  } else {
    const probe = JSON.parse(readFileSync(probeFile, 'utf8'));
    peakRssMb = probe.maxRssKb / 1024;
    cpuSeconds = probe.cpuSeconds;
    rmSync(probeFile, { force: true });
  }
  return {
    exitCode,
    wallSeconds,
    peakRssMb,
    cpuSeconds,
    emulatorCpuSeconds,
    // CPU used on the machine by anything but this child and the emulator (the bench process
    // itself is idle meanwhile): high values mean a noisy measurement.
    otherCpuSeconds: Math.max(0, busy - cpuSeconds - emulatorCpuSeconds),
    loadAverageBefore: load,
    rssTimeline: rss.timeline(),
    stdout,
  };
}

/**
 * Samples the resident set of the measured node process from outside (/proc, no cost to
 * it) every 250 ms, for a timeline of memory over the run (the peak itself comes from the
 * kernel's maximum, which sampling could miss). When the child is GNU time, node is its child.
 */
function sampleRss(pid, wrapped, started) {
  const samples = [];
  let target = wrapped ? undefined : pid;
  const timer = setInterval(() => {
    if (target === undefined) {
      try {
        const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
        if (children) target = Number(children.split(' ')[0]);
      } catch {
        return;
      }
      if (target === undefined) return;
    }
    const { current } = processMemoryMb(target);
    if (current > 0) samples.push([Number(process.hrtime.bigint() - started) / 1e9, current]);
  }, 250);
  return {
    stop: () => clearInterval(timer),
    /** [seconds, MB] pairs, thinned to at most 240 points. */
    timeline() {
      const step = Math.max(1, Math.ceil(samples.length / 240));
      return samples.filter((_, i) => i % step === 0).map(([t, m]) => [Math.round(t * 10) / 10, Math.round(m)]);
    },
  };
}

/** The last JSON object line of a command's stdout. */
export function lastJsonLine(stdout) {
  const lines = stdout.split('\n').filter((l) => l.startsWith('{'));
  if (lines.length === 0) return undefined;
  try {
    return JSON.parse(lines[lines.length - 1]);
  } catch {
    return undefined;
  }
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
