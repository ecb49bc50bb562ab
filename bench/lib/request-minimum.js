/**
 * Scenario 5: the lowest number of user-batch requests the service's limits allow for an
 * export, computed from the same data with adsync's own normalizers: each configured column
 * of each row through hashIdentifier() (dist/hash, the one entry point adsync uses for every
 * identifier value), identifiers deduplicated across rows (first row kept, as the state's
 * scan does), each row's identifiers as one user record in the wire format of the API
 * ({"email":["<hash>"],"phone_number":["<hash>"],...,"partner_user_id":["crm-1"]}, checked
 * against adsync's userJson() when dist/ still exports it with that shape).
 *
 * Limits: at most 5,000,000 bytes per body (envelope included) and 2500 operations per
 * request. The service counts operations, not users, and does not limit users per operation,
 * so the minimum puts one operation in each request:
 *   body = [{"operation_type":"Update","params":{"users":[u1,u2,...]}}]
 *   users per request: sum(bytes(u) + 1) <= 5,000,000 - envelope + 1   (n-1 commas)
 *   minimum = ceil(sum over users of (bytes(u) + 1) / (5,000,000 - envelope + 1))
 * (a bin-packing lower bound; users are < 1 KB against 5 MB bins, so filling requests in
 * order reaches it or exceeds it by one). The operation limit does not bind then; with
 * operations of U users it binds at users / (2500 x U) requests, also reported.
 *
 * The minimum groups each row's identifiers into one user record (the most compact legitimate
 * form, and what a row is); the same computed with one user record per identifier is reported
 * alongside, since that representation costs ~1.5% more bytes on an export with 3-4
 * identifiers per row.
 *
 * Only hashIdentifier is taken from dist/ (it is the stable entry point); the CSV is read
 * with csv-parse (the generated files are well-formed, so the rows are the same as adsync's
 * reader yields). The result is cached next to the data file, keyed by the content of the
 * dist/hash modules, so a change to normalization recomputes it.
 */
import { parse } from 'csv-parse';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export const MAX_BYTES = 5_000_000;
export const MAX_OPERATIONS = 2500;

const CACHE_VERSION = 3;

function distKey(root) {
  const h = createHash('sha256');
  h.update(String(CACHE_VERSION));
  const dir = join(root, 'dist', 'hash');
  for (const f of readdirSync(dir).filter((f) => f.endsWith('.js')).sort()) h.update(f).update(readFileSync(join(dir, f)));
  return h.digest('hex').slice(0, 12);
}

const FIELD_ORDER = ['email', 'phone_number', 'handle', 'twitter_id', 'device_id', 'partner_user_id'];

/** One user record as the API takes it: each field an array of values, hashes as is. */
export function recordJson(identifiers) {
  const parts = [];
  for (const field of FIELD_ORDER) {
    const values = identifiers.filter((id) => id.field === field).map((id) => (field === 'partner_user_id' ? JSON.stringify(id.value) : `"${id.value}"`));
    if (values.length > 0) parts.push(`"${field}":[${values.join(',')}]`);
  }
  return `{${parts.join(',')}}`;
}

/** Finds a column by exact name, then ignoring case and surrounding spaces (as adsync does). */
function findColumn(header, name) {
  const exact = header.indexOf(name);
  if (exact >= 0) return exact;
  return header.findIndex((h) => h.trim().toLowerCase() === name.trim().toLowerCase());
}

/**
 * file: the CSV; audience: {identifiers, countryColumn, defaultCountry} as in the job.
 * Returns {users, identifiers, user_bytes, envelope_bytes, minimum_requests, ...}.
 */
