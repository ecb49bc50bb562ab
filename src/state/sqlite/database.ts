/**
 * Opening the SQLite state database: WAL journal (readers never block the writer, and a
 * killed process loses nothing committed), a busy timeout for several processes sharing
 * one file, temporary tables on disk (scans of huge exports must not grow memory), and
 * forward migrations.
 */
import Database from 'better-sqlite3';
import { accessSync, closeSync, constants, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { StateError } from '../../errors.js';
import { keepWrappers } from './kept-wrappers.js';
import { MIGRATIONS } from './schema.js';

export type Db = Database.Database;

/** How long opening waits for other processes holding the file. */
const BUSY_TIMEOUT_MS = 10_000;

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Puts the file in WAL mode (a property of the file: after the first open there is nothing to
 * do). Converting a new file fails at once with SQLITE_BUSY, without SQLite's busy handler,
 * while another process is writing it in rollback mode, as the first of two processes
 * opening a new file together is: so a busy conversion is tried again, within the timeout.
 */
function useWal(db: Db): void {
  const until = Date.now() + BUSY_TIMEOUT_MS;
  for (let wait = 5; ; wait = Math.min(wait * 2, 200)) {
    try {
      if (db.pragma('journal_mode', { simple: true }) === 'wal') return;
      db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() >= until) throw error;
      sleepSync(wait);
    }
  }
}

/**
 * SQLite opens a file it cannot write read-only without a word, and the first write (the job's
 * lock) would fail far from here: refused at once instead.
 */
function requireWritable(path: string): void {
  for (const [target, what] of [
    [path, 'file'],
    [dirname(path), 'folder (SQLite writes its -wal and -shm files next to the database)'],
  ] as const) {
    if (target === path && !existsSync(path)) continue;
    try {
      accessSync(target, constants.W_OK);
    } catch (error) {
      throw new StateError(`cannot open the state database ${path}: its ${what} is not writable by this user`, {
        cause: error,
        hint: 'give the user running adsync write access to the file and its folder, or point ADSYNC_STATE (or `state:` in config/adsync.yaml) at a writable path',
      });
    }
  }
}

/**
 * What to do about a database that cannot be opened or written, by SQLite's error code; or
 * about better-sqlite3's native module, which Node refuses when it was built for another Node
 * version (after Node was upgraded under adsync) and which is missing when it was never built.
 */
function openFailureHint(code: unknown, message = ''): string {
  if (code === 'ERR_DLOPEN_FAILED' || message.startsWith('Could not locate the bindings file')) {
    return `better-sqlite3 (the state database's driver) cannot be loaded: it was built for another Node.js version (this is ${process.version}), or not built: run \`npm rebuild better-sqlite3\` in adsync's folder`;
  }
  if (code === 'SQLITE_BUSY') return `another process kept it locked for more than ${BUSY_TIMEOUT_MS / 1000} s: see which adsync is running (adsync runs), then try again`;
  if (code === 'SQLITE_FULL') return 'the disk holding it (or its -wal file) is full: make room there, or move it to a disk with room, then run again';
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
    return 'the file is not an adsync state database, or it is damaged: move it aside (keep it to look at) and run again; audience members are then sent again in full and a catalog state is rebuilt from the service (README: Troubleshooting)';
  }
  return 'check the path (ADSYNC_STATE or `state:` in config/adsync.yaml) and its permissions';
}

/**
 * Runs a write of the state database (a job's lock, the run history): an SQLite failure (the
 * file locked by another process for longer than the busy timeout, a full disk) becomes a
 * StateError that names the file and what to do, not an internal error.
 */
export function writeState<T>(db: Db, write: () => T): Promise<T> {
  try {
    return Promise.resolve(write());
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return Promise.reject(new StateError(`cannot write to the state database ${db.name}: ${(error as Error).message}`, { cause: error, hint: openFailureHint(code) }));
  }
}

/**
 * The state holds hashed personal data (audience members) and run history: a new file is made
 * mode 0600 before SQLite opens it (SQLite would make it 0644 under the usual umask), and its
 * -wal and -shm files, which SQLite makes with the database's mode, follow. The folders made
 * for it are 0700. An existing file keeps its mode.
 */
