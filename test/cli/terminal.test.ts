/**
 * adsync in a terminal, as an operator sees it: the real CLI (`adsync demo`: the emulator and
 * both demo jobs, twice) under a pseudo-terminal (util-linux `script`), its output rendered by
 * a terminal emulator (@xterm/headless). Pretty log lines, progress bars and summary tables
 * share stderr there; every log block must be whole on the screen, each bar must end below the
 * logs written while it was shown, and nothing may crash. Everything else in the suite runs
 * the CLI through pipes, where none of this happens.
 */
import { spawn, spawnSync } from 'node:child_process';
import { Terminal } from '@xterm/headless';
import { describe, expect, it } from 'vitest';
import { TerminalOutput } from '../../src/logging/terminal-output.js';
import { createLogger } from '../../src/logging/logger.js';
import { forgetSecrets, registerSecrets } from '../../src/logging/secrets.js';
import { baseEnv, BIN, ROOT } from '../helpers/cli.js';

const COLUMNS = 160;
const hasScript = /util-linux/.test(spawnSync('script', ['--version'], { encoding: 'utf8' }).stdout ?? '');

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Runs `args` of the CLI in a pseudo-terminal; resolves with its exit code and the raw output. */
function runInTerminal(args: string[]): Promise<{ code: number | null; output: string }> {
  const command = `stty cols ${COLUMNS} rows 50; exec ${[process.execPath, BIN, ...args].map(shellQuote).join(' ')}`;
  const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: ROOT, env: baseEnv({ ADSYNC_LOG_LEVEL: 'info' }), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (output += d.toString('utf8')));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** The screen (with its scrollback) after `output`, one string per line. */
function render(output: string): Promise<string[]> {
  const term = new Terminal({ cols: COLUMNS, rows: 50, scrollback: 10_000, allowProposedApi: true });
  return new Promise((resolve) => {
    term.write(output, () => {
      const buffer = term.buffer.active;
      const lines: string[] = [];
      for (let i = 0; i < buffer.length; i++) lines.push(buffer.getLine(i)?.translateToString(true) ?? '');
      term.dispose();
      resolve(lines);
    });
  });
}

describe('in a terminal', () => {
  it.runIf(hasScript)('shows pretty logs, a progress bar per job and the summaries, none written over another', { timeout: 60_000 }, async () => {
    const { code, output } = await runInTerminal(['demo']);
    const screen = await render(output);
    const text = screen.join('\n');
    expect(code, text).toBe(0);
    expect(text).not.toMatch(/^\s+at /m);

    // Both runs of both jobs: logs, then the bar's last state, then "run finished", then the summary.
    for (const job of ['demo-audience', 'demo-catalog']) {
      const bars = screen.map((line, i) => [line, i] as const).filter(([line]) => line.startsWith(`${job} finishing |`));
      expect(bars, text).toHaveLength(2);
      for (const [bar, at] of bars) {
        expect(bar).toMatch(/\| 100% \| \d+ rows, [\d,]+ rows\/s \| (\d+)\/\1 sent \| \d+ requests?, 0 retries \| ETA/);
        // The log written while the bar was shown ("plan") is whole above it...
        let plan = at - 1;
        while (plan >= 0 && !/ INFO: plan$/.test(screen[plan] ?? '')) plan -= 1;
        expect(plan, text).toBeGreaterThan(-1);
        expect(screen[plan + 1]).toBe(`    job: "${job}"`);
        // ...and the next lines are the end of the run and its summary.
        expect(screen[at + 1]).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: run finished$/);
        expect(screen[at + 2]).toBe(`    job: "${job}"`);
        expect(screen.slice(at, at + 12).some((l) => l.startsWith(`${job} (`) && / run \d{8}T\d{6}Z-/.test(l))).toBe(true);
      }
    }
    // No line holds both a bar and a log line, or two log lines.
    for (const line of screen) {
      expect(line).not.toMatch(/\|.*\[\d\d:\d\d:\d\d\]/);
      expect((line.match(/\[\d\d:\d\d:\d\d\] [A-Z]+:/g) ?? []).length).toBeLessThanOrEqual(1);
    }
  });

  it('pretty log lines are written at once, without secrets', () => {
    const lines: string[] = [];
    registerSecrets(['tok-SECRET-123']);
    try {
      const logger = createLogger({ pretty: true, write: (line) => lines.push(line) });
      logger.warn({ detail: 'sent with tok-SECRET-123 in it' }, 'retrying API call');
      expect(lines).toHaveLength(1);
      const plain = (lines[0] ?? '').replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '');
      expect(plain).toMatch(/^\[\d\d:\d\d:\d\d\] WARN: retrying API call\n {4}detail: "sent with \[redacted\] in it"\n$/);
    } finally {
      forgetSecrets();
    }
  });

  it('a log line clears the bar, is written with line wrapping on, and the bar is drawn again', () => {
    const written: string[] = [];
    const out = new TerminalOutput((t) => written.push(t));
    out.line('before\n');
    let redraws = 0;
    out.showBar(() => {
      redraws += 1;
      written.push('<bar>');
    });
    out.line('during\n');
    out.hideBar();
    out.line('after\n');
    expect(written).toEqual(['before\n', '\r\x1b[K\x1b[?7hduring\n\x1b[?7l', '<bar>', 'after\n']);
    expect(redraws).toBe(1);
  });
});
