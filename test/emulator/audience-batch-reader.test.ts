/**
 * The fast reader of user-batch bodies against the general path (JSON.parse, then the
 * planner): over generated bodies, clean and adversarial (whitespace, key order, repeated and
 * unknown keys, escapes, wrong types and values, times, truncated and corrupted bytes), both
 * must give the same plan and the same membership afterwards, or the same error answer. The
 * bodies adsync writes, and clean generated ones, must take the fast path.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyAudienceBatch, planAudienceBatch, type AudienceBatchPlan, type AudienceBatchRules } from '../../src/emulator/audience-batch.js';
import { planAudienceBatchRequest, readAudienceBatchFast } from '../../src/emulator/audience-batch-reader.js';
import { AudienceMembership } from '../../src/emulator/audience-membership.js';
import { EmulatorHttpError } from '../../src/emulator/errors.js';
import { readJsonBody } from '../../src/emulator/json-body.js';
import { RequestParams } from '../../src/emulator/request-params.js';
import type { ApiRequest } from '../../src/emulator/routing.js';
import { CUSTOM_AUDIENCE_BATCH_RULES } from '../../src/emulator/routes/custom-audiences.js';
import { DO_NOT_REACH_BATCH_RULES } from '../../src/emulator/routes/do-not-reach-lists.js';
import { FIELD_CODES, IdentifierList, PARTNER_CODE } from '../../src/state/identifier-list.js';
import { AudienceBatchBuilder } from '../../src/uploaders/audience-batch-builder.js';

const NOW = Date.parse('2026-06-01T00:00:00Z');
const RULES: [string, AudienceBatchRules][] = [
  ['custom audience', CUSTOM_AUDIENCE_BATCH_RULES],
  ['do-not-reach list', DO_NOT_REACH_BATCH_RULES],
];

/** Few distinct values, so that Updates, Deletes and the members already there meet. */
const HASHES = Array.from({ length: 6 }, (_, i) => `${(i * 37).toString(16).padStart(2, '0')}${'3c'.repeat(31)}`);
const RAW_VALUES = ['crm-1', 'crm-2', 'x', 'a b', '~\u007f'];

function batchRequest(body: Buffer, contentType: string | null = 'application/json'): ApiRequest {
  const url = new URL('http://127.0.0.1/12/accounts/a/custom_audiences/b/users');
  return {
    method: 'POST',
    url,
    pattern: '/12/accounts/:account_id/custom_audiences/:custom_audience_id/users',
    pathParams: {},
    params: new RequestParams(url.searchParams, undefined),
    body,
    contentType: contentType ?? undefined,
    headers: {},
    caller: undefined,
    now: NOW,
    countMismatch: false,
  };
}

/** An audience holding some of the values already, so that Delete has something to remove. */
function seededMembership(rules: AudienceBatchRules): AudienceMembership {
  const membership = new AudienceMembership(rules.hashedFields, rules.rawFields);
  rules.hashedFields.forEach((field, i) => membership.hashedSet(field)?.add(HASHES[i % HASHES.length] ?? ''));
  for (const field of rules.rawFields) membership.rawSet(field)?.add('crm-2');
  return membership;
}

type Outcome = { plan: AudienceBatchPlan; members: Record<string, string[]> } | { status: number; errors: unknown; extraBody: unknown; headers: unknown };

/** What a way of planning gives: the plan and the membership once applied, or the error answer. */
function outcome(rules: AudienceBatchRules, plan: () => AudienceBatchPlan): Outcome {
  const membership = seededMembership(rules);
  try {
    const made = plan();
    applyAudienceBatch(made, rules, membership);
    return { plan: made, members: membership.snapshot() };
  } catch (error) {
    if (!(error instanceof EmulatorHttpError)) throw error;
    return { status: error.status, errors: error.errors, extraBody: error.extraBody, headers: error.headers };
  }
}

function general(req: ApiRequest, rules: AudienceBatchRules): Outcome {
  return outcome(rules, () => planAudienceBatch(readJsonBody(req), rules, req.now));
}

function withFastPath(req: ApiRequest, rules: AudienceBatchRules): Outcome {
  return outcome(rules, () => planAudienceBatchRequest(req, rules));
}

// ---- Bodies as JSON documents written with chosen whitespace, key order and escapes ----

