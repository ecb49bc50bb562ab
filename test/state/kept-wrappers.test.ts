/**
 * better-sqlite3's objects are never garbage (src/state/sqlite/kept-wrappers.ts): on Node 24.19
 * and later, one collected outside a JavaScript context aborts the process. The first test is
 * that crash: statements prepared and dropped while promise continuations run killed its child
 * process (exit 134, `Assertion failed: (env) != nullptr`) on Node 24.21 before the fix; on Node
 * 20 and 22, which never abort there, it passes either way. The others check that handing a
 * statement out again changes nothing for the code that asked for it.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../src/state/sqlite/database.js';
import { rawStatement } from '../../src/state/sqlite/kept-wrappers.js';

const DIST_DATABASE = pathToFileURL(join(import.meta.dirname, '..', '..', 'dist', 'state', 'sqlite', 'database.js')).href;

let db: Db | undefined;
afterEach(() => {
  db?.close();
  db = undefined;
});
const open = (): Db => (db = openDatabase(join(mkdtempSync(join(tmpdir(), 'adsync-kept-')), 's.sqlite')));

describe('better-sqlite3 objects are never garbage', () => {
  it('a process that prepares and drops statements between awaits, and closes and drops connections, lives (Node 24.19+ aborted)', () => {
    const script = `
      const { openDatabase } = await import(${JSON.stringify(DIST_DATABASE)});
      for (let c = 0; c < 20; c++) {
        const db = openDatabase(':memory:');
        db.exec('CREATE TABLE t (a)');
        let junk = [];
        for (let i = 0; i < 5000; i++) {
          await null;
          db.prepare('INSERT INTO t VALUES (?)').run(i);
          db.prepare('SELECT COUNT(*) AS n FROM t').get();
          db.pragma('user_version', { simple: true });
          junk.push({ i, s: 'x'.repeat(20) });
          if (junk.length > 1000) junk = [];
        }
        db.close();
      }
      process.stdout.write('lived');
    `;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 120_000 });
    expect({ status: child.status, signal: child.signal, stdout: child.stdout, stderr: child.stderr.slice(0, 500) }).toEqual({
      status: 0,
      signal: null,
      stdout: 'lived',
      stderr: '',
    });
  });

  it('hands out one statement per SQL text, and a new one while that one iterates', () => {
    const d = open();
    d.exec('CREATE TABLE t (a); INSERT INTO t VALUES (1), (2)');
    const first = d.prepare('SELECT a FROM t ORDER BY a');
    expect(d.prepare('SELECT a FROM t ORDER BY a')).toBe(first);
    const rows = first.iterate();
    expect(rows.next().value).toEqual({ a: 1 });
    const second = d.prepare('SELECT a FROM t ORDER BY a');
    expect(second).not.toBe(first);
    expect(second.all()).toEqual([{ a: 1 }, { a: 2 }]);
    expect(rows.next().value).toEqual({ a: 2 });
    expect(rows.next().done).toBe(true);
    expect(d.prepare('SELECT a FROM t ORDER BY a')).toBe(first);
  });

  it('keeps a statement switched to pluck (or bound) for the code that switched it, and refuses to switch a shared one', () => {
    const d = open();
    d.exec('CREATE TABLE t (a, b); INSERT INTO t VALUES (1, 2)');
    const plucked = d.prepare('SELECT a, b FROM t').pluck();
    const plain = d.prepare('SELECT a, b FROM t');
    expect(plain).not.toBe(plucked);
    expect(plucked.get()).toBe(1);
    expect(plain.get()).toEqual({ a: 1, b: 2 });
    const again = d.prepare('SELECT a, b FROM t');
    expect(again).toBe(plain);
    expect(() => again.pluck()).toThrow(/pluck\(\) on a statement that is shared/);
    expect(plain.get()).toEqual({ a: 1, b: 2 });
    const bound = d.prepare('SELECT b FROM t WHERE a = ?').bind(1);
    expect(bound.get()).toEqual({ b: 2 });
    expect(d.prepare('SELECT b FROM t WHERE a = ?')).not.toBe(bound);
    expect(d.prepare('SELECT b FROM t WHERE a = ?').get(1)).toEqual({ b: 2 });
  });

  it('shares statements that return raw rows among those who want raw rows, apart from the others', () => {
    const d = open();
    d.exec('CREATE TABLE t (a, b); INSERT INTO t VALUES (1, 2)');
    const raw = rawStatement(d, 'SELECT a, b FROM t');
    expect(raw.get()).toEqual([1, 2]);
    expect(rawStatement(d, 'SELECT a, b FROM t')).toBe(raw);
    expect(d.prepare('SELECT a, b FROM t').get()).toEqual({ a: 1, b: 2 });
    expect(() => raw.raw(false)).toThrow(/raw\(\) on a statement that is shared/);
    expect(raw.get()).toEqual([1, 2]);
  });

  it('reads and writes pragmas as better-sqlite3 does', () => {
    const d = open();
    expect(d.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(d.pragma('journal_mode')).toEqual([{ journal_mode: 'wal' }]);
    expect(d.pragma('user_version = 7')).toEqual([]);
    expect(d.pragma('user_version', { simple: true })).toBe(7);
    expect(d.pragma('integrity_check')).toEqual([{ integrity_check: 'ok' }]);
  });
});
