/**
 * User batches of custom audiences and do-not-reach lists: the checks of every operation and
 * user, then the changes to the audience's membership. A batch succeeds or fails as a whole:
 * planning checks everything and decodes every value into the staging area (batch-staging.ts);
 * only a batch without any error is applied.
 *
 * Errors: request-level problems (not a JSON array, more than 2500 operations) are a 400 with
 * `errors`; item-level problems are a 400 with `operation_errors`, an array indexed like the
 * input operations holding each operation's errors, or null.
 *
 * This is the benchmark's hot path (up to 5 MB and ~30,000 users per request): one pass over
 * the parsed body, a character loop per hashed value, no allocation per value.
 */
import type { AudienceMembership } from './audience-membership.js';
import { EmulatorHttpError, invalidParameter, type ServiceErrorItem } from './errors.js';
import { hashedStaging, rawStaging, resetStaging, stageHashed, stageRaw, WORDS } from './batch-staging.js';
import { isUtcInstant, parseIsoInstant } from './iso-time.js';
import { isPlainObject } from './json-body.js';

export const MAX_OPERATIONS_PER_BATCH = 2500;
/** Errors listed per operation; the rest are summed up in one last entry. */
const MAX_ERRORS_PER_OPERATION = 100;

export interface AudienceBatchRules {
  /** Hashed identifier fields a user object may hold. */
  hashedFields: readonly string[];
  /** Unhashed identifier fields (partner_user_id). */
  rawFields: readonly string[];
  /** Whether params may hold effective_at (custom audiences). */
  effectiveAt: boolean;
  /**
   * Whether params may hold `emails`, an array of hashed addresses, with a required
   * expires_at (do-not-reach lists: "a variant ... shows params with an emails array of hashed
   * addresses and a required expires_at").
   */
  emailsVariant: boolean;
  /** Whether expires_at must be in UTC (do-not-reach lists: "expires_at (ISO 8601 UTC, ...)"). */
  utcOnly: boolean;
}

export type OperationType = 'Update' | 'Delete';

export interface PlannedOperation {
  type: OperationType;
  /** Staged hashed values [start, end) of this operation (batch-staging.ts). */
  start: number;
  end: number;
  /** Staged unhashed values [rawStart, rawEnd) of this operation. */
  rawStart: number;
  rawEnd: number;
  /** The user records of the operation (users, or emails of the variant). */
  userRecords: number;
}

export interface AudienceBatchPlan {
  operations: PlannedOperation[];
  userRecords: number;
}

/** A new operation, its values to be staged from here. */
export function startPlannedOperation(): PlannedOperation {
  return { type: 'Update', start: hashedStaging.count, end: hashedStaging.count, rawStart: rawStaging.count, rawEnd: rawStaging.count, userRecords: 0 };
}

/** Ends the operation's ranges of staged values where the staging is now. */
export function endPlannedOperation(planned: PlannedOperation): void {
  planned.end = hashedStaging.count;
  planned.rawEnd = rawStaging.count;
}

/** The errors found in one operation, at most MAX_ERRORS_PER_OPERATION of them listed. */
export class OperationFindings {
  readonly errors: ServiceErrorItem[] = [];
  private unlisted = 0;

  private push(item: ServiceErrorItem): void {
    if (this.errors.length < MAX_ERRORS_PER_OPERATION) this.errors.push(item);
    else this.unlisted += 1;
  }
  invalid(parameter: string, message: string): void {
    this.push({ code: 'INVALID_PARAMETER', message, parameter });
  }
  missing(parameter: string, message: string): void {
    this.push({ code: 'MISSING_PARAMETER', message, parameter });
  }
  /** The errors, with a last entry counting those not listed. */
  all(): ServiceErrorItem[] {
    if (this.unlisted === 0) return this.errors;
    return [...this.errors, { code: 'INVALID_PARAMETER', message: `${this.unlisted} more errors in this operation are not listed` }];
  }
}

/** Params every batch takes, and those its rules add. */
export function allowedParams(rules: AudienceBatchRules): string[] {
  return ['users', 'expires_at', ...(rules.effectiveAt ? ['effective_at'] : []), ...(rules.emailsVariant ? ['emails'] : [])];
}