/** A JSON value; objects are lists of members, so that keys can repeat and come in any order. */
type Doc = { str: string } | { num: number } | { lit: 'true' | 'false' | 'null' } | { verbatim: string } | { arr: Doc[] } | { obj: [string, Doc][] };

const str = (s: string): Doc => ({ str: s });

interface Style {
  /** Whitespace written between tokens, chosen in turn. */
  spaces: readonly string[];
  /** Write every n-th character of every string as a \u escape (0: never). */
  escapeEvery: number;
}

function writeString(s: string, style: Style, counter: { n: number }): string {
  if (style.escapeEvery === 0) return JSON.stringify(s);
  let out = '"';
  for (const ch of s) {
    counter.n += 1;
    const escaped = counter.n % style.escapeEvery === 0;
    out += escaped ? [...ch].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('') : JSON.stringify(ch).slice(1, -1);
  }
  return `${out}"`;
}

function write(doc: Doc, style: Style): string {
  let turn = 0;
  const counter = { n: 0 };
  const ws = (): string => (style.spaces.length === 0 ? '' : (style.spaces[turn++ % style.spaces.length] ?? ''));
  const go = (d: Doc): string => {
    if ('str' in d) return writeString(d.str, style, counter);
    if ('num' in d) return String(d.num);
    if ('lit' in d) return d.lit;
    if ('verbatim' in d) return d.verbatim;
    if ('arr' in d) return `[${ws()}${d.arr.map((x) => go(x)).join(`${ws()},${ws()}`)}${ws()}]`;
    return `{${ws()}${d.obj.map(([k, v]) => `${writeString(k, style, counter)}${ws()}:${ws()}${go(v)}`).join(`${ws()},${ws()}`)}${ws()}}`;
  };
  return `${ws()}${go(doc)}${ws()}`;
}

const CLEAN_STYLE: Style = { spaces: [], escapeEvery: 0 };
const styleArb: fc.Arbitrary<Style> = fc.oneof(
  { weight: 6, arbitrary: fc.constant(CLEAN_STYLE) },
  { weight: 3, arbitrary: fc.record({ spaces: fc.array(fc.constantFrom('', ' ', '\n', '\t', '\r\n  '), { minLength: 1, maxLength: 5 }), escapeEvery: fc.constant(0) }) },
  { weight: 1, arbitrary: fc.record({ spaces: fc.array(fc.constantFrom('', '\u00a0', '\f', '\v'), { minLength: 1, maxLength: 3 }), escapeEvery: fc.constant(0) }) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 90 }).map((escapeEvery): Style => ({ spaces: [], escapeEvery })) },
);

/** The members in a generated order. */
function shuffled<T>(list: readonly T[]): fc.Arbitrary<T[]> {
  return fc.shuffledSubarray([...list], { minLength: list.length, maxLength: list.length });
}

const hashArb = fc.constantFrom(...HASHES);
const rawArb = fc.constantFrom(...RAW_VALUES);

function userArb(rules: AudienceBatchRules): fc.Arbitrary<Doc> {
  const fields = [...rules.hashedFields.map((f) => [f, true] as const), ...rules.rawFields.map((f) => [f, false] as const)];
  return fc
    .shuffledSubarray(fields, { minLength: 1, maxLength: fields.length })
    .chain((chosen) => fc.tuple(...chosen.map(([field, hashed]) => fc.array((hashed ? hashArb : rawArb).map(str), { minLength: 1, maxLength: 3 }).map((arr): [string, Doc] => [field, { arr }]))))
    .map((obj): Doc => ({ obj }));
}

