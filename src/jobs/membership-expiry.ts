/**
 * The expires_at a do-not-reach batch carries: 13 calendar months after the request, the
 * service's own default (ads-api.md), at the same time of day. A day that the month has not
 * (13 months after January 31 is in February) becomes the month's last day: a fixed number
 * of days (395) went up to two days past "13 months" for some send dates, which a service
 * that checks the limit would refuse.
 */
const MONTHS = 13;

export function membershipExpiry(now: number): string {
  const from = new Date(now);
  const year = from.getUTCFullYear();
  const month = from.getUTCMonth() + MONTHS;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  const at = Date.UTC(year, month, Math.min(from.getUTCDate(), lastDay), from.getUTCHours(), from.getUTCMinutes(), from.getUTCSeconds());
  return new Date(at).toISOString().replace(/\.\d+Z$/, 'Z');
}