/** The index of each identifier field a user may hold, in rules.hashedFields or rules.rawFields. */
export function identifierFieldIndexes(rules: AudienceBatchRules): { hashed: ReadonlyMap<string, number>; raw: ReadonlyMap<string, number> } {
  const hashed = new Map<string, number>();
  const raw = new Map<string, number>();
  rules.hashedFields.forEach((f, i) => hashed.set(f, i));
  rules.rawFields.forEach((f, i) => raw.set(f, i));
  return { hashed, raw };
}

/** The field index of the values of params.emails (the do-not-reach variant). */
export function emailsFieldIndex(hashed: ReadonlyMap<string, number>): number {
  return hashed.get('email') ?? 0;
}

const HASH_MESSAGE = 'must be a SHA-256 hash: 64 lowercase hexadecimal characters';

class BatchPlanner {
  private readonly hashedIndex: ReadonlyMap<string, number>;
  private readonly rawIndex: ReadonlyMap<string, number>;
  private readonly allowedParams: ReadonlySet<string>;

  constructor(
    private readonly rules: AudienceBatchRules,
    private readonly now: number,
  ) {
    ({ hashed: this.hashedIndex, raw: this.rawIndex } = identifierFieldIndexes(rules));
    this.allowedParams = new Set(allowedParams(rules));
  }

  planOperation(op: unknown, f: OperationFindings): PlannedOperation {
    const planned = startPlannedOperation();
    if (!isPlainObject(op)) {
      f.invalid('operation', 'each operation must be a JSON object with operation_type and params');
      return planned;
    }
    for (const key of Object.keys(op)) {
      if (key !== 'operation_type' && key !== 'params') f.invalid(key, `unknown member "${key}" of an operation`);
    }
    const type = op.operation_type;
    if (type === undefined) f.missing('operation_type', 'operation_type is required');
    else if (type === 'Update' || type === 'Delete') planned.type = type;
    else f.invalid('operation_type', `operation_type must be Update or Delete, got ${JSON.stringify(type)}`);

    const params = op.params;
    if (params === undefined) {
      f.missing('params', 'params is required');
      return planned;
    }
    if (!isPlainObject(params)) {
      f.invalid('params', 'params must be a JSON object');
      return planned;
    }
    for (const key of Object.keys(params)) {
      if (!this.allowedParams.has(key)) f.invalid(key, `unknown parameter "${key}"; params takes ${[...this.allowedParams].join(', ')}`);
    }
    if (params.users === undefined && !(this.rules.emailsVariant && params.emails !== undefined)) {
      f.missing('users', this.rules.emailsVariant ? 'users (or emails) is required' : 'users is required');
    }
    if (params.users !== undefined) this.planUsers(params.users, planned, f);
    if (this.rules.emailsVariant && params.emails !== undefined) {
      this.planEmails(params.emails, planned, f);
      if (params.expires_at === undefined) f.missing('expires_at', 'expires_at is required with emails');
    }
    checkTimes(params, this.rules, this.now, f);
    endPlannedOperation(planned);
    return planned;
  }

  private planUsers(users: unknown, planned: PlannedOperation, f: OperationFindings): void {
    if (!Array.isArray(users) || users.length === 0) {
      f.invalid('users', 'users must be a non-empty array of user objects');
      return;
    }
    planned.userRecords += users.length;
    for (let j = 0; j < users.length; j++) {
      const user: unknown = users[j];
      if (!isPlainObject(user)) {
        f.invalid(`users[${j}]`, 'each user must be a JSON object of identifier arrays');
        continue;
      }
      let fields = 0;
      for (const key in user) {
        fields += 1;
        const values = user[key];
        const hashed = this.hashedIndex.get(key);
        const raw = hashed === undefined ? this.rawIndex.get(key) : undefined;
        if (hashed === undefined && raw === undefined) {
          f.invalid(`users[${j}].${key}`, `unknown identifier field "${key}"; a user holds ${[...this.hashedIndex.keys(), ...this.rawIndex.keys()].join(', ')}`);
          continue;
        }
        if (!Array.isArray(values) || values.length === 0) {
          f.invalid(`users[${j}].${key}`, `${key} must be a non-empty array of strings`);
          continue;
        }
        for (let k = 0; k < values.length; k++) {
          const value: unknown = values[k];
          if (hashed !== undefined) {
            if (typeof value !== 'string' || !stageHashed(value, hashed)) f.invalid(`users[${j}].${key}[${k}]`, `${key} ${HASH_MESSAGE}`);
          } else if (typeof value !== 'string' || value === '') {
            f.invalid(`users[${j}].${key}[${k}]`, `${key} must be a non-empty string`);
          } else {
            stageRaw(value, raw ?? 0);
          }
        }
      }
      if (fields === 0) f.invalid(`users[${j}]`, 'a user needs at least one identifier');
    }
  }

