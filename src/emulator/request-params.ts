/**
 * The parameters of one request: the query string, then an application/x-www-form-urlencoded
 * body (the service takes both), with the service's checks for booleans, counts, enums and
 * comma lists. A bad value is a 400 INVALID_PARAMETER naming the parameter.
 */
import { invalidParameter, missingParameter } from './errors.js';

export class RequestParams {
  constructor(
    private readonly query: URLSearchParams,
    private readonly form: URLSearchParams | undefined,
  ) {}

  get(name: string): string | undefined {
    return this.query.get(name) ?? this.form?.get(name) ?? undefined;
  }

  /** Every parameter, as the `request.params` echo of the answer shows them. */
  echo(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [k, v] of this.form ?? []) out[k] = v;
    for (const [k, v] of this.query) out[k] = v;
    return out;
  }

  required(name: string): string {
    const value = this.get(name);
    if (value === undefined || value === '') throw missingParameter(name);
    return value;
  }

  boolean(name: string, fallback: boolean): boolean {
    const value = this.get(name);
    if (value === undefined) return fallback;
    if (value === 'true') return true;
    if (value === 'false') return false;
    throw invalidParameter(name, `${name} must be true or false, got "${value}"`);
  }

  /** An integer within [min, max]; `fallback` when absent. */
  integer(name: string, min: number, max: number, fallback: number): number {
    const value = this.get(name);
    if (value === undefined) return fallback;
    const n = /^-?\d+$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw invalidParameter(name, `${name} must be an integer from ${min} to ${max}, got "${value}"`);
    }
    return n;
  }

  enumValue<T extends string>(name: string, allowed: readonly T[], required: true): T;
  enumValue<T extends string>(name: string, allowed: readonly T[], required: false): T | undefined;
  enumValue<T extends string>(name: string, allowed: readonly T[], required: boolean): T | undefined {
    const value = required ? this.required(name) : this.get(name);
    if (value === undefined) return undefined;
    if (!(allowed as readonly string[]).includes(value)) {
      throw invalidParameter(name, `${name} must be one of ${allowed.join(', ')}, got "${value}"`);
    }
    return value as T;
  }

  /** A comma-separated list of at most `max` non-empty items; undefined when absent. */
  list(name: string, max: number): string[] | undefined {
    const value = this.get(name);
    if (value === undefined) return undefined;
    const items = value.split(',').map((s) => s.trim());
    if (items.some((s) => s === '')) throw invalidParameter(name, `${name} must be a comma-separated list without empty items`);
    if (items.length > max) throw invalidParameter(name, `${name} takes at most ${max} items, got ${items.length}`);
    return items;
  }
}