function createPrivate(path: string): void {
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  } catch (error) {
    // A parent the user cannot write (/var/lib/adsync, not made yet), a file in the way.
    throw new StateError(`cannot open the state database ${path}: ${(error as Error).message}`, { cause: error, hint: openFailureHint(undefined) });
  }
  requireWritable(path);
  try {
    closeSync(openSync(path, 'wx', 0o600));
  } catch (error) {
    if ((error as { code?: unknown }).code === 'EEXIST') return;
    throw new StateError(`cannot open the state database ${path}: ${(error as Error).message}`, { cause: error, hint: openFailureHint(undefined) });
  }
}

/** The state's page cache (KiB), of the main connection and of another thread's reader. */
const STATE_CACHE_KIB = 16000;

/** A connection that could not be opened or set up, as a StateError that names the file and says what to do. */
function openFailure(path: string, error: unknown): StateError {
  return new StateError(`cannot open the state database ${path}: ${(error as Error).message}`, {
    cause: error,
    hint: openFailureHint((error as { code?: unknown }).code, (error as Error).message),
  });
}

export function openDatabase(path: string): Db {
  if (path !== ':memory:') createPrivate(path);
  let db: Db | undefined;
  try {
    // Never garbage: see kept-wrappers.ts (Node 24.19+ aborts when one is collected).
    db = keepWrappers(new Database(path, { timeout: BUSY_TIMEOUT_MS }));
    useWal(db);
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma('temp_store = FILE');
    // Page caches: 16 MB for the state, 4 MB for the temporary scan tables. Scans are read in
    // index order, so a larger cache buys little, and memory must stay flat (measured: the
    // 1M-row benchmark's peak RSS follows these numbers closely).
    db.pragma(`cache_size = -${STATE_CACHE_KIB}`);
    db.pragma('temp.cache_size = -4000');
  } catch (error) {
    db?.close();
    throw openFailure(path, error);
  }
  migrate(db, path);
  return db;
}

/**
 * A connection that only reads a state database another connection of this process opened
 * (and migrated): another thread's, for lookups beside the main thread's work. Its page cache
 * is the main connection's size. A failure is a StateError that names the file.
 */
export function openReader(path: string): Db {
  let db: Db | undefined;
  try {
    db = keepWrappers(new Database(path, { readonly: true, fileMustExist: true, timeout: BUSY_TIMEOUT_MS }));
    db.pragma(`cache_size = -${STATE_CACHE_KIB}`);
    return db;
  } catch (error) {
    db?.close();
    throw openFailure(path, error);
  }
}

/** A read of the state database that failed (the file locked for longer than the busy timeout, damaged), as a StateError that names the file. */
export function readFailure(db: Db, error: unknown): StateError {
  return new StateError(`cannot read the state database ${db.name}: ${(error as Error).message}`, { cause: error, hint: openFailureHint((error as { code?: unknown }).code) });
}

function newerSchema(path: string, version: number): StateError {
  return new StateError(`the state database ${path} was written by a newer adsync (schema ${version}); upgrade adsync`);
}

/**
 * Migrates the database forward, inside one write transaction. A failure (the disk full, the
 * file locked by another process for longer than the busy timeout) leaves it at its version,
 * and is a StateError naming the file and what to do, as a failed open is.
 */
function migrate(db: Db, path: string): void {
  try {
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > MIGRATIONS.length) throw newerSchema(path, version);
    if (version === MIGRATIONS.length) return;
    // Several processes may open a new database at once (two schedulers starting together):
    // the version is read again under the write lock, so only the first one migrates, and one
    // that a newer adsync upgraded meanwhile is refused (not set back to this version).
    db.transaction(() => {
      const current = db.pragma('user_version', { simple: true }) as number;
      if (current > MIGRATIONS.length) throw newerSchema(path, current);
      for (let v = current; v < MIGRATIONS.length; v++) {
        db.exec(MIGRATIONS[v] ?? '');
      }
      db.pragma(`user_version = ${MIGRATIONS.length}`);
    }).immediate();
  } catch (error) {
    db.close();
    if (error instanceof StateError) throw error;
    throw new StateError(`cannot open the state database ${path}: ${(error as Error).message}`, { cause: error, hint: openFailureHint((error as { code?: unknown }).code) });
  }
}
