/**
 * The members of one audience (a custom audience or a do-not-reach list): per identifier
 * field, the set of values. Hashed fields hold SHA-256 values compactly (HashedValueSet);
 * partner_user_id, sent unhashed, is a compact set of strings (RawValueSet).
 */
import { HashedValueSet } from './hashed-value-set.js';
import { RawValueSet } from './raw-value-set.js';

export const PARTNER_USER_ID = 'partner_user_id';

export class AudienceMembership {
  private readonly hashed = new Map<string, HashedValueSet>();
  private readonly raw = new Map<string, RawValueSet>();

  constructor(
    readonly hashedFields: readonly string[],
    readonly rawFields: readonly string[] = [],
  ) {
    for (const field of hashedFields) this.hashed.set(field, new HashedValueSet());
    for (const field of rawFields) this.raw.set(field, new RawValueSet());
  }

  /** The set of a hashed field; undefined for a field this audience does not take. */
  hashedSet(field: string): HashedValueSet | undefined {
    return this.hashed.get(field);
  }

  rawSet(field: string): RawValueSet | undefined {
    return this.raw.get(field);
  }

  get fields(): string[] {
    return [...this.hashedFields, ...this.rawFields];
  }

  /** Member count per field. */
  sizes(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [field, set] of this.hashed) out[field] = set.size;
    for (const [field, set] of this.raw) out[field] = set.size;
    return out;
  }

  /** Members per field as sorted arrays (hashed values in lowercase hex). */
  snapshot(): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    for (const [field, set] of this.hashed) out[field] = [...set.sortedValues()];
    for (const [field, set] of this.raw) out[field] = [...set.values()].sort();
    return out;
  }

  /** The number of stored values over all fields. */
  totalSize(): number {
    let n = 0;
    for (const set of this.hashed.values()) n += set.size;
    for (const set of this.raw.values()) n += set.size;
    return n;
  }
}