/** A clean operation: users and, by choice, emails (with the expiry it requires) and the times, in any order. */
function paramsArb(rules: AudienceBatchRules): fc.Arbitrary<Doc> {
  const users = fc.array(userArb(rules), { minLength: 1, maxLength: 4 }).map((arr): [string, Doc] => ['users', { arr }]);
  const emails = fc.array(hashArb.map(str), { minLength: 1, maxLength: 3 }).map((arr): [string, Doc] => ['emails', { arr }]);
  const expiresAt = fc.constantFrom('2030-01-31T00:00:00Z', '2031-05-01T10:00:00.250Z', '2030-01-31T00:00:00+00:00').map((t): [string, Doc] => ['expires_at', str(t)]);
  // Before every expiry above.
  const effectiveAt = fc.constantFrom('2026-05-01T00:00:00Z', '2029-12-31T23:59:59+05:00').map((t): [string, Doc] => ['effective_at', str(t)]);
  return fc
    .record({
      users,
      emails: rules.emailsVariant ? fc.option(emails) : fc.constant(null),
      expiresAt: fc.option(expiresAt),
      effectiveAt: rules.effectiveAt ? fc.option(effectiveAt) : fc.constant(null),
    })
    .chain(({ users: u, emails: e, expiresAt: x, effectiveAt: f }) => {
      const expiry = x ?? (e ? (['expires_at', str('2030-01-31T00:00:00Z')] as [string, Doc]) : null);
      const members = [u, e, expiry, f].filter((m): m is [string, Doc] => m !== null);
      return shuffled(members).map((obj): Doc => ({ obj }));
    });
}

function operationArb(rules: AudienceBatchRules): fc.Arbitrary<Doc> {
  return fc
    .tuple(fc.constantFrom('Update', 'Delete'), paramsArb(rules))
    .chain(([type, params]) => shuffled<[string, Doc]>([['operation_type', str(type)], ['params', params]]))
    .map((obj): Doc => ({ obj }));
}

function batchArb(rules: AudienceBatchRules): fc.Arbitrary<Doc> {
  return fc.array(operationArb(rules), { minLength: 1, maxLength: 4 }).map((arr): Doc => ({ arr }));
}

/** One change to a clean document, at the node `at` (in document order, modulo their number). */
interface Edit {
  at: number;
  /** The depth of the node (0: the batch, 1: an operation, 2: params, 3: users, 4: a user, ...), so that every level is hit as often. */
  depth: number;
  kind: 'replace' | 'duplicate' | 'remove' | 'insert' | 'empty' | 'swap';
  doc: Doc;
  key: string;
}

const HASH = HASHES[0] ?? '';
const oddDocArb: fc.Arbitrary<Doc> = fc.oneof(
  fc.constantFrom<Doc>({ num: 1 }, { num: -0.5 }, { lit: 'true' }, { lit: 'false' }, { lit: 'null' }, { arr: [] }, { obj: [] }, { arr: [str(HASH)] }, { obj: [['email', { arr: [str(HASH)] }]] }),
  fc.constantFrom('', 'Update', 'Delete', 'update', 'crm-9', HASH, HASH.toUpperCase(), HASH.slice(1), `${HASH}0`, `${HASH.slice(0, 63)}g`, `${HASH.slice(0, 63)}\u00e9`).map(str),
  fc.constantFrom('2020-01-01T00:00:00Z', '2030-01-31T02:00:00+02:00', '2030-02-30T00:00:00Z', 'tomorrow', '2032-01-01T00:00:00Z', '2026-05-31T23:59:59Z').map(str),
  fc.string({ maxLength: 6, unit: 'binary' }).map(str),
  // Strings written as they are: control characters, non-ASCII, escapes the writer would not make.
  fc.constantFrom('"crm\u00011"', '"crm\u001f1"', '"crm\t1"', '"cr\u00e9"', '"\\u0063rm"', '"\\/"', `"\\u0030${HASH.slice(1)}"`, '"a\u2028b"').map((verbatim): Doc => ({ verbatim })),
);
const editArb: fc.Arbitrary<Edit> = fc.record({
  at: fc.nat(),
  depth: fc.integer({ min: 0, max: 6 }),
  kind: fc.constantFrom('replace', 'duplicate', 'remove', 'insert', 'empty', 'swap'),
  doc: oddDocArb,
  key: fc.constantFrom('users', 'emails', 'expires_at', 'effective_at', 'operation_type', 'params', 'email', 'phone_number', 'handle', 'partner_user_id', 'extra', '__proto__', 'Email', '0', ''),
});

function nodesAt(doc: Doc, depth: number): number {
  if (depth === 0) return 1;
  if ('arr' in doc) return doc.arr.reduce((n, d) => n + nodesAt(d, depth - 1), 0);
  if ('obj' in doc) return doc.obj.reduce((n, [, d]) => n + nodesAt(d, depth - 1), 0);
  return 0;
}

