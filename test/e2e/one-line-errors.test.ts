/**
 * A service error whose message spans lines (LF, CRLF, a lone CR) or carries a terminal escape:
 * every place adsync prints or records it keeps it on one line, with nothing of it dropped and
 * no control character left raw: the `adsync: job ... failed: ...` line on stderr, the JSON
 * summary, the run history (`adsync runs`) and the alert.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorLines, summaries, workspacePerTest } from '../helpers/e2e.js';
import { startHook } from '../helpers/webhook.js';

const newWorkspace = workspacePerTest();

const USERS = 'POST /12/accounts/emu-account/custom_audiences/emu-audience/users';
/** What the service says, and how adsync writes it: line breaks as "; ", the escape visible. */
const SAID = 'bad value\nfor users\r\nsee the docs\rthen retry \u001b[31mnow\u001b[0m\n';
const WRITTEN = 'bad value; for users; see the docs; then retry \\x1b[31mnow\\x1b[0m';

/** No control character (line breaks included) but in the line endings of stdout and stderr. */
// eslint-disable-next-line no-control-regex -- finding them is its purpose
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/;

describe('error messages stay on one line', () => {
  for (const [kind, status, expected] of [
    ['a batch the service refused (400)', 400, `2 user records could not be delivered (${USERS} answered HTTP 400: INVALID_PARAMETER ${WRITTEN}); the next run sends them again`],
    ['a run stopped by the service (404)', 404, `${USERS} answered HTTP 404: NOT_FOUND ${WRITTEN}`],
  ] as const) {
    it(`${kind}: stderr, the JSON summary, the run history and the alert`, { timeout: 30_000 }, async () => {
      const ws = await newWorkspace();
      const hook = await startHook();
      try {
        appendFileSync(join(ws.dir, 'adsync.yaml'), `alerts:\n  webhook_url: "${hook.url('/hook')}"\n`);
        ws.write('crm.yaml', 'name: crm\naccount_id: emu-account\nsource: { path: crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  identifiers: { email: Email }\n');
        ws.write('crm.csv', 'Email\na@example.com\nb@example.com\n');
        ws.fault({ route: `POST /12/accounts/*/custom_audiences/*/users`, kind: 'status', status, message: SAID });

        const run = await ws.cli(['run', 'crm.yaml', '--json']);
        expect(run.code, run.stderr).toBe(1);
        const [summary] = summaries(run);
        expect(summary?.error).toBe(expected);
        // Every line of stderr is a JSON log line or adsync's own line, and the failure is one.
        const lines = run.stderr.split('\n').filter((l) => l !== '');
        expect(lines.filter((l) => !l.startsWith('{') && !l.startsWith('adsync: '))).toEqual([]);
        expect(errorLines(run.stderr)).toEqual([`adsync: job crm failed: ${expected}`]);
        expect(run.stderr.replace(/\n/g, '')).not.toMatch(RAW_CONTROL);

        const runs = await ws.cli(['runs']);
        expect(runs.code, runs.stderr).toBe(0);
        const rows = runs.stdout.split('\n').filter((l) => l !== '');
        expect(rows).toHaveLength(2);
        expect(rows[1]).toContain(expected);
        expect(runs.stdout.replace(/\n/g, '')).not.toMatch(RAW_CONTROL);

        await hook.waitForCalls(1);
        const alert = JSON.parse(hook.calls[0]?.body ?? '{}') as { reason: string; summary: { error: string } };
        expect(alert.reason).toBe(`run failed: ${expected}`);
        expect(alert.summary.error).toBe(expected);
      } finally {
        await hook.close();
      }
    });
  }

  it('the rejects file: an operation the service refused with a message that spans lines is one line of it', { timeout: 30_000 }, async () => {
    const ws = await newWorkspace();
    ws.write('crm.yaml', 'name: crm\naccount_id: emu-account\nsource: { path: crm.csv }\naudience:\n  custom_audience_id: emu-audience\n  mode: add\n  identifiers: { email: Email }\n');
    ws.write('crm.csv', 'Email\na@example.com\nb@example.com\n');
    ws.fault({ route: 'POST /12/accounts/*/custom_audiences/*/users', kind: 'operation_errors', message: SAID });
    const run = await ws.cli(['run', 'crm.yaml', '--json']);
    expect(run.code, run.stderr).toBe(1);
    const file = readFileSync(String(summaries(run)[0]?.rejects_file), 'utf8');
    expect(file.trim().split('\n').slice(1).sort()).toEqual(['1,0,,email', '2,0,,email'].map((l) => `${l},the service refused the operation: INVALID_PARAMETER ${WRITTEN}`));
  });
});
