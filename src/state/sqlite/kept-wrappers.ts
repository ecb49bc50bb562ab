/**
 * Keeps better-sqlite3's native objects from ever being garbage collected.
 *
 * better-sqlite3 12's connections, statements and iterators derive from node::ObjectWrap. Built
 * against the headers of Node 24.19 or later (nodejs/node#65446), ObjectWrap's destructor aborts
 * the process (`Assertion failed: (env) != nullptr` in RemoveEnvironmentCleanupHook) when V8
 * collects such an object in a garbage collection that runs outside a JavaScript context, as one
 * started while promise continuations run does: an audience run of a few hundred thousand rows
 * died that way every time on Node 24.21. better-sqlite3 13 does not do that, but it needs Node 22.
 *
 * So none of them becomes garbage while its thread lives (at a thread's end Node deletes them
 * itself, in its context): every connection opened stays referenced, closed too (a closed one is
 * a few hundred bytes), and its statements are prepared once per SQL text and handed out again
 * (the same text gives the same answers), which keeps their number that of the SQL texts adsync
 * uses. A statement is handed out again only while it is in its first state: not iterating,
 * and never switched to raw, pluck or expand rows, safe integers or bound parameters. Only the
 * sole holder of a statement may switch it (`db.prepare(sql).pluck()` on a text not prepared
 * before), and keeps it for itself: the next request for the text gets a new statement, so a
 * text prepared and switched on every call adds a statement every time. Switching one handed out
 * more than once throws, since it would switch it for its other holders too. Statements that
 * return raw rows are shared among those who want raw rows: rawStatement(db, sql). Iterators are
 * kept too. `db.pragma` reads and writes through the shared statements.
 */
import type Database from 'better-sqlite3';

type Db = Database.Database;
type Statement = Database.Statement<unknown[], unknown>;

/** Every connection opened by this thread, for the thread's life. */
const connections: Db[] = [];
const rawStatements = new WeakMap<Db, (source: string) => Statement>();

/** Methods that change a statement for the one who asked for it. */
const SWITCHES = ['raw', 'pluck', 'expand', 'safeIntegers', 'bind'] as const;

/** The statement for `source` returning raw rows (arrays), shared like db.prepare's. */
export function rawStatement(db: Db, source: string): Statement {
  const raw = rawStatements.get(db);
  if (raw === undefined) throw new Error('rawStatement: a connection opened without keepWrappers');
  return raw(source);
}

export function keepWrappers(db: Db): Db {
  connections.push(db);
  const prepare = db.prepare.bind(db) as (source: string) => Statement;
  const claimed = new WeakSet<Statement>();
  const handedOut = new WeakMap<Statement, number>();
  const iterators: unknown[] = [];

  const newStatement = (source: string, raw: boolean): Statement => {
    const statement = prepare(source);
    if (raw) statement.raw(true);
    for (const name of SWITCHES) {
      const method = (statement[name] as (...args: unknown[]) => unknown).bind(statement);
      statement[name] = ((...args: unknown[]) => {
        if (raw || (handedOut.get(statement) ?? 0) > 1) {
          throw new Error(`${name}() on a statement that is shared (kept-wrappers.ts): prepare it once for the code that needs it (${source.slice(0, 60)})`);
        }
        claimed.add(statement);
        method(...args);
        return statement;
      });
    }
    const iterate = statement.iterate.bind(statement);
    statement.iterate = (...params: unknown[]) => {
      const iterator = iterate(...params);
      iterators.push(iterator);
      return iterator;
    };
    return statement;
  };

  const sharing = (raw: boolean): ((source: string) => Statement) => {
    const bySql = new Map<string, Statement[]>();
    return (source) => {
      let statements = bySql.get(source);
      if (statements === undefined) {
        statements = [];
        bySql.set(source, statements);
      }
      let statement = statements.find((s) => !s.busy && !claimed.has(s));
      if (statement === undefined) {
        statement = newStatement(source, raw);
        statements.push(statement);
      }
      handedOut.set(statement, (handedOut.get(statement) ?? 0) + 1);
      return statement;
    };
  };

  const shared = sharing(false);
  rawStatements.set(db, sharing(true));
  db.prepare = shared as never;
  db.pragma = ((source: string, options?: { simple?: boolean }) => {
    const statement = shared(`PRAGMA ${source}`);
    if (!statement.reader) {
      statement.run();
      return options?.simple === true ? undefined : [];
    }
    if (options?.simple !== true) return statement.all();
    const row = statement.get() as Record<string, unknown> | undefined;
    return row === undefined ? undefined : Object.values(row)[0];
  });
  return db;
}
