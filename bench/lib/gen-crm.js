/**
 * Seeded CRM exports, written by a fast streaming writer (~1M rows/s).
 *
 *   kind 'full':  Customer ID,Name,Email,Phone,Twitter,Country
 *   kind 'email': Email
 *
 * What the rows look like (shares of rows, roughly):
 * - Email: first.last / firstlast / f_last + a unique base-36 tag @ a mix of webmail and
 *   company domains; 60% lower case, 25% Capitalized, 10% UPPER, 5% padded with spaces;
 *   1% repeat an earlier row's address in another case (the same person exported twice).
 * - Phone (90% of full rows): 10 countries (US 42%, GB, CA, DE, FR, AU, IN, BR, MX, JP);
 *   70% written nationally (the Country column says which country; for US rows it is empty
 *   a third of the time and the job's default_country US applies), 30% internationally with
 *   +, 1% with the 00 prefix; unique numbers, almost all valid (see phone-pool.js).
 * - Twitter (45%): with or without @, mixed case, 2% as a profile URL.
 * - Customer ID: crm-00000001 ..., 3% padded with spaces. Name: "First Last", 3% quoted
 *   "Last, First" (exercises CSV quoting).
 * - Country: alpha-2 in any case, sometimes padded.
 * - Junk, ~2% of rows: a broken email, phone or handle (text, too short, unknown calling
 *   code, too long), or a row with no identifier at all (a reject).
 *
 * The file is written to <path>.tmp and renamed when complete, so a cached file is whole.
 */
import { buildPhonePools, COUNTRIES } from './phone-pool.js';
import { mulberry32 } from './prng.js';
import { generatedFile } from './generated-file.js';

export const CRM_GENERATOR_VERSION = 1;

const FIRST = ['James', 'Mary', 'Robert', 'Patricia', 'John', 'Jennifer', 'Michael', 'Linda', 'David', 'Elizabeth', 'William', 'Barbara', 'Richard', 'Susan', 'Joseph', 'Jessica', 'Thomas', 'Sarah', 'Carlos', 'Maria', 'Wei', 'Yuki', 'Priya', 'Ahmed', 'Fatima', 'Lukas', 'Sophie', 'Mateo', 'Olivia', 'Noah', 'Emma', 'Liam', 'Aarav', 'Ana', 'Hiroshi', 'Chloe', 'Lucas', 'Amelie', 'Diego', 'Grace', 'Ada', 'Alan', 'Edsger', 'Radia', 'Barbara', 'Donald', 'Katherine', 'Leslie', 'Niklaus', 'Margaret'];
const LAST = ['Smith', 'Johnson', 'Williams', 'Brown', 'Jones', 'Garcia', 'Miller', 'Davis', 'Rodriguez', 'Martinez', 'Hernandez', 'Lopez', 'Gonzalez', 'Wilson', 'Anderson', 'Thomas', 'Taylor', 'Moore', 'Jackson', 'Martin', 'Lee', 'Perez', 'Thompson', 'White', 'Harris', 'Sanchez', 'Clark', 'Ramirez', 'Lewis', 'Robinson', 'Muller', 'Schmidt', 'Dubois', 'Tanaka', 'Sato', 'Singh', 'Patel', 'Silva', 'Santos', 'Kowalski', 'Nguyen', 'Kim', 'Lovelace', 'Turing', 'Dijkstra', 'Liskov', 'Knuth', 'Hopper', 'Lamport', 'Wirth'];
const WEBMAIL = ['gmail.com', 'yahoo.com', 'hotmail.com', 'outlook.com', 'icloud.com', 'aol.com', 'gmx.de', 'web.de', 'orange.fr', 'yahoo.co.uk', 'btinternet.com', 'rediffmail.com', 'uol.com.br', 'yahoo.co.jp', 'bigpond.com', 'shaw.ca'];
const COMPANY = ['example.com', 'acme-corp.com', 'contoso.co.uk', 'globex.io', 'initech.net', 'umbrella.de', 'hooli.xyz', 'stark-industries.com'];

const JUNK_EMAILS = ['n/a', 'john.doe(at)example.com', 'jane@', '@example.com', 'no email', 'a@b', 'x@y.com; z@w.com', 'first last@example.com', 'unknown'];
const JUNK_PHONES = ['555-CALL-NOW', '12', 'n/a', '+999 1234 5678', '0000', '123456789012345678', 'call me', '+1 (555) 0'];
const JUNK_HANDLES = ['not a handle', '@this_handle_is_too_long_2024', 'x.com/status/123', '@@double', 'hello world!'];

const TAG_BASE = 36;

