/**
 * Reading a user-batch request (custom audiences and do-not-reach lists) into its plan.
 *
 * The general path parses the body with JSON.parse and checks the resulting objects
 * (planAudienceBatch). A 5 MB body (~22,000 users of up to four identifiers, as adsync sends
 * them) is then ~200,000 short-lived objects and a 5 MB string: most of the emulator's CPU in
 * the audience scenarios of the bench, and fresh memory on every request. The fast path here
 * reads the body's bytes once, in the shape clients send (adsync sends exactly it):
 *
 *   [{"operation_type":"Update","params":{"users":[{"email":["<64 lowercase hex>"],
 *     "partner_user_id":["crm-1"]}, ...],"expires_at":"..."}}, ...]
 *
 * decoding each hashed value straight from its hex bytes into the staging words, and copying
 * each unhashed value's bytes into the staging without making a string (batch-staging.ts). It
 * accepts only a batch the general path would accept, and gives the same plan. Anything else (another
 * member or token, an escape or a byte outside printable ASCII in a string, a repeated key, a
 * value that fails a check, any error at all) makes it give up, and the general path reads the
 * body from the start: every answer and error message stays that path's.
 *
 * Accepted: JSON whitespace between tokens; the members of an operation, of params and of a
 * user in any order, each at most once. The values of an operation are staged in the body's
 * order (the general path stages params.users before params.emails): all of them are added,
 * or all removed, so their order within the operation changes nothing.
 */
import {
  allowedParams,
  checkTimes,
  emailsFieldIndex,
  endPlannedOperation,
  identifierFieldIndexes,
  MAX_OPERATIONS_PER_BATCH,
  OperationFindings,
  planAudienceBatch,
  startPlannedOperation,
  type AudienceBatchPlan,
  type AudienceBatchRules,
  type OperationType,
  type PlannedOperation,
} from './audience-batch.js';
import { resetStaging, stageHashedBytes, stageRawLatin1Bytes } from './batch-staging.js';
import { readJsonBody } from './json-body.js';
import type { ApiRequest } from './routing.js';

const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const BACKSLASH = 0x5c;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const HEX_LENGTH = 64;

/** Bytes of JSON whitespace (space, tab, line feed, carriage return). */
const WHITESPACE = new Uint8Array(256);
for (const b of [0x20, 0x09, 0x0a, 0x0d]) WHITESPACE[b] = 1;
/**
 * Bytes a string may hold on the fast path: printable ASCII (0x20-0x7f) but the quote and the
 * backslash. Such a string is the same text in UTF-8 and in latin1, and JSON.parse reads it as is.
 */
const PLAIN = new Uint8Array(256);
for (let b = 0x20; b < 0x80; b++) if (b !== QUOTE && b !== BACKSLASH) PLAIN[b] = 1;

/** Thrown to give up on the fast path; never leaves this module. */
class NotRecognised extends Error {}
const NOT_RECOGNISED = new NotRecognised('not a body of the fast path');

/** A set of key names, matched against a key's bytes without making a string of them. */
class KeyTable {
  private readonly keys: Uint8Array[];

  constructor(names: readonly string[]) {
    this.keys = names.map((name) => Buffer.from(name, 'latin1'));
  }

  /** The index of the name spelled by bytes[start..end), or -1. */
  find(bytes: Uint8Array, start: number, end: number): number {
    const length = end - start;
    for (let k = 0; k < this.keys.length; k++) {
      const key = this.keys[k];
      if (key === undefined || key.length !== length) continue;
      let i = 0;
      while (i < length && key[i] === bytes[start + i]) i++;
      if (i === length) return k;
    }
    return -1;
  }
}

const OPERATION_KEYS = new KeyTable(['operation_type', 'params']);
const OPERATION_TYPES = new KeyTable(['Update', 'Delete']);
const OPERATION_TYPE_VALUES: readonly OperationType[] = ['Update', 'Delete'];

/** What the fast path needs of a batch's rules, derived once per rules object. */
interface RulesTables {
  params: KeyTable;
  /** Index in `params` of each known param; -1 when the rules do not take it. */
  users: number;
  emails: number;
  expiresAt: number;
  effectiveAt: number;
  /** Identifier fields a user may hold: per key, its index in rules.hashedFields, or -1 - its index in rules.rawFields. */
  fields: KeyTable;
  fieldTargets: Int32Array;
  emailsField: number;
}

