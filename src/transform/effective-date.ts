/**
 * sale_price_effective_date: "two ISO 8601 instants joined by a slash". An instant here is a
 * calendar date, a time and a time zone: 2024-02-24T13:00Z, 2024-02-24T13:00:00+01:00,
 * 2024-02-24T13:00:00.5-0800 (Google Merchant writes offsets without the colon). Seconds and
 * fractions are optional; the zone is not (without it the moment is not known). Spaces around
 * the slash are dropped; the instants themselves are sent as written, except that an offset of
 * hours only (+05) gets its minutes (+05:00): ISO 8601 allows it, but many parsers (the
 * emulator's among them) take only +HH:MM or +HHMM. The start must be strictly before the end.
 */
import { quote } from './text-values.js';

const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:Z|([+-])(\d{2})(?::?(\d{2}))?)$/;

export const EFFECTIVE_DATE_EXAMPLE = '2024-02-24T13:00:00Z/2024-02-29T23:59:59Z';

/** Milliseconds since the epoch, or undefined when the text is not a valid instant. */
export function parseInstant(text: string): number | undefined {
  const m = INSTANT.exec(text);
  if (!m) return undefined;
  const [, y = '', mo = '', d = '', h = '', mi = '', s = '0', fraction = '', sign, oh = '0', om = '0'] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  const offsetHours = Number(oh);
  const offsetMinutes = Number(om);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  if (day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return undefined;
  if (offsetHours > 23 || offsetMinutes > 59) return undefined;
  const millis = Number(fraction.padEnd(3, '0').slice(0, 3));
  const local = Date.UTC(year, month - 1, day, hour, minute, second, millis);
  const offset = (offsetHours * 60 + offsetMinutes) * 60_000;
  return sign === '-' ? local + offset : local - offset;
}

/** A valid instant whose offset has hours only (2024-02-24T13:00+05) with its minutes added (+05:00). */
function withOffsetMinutes(instant: string): string {
  return /[+-]\d{2}$/.test(instant) ? `${instant}:00` : instant;
}

export type EffectiveDateParse = { ok: true; value: string } | { ok: false; reason: string };

export function parseEffectiveDateRange(value: string): EffectiveDateParse {
  const parts = value.split('/');
  const start = parts[0]?.trim() ?? '';
  const end = parts[1]?.trim() ?? '';
  if (parts.length !== 2 || start === '' || end === '') {
    return { ok: false, reason: `${quote(value)} is not two ISO 8601 instants joined by "/" (e.g. ${EFFECTIVE_DATE_EXAMPLE})` };
  }
  const startMs = parseInstant(start);
  const endMs = parseInstant(end);
  const invalid = [startMs === undefined ? start : undefined, endMs === undefined ? end : undefined].filter((p) => p !== undefined);
  if (invalid.length > 0) {
    return {
      ok: false,
      reason: `${invalid.map(quote).join(' and ')} ${invalid.length === 1 ? 'is not an ISO 8601 instant' : 'are not ISO 8601 instants'} with date, time and time zone (e.g. ${EFFECTIVE_DATE_EXAMPLE})`,
    };
  }
  if (startMs !== undefined && endMs !== undefined && startMs >= endMs) {
    return { ok: false, reason: `start ${start} is not before end ${end}` };
  }
  return { ok: true, value: `${withOffsetMinutes(start)}/${withOffsetMinutes(end)}` };
}