export async function audienceRequestMinimum({ root, file, audience, usersPerOperation = 100 }) {
  const cachePath = `${file}.minimum-${distKey(root)}.json`;
  if (existsSync(cachePath)) return { ...JSON.parse(readFileSync(cachePath, 'utf8')), cached: true };

  const dist = (m) => import(pathToFileURL(join(root, 'dist', m)).href);
  const { hashIdentifier } = await dist('hash/index.js');
  let distUserJson;
  try {
    distUserJson = (await dist('uploaders/audience-batch-builder.js')).userJson;
  } catch {
    distUserJson = undefined;
  }
  let formatChecked = 'not checked: dist has no userJson()';

  // (field, value) pairs already seen; hashes are keyed by their first 16 hex digits (64 bits:
  // no collision among millions), partner ids by their whole value.
  const seen = new Set();
  let users = 0;
  let identifiers = 0;
  let userBytes = 0; // sum of (bytes + 1) over users
  let maxUserBytes = 0;
  let perIdentifierBytes = 0; // the same identifiers, one user record each
  let header;
  let columns;
  let countryIndex = -1;
  let rowNumber = 0;
  for await (const values of createReadStream(file).pipe(parse({ relax_column_count: true }))) {
    if (header === undefined) {
      header = values.map((h) => h.trim());
      columns = Object.entries(audience.identifiers).map(([field, name]) => ({ field, index: findColumn(header, name) }));
      const missing = columns.filter((c) => c.index < 0);
      if (missing.length > 0) throw new Error(`${file}: no column for ${missing.map((c) => c.field).join(', ')}`);
      countryIndex = audience.countryColumn ? findColumn(header, audience.countryColumn) : -1;
      continue;
    }
    rowNumber += 1;
    if (values.length !== header.length) continue; // adsync rejects a ragged row
    const countryCell = countryIndex >= 0 ? values[countryIndex]?.trim() : undefined;
    const ctx = { country: countryCell === '' ? undefined : countryCell, defaultCountry: audience.defaultCountry };
    const kept = [];
    for (const { field, index } of columns) {
      const raw = values[index];
      if (raw === undefined || raw.trim() === '') continue;
      const result = hashIdentifier(field, raw, ctx);
      if (!result.ok) continue;
      const key = field === 'partner_user_id' ? `p${result.value}` : `${field.charAt(0)}${field.charAt(1)}${result.value.slice(0, 16)}`;
      if (seen.has(key)) continue;
      seen.add(key);
      kept.push({ field, value: result.value });
    }
    if (kept.length === 0) continue;
    const json = recordJson(kept);
    if (users < 1000 && typeof distUserJson === 'function') {
      try {
        const theirs = distUserJson({ row: rowNumber, identifiers: kept });
        if (typeof theirs !== 'string' || theirs.length <= 2) {
          formatChecked = 'not checked: dist userJson() takes another argument now; wire format per the API reference';
          distUserJson = undefined;
        } else if (Buffer.byteLength(theirs) !== Buffer.byteLength(json)) formatChecked = `DIFFERS from dist userJson: ${theirs} vs ${json}`;
        else if (formatChecked.startsWith('not')) formatChecked = 'same byte length as dist userJson (first 1000 users)';
      } catch {
        distUserJson = undefined;
      }
    }
    const bytes = Buffer.byteLength(json);
    for (const id of kept) perIdentifierBytes += Buffer.byteLength(recordJson([id])) + 1;
    users += 1;
    identifiers += kept.length;
    userBytes += bytes + 1;
    if (bytes > maxUserBytes) maxUserBytes = bytes;
  }
  const opOpen = '{"operation_type":"Update","params":{"users":[';
  const opClose = ']}}';
  const envelope = Buffer.byteLength(`[${opOpen}${opClose}]`);
  const capacity = MAX_BYTES - envelope + 1;
  const minimumByBytes = Math.ceil(userBytes / capacity);
  // Operations of usersPerOperation users (adsync's default), each adding its envelope.
  const operations = Math.ceil(users / usersPerOperation);
  const perOperation = Buffer.byteLength(opOpen) + Buffer.byteLength(opClose) + 1;
  const adsyncFormatBytes = userBytes + operations * perOperation;
  const result = {
    users,
    identifiers,
    user_bytes: userBytes,
    mean_user_bytes: users > 0 ? userBytes / users - 1 : 0,
    max_user_bytes: maxUserBytes,
    envelope_bytes: envelope,
    minimum_requests: Math.max(1, minimumByBytes),
    minimum_by_operations: 1,
    // With operations of usersPerOperation users (adsync's default) instead of one per request.
    users_per_operation: usersPerOperation,
    minimum_with_operations_of_n_users: Math.max(Math.ceil(adsyncFormatBytes / (MAX_BYTES - 1)), Math.ceil(operations / MAX_OPERATIONS)),
    operation_bound_with_operations_of_n_users: Math.ceil(operations / MAX_OPERATIONS),
    // If every identifier is sent as its own user record instead of one record per row.
    per_identifier_records: {
      user_bytes: perIdentifierBytes,
      minimum_requests: Math.max(1, Math.ceil(perIdentifierBytes / capacity)),
      exact_requests: perIdentifierBytes / capacity,
    },
    exact_requests: userBytes / capacity,
    record_format: formatChecked,
  };
  writeFileSync(cachePath, JSON.stringify(result, null, 2));
  return { ...result, cached: false };
}
