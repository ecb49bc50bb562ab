/**
 * Preload (node --import) used when GNU time is not installed: on exit, writes the process's
 * peak RSS (getrusage maxRSS, kept by the kernel: it cannot miss the peak) and CPU time to
 * the file named by BENCH_RSS_PROBE_OUT.
 */
import { writeFileSync } from 'node:fs';

const out = process.env.BENCH_RSS_PROBE_OUT;
if (out) {
  process.on('exit', () => {
    const usage = process.resourceUsage();
    writeFileSync(out, JSON.stringify({ maxRssKb: usage.maxRSS, cpuSeconds: (usage.userCPUTime + usage.systemCPUTime) / 1e6 }));
  });
}
