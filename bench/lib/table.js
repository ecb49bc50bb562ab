/** The results table, as Markdown (pasted as is into BENCHMARKS.md). */

function fmt(n, digits = 0) {
  if (n === undefined || n === null || Number.isNaN(n)) return '–';
  return Number(n).toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function compact(n) {
  if (n === undefined) return '–';
  if (n >= 1e6 && n % 1e5 === 0) return `${n / 1e6}M`;
  if (n >= 1e3 && n % 100 === 0) return `${n / 1e3}k`;
  return fmt(n);
}

export function tableRows(report) {
  const out = [];
  for (const r of report.scenarios) {
    if (r.error) {
      out.push([r.scenario, r.title, '–', '–', '–', '–', '–', '–', '–', '–', r.target ?? '–', `error: ${r.error}`]);
      continue;
    }
    const met = r.met ? 'met' : `**missed** (${r.checks.filter((c) => !c.met).map((c) => c.name).join(', ')})`;
    if (r.scenario.startsWith('5')) {
      out.push([
        r.scenario,
        r.title,
        `${fmt(r.input.users)} users`,
        '–',
        `${fmt(r.users_per_request)} users/req`,
        '–',
        '–',
        `${fmt(r.requests_users)} (${fmt(r.requests_per_million_users, 1)} per 1M users)`,
        `min ${fmt(r.minimum.minimum_requests)} (${fmt(r.minimum_per_million_users, 1)} per 1M)${r.minimum.per_identifier_records ? `; one record per identifier: min ${fmt(r.minimum.per_identifier_records.minimum_requests)}` : ''}`,
        `${fmt(r.ratio_to_reference, 3)}x`,
        r.target,
        met,
      ]);
      continue;
    }
    const ref = r.reference?.wall_s !== undefined ? `${fmt(r.reference.wall_s, 2)} s (${fmt(r.reference.rate_per_s)}/s)` : r.reference?.peak_rss_mb !== undefined ? `${fmt(r.reference.peak_rss_mb)} MB (scen. 1)` : '–';
    const ratio = r.ratio_to_reference === undefined ? '–' : `${fmt(r.ratio_to_reference, 2)}x${r.scenario === '3' ? ' RSS' : ''}`;
    out.push([
      r.scenario,
      r.title,
      `${compact(r.input.rows ?? r.input.items)} ${r.unit}, ${fmt(r.input.bytes / 1e6)} MB`,
      fmt(r.wall_s, 2),
      `${fmt(r.rate_per_s)} ${r.unit}/s`,
      fmt(r.peak_rss_mb),
      `${fmt(r.cpu_s, 1)} / ${fmt(r.emulator_cpu_s, 1)} / ${fmt(r.other_cpu_s, 1)}`,
      r.requests_users !== undefined ? `${fmt(r.requests_sent)} (users: ${fmt(r.requests_users)})` : fmt(r.requests_sent),
      ref,
      ratio,
      r.target,
      met,
    ]);
  }
  return out;
}

export const HEADER = ['#', 'scenario', 'input', 'wall s', 'rate', 'peak RSS MB', 'CPU s adsync / emulator / other', 'requests sent', 'reference (same run)', 'ratio', 'target', 'result'];

export function markdownTable(report) {
  const rows = tableRows(report);
  const line = (cells) => `| ${cells.join(' | ')} |`;
  return [line(HEADER), line(HEADER.map(() => '---')), ...rows.map(line)].join('\n');
}

export function printTable(report) {
  process.stdout.write(`${markdownTable(report)}\n`);
}