const tablesByRules = new WeakMap<AudienceBatchRules, RulesTables>();

function tablesOf(rules: AudienceBatchRules): RulesTables {
  let tables = tablesByRules.get(rules);
  if (tables) return tables;
  const params = allowedParams(rules);
  const { hashed, raw } = identifierFieldIndexes(rules);
  // As the general path: a name in both lists is a hashed field.
  const fieldNames = [...new Set([...hashed.keys(), ...raw.keys()])];
  tables = {
    params: new KeyTable(params),
    users: params.indexOf('users'),
    emails: params.indexOf('emails'),
    expiresAt: params.indexOf('expires_at'),
    effectiveAt: params.indexOf('effective_at'),
    fields: new KeyTable(fieldNames),
    fieldTargets: Int32Array.from(fieldNames, (name) => hashed.get(name) ?? -1 - (raw.get(name) ?? 0)),
    emailsField: emailsFieldIndex(hashed),
  };
  if (fieldNames.length > 30 || params.length > 30) throw new RangeError('too many keys for the fast batch reader');
  tablesByRules.set(rules, tables);
  return tables;
}

/** One pass over a body; every method moves `pos` past what it read, or throws NOT_RECOGNISED. */
class FastBatchReader {
  private pos = 0;

  constructor(
    private readonly bytes: Buffer,
    private readonly rules: AudienceBatchRules,
    private readonly tables: RulesTables,
    private readonly now: number,
  ) {}

  read(): AudienceBatchPlan {
    resetStaging();
    const operations: PlannedOperation[] = [];
    let userRecords = 0;
    this.skipWhitespace();
    this.expect(OPEN_ARRAY);
    do {
      if (operations.length === MAX_OPERATIONS_PER_BATCH) throw NOT_RECOGNISED;
      const planned = this.readOperation();
      operations.push(planned);
      userRecords += planned.userRecords;
    } while (this.nextInList(CLOSE_ARRAY));
    this.skipWhitespace();
    if (this.pos !== this.bytes.length) throw NOT_RECOGNISED;
    return { operations, userRecords };
  }

  private readOperation(): PlannedOperation {
    const planned = startPlannedOperation();
    let type: OperationType | undefined;
    let seen = 0;
    this.skipWhitespace();
    this.expect(OPEN_OBJECT);
    do {
      const key = this.readKey(OPERATION_KEYS, seen);
      seen |= 1 << key;
      if (key === 0) type = OPERATION_TYPE_VALUES[this.readName(OPERATION_TYPES)];
      else this.readParams(planned);
    } while (this.nextInList(CLOSE_OBJECT));
    if (type === undefined || seen !== 3) throw NOT_RECOGNISED;
    planned.type = type;
    endPlannedOperation(planned);
    return planned;
  }

  private readParams(planned: PlannedOperation): void {
    const t = this.tables;
    const times: Record<string, string> = {};
    let seen = 0;
    this.skipWhitespace();
    this.expect(OPEN_OBJECT);
    do {
      const key = this.readKey(t.params, seen);
      seen |= 1 << key;
      if (key === t.users) {
        this.readUsers(planned);
      } else if (key === t.emails) {
        planned.userRecords += this.readValues(t.emailsField);
      } else {
        times[key === t.expiresAt ? 'expires_at' : 'effective_at'] = this.readPlainString();
      }
    } while (this.nextInList(CLOSE_OBJECT));
    const has = (index: number): boolean => index >= 0 && (seen & (1 << index)) !== 0;
    if (!has(t.users) && !has(t.emails)) throw NOT_RECOGNISED;
    if (has(t.emails) && !has(t.expiresAt)) throw NOT_RECOGNISED;
    if (has(t.expiresAt) || has(t.effectiveAt)) {
      const findings = new OperationFindings();
      checkTimes(times, this.rules, this.now, findings);
      if (findings.errors.length > 0) throw NOT_RECOGNISED;
    }
  }

