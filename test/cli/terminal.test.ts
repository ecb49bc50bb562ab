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
import { describe, expect, it, vi } from 'vitest';
import { etaSeconds, formatEta } from '../../src/jobs/progress.js';
import { TerminalOutput } from '../../src/logging/terminal-output.js';
import { createLogger } from '../../src/logging/logger.js';
import { forgetSecrets, registerSecrets } from '../../src/logging/secrets.js';
import { baseEnv, BIN, ROOT } from '../helpers/cli.js';
import { createWorkspace, summaries, type Workspace } from '../helpers/e2e.js';

const COLUMNS = 160;
const hasScript = /util-linux/.test(spawnSync('script', ['--version'], { encoding: 'utf8' }).stdout ?? '');

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** What the operator types once the output so far matches `when` (Ctrl-C is '\x03'). */
interface Keystrokes {
  when: RegExp;
  type: string | ((output: string) => Promise<string>);
}

/**
 * Runs `args` of the CLI in a pseudo-terminal, typing each of `keys` in turn into the terminal
 * once the output matches its pattern. Resolves with the exit code, the raw output and how
 * many of `keys` were typed. TERM is xterm unless `term` says otherwise, whatever the suite runs under.
 */
function runInTerminal(args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; keys?: Keystrokes[]; term?: string }): Promise<{ code: number | null; output: string; typed: number }> {
  const command = `stty cols ${COLUMNS} rows 50; exec ${[process.execPath, BIN, ...args].map(shellQuote).join(' ')}`;
  const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: options.cwd, env: { ...options.env, ADSYNC_LOG_LEVEL: 'info', TERM: options.term ?? 'xterm' }, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  let typed = 0;
  let typing = false;
  const onData = (d: Buffer): void => {
    output += d.toString('utf8');
    const next = options.keys?.[typed];
    if (typing || next === undefined || !next.when.test(output)) return;
    typing = true;
    void Promise.resolve(typeof next.type === 'string' ? next.type : next.type(output)).then((text) => {
      typed += 1;
      typing = false;
      child.stdin.write(text);
    });
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output, typed }));
  });
}

const CTRL_C = '\x03';

/** The bar of job "crm" once the read is under way: a share of the file above 0%. */
const READING_UNDER_WAY = /crm reading\s+\|[^|]*\| [1-9]\d?% \|/;

/** A job "crm" of an export large enough (~40 MB) to be read on two threads, for a while. */
function writeLargeExport(ws: Workspace): void {
  const rows = ['Customer ID,E-mail,Phone'];
  for (let i = 1; i <= 600_000; i++) rows.push(`P${i},user.${i}@example.com,+1 415 555 ${String(1000 + (i % 9000)).padStart(4, '0')}`);
  ws.write('exports/crm.csv', `${rows.join('\n')}\n`);
  ws.write('crm.yaml', 'account_id: emu-account\nsource: { path: exports/crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: E-mail, phone_number: Phone, partner_user_id: Customer ID }\n');
}

/** The screen (with its scrollback) after `output`, one string per line. */
function render(output: string): Promise<string[]> {
  const term = new Terminal({ cols: COLUMNS, rows: 50, scrollback: 10_000, allowProposedApi: true });
  return new Promise((resolve) => {
    term.write(output, () => {
      const buffer = term.buffer.active;
      const lines: string[] = [];
      // A line longer than the screen is one line (a path in the temporary folder can be long).
      for (let i = 0; i < buffer.length; i++) {
        const line = buffer.getLine(i);
        const text = line?.translateToString(true) ?? '';
        if (line?.isWrapped && lines.length > 0) lines[lines.length - 1] += text;
        else lines.push(text);
      }
      term.dispose();
      resolve(lines);
    });
  });
}

