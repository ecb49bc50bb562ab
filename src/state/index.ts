export type * from './store.js';
import type { StateStore } from './store.js';
import { SqliteStateStore, type SqliteStoreOptions } from './sqlite/sqlite-store.js';

/** Opens the state store at `path` (SQLite, the embedded default). */
export function openStateStore(path: string, options?: SqliteStoreOptions): StateStore {
  return new SqliteStateStore(path, options);
}
