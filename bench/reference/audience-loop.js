/**
 * The reference loop of the audience scenarios (1, 1b, 2): the work an audience sync cannot
 * avoid, done the obvious way on one thread, sending nothing. Written once and NOT tuned
 * afterwards: adsync is compared against it, so making it faster or slower moves every target.
 *
 * - csv-parse (records as arrays, the default), one record at a time from the stream;
 * - emails and handles: trim, lowercase (handles: drop one leading @);
 * - phones: libphonenumber-js (the 'max' metadata, as adsync validates with) parse with the
 *   row's country or the default US, isValid(), E.164 without the '+';
 * - every normalized email, phone and handle hashed with crypto.hash('sha256', value, 'hex');
 *   the partner id is trimmed (the API takes it unhashed).
 *
 * Usage: node bench/reference/audience-loop.js <file.csv>
 * Prints one JSON line: {rows, hashed, phones_valid, phones_invalid, seconds, sink}.
 */
import { parse } from 'csv-parse';
import { hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

const file = process.argv[2];
const started = process.hrtime.bigint();

const parser = createReadStream(file).pipe(parse());
let header;
let rows = 0;
let hashed = 0;
let phonesValid = 0;
let phonesInvalid = 0;
let sink = 0;
let col = {};

for await (const record of parser) {
  if (header === undefined) {
    header = record;
    col = {
      email: header.indexOf('Email'),
      phone: header.indexOf('Phone'),
      handle: header.indexOf('Twitter'),
      partner: header.indexOf('Customer ID'),
      country: header.indexOf('Country'),
    };
    continue;
  }
  rows++;
  const values = [];
  if (col.email >= 0) {
    const email = record[col.email].trim().toLowerCase();
    if (email !== '') values.push(email);
  }
  if (col.handle >= 0) {
    let handle = record[col.handle].trim().toLowerCase();
    if (handle.startsWith('@')) handle = handle.slice(1);
    if (handle !== '') values.push(handle);
  }
  if (col.phone >= 0 && record[col.phone].trim() !== '') {
    const country = (col.country >= 0 ? record[col.country].trim().toUpperCase() : '') || 'US';
    const phone = parsePhoneNumberFromString(record[col.phone], { defaultCountry: country });
    if (phone !== undefined && phone.isValid()) {
      values.push(phone.number.slice(1));
      phonesValid++;
    } else {
      phonesInvalid++;
    }
  }
  if (col.partner >= 0) sink += record[col.partner].trim().length;
  for (const value of values) {
    const digest = hash('sha256', value, 'hex');
    sink += digest.charCodeAt(0);
    hashed++;
  }
}

const seconds = Number(process.hrtime.bigint() - started) / 1e9;
process.stdout.write(`${JSON.stringify({ rows, hashed, phones_valid: phonesValid, phones_invalid: phonesInvalid, seconds, sink })}\n`);
