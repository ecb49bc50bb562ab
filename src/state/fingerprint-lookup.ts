/**
 * Opens a lookup of a catalog's saved raw fingerprints on the calling thread, through a
 * connection of its own (CatalogState.fingerprintLookupAddress says where): for a worker thread
 * that looks a feed's items up while the main thread cuts the feed. SQLite, the embedded
 * default, as in index.ts; kept apart from it so that such a thread loads only the lookup.
 */
import { openSqliteFingerprintLookup } from './sqlite/catalog-fingerprint-lookup.js';
import type { FingerprintLookup, FingerprintLookupAddress } from './store.js';

export function openFingerprintLookup(address: FingerprintLookupAddress): FingerprintLookup {
  return openSqliteFingerprintLookup(address);
}
