/**
 * GTIN (global trade item number): digits only, 8, 12, 13 or 14 of them (GTIN-8, UPC-A,
 * EAN-13, ITF-14), the last a GS1 mod-10 check digit. Kept as a string, so leading zeros stay
 * ("0036000291452" is a valid EAN-13 form of a UPC). A wrong check digit almost always means a
 * typo or a number cut short by a spreadsheet, so it is rejected rather than sent.
 */
import { GTIN_LENGTHS } from './product-attributes.js';
import { quote } from './text-values.js';

const DIGITS = /^\d+$/;

/** The GS1 check digit for the digits before it. */
export function gtinCheckDigit(body: string): number {
  let sum = 0;
  // From the right: weights 3, 1, 3, 1, ...
  for (let i = body.length - 1, weight = 3; i >= 0; i--, weight = 4 - weight) sum += (body.charCodeAt(i) - 48) * weight;
  return (10 - (sum % 10)) % 10;
}

/** Why the value is not a valid GTIN, or undefined when it is. */
export function gtinProblem(gtin: string): string | undefined {
  if (!DIGITS.test(gtin)) return `${quote(gtin)} must contain digits only`;
  if (!GTIN_LENGTHS.includes(gtin.length)) return `${quote(gtin)} has ${gtin.length} digits; a GTIN has 8, 12, 13 or 14`;
  const expected = gtinCheckDigit(gtin.slice(0, -1));
  if (gtin.charCodeAt(gtin.length - 1) - 48 !== expected) return `${quote(gtin)} has a wrong check digit (expected ${expected})`;
  return undefined;
}