function applyEdit(doc: Doc, edit: Edit): Doc {
  let depth = edit.depth;
  while (depth > 0 && nodesAt(doc, depth) === 0) depth -= 1;
  let index = edit.at % nodesAt(doc, depth);
  const change = (d: Doc): Doc => {
    const pick = (n: number): number => edit.at % Math.max(n, 1);
    if (edit.kind === 'replace') return edit.doc;
    if (edit.kind === 'empty') return 'arr' in d ? { arr: [] } : 'obj' in d ? { obj: [] } : 'str' in d ? str('') : edit.doc;
    if ('arr' in d) {
      const arr = [...d.arr];
      const i = pick(arr.length);
      if (edit.kind === 'duplicate' && arr[i]) arr.splice(i, 0, arr[i]);
      if (edit.kind === 'remove') arr.splice(i, 1);
      if (edit.kind === 'insert') arr.splice(pick(arr.length + 1), 0, edit.doc);
      if (edit.kind === 'swap' && arr.length > 1) arr.push(...arr.splice(i, 1));
      return { arr };
    }
    if ('obj' in d) {
      const obj = [...d.obj];
      const i = pick(obj.length);
      const member = obj[i];
      if (edit.kind === 'duplicate' && member) obj.splice(i + 1, 0, [member[0], edit.at % 2 === 0 ? member[1] : edit.doc]);
      if (edit.kind === 'remove') obj.splice(i, 1);
      if (edit.kind === 'insert') obj.splice(pick(obj.length + 1), 0, [edit.key, edit.doc]);
      if (edit.kind === 'swap' && obj.length > 1) obj.push(...obj.splice(i, 1));
      return { obj };
    }
    return edit.doc;
  };
  const walk = (d: Doc, level: number): Doc => {
    if (level === depth) return index-- === 0 ? change(d) : d;
    if ('arr' in d) return { arr: d.arr.map((x) => walk(x, level + 1)) };
    if ('obj' in d) return { obj: d.obj.map(([k, v]): [string, Doc] => [k, walk(v, level + 1)]) };
    return d;
  };
  return walk(doc, 0);
}

/** Byte-level damage: cut short, a byte changed, inserted or removed, something appended or prepended. */
type Damage = (bytes: Buffer) => Buffer;
const damageArb: fc.Arbitrary<Damage> = fc.oneof(
  fc.nat().map((at): Damage => (b) => b.subarray(0, at % (b.length + 1))),
  fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })).map(([at, byte]): Damage => (b) => {
    const out = Buffer.from(b);
    if (out.length > 0) out[at % out.length] = byte;
    return out;
  }),
  fc.tuple(fc.nat(), fc.constantFrom(',', ']', '}', '"', '\\', ':', '[', '{', ' ', '0', '\u00e9', '\u0000')).map(([at, text]): Damage => (b) => {
    const i = at % (b.length + 1);
    return Buffer.concat([b.subarray(0, i), Buffer.from(text), b.subarray(i)]);
  }),
  fc.nat().map((at): Damage => (b) => (b.length === 0 ? b : Buffer.concat([b.subarray(0, at % b.length), b.subarray((at % b.length) + 1)]))),
  fc.constantFrom(',', ']', ' x', '\u0000', '[]').map((text): Damage => (b) => Buffer.concat([b, Buffer.from(text)])),
  fc.constantFrom('\ufeff', 'x', ',').map((text): Damage => (b) => Buffer.concat([Buffer.from(text), b])),
);

