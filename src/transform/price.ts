/**
 * Prices: "a number, a space, an ISO 4217 code; decimal point is ." (ads-api.md 4.1).
 *
 * Accepted and normalized to "<amount> <CODE>": "19.99 USD", "19.99USD" (space missing),
 * "USD 19.99" and "USD19.99" (code first), "19.99 usd" (code in lower case), extra spaces.
 * The amount is kept as written ("19.90" stays "19.90", "20" stays "20"): the number of decimals
 * depends on the currency (JPY has none, KWD three), so none is imposed.
 * Rejected with a reason: a comma anywhere in the amount ("19,99 EUR" and "1,299.00 USD"
 * alike, since a comma is either a decimal comma or a thousands separator and the API takes
 * neither), a sign, a currency symbol ("$19.99"), a code that is not an ISO 4217 currency.
 */
import { isCurrencyCode } from './currency-codes.js';
import { quote } from './text-values.js';

export interface Price {
  /** Digits with an optional "." and decimals, as written. */
  amount: string;
  /** ISO 4217, upper case. */
  currency: string;
  /** The normalized form sent: "<amount> <currency>". */
  text: string;
}

export type PriceParse = { ok: true; price: Price } | { ok: false; reason: string };

const AMOUNT_FIRST = /^(\d+(?:\.\d+)?)\s*([A-Za-z]{3})$/;
const CODE_FIRST = /^([A-Za-z]{3})\s*(\d+(?:\.\d+)?)$/;
const DECIMAL_COMMA = /\d,\d/;

export const PRICE_EXAMPLE = '19.99 USD';

export function parsePrice(value: string): PriceParse {
  const text = value.trim();
  let amount: string | undefined;
  let code: string | undefined;
  const amountFirst = AMOUNT_FIRST.exec(text);
  if (amountFirst) {
    amount = amountFirst[1];
    code = amountFirst[2];
  } else {
    const codeFirst = CODE_FIRST.exec(text);
    if (codeFirst) {
      code = codeFirst[1];
      amount = codeFirst[2];
    }
  }
  if (amount === undefined || code === undefined) {
    if (DECIMAL_COMMA.test(text)) {
      return { ok: false, reason: `${quote(text)}: use "." as the decimal point and no thousands separator (e.g. ${PRICE_EXAMPLE})` };
    }
    return { ok: false, reason: `${quote(text)} is not a number followed by an ISO 4217 currency code (e.g. ${PRICE_EXAMPLE})` };
  }
  const currency = code.toUpperCase();
  if (!isCurrencyCode(currency)) return { ok: false, reason: `${quote(text)}: ${currency} is not an ISO 4217 currency code` };
  return { ok: true, price: { amount, currency, text: `${amount} ${currency}` } };
}

/** Compares two amounts of the form parsePrice gives, exactly (no floating point): -1, 0 or 1. */
export function compareAmounts(a: string, b: string): -1 | 0 | 1 {
  const [aInt = '', aFrac = ''] = a.split('.');
  const [bInt = '', bFrac = ''] = b.split('.');
  const ai = aInt.replace(/^0+(?=\d)/, '');
  const bi = bInt.replace(/^0+(?=\d)/, '');
  if (ai.length !== bi.length) return ai.length < bi.length ? -1 : 1;
  if (ai !== bi) return ai < bi ? -1 : 1;
  const width = Math.max(aFrac.length, bFrac.length);
  const af = aFrac.padEnd(width, '0');
  const bf = bFrac.padEnd(width, '0');
  if (af === bf) return 0;
  return af < bf ? -1 : 1;
}
