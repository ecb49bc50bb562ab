/**
 * Builds audience user-batch request bodies, filling each request as far as the service's
 * limits allow: at most 2500 operations and 5,000,000 bytes, envelope included. Sizes are
 * computed exactly while building (never by trial), and the body is written once into a
 * Buffer that the client reuses on every retry.
 *
 * Users go into operations of at most `usersPerOperation` users, so that the service's
 * operation_errors (indexed by operation) point at a small set of rows, while the
 * per-operation envelope costs well under 1% of a request.
 */
import type { IdentifierType } from '../hash/types.js';
import type { IdentifierRef } from '../state/store.js';

export const MAX_OPERATIONS_PER_REQUEST = 2500;
export const MAX_BYTES_PER_REQUEST = 5_000_000;
export const DEFAULT_USERS_PER_OPERATION = 100;

/** One user record: identifiers of one export row (or a single identifier being removed). */
export interface AudienceUser {
  /** The export row it came from (0 when unknown, e.g. a removal). */
  row: number;
  identifiers: IdentifierRef[];
}

export interface BuiltBatch {
  body: Buffer;
  /** User records in the request: what success_count and total_count must equal. */
  userCount: number;
  /** The users of each operation, in request order (operation_errors index this). */
  operations: AudienceUser[][];
}

export interface BatchBuilderOptions {
  operationType: 'Update' | 'Delete';
  /** Extra params written into every operation, e.g. {"expires_at": "..."}; JSON-serializable. */
  extraParams?: Readonly<Record<string, string>>;
  maxBytes?: number;
  maxOperations?: number;
  usersPerOperation?: number;
}

const FIELD_ORDER: readonly IdentifierType[] = ['email', 'phone_number', 'handle', 'twitter_id', 'device_id', 'partner_user_id'];
const FIELD_KEY = new Map<IdentifierType, string>(FIELD_ORDER.map((f) => [f, `"${f}":[`]));

/** The JSON of one user record, e.g. {"email":["<hash>"],"phone_number":["<hash>"]}. */
export function userJson(user: AudienceUser): string {
  const byField = new Map<IdentifierType, string[]>();
  for (const id of user.identifiers) {
    const list = byField.get(id.field);
    // Hashes are 64 hex (safe as is); a partner_user_id needs JSON escaping.
    const value = id.field === 'partner_user_id' ? JSON.stringify(id.value) : `"${id.value}"`;
    if (list) list.push(value);
    else byField.set(id.field, [value]);
  }
  let out = '{';
  let first = true;
  for (const field of FIELD_ORDER) {
    const values = byField.get(field);
    if (!values) continue;
    if (!first) out += ',';
    first = false;
    out += `${FIELD_KEY.get(field) ?? ''}${values.join(',')}]`;
  }
  return `${out}}`;
}

export class AudienceBatchBuilder {
  private readonly maxBytes: number;
  private readonly maxOperations: number;
  private readonly usersPerOperation: number;
  private readonly opOpen: string;
  private readonly opClose: string;
  private buffer: Buffer;
  private length = 0;
  private operations: AudienceUser[][] = [];
  private usersInOp = 0;
  private userCount = 0;

  constructor(options: BatchBuilderOptions) {
    this.maxBytes = options.maxBytes ?? MAX_BYTES_PER_REQUEST;
    this.maxOperations = options.maxOperations ?? MAX_OPERATIONS_PER_REQUEST;
    this.usersPerOperation = options.usersPerOperation ?? DEFAULT_USERS_PER_OPERATION;
    this.opOpen = `{"operation_type":"${options.operationType}","params":{"users":[`;
    const extra = Object.entries(options.extraParams ?? {})
      .map(([k, v]) => `,${JSON.stringify(k)}:${JSON.stringify(v)}`)
      .join('');
    this.opClose = `]${extra}}}`;
    this.buffer = Buffer.allocUnsafe(this.maxBytes);
    this.reset();
  }

  private reset(): void {
    this.buffer = Buffer.allocUnsafe(this.maxBytes);
    this.buffer.write('[', 0, 'latin1');
    this.length = 1;
    this.operations = [];
    this.usersInOp = 0;
    this.userCount = 0;
  }

  get isEmpty(): boolean {
    return this.userCount === 0;
  }

  get size(): number {
    return this.userCount;
  }

  /** Bytes the body would have if built now. */
  get byteLength(): number {
    return this.userCount === 0 ? 2 : this.length + Buffer.byteLength(this.opClose) + 1;
  }

  /**
   * Adds a user if it fits within the limits; returns false (adding nothing) when it does
   * not, so the caller builds this batch and starts the next one. A user that cannot fit
   * even in an empty batch throws a RangeError.
   */
  tryAdd(user: AudienceUser): boolean {
    const json = userJson(user);
    const jsonBytes = Buffer.byteLength(json);
    const newOp = this.operations.length === 0 || this.usersInOp >= this.usersPerOperation;
    const closeBytes = Buffer.byteLength(this.opClose);
    // Bytes added: a separator, possibly closing the current operation and opening a new one.
    let added = jsonBytes;
    if (newOp) added += (this.operations.length > 0 ? closeBytes + 1 : 0) + Buffer.byteLength(this.opOpen);
    else added += 1; // comma between users
    const total = this.length + added + closeBytes + 1; // + close of the last operation + ']'
    if (total > this.maxBytes || (newOp && this.operations.length >= this.maxOperations)) {
      if (this.userCount === 0) throw new RangeError(`one user record of ${jsonBytes} bytes does not fit in a request of ${this.maxBytes} bytes`);
      return false;
    }
    if (newOp) {
      if (this.operations.length > 0) this.append(`${this.opClose},`);
      this.append(this.opOpen);
      this.operations.push([]);
      this.usersInOp = 0;
    } else {
      this.append(',');
    }
    this.append(json);
    this.operations[this.operations.length - 1]?.push(user);
    this.usersInOp += 1;
    this.userCount += 1;
    return true;
  }

  private append(text: string): void {
    this.length += this.buffer.write(text, this.length, 'utf8');
  }

  /** The body built so far; the builder starts empty again. */
  build(): BuiltBatch {
    if (this.userCount === 0) throw new RangeError('no users to send');
    this.append(`${this.opClose}]`);
    const body = Buffer.from(this.buffer.subarray(0, this.length));
    const batch: BuiltBatch = { body, userCount: this.userCount, operations: this.operations };
    this.reset();
    return batch;
  }
}