/** Bodies with one thing the fast path must notice, each next to what it may take. */
const H = HASHES[3] ?? '';
const op = (params: string, head = '"operation_type":"Update",'): string => `{${head}"params":${params}}`;
const users = (user: string, more = ''): string => `{"users":[${user}]${more}}`;
const ONE_DEFECT_BODIES: [string, string][] = [
  ['a clean body', `[${op(users(`{"email":["${H}"],"partner_user_id":["crm-1"]}`))}]`],
  ['a partner id with a control character', `[${op(users('{"partner_user_id":["crm\u00011"]}'))}]`],
  ['a partner id with a unit separator (0x1f)', `[${op(users('{"partner_user_id":["crm\u001f1"]}'))}]`],
  ['a partner id with a DEL (0x7f)', `[${op(users('{"partner_user_id":["crm\u007f1"]}'))}]`],
  ['a partner id with a non-ASCII letter', `[${op(users('{"partner_user_id":["cr\u00e9"]}'))}]`],
  ['a partner id with an escaped quote', `[${op(users('{"partner_user_id":["a\\"b"]}'))}]`],
  ['a partner id written with an escape', `[${op(users('{"partner_user_id":["\\u0063rm"]}'))}]`],
  ['an empty partner id', `[${op(users('{"partner_user_id":[""]}'))}]`],
  ['a number as partner id', `[${op(users('{"partner_user_id":[1]}'))}]`],
  ['a hash written with an escape', `[${op(users(`{"email":["\\u0030${H.slice(1)}"]}`))}]`],
  ['a hash in upper case', `[${op(users(`{"email":["${H.toUpperCase()}"]}`))}]`],
  ['a hash of 63 characters', `[${op(users(`{"email":["${H.slice(1)}"]}`))}]`],
  ['a hash of 65 characters', `[${op(users(`{"email":["${H}0"]}`))}]`],
  ['a hash as a string, not an array', `[${op(users(`{"email":"${H}"}`))}]`],
  ['an empty array of hashes', `[${op(users('{"email":[]}'))}]`],
  ['an unknown identifier field', `[${op(users(`{"extra":["${H}"]}`))}]`],
  ['an unknown identifier field after a known one', `[${op(users(`{"email":["${H}"],"extra":["${H}"]}`))}]`],
  ['an identifier field in another case', `[${op(users(`{"Email":["${H}"]}`))}]`],
  ['__proto__ as identifier field', `[${op(users(`{"__proto__":["${H}"]}`))}]`],
  ['an identifier field twice', `[${op(users(`{"email":["${H}"],"email":["${HASHES[4] ?? ''}"]}`))}]`],
  ['an empty user', `[${op(users('{}'))}]`],
  ['a user that is not an object', `[${op(users(`["${H}"]`))}]`],
  ['no users', `[${op('{"users":[]}')}]`],
  ['empty params', `[${op('{}')}]`],
  ['params that are not an object', `[${op('[]')}]`],
  ['an unknown param', `[${op(users(`{"email":["${H}"]}`, ',"extra":1'))}]`],
  ['users twice', `[${op(`{"users":[{"email":["${H}"]}],"users":[{"email":["${H}"]}]}`)}]`],
  ['effective_at alone, not an instant', `[${op(users(`{"email":["${H}"]}`, ',"effective_at":"tomorrow"'))}]`],
  ['effective_at alone, in the past', `[${op(users(`{"email":["${H}"]}`, ',"effective_at":"2026-01-01T00:00:00Z"'))}]`],
  ['effective_at alone, with an offset', `[${op(users(`{"email":["${H}"]}`, ',"effective_at":"2030-01-01T00:00:00+02:00"'))}]`],
  ['effective_at after expires_at', `[${op(users(`{"email":["${H}"]}`, ',"effective_at":"2031-01-01T00:00:00Z","expires_at":"2030-01-01T00:00:00Z"'))}]`],
  ['expires_at in the past', `[${op(users(`{"email":["${H}"]}`, ',"expires_at":"2026-01-01T00:00:00Z"'))}]`],
  ['expires_at with an offset', `[${op(users(`{"email":["${H}"]}`, ',"expires_at":"2030-01-01T00:00:00+02:00"'))}]`],
  ['expires_at on February 30', `[${op(users(`{"email":["${H}"]}`, ',"expires_at":"2030-02-30T00:00:00Z"'))}]`],
  ['expires_at as a number', `[${op(users(`{"email":["${H}"]}`, ',"expires_at":1'))}]`],
  ['expires_at twice', `[${op(users(`{"email":["${H}"]}`, ',"expires_at":"2030-01-01T00:00:00Z","expires_at":"2030-01-01T00:00:00Z"'))}]`],
  ['emails with expires_at', `[${op(`{"emails":["${H}"],"expires_at":"2030-01-01T00:00:00Z"}`)}]`],
  ['emails without expires_at', `[${op(`{"emails":["${H}"]}`)}]`],
  ['emails before users', `[${op(`{"emails":["${H}"],"expires_at":"2030-01-01T00:00:00Z","users":[{"phone_number":["${H}"]}]}`)}]`],
  ['empty emails', `[${op('{"emails":[],"expires_at":"2030-01-01T00:00:00Z"}')}]`],
  ['emails holding a bad hash', `[${op(`{"emails":["${H.slice(1)}"],"expires_at":"2030-01-01T00:00:00Z"}`)}]`],
  ['operation_type Upsert', `[${op(users(`{"email":["${H}"]}`), '"operation_type":"Upsert",')}]`],
  ['operation_type as a number', `[${op(users(`{"email":["${H}"]}`), '"operation_type":1,')}]`],
  ['operation_type twice', `[${op(users(`{"email":["${H}"]}`), '"operation_type":"Delete","operation_type":"Update",')}]`],
  ['no operation_type', `[${op(users(`{"email":["${H}"]}`), '')}]`],
  ['an unknown member of an operation', `[${op(users(`{"email":["${H}"]}`), '"extra":1,"operation_type":"Update",')}]`],
  ['an operation without params', '[{"operation_type":"Update"}]'],
  ['an operation that is not an object', '["Update"]'],
  ['no operations', '[]'],
  ['an object instead of an array', `${op(users(`{"email":["${H}"]}`))}`],
  ['a missing colon', `[${op(users(`{"email" ["${H}"]}`))}]`],
  ['a comma for a colon', `[${op(users(`{"email",["${H}"]}`))}]`],
  ['a missing comma between users', `[${op(`{"users":[{"email":["${H}"]}{"email":["${H}"]}]}`)}]`],
  ['a user closed by a bracket', `[${op(`{"users":[{"email":["${H}"]]]}`)}]`],
  ['an array of hashes closed by a brace', `[${op(`{"users":[{"email":["${H}"}}]}`)}]`],
  ['an unclosed array', `[${op(users(`{"email":["${H}"]}`))}`],
  ['something after the array', `[${op(users(`{"email":["${H}"]}`))}] x`],
  ['a second array', `[${op(users(`{"email":["${H}"]}`))}][]`],
  ['a trailing comma', `[${op(users(`{"email":["${H}"]}`))},]`],
  ['a user of every field adsync sends, in its order', `[${op(users(`{"email":["${H}"],"phone_number":["${HASHES[4] ?? ''}"],"handle":["${HASHES[5] ?? ''}"],"partner_user_id":["crm-00000001"]}`))}]`],
  ['a partner id of several values, one repeated', `[${op(users('{"partner_user_id":["crm-1","crm-2","crm-1"]}'))}]`],
  ['a partner id that looks like a hash', `[${op(users(`{"partner_user_id":["${H}"]}`))}]`],
  ['a partner id with an emoji (4 bytes of UTF-8)', `[${op(users('{"partner_user_id":["crm-\u{1F600}"]}'))}]`],
  ['a partner id written as a lone surrogate', `[${op(users('{"partner_user_id":["\\ud800"]}'))}]`],
  ['a partner id written as an escaped emoji', `[${op(users('{"partner_user_id":["\\ud83d\\ude00"]}'))}]`],
  ['a partner id in an array in the array', `[${op(users('{"partner_user_id":[["crm-1"]]}'))}]`],
  ['partner ids as null', `[${op(users('{"partner_user_id":null}'))}]`],
  ['partner_user_id twice', `[${op(users('{"partner_user_id":["crm-1"],"partner_user_id":["crm-3"]}'))}]`],
  ['an empty array of partner ids beside a hash', `[${op(users(`{"email":["${H}"],"partner_user_id":[]}`))}]`],
  ['users as a number with an exponent', `[${op('{"users":1e3}')}]`],
  ['a value added, then removed, in one batch', `[${op(users('{"partner_user_id":["crm-5"]}'))},${op(users('{"partner_user_id":["crm-5"]}'), '"operation_type":"Delete",')}]`],
  ['a value removed, then added, in one batch', `[${op(users('{"partner_user_id":["crm-2"]}'), '"operation_type":"Delete",')},${op(users('{"partner_user_id":["crm-2"]}'))}]`],
  ['a byte order mark', `\ufeff[${op(users(`{"email":["${H}"]}`))}]`],
  ['a form feed between tokens', `[\f${op(users(`{"email":["${H}"]}`))}]`],
  ['every JSON whitespace between tokens', `[ \t\r\n${op(users(`{"email":["${H}"]}`)).replace(/,/g, ' \n,\t ')}\r\n ]  `],
];