  private planEmails(emails: unknown, planned: PlannedOperation, f: OperationFindings): void {
    const field = emailsFieldIndex(this.hashedIndex);
    if (!Array.isArray(emails) || emails.length === 0) {
      f.invalid('emails', 'emails must be a non-empty array of hashed addresses');
      return;
    }
    planned.userRecords += emails.length;
    for (let k = 0; k < emails.length; k++) {
      const value: unknown = emails[k];
      if (typeof value !== 'string' || !stageHashed(value, field)) f.invalid(`emails[${k}]`, `emails ${HASH_MESSAGE}`);
    }
  }
}

/** The checks of effective_at and expires_at in an operation's params. */
export function checkTimes(params: Readonly<Record<string, unknown>>, rules: AudienceBatchRules, now: number, f: OperationFindings): void {
  const instant = (name: string): number | undefined => {
    const value = params[name];
    if (value === undefined) return undefined;
    const ms = typeof value === 'string' ? parseIsoInstant(value) : undefined;
    if (ms === undefined) {
      f.invalid(name, `${name} must be an ISO 8601 instant, e.g. 2030-01-31T00:00:00Z`);
      return undefined;
    }
    if (rules.utcOnly && typeof value === 'string' && !isUtcInstant(value)) {
      f.invalid(name, `${name} must be in UTC, e.g. 2030-01-31T00:00:00Z`);
      return undefined;
    }
    return ms;
  };
  const effective = rules.effectiveAt ? instant('effective_at') : undefined;
  const expires = instant('expires_at');
  if (expires === undefined) return;
  if (expires <= now) f.invalid('expires_at', 'expires_at must be later than now');
  else if (effective !== undefined && expires <= effective) f.invalid('expires_at', 'expires_at must be later than effective_at');
}

/** Checks a batch body and stages its values; throws the service's 400 when anything is wrong. */
export function planAudienceBatch(body: unknown, rules: AudienceBatchRules, now: number): AudienceBatchPlan {
  if (!Array.isArray(body)) throw invalidParameter(undefined, 'the body must be a JSON array of operations');
  if (body.length === 0) throw invalidParameter(undefined, 'the batch holds no operations');
  if (body.length > MAX_OPERATIONS_PER_BATCH) {
    throw invalidParameter(undefined, `a batch holds at most ${MAX_OPERATIONS_PER_BATCH} operations, got ${body.length}`);
  }
  resetStaging();
  const planner = new BatchPlanner(rules, now);
  const operations: PlannedOperation[] = [];
  const operationErrors: (ServiceErrorItem[] | null)[] = [];
  let failed = false;
  let userRecords = 0;
  for (const op of body as unknown[]) {
    const findings = new OperationFindings();
    const planned = planner.planOperation(op, findings);
    operations.push(planned);
    userRecords += planned.userRecords;
    if (findings.errors.length > 0) failed = true;
    operationErrors.push(findings.errors.length > 0 ? findings.all() : null);
  }
  if (failed) throw new EmulatorHttpError(400, [], { operation_errors: operationErrors });
  return { operations, userRecords };
}

/** Applies the plan of the last batch planned: Update adds each value, Delete removes it. */
export function applyAudienceBatch(plan: AudienceBatchPlan, rules: AudienceBatchRules, membership: AudienceMembership): void {
  const hashedSets = rules.hashedFields.map((field) => membership.hashedSet(field));
  const rawSets = rules.rawFields.map((field) => membership.rawSet(field));
  const { words, fields } = hashedStaging;
  const raw = rawStaging;
  for (const op of plan.operations) {
    const add = op.type === 'Update';
    for (let i = op.start; i < op.end; i++) {
      const set = hashedSets[fields[i] ?? 0];
      if (!set) continue;
      if (add) set.addWords(words, i * WORDS);
      else set.deleteWords(words, i * WORDS);
    }
    for (let i = op.rawStart; i < op.rawEnd; i++) {
      const set = rawSets[raw.fields[i] ?? 0];
      if (!set) continue;
      const start = i === 0 ? 0 : (raw.ends[i - 1] ?? 0);
      const end = raw.ends[i] ?? 0;
      if (add) set.addEncoded(raw.bytes, start, end);
      else set.deleteEncoded(raw.bytes, start, end);
    }
  }
}
