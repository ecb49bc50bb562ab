/**
 * ISO 8601 instants as the service takes them (effective_at, expires_at,
 * sale_price_effective_date): a date, a time and a zone, e.g. 2025-01-31T12:00:00Z or
 * 2025-01-31T12:00:00.250+01:00.
 */

const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})$/;

/** Epoch milliseconds of an ISO 8601 instant, or undefined when the text is not one. */
export function parseIsoInstant(text: string): number | undefined {
  const m = INSTANT.exec(text);
  if (!m) return undefined;
  const [, year, month, day, hour, minute, second] = m;
  const y = Number(year);
  const mo = Number(month);
  const d = Number(day);
  // Date.parse rolls 2025-02-30 over into March; the service does not.
  if (mo < 1 || mo > 12 || d < 1 || new Date(Date.UTC(y, mo - 1, d)).getUTCDate() !== d) return undefined;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second ?? '0') > 59) return undefined;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : undefined;
}

/** Whether an instant parseIsoInstant takes is written in UTC: Z, or the zero offset +00:00 (+0000). */
export function isUtcInstant(text: string): boolean {
  return text.endsWith('Z') || text.endsWith('+00:00') || text.endsWith('+0000');
}

/** The service's timestamp format: ISO 8601 UTC with seconds, e.g. 2025-01-31T12:00:00Z. */
export function formatIsoInstant(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