describe.each(RULES)('the fast reader of %s batches', (_name, rules) => {
  it('gives the same plan and membership as JSON.parse and the planner on clean bodies, and takes them', () => {
    fc.assert(
      fc.property(batchArb(rules), styleArb, (doc, style) => {
        const body = Buffer.from(write(doc, style));
        const req = batchRequest(body);
        expect(withFastPath(req, rules)).toEqual(general(req, rules));
        // Not taken: other whitespace, escapes.
        if (style.escapeEvery === 0 && !style.spaces.some((s) => /[^ \t\r\n]/.test(s))) {
          expect(readAudienceBatchFast(body, rules, NOW)).toBeDefined();
        }
      }),
      { numRuns: 600 },
    );
  });

  it('gives the same plan and membership, or the same error answer, on adversarial bodies', () => {
    fc.assert(
      fc.property(batchArb(rules), fc.array(editArb, { minLength: 1, maxLength: 3 }), styleArb, fc.option(damageArb, { freq: 4 }), (doc, edits, style, damage) => {
        const text = Buffer.from(write(edits.reduce(applyEdit, doc), style));
        const req = batchRequest(damage ? damage(text) : text);
        expect(withFastPath(req, rules)).toEqual(general(req, rules));
      }),
      { numRuns: 4000 },
    );
  });

  it('answers the same to every prefix of a body', () => {
    const body = Buffer.from(`[{"operation_type":"Delete","params":{"users":[{"email":["${HASHES[0] ?? ''}"]}],"expires_at":"2030-01-31T00:00:00Z"}}]`);
    for (let end = 0; end <= body.length; end++) {
      const req = batchRequest(body.subarray(0, end));
      expect(withFastPath(req, rules)).toEqual(general(req, rules));
    }
  });

  it.each(ONE_DEFECT_BODIES)('answers the same to %s', (_what, text) => {
    const req = batchRequest(Buffer.from(text));
    expect(withFastPath(req, rules)).toEqual(general(req, rules));
  });

  it('answers the same to a wrong or missing Content-Type and to an empty body', () => {
    const body = Buffer.from(`[{"operation_type":"Update","params":{"users":[{"email":["${HASHES[1] ?? ''}"]}]}}]`);
    for (const req of [batchRequest(body, 'text/plain'), batchRequest(body, null), batchRequest(Buffer.alloc(0))]) {
      expect(withFastPath(req, rules)).toEqual(general(req, rules));
      expect('status' in withFastPath(req, rules)).toBe(true);
    }
  });

  it('answers the same to 2500 operations (taken) and 2501 (refused)', () => {
    const op = `{"operation_type":"Update","params":{"users":[{"email":["${HASHES[2] ?? ''}"]}]}}`;
    for (const n of [2500, 2501]) {
      const body = Buffer.from(`[${Array.from({ length: n }, () => op).join(',')}]`);
      const req = batchRequest(body);
      expect(withFastPath(req, rules)).toEqual(general(req, rules));
      expect(readAudienceBatchFast(body, rules, NOW) !== undefined).toBe(n === 2500);
    }
  });

  it('answers the same to a batch whose values outgrow the staging buffers', () => {
    // 5000 users of a hash and (where the rules take one) a 40-character partner id: more values than the staging first holds, and more bytes of them.
    const partner = (i: number): string => (rules.rawFields.length > 0 ? `,"partner_user_id":["crm-${String(i).padStart(36, '0')}"]` : '');
    const user = (i: number): string => `{"email":["${i.toString(16).padStart(64, '0')}"]${partner(i)}}`;
    const body = Buffer.from(`[${op(`{"users":[${Array.from({ length: 5000 }, (_, i) => user(i)).join(',')}]}`)},${op(`{"users":[${user(7)},${user(4999)}]}`, '"operation_type":"Delete",')}]`);
    const req = batchRequest(body);
    const fast = withFastPath(req, rules);
    expect(fast).toEqual(general(req, rules));
    expect(readAudienceBatchFast(body, rules, NOW)).toBeDefined();
    expect('members' in fast && fast.members.email?.length).toBe(4998 + 1);
    if (rules.rawFields.length > 0) expect('members' in fast && fast.members.partner_user_id?.length).toBe(4998 + 1);
  });
});

