import { describe, expect, it } from 'vitest';
import { membershipExpiry } from '../../src/jobs/membership-expiry.js';

describe('membershipExpiry (expires_at of a do-not-reach batch)', () => {
  it('is 13 calendar months later, at the same time of day, in whole seconds', () => {
    expect(membershipExpiry(Date.parse('2026-11-22T12:34:56.789Z'))).toBe('2027-12-22T12:34:56Z');
    expect(membershipExpiry(Date.parse('2026-01-15T00:00:00Z'))).toBe('2027-02-15T00:00:00Z');
    expect(membershipExpiry(Date.parse('2026-12-31T23:59:59Z'))).toBe('2028-01-31T23:59:59Z');
  });

  it('takes the last day of the month for a day that month has not (never past 13 months)', () => {
    // 395 days after 2026-01-31 is 2027-03-02: two days past 13 months.
    expect(membershipExpiry(Date.parse('2026-01-31T08:00:00Z'))).toBe('2027-02-28T08:00:00Z');
    expect(membershipExpiry(Date.parse('2027-01-31T08:00:00Z'))).toBe('2028-02-29T08:00:00Z');
    expect(membershipExpiry(Date.parse('2026-03-31T08:00:00Z'))).toBe('2027-04-30T08:00:00Z');
  });
});
