/** Linux /proc readings: CPU time of a process and of the whole machine, peak RSS. */
import { readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // getconf CLK_TCK on Linux

/** user+system CPU seconds of a live process (0 when it is gone or /proc is missing). */
export function processCpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state); utime is field 14, stime field 15.
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** Peak and current resident set of a live process, in MB (VmHWM, VmRSS). */
export function processMemoryMb(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
    return { peak: kb('VmHWM') / 1024, current: kb('VmRSS') / 1024 };
  } catch {
    return { peak: 0, current: 0 };
  }
}

/** Busy CPU seconds of the whole machine so far (all cores; idle and iowait excluded). */
export function machineBusySeconds() {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, _idle, _iowait, irq, softirq, steal] = v;
    return (user + nice + system + irq + softirq + (steal ?? 0)) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

export function loadAverage() {
  try {
    return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  } catch {
    return undefined;
  }
}
