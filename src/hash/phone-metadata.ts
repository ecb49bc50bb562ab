/**
 * The libphonenumber-js metadata adsync parses and validates phone numbers with: 'max'.
 *
 * Measured on this machine (libphonenumber-js 1.13.16, Node 20, one core), see
 * test/hash/throughput.bench.ts and test/hash/phone-metadata.test.ts:
 * - accuracy: 'min' validates by each country's general number pattern and lengths only;
 *   'max' also checks the number-type patterns (fixed line, mobile, toll free, ...). On 49,000
 *   numbers made by randomising the last digits of every country's example mobile number, 'min'
 *   accepted 3,725 (7.6%) that 'max' rejects as unallocated, and rejected none that 'max'
 *   accepts (FR, IN, BR, JP and MX among those with differences; US, GB, DE and AU none).
 * - speed: libphonenumber-js parse + isValid of formatted national and international numbers
 *   of 12 countries: 'min' ~124k/s, 'max' ~105k/s in the bench (~180k/s vs ~145k/s for bare
 *   example numbers in a plain Node loop): 'max' costs 15-25% more per number. Through
 *   normalizePhoneNumber (trim, country, parse, isValid, E.164) 'max' runs ~100k numbers/s.
 * A number that 'min' wrongly accepts can never match a user yet is sent and counted as
 * valid; 'max' reports it as rejected instead. Its cost is a fraction of the per-row budget
 * (either clears the ~40k numbers/s DESIGN.md budgets for a 1M-row export), and its 157 kB of JSON are loaded
 * once per process, so accuracy wins.
 *
 * phone-fast-path.ts reads this same metadata (its compiled expressions cached per country)
 * and gives libphonenumber-js's answer for common shapes about ten times faster; see
 * test/hash/phone-fast-path.bench.ts.
 *
 * Both the library and the metadata are loaded on first use, through the package's CommonJS
 * build (require keeps the normalizers synchronous): only a job that reads phone numbers or
 * country codes uses them, and loading them took ~60 ms (72 modules) in every thread that
 * hashes, the main thread and each export-reading worker, for an email-only export too.
 */
import { createRequire } from 'node:module';
import type * as PhoneLibrary from 'libphonenumber-js/core';
import type { MetadataJson } from 'libphonenumber-js/core';

const load = createRequire(import.meta.url);
let library: typeof PhoneLibrary | undefined;
let metadata: MetadataJson | undefined;

/** libphonenumber-js's functions, of its core build: each call is given phoneMetadata(). */
export function phoneLibrary(): typeof PhoneLibrary {
  library ??= load('libphonenumber-js/core') as typeof PhoneLibrary;
  return library;
}

/** The 'max' metadata. */
export function phoneMetadata(): MetadataJson {
  metadata ??= load('libphonenumber-js/max/metadata') as MetadataJson;
  return metadata;
}