describe('in a terminal', () => {
  it.runIf(hasScript)('shows pretty logs, a progress bar per job and the summaries, none written over another', { timeout: 60_000 }, async () => {
    const { code, output } = await runInTerminal(['demo'], { cwd: ROOT, env: baseEnv() });
    const screen = await render(output);
    const text = screen.join('\n');
    expect(code, text).toBe(0);
    expect(text).not.toMatch(/^\s+at /m);

    // Both runs of both jobs: logs, then the bar's last state, then "run finished", then the summary.
    for (const job of ['demo-audience', 'demo-catalog']) {
      const bars = screen.map((line, i) => [line, i] as const).filter(([line]) => line.startsWith(`${job} finishing |`));
      expect(bars, text).toHaveLength(2);
      for (const [bar, at] of bars) {
        // The second run has nothing to send: '0 sent', no count to send.
        expect(bar).toMatch(/\| 100% \| \d+ rows, [\d,]+ rows\/s \| (?:(\d+)\/\1|0) sent \| \d+ requests?, 0 retries \| ETA 0s$/);
        // The log written while the bar was shown ("plan") is whole above it...
        let plan = at - 1;
        while (plan >= 0 && !/ INFO: plan$/.test(screen[plan] ?? '')) plan -= 1;
        expect(plan, text).toBeGreaterThan(-1);
        expect(screen[plan + 1]).toBe(`    job: "${job}"`);
        // ...and the next lines are the end of the run and its summary.
        expect(screen[at + 1]).toMatch(/^\[\d\d:\d\d:\d\dZ\] INFO: run finished$/);
        expect(screen[at + 2]).toBe(`    job: "${job}"`);
        expect(screen.slice(at, at + 12).some((l) => l.startsWith(`${job} (`) && / run \d{8}T\d{6}Z-/.test(l))).toBe(true);
      }
    }
    // No line holds both a bar and a log line, or two log lines.
    for (const line of screen) {
      expect(line).not.toMatch(/\|.*\[\d\d:\d\d:\d\d\]/);
      expect((line.match(/\[\d\d:\d\d:\d\dZ\] [A-Z]+:/g) ?? []).length).toBeLessThanOrEqual(1);
    }
  });

  it.runIf(hasScript)('Ctrl-C while reading: the message above the bar, the bar at its last count, an interrupted run, the cursor back', { timeout: 120_000 }, async () => {
    const ws = await createWorkspace();
    try {
      writeLargeExport(ws);
      // Typed once the bar shows the read under way: a share of the file above 0%.
      const { code, output, typed } = await runInTerminal(['run', 'crm.yaml'], { cwd: ws.dir, env: ws.env, keys: [{ when: READING_UNDER_WAY, type: CTRL_C }] });
      const screen = await render(output);
      const text = screen.join('\n');
      expect(typed, text).toBe(1);
      expect(code, text).toBe(1);
      expect(text).not.toMatch(/^\s+at /m);
      const message = screen.indexOf('adsync: SIGINT received: finishing the requests in flight, then stopping (send again to stop at once)');
      expect(message, text).toBeGreaterThan(0);
      // The bar goes on below the message and ends with the rows read; the run says it was interrupted.
      const bar = screen.findIndex((l, i) => i > message && l.startsWith('crm '));
      expect(screen[bar], text).toMatch(/^crm \w+\s+\|[^|]*\| \d+% \| [\d,]+ rows, [\d,]+ rows\/s \| /);
      expect(screen.slice(bar).some((l) => /^ {2}status +interrupted$/.test(l)), text).toBe(true);
      expect(screen.slice(bar).some((l) => /^adsync: job crm interrupted: stopped by a signal while reading the source \([\d,]+ rows read\); nothing was sent$/.test(l)), text).toBe(true);
      // The bar hid the cursor while it was shown; it is visible again at the end.
      const esc = String.fromCharCode(27);
      expect(output.lastIndexOf(`${esc}[?25h`)).toBeGreaterThan(output.lastIndexOf(`${esc}[?25l`));
    } finally {
      await ws.close();
    }
  });

  it.runIf(hasScript)('Ctrl-C twice stops at once (exit 130) and leaves the cursor visible; NO_COLOR: no colors', { timeout: 120_000 }, async () => {
    const ws = await createWorkspace();
    try {
      writeLargeExport(ws);
      // The first upload request is answered only after 20 s, and the job waits that long for
      // it: the run is still finishing it when the second Ctrl-C comes, however loaded the
      // machine (a first Ctrl-C while reading ended the run at once, sometimes before the second).
      ws.write('crm.yaml', `request_timeout_ms: 60000\n${ws.read('crm.yaml')}`);
      ws.fault({ route: 'POST /12/**/users', kind: 'delay', ms: 20_000, times: 1 });
      const { code, output, typed } = await runInTerminal(['run', 'crm.yaml'], {
        cwd: ws.dir,
        env: { ...ws.env, NO_COLOR: '1' },
        keys: [
          { when: /crm uploading /, type: CTRL_C },
          { when: /SIGINT received/, type: CTRL_C },
        ],
      });
      const text = (await render(output)).join('\n');
      expect(typed, text).toBe(2);
      expect(code, text).toBe(130);
      expect(text).toContain('adsync: SIGINT again: stopping now');
      expect(text).not.toMatch(/^\s+at /m);
      const esc = String.fromCharCode(27);
      expect(output.lastIndexOf(`${esc}[?25h`), text).toBeGreaterThan(output.lastIndexOf(`${esc}[?25l`));
      // Line wrapping, which the bar turns off, is on again (else the shell cuts every longer
      // line at the terminal's width), and the bar's line is ended before the shell's prompt.
      expect(output.lastIndexOf(`${esc}[?7h`), text).toBeGreaterThan(output.lastIndexOf(`${esc}[?7l`));
      expect(output.endsWith(`${esc}[?25h${esc}[?7h\r\n`), JSON.stringify(output.slice(-80))).toBe(true);
      // The log lines came out pretty but without color codes.
      expect(text).toMatch(/^\[\d\d:\d\d:\d\dZ\] INFO: run started$/m);
      expect(output).not.toMatch(new RegExp(`${esc}\\[3\\dm`));
    } finally {
      await ws.close();
    }
  });

  it.runIf(hasScript)('a dry run ends its bar finished, not in its planning phase', { timeout: 60_000 }, async () => {
    const ws = await createWorkspace();
    try {
      ws.write('crm.csv', 'Email\na@example.com\nb@example.com\n');
      ws.write('crm.yaml', 'account_id: emu-account\nsource: { path: crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email }\n');
      const { code, output } = await runInTerminal(['run', '--dry-run', 'crm.yaml'], { cwd: ws.dir, env: ws.env });
      const screen = await render(output);
      const text = screen.join('\n');
      expect(code, text).toBe(0);
      const bars = screen.filter((l) => l.startsWith('crm ') && l.includes(' | '));
      expect(bars, text).toHaveLength(1);
      expect(bars[0]).toMatch(/^crm finishing \|█+\| 100% \| 2 rows, [\d,]+ rows\/s \| 0 sent \| 0 requests, 0 retries \| ETA 0s$/);
    } finally {
      await ws.close();
    }
  });

  it.runIf(hasScript)('TERM=dumb: no progress bar and no colors', { timeout: 60_000 }, async () => {
    const ws = await createWorkspace();
    try {
      ws.write('crm.csv', 'Email\na@example.com\nb@example.com\n');
      ws.write('crm.yaml', 'account_id: emu-account\nsource: { path: crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email }\n');
      const { code, output } = await runInTerminal(['run', 'crm.yaml'], { cwd: ws.dir, env: ws.env, term: 'dumb' });
      const text = (await render(output)).join('\n');
      expect(code, text).toBe(0);
      expect(text).toMatch(/^\[\d\d:\d\d:\d\dZ\] INFO: run finished$/m);
      expect(text).toMatch(/^ {2}added +2$/m);
      // Not one control sequence: no bar, no hidden cursor, no colors.
      expect(output).not.toContain(String.fromCharCode(27));
    } finally {
      await ws.close();
    }
  });

  it.runIf(hasScript)('auth login asks for the PIN in the terminal and stores working credentials', { timeout: 60_000 }, async () => {
    const ws = await createWorkspace();
    try {
      const env = { ...ws.env, ADSYNC_ACME_CONSUMER_KEY: ws.emulator.credentials.consumerKey, ADSYNC_ACME_CONSUMER_SECRET: ws.emulator.credentials.consumerSecret };
      // The operator opens the address, approves, and types the PIN the page shows (the
      // emulator's admin shortcut gives the same PIN).
      const pinFor = async (output: string): Promise<string> => {
        const token = /oauth_token=([\w-]+)/.exec(output)?.[1] ?? '';
        const answer = (await (await fetch(`${ws.emulator.url}/_emulator/pin?oauth_token=${encodeURIComponent(token)}`)).json()) as { pin: string };
        return `${answer.pin}\r`;
      };
      const { code, output, typed } = await runInTerminal(['auth', 'login', '--profile', 'acme'], { cwd: ws.dir, env, keys: [{ when: /PIN shown after approving: /, type: pinFor }] });
      const text = (await render(output)).join('\n');
      expect(typed, text).toBe(1);
      expect(code, text).toBe(0);
      expect(text).toMatch(/^Authorized as @emulator_user \(user 1000000000000000001\)\. Profile "acme" is stored in .*credentials\.json \(mode 0600\)\.$/m);
      // The stored profile works: a run with `credentials: acme` and no token in the environment.
      ws.write('crm.csv', 'Email\na@example.com\n');
      ws.write('crm.yaml', 'account_id: emu-account\ncredentials: acme\nsource: { path: crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email }\n');
      const run = await ws.cli(['run', 'crm.yaml', '--json'], { ...env, ADSYNC_CONSUMER_KEY: undefined, ADSYNC_CONSUMER_SECRET: undefined, ADSYNC_ACCESS_TOKEN: undefined, ADSYNC_ACCESS_TOKEN_SECRET: undefined });
      expect(run.code, run.stderr).toBe(0);
      expect(summaries(run)[0]).toMatchObject({ status: 'success', added: 1 });
    } finally {
      await ws.close();
    }
  });

  it.runIf(hasScript)('auth login: Ctrl-C or Ctrl-D at the PIN prompt ends it as no PIN entered (exit 2, what to do), not as a bug in adsync', { timeout: 60_000 }, async () => {
    const ws = await createWorkspace();
    try {
      const env = { ...ws.env, ADSYNC_ACME_CONSUMER_KEY: ws.emulator.credentials.consumerKey, ADSYNC_ACME_CONSUMER_SECRET: ws.emulator.credentials.consumerSecret };
      for (const key of [CTRL_C, '\x04']) {
        const { code, output, typed } = await runInTerminal(['auth', 'login', '--profile', 'acme'], { cwd: ws.dir, env, keys: [{ when: /PIN shown after approving: /, type: key }] });
        const text = (await render(output)).join('\n');
        expect(typed, text).toBe(1);
        expect(code, text).toBe(2);
        expect(text).not.toContain('internal error');
        expect(text).toMatch(/^adsync: no PIN was entered: the authorization was not finished and nothing was stored$/m);
        expect(text).toMatch(/^ {2}hint: run `adsync auth login --profile acme` again and enter the PIN shown after approving \(or add --no-prompt to finish later with --pin\)$/m);
      }
    } finally {
      await ws.close();
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
      expect(plain).toMatch(/^\[\d\d:\d\d:\d\dZ\] WARN: retrying API call\n {4}detail: "sent with \[redacted\] in it"\n$/);
    } finally {
      forgetSecrets();
    }
  });

  it("pretty log lines are timed in UTC, which they say (Z), as every other time adsync prints: not the machine's zone", () => {
    const lines: string[] = [];
    const zone = process.env.TZ;
    process.env.TZ = 'Asia/Kolkata';
    vi.useFakeTimers({ now: Date.parse('2026-03-29T00:59:58.250Z') });
    try {
      const logger = createLogger({ pretty: true, color: false, write: (line) => lines.push(line) });
      logger.info({ nextRun: '2026-03-29T01:00:00.000Z' }, 'job scheduled');
      expect(lines).toEqual(['[00:59:58Z] INFO: job scheduled\n    nextRun: "2026-03-29T01:00:00.000Z"\n']);
    } finally {
      vi.useRealTimers();
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it('the ETA of a phase comes from its share done so far, and is "-" while that is unknown', () => {
    const etaText = (fractionDone: number | undefined, elapsedMs: number): string => formatEta(etaSeconds(fractionDone, elapsedMs));
    expect(etaText(undefined, 5_000)).toBe('-');
    expect(etaText(0, 5_000)).toBe('-');
    expect(etaText(0.5, 10_000)).toBe('10s');
    expect(etaText(0.25, 30_000)).toBe('1m30s');
    expect(etaText(0.1, 600_000)).toBe('1h30m');
    expect(etaText(1, 7_000)).toBe('0s');
    // Done as the phase starts (the bar's last state, 'finishing'): nothing left, not unknown.
    expect(etaText(1, 0)).toBe('0s');
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
