/**
 * README's "Running it for real" examples, taken from README.md as written: the systemd unit
 * must mean to systemd what its comments say.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The body of the first fenced block of `lang` after the line starting with `after`. */
function fencedBlock(after: string, lang: string): string {
  const start = README.indexOf(after);
  expect(start, `README has "${after}"`).toBeGreaterThanOrEqual(0);
  const open = README.indexOf('```' + lang + '\n', start);
  const body = open + lang.length + 4;
  return README.slice(body, README.indexOf('\n```', body));
}

describe('README: running it for real', () => {
  it('the systemd unit has no text after a value: systemd reads a "#" there as part of the value', () => {
    const unit = fencedBlock('A systemd unit for the scheduler', 'ini');
    const settings = unit.split('\n').filter((line) => /^[A-Za-z]+=/.test(line));
    expect(settings.length).toBeGreaterThan(5);
    // systemd has comments only on lines of their own: `TimeoutStopSec=300   # ...` is not
    // 300 s (it is ignored: the default 90 s), and `EnvironmentFile=/etc/adsync/env   # ...`
    // names a file that does not exist.
    expect(settings.filter((line) => /\s[#;]/.test(line))).toEqual([]);
    expect(unit).toMatch(/^TimeoutStopSec=\d+$/m);
    expect(unit).toMatch(/^EnvironmentFile=\/etc\/adsync\/env$/m);
  });
});
