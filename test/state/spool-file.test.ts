/** The temporary spool file: what it says when the temporary folder cannot take it. */
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StateError } from '../../src/errors.js';
import { SpoolFile } from '../../src/state/spool-file.js';

describe('SpoolFile', () => {
  it('names the folder and what to do when it cannot create its file (a StateError, not an internal error)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'adsync-spool-'));
    writeFileSync(join(dir, 'a-file'), '');
    const notAFolder = join(dir, 'a-file');
    let caught: unknown;
    try {
      new SpoolFile('scan', notAFolder).close();
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(StateError);
    expect((caught as StateError).message).toMatch(new RegExp(`^cannot create a temporary file in ${notAFolder}: ENOTDIR`));
    expect((caught as StateError).hint).toContain('TMPDIR');
  });

  it('reads back what was appended, and leaves no file behind', () => {
    const dir = mkdtempSync(join(tmpdir(), 'adsync-spool-'));
    const spool = new SpoolFile('scan', dir);
    expect(readdirSync(dir)).toEqual([]);
    const a = spool.append('first');
    const b = spool.append(Buffer.from('second'));
    expect(spool.size).toBe(11);
    expect(spool.read(a, 5).toString()).toBe('first');
    expect(spool.read(b, 6).toString()).toBe('second');
    spool.close();
    expect(readdirSync(dir)).toEqual([]);
  });
});
