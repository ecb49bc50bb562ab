/**
 * better-sqlite3 connections for the tests' own looks into a state database, kept from ever
 * being garbage as adsync's are (src/state/sqlite/kept-wrappers.ts): on Node 24.19 and later a
 * collected one can abort the test process.
 */
import Database from 'better-sqlite3';
import { keepWrappers } from '../../src/state/sqlite/kept-wrappers.js';

export function openTestDatabase(...args: ConstructorParameters<typeof Database>): Database.Database {
  return keepWrappers(new Database(...args));
}