  private readUsers(planned: PlannedOperation): void {
    const { fields, fieldTargets } = this.tables;
    this.skipWhitespace();
    this.expect(OPEN_ARRAY);
    do {
      this.skipWhitespace();
      this.expect(OPEN_OBJECT);
      let seen = 0;
      do {
        const key = this.readKey(fields, seen);
        seen |= 1 << key;
        this.readValues(fieldTargets[key] ?? 0);
      } while (this.nextInList(CLOSE_OBJECT));
      planned.userRecords += 1;
    } while (this.nextInList(CLOSE_ARRAY));
  }

  /**
   * A non-empty array of strings, staged: hashed values of the field `target` (>= 0), or the
   * unhashed values of the field -1 - target. Returns the number of values.
   */
  private readValues(target: number): number {
    const bytes = this.bytes;
    let n = 0;
    this.skipWhitespace();
    this.expect(OPEN_ARRAY);
    do {
      if (target >= 0) {
        this.skipWhitespace();
        this.expect(QUOTE);
        if (!stageHashedBytes(bytes, this.pos, target)) throw NOT_RECOGNISED;
        this.pos += HEX_LENGTH;
        this.expect(QUOTE);
      } else {
        const start = this.skipPlainString();
        if (this.pos - 1 === start) throw NOT_RECOGNISED;
        stageRawLatin1Bytes(bytes, start, this.pos - 1, -1 - target);
      }
      n += 1;
    } while (this.nextInList(CLOSE_ARRAY));
    return n;
  }

  /** A key naming one of `table`'s names that is not among `seen` (a bit per name index), and its colon. */
  private readKey(table: KeyTable, seen: number): number {
    const index = this.readName(table);
    if ((seen & (1 << index)) !== 0) throw NOT_RECOGNISED;
    this.skipWhitespace();
    this.expect(COLON);
    return index;
  }

  /** A string of plain bytes spelling one of `table`'s names: its index. */
  private readName(table: KeyTable): number {
    const start = this.skipPlainString();
    const index = table.find(this.bytes, start, this.pos - 1);
    if (index < 0) throw NOT_RECOGNISED;
    return index;
  }

  /** A string of plain bytes, as its text. */
  private readPlainString(): string {
    const start = this.skipPlainString();
    return this.bytes.toString('latin1', start, this.pos - 1);
  }

  /** Moves past a string of plain bytes (its closing quote at pos - 1); returns where its text starts. */
  private skipPlainString(): number {
    const bytes = this.bytes;
    this.skipWhitespace();
    this.expect(QUOTE);
    const start = this.pos;
    let i = start;
    while (PLAIN[bytes[i] ?? QUOTE] === 1) i++;
    if (bytes[i] !== QUOTE) throw NOT_RECOGNISED;
    this.pos = i + 1;
    return start;
  }

  /** After an element of a list: true past a comma (another element follows), false past `close`. */
  private nextInList(close: number): boolean {
    this.skipWhitespace();
    const b = this.bytes[this.pos];
    this.pos += 1;
    if (b === COMMA) return true;
    if (b === close) return false;
    throw NOT_RECOGNISED;
  }

  private expect(byte: number): void {
    if (this.bytes[this.pos] !== byte) throw NOT_RECOGNISED;
    this.pos += 1;
  }

  private skipWhitespace(): void {
    const bytes = this.bytes;
    while (WHITESPACE[bytes[this.pos] ?? 0] === 1) this.pos += 1;
  }
}

/** The plan of the body if the fast path recognises it; undefined otherwise (nothing else to read into that). */
export function readAudienceBatchFast(body: Buffer, rules: AudienceBatchRules, now: number): AudienceBatchPlan | undefined {
  try {
    return new FastBatchReader(body, rules, tablesOf(rules), now).read();
  } catch {
    return undefined;
  }
}

/**
 * The plan of a user-batch request: the fast path when it recognises the body, else
 * readJsonBody and planAudienceBatch (which answer every error). Throws the service's 400s.
 */
export function planAudienceBatchRequest(req: ApiRequest, rules: AudienceBatchRules): AudienceBatchPlan {
  if (req.contentType === 'application/json' && req.body.length > 0) {
    const plan = readAudienceBatchFast(req.body, rules, req.now);
    if (plan) return plan;
  }
  return planAudienceBatch(readJsonBody(req), rules, req.now);
}