describe('the bodies adsync writes', () => {
  /** Partner ids as a CRM may hold them: mostly plain, some with what JSON must escape or UTF-8 must encode. */
  const partnerIdArb = fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: 0, max: 6 }).map((n) => `crm-${n}`) },
    { weight: 2, arbitrary: fc.string({ minLength: 1, maxLength: 12, unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) }) },
    { weight: 1, arbitrary: fc.constantFrom('a"b', 'a\\b', 'tab\there', 'crm\u007f', 'cr\u00e9', '\u{1F600}', '\u2028', ' crm-1 ') },
    { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 8, unit: 'binary' }) },
  );
  /** What the fast path reads: printable ASCII (DEL included) without a quote or a backslash. */
  const plainPartnerId = (text: string): boolean => /^[\x20-\x7f]+$/.test(text) && !/["\\]/.test(text);

  it.each(RULES)('of %s batches: users of several identifier types, grouped as adsync groups them, read as the general path reads them', (_name, rules) => {
    // adsync's field order (the rules list them in it, partner_user_id last); one or two values per field (a row may give two emails).
    const fields = [...rules.hashedFields, ...rules.rawFields];
    const valuesArb = (field: string): fc.Arbitrary<string[]> => fc.array(rules.rawFields.includes(field) ? partnerIdArb : hashArb, { minLength: 1, maxLength: 2 });
    const userArb = fc.subarray(fields, { minLength: 1 }).chain((chosen) => fc.tuple(...chosen.map((field) => valuesArb(field).map((values) => [field, values] as const))));
    fc.assert(
      fc.property(
        fc.array(userArb, { minLength: 1, maxLength: 12 }),
        fc.constantFrom<'Update' | 'Delete'>('Update', 'Delete'),
        fc.integer({ min: 1, max: 4 }),
        (userSpecs, operationType, usersPerOperation) => {
          const extraParams = rules.emailsVariant ? { expires_at: '2030-01-31T00:00:00Z' } : undefined;
          const builder = new AudienceBatchBuilder({ operationType, usersPerOperation, extraParams });
          let plain = true;
          userSpecs.forEach((spec, row) => {
            const user = new IdentifierList();
            for (const [field, values] of spec) for (const value of values) user.pushText(FIELD_CODES[field as keyof typeof FIELD_CODES], value, row);
            for (let i = 0; i < user.length; i++) if (user.code(i) === PARTNER_CODE && !plainPartnerId(user.text(i))) plain = false;
            expect(builder.tryAddUser(user, 0, user.length)).toBe(true);
          });
          const body = Buffer.from(builder.build().body);
          const req = batchRequest(body);
          const fast = withFastPath(req, rules);
          expect(fast).toEqual(general(req, rules));
          expect('plan' in fast).toBe(true);
          // Plain ASCII partner ids and hashes: the fast path reads the body.
          expect(readAudienceBatchFast(body, rules, NOW) !== undefined).toBe(plain);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('take the fast path and give the general path plan', () => {
    const h = (n: number): string => n.toString(16).padStart(64, '0');
    const cases: [AudienceBatchRules, ConstructorParameters<typeof AudienceBatchBuilder>[0]][] = [
      [CUSTOM_AUDIENCE_BATCH_RULES, { operationType: 'Update', usersPerOperation: 3 }],
      [CUSTOM_AUDIENCE_BATCH_RULES, { operationType: 'Delete' }],
      [DO_NOT_REACH_BATCH_RULES, { operationType: 'Update', extraParams: { expires_at: '2030-01-31T00:00:00Z' }, usersPerOperation: 2 }],
    ];
    for (const [rules, options] of cases) {
      const builder = new AudienceBatchBuilder(options);
      for (let row = 0; row < 10; row++) {
        const user = new IdentifierList();
        user.pushText(FIELD_CODES.email, h(row * 3), row);
        user.pushText(FIELD_CODES.email, h(row * 3 + 1), row);
        user.pushText(FIELD_CODES.phone_number, h(row * 3 + 2), row);
        if (rules.rawFields.length > 0) user.pushText(FIELD_CODES.partner_user_id, `crm-${row}`, row);
        expect(builder.tryAddUser(user, 0, user.length)).toBe(true);
      }
      const body = Buffer.from(builder.build().body);
      expect(readAudienceBatchFast(body, rules, NOW)).toBeDefined();
      const req = batchRequest(body);
      const fast = withFastPath(req, rules);
      expect(fast).toEqual(general(req, rules));
      expect('plan' in fast && fast.plan.userRecords).toBe(10);
    }
  });
});