function capitalize(s) {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/**
 * Writes `rows` data rows to `path`. kind: 'full' | 'email'. Returns {rows, bytes}.
 */
export function generateCrm({ path, rows, seed, kind }) {
  const rng = mulberry32(seed);
  const pools = kind === 'full' ? buildPhonePools(seed) : undefined;
  const countryWeights = Object.fromEntries(Object.entries(COUNTRIES).map(([c, s]) => [c, s.weight]));
  // A cumulative table for fast country picks.
  const countryList = Object.keys(countryWeights);
  const cumulative = [];
  let acc = 0;
  for (const c of countryList) {
    acc += countryWeights[c];
    cumulative.push(acc);
  }
  const pickCountry = () => {
    const r = rng.next() * acc;
    for (let i = 0; i < cumulative.length; i++) if (r < cumulative[i]) return countryList[i];
    return countryList[0];
  };
  const counters = Object.fromEntries(countryList.map((c) => [c, 0]));
  const recentEmails = [];

  const file = generatedFile(path);
  const push = (text) => file.push(text);

  push(kind === 'full' ? 'Customer ID,Name,Email,Phone,Twitter,Country\n' : 'Email\n');

  for (let i = 1; i <= rows; i++) {
    const first = rng.pick(FIRST);
    const last = rng.pick(LAST);
    const tag = i.toString(TAG_BASE);
    const junk = rng.chance(0.02) ? rng.int(kind === 'full' ? 4 : 1) : -1; // 0 email, 1 phone, 2 handle, 3 empty row

    // Email
    let email;
    if (junk === 0) email = rng.pick(JUNK_EMAILS);
    else if (recentEmails.length > 0 && rng.chance(0.01)) {
      const prior = rng.pick(recentEmails);
      email = rng.chance(0.5) ? prior.toUpperCase() : ` ${prior} `;
    } else {
      const style = rng.int(3);
      const f = first.toLowerCase();
      const l = last.toLowerCase();
      const local = style === 0 ? `${f}.${l}${tag}` : style === 1 ? `${f}${l}${tag}` : `${f.charAt(0)}_${l}${tag}`;
      const domain = rng.chance(0.8) ? rng.pick(WEBMAIL) : rng.pick(COMPANY);
      const base = `${local}@${domain}`;
      if (recentEmails.length < 1000) recentEmails.push(base);
      else if (rng.chance(0.01)) recentEmails[rng.int(1000)] = base;
      const c = rng.next();
      if (c < 0.6) email = base;
      else if (c < 0.85) email = `${local.split('.').map(capitalize).join('.').replace(/_(\w)/, (_, x) => `_${x.toUpperCase()}`)}@${domain}`;
      else if (c < 0.95) email = base.toUpperCase();
      else email = `  ${base} `;
    }

    if (kind === 'email') {
      push(`${email.includes(',') ? `"${email}"` : email}\n`);
      continue;
    }

    // Phone and country
    const country = pickCountry();
    let phone = '';
    let countryCell = '';
    if (junk === 1) {
      phone = rng.pick(JUNK_PHONES);
      countryCell = country;
    } else if (rng.chance(0.9)) {
      const pool = pools[country];
      const n = counters[country]++;
      const p = n % pool.prefixes.length;
      // A bijection of the counter onto (prefix, tail): unique numbers with varied tails.
      const tail = (Math.floor(n / pool.prefixes.length) * 7331 + p * 13) % 10000;
      const national = pool.prefixes[p] + String(tail).padStart(4, '0');
      const r = rng.next();
      if (r < 0.7) {
        phone = rng.pick(pool.national)(national);
        countryCell = country === 'US' && rng.chance(0.33) ? '' : country;
      } else if (r < 0.99) {
        phone = rng.pick(pool.international)(national);
        countryCell = rng.chance(0.5) ? country : '';
      } else {
        phone = `00${pool.cc} ${national}`;
        countryCell = country === 'US' || country === 'CA' ? 'GB' : country; // 00 is the call prefix outside NANP
      }
    } else {
      countryCell = rng.chance(0.5) ? country : '';
    }
    if (countryCell !== '') {
      const c = rng.next();
      if (c < 0.15) countryCell = countryCell.toLowerCase();
      else if (c < 0.18) countryCell = ` ${countryCell} `;
    }

    // Handle
    let handle = '';
    if (junk === 2) handle = rng.pick(JUNK_HANDLES);
    else if (rng.chance(0.45)) {
      const base = `${first.slice(0, 6)}${rng.chance(0.5) ? '_' : ''}${tag}`.slice(0, 15);
      const c = rng.next();
      const cased = c < 0.5 ? base : c < 0.8 ? base.toLowerCase() : base.toUpperCase();
      handle = rng.chance(0.02) ? `https://x.com/${cased}` : rng.chance(0.5) ? `@${cased}` : cased;
    }

    // Customer ID and name
    let id = `crm-${String(i).padStart(8, '0')}`;
    if (rng.chance(0.03)) id = ` ${id} `;
    const name = rng.chance(0.03) ? `"${last}, ${first}"` : `${first} ${last}`;

    if (junk === 3) push(`,${name},,,,${countryCell}\n`);
    else push(`${id},${name},${email.includes(',') || email.includes(';') ? `"${email}"` : email},${phone},${handle},${countryCell}\n`);
  }
  const bytes = file.finish();
  return { rows, bytes };
}
