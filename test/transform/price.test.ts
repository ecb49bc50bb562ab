import { describe, expect, it } from 'vitest';
import { buildProduct, compareAmounts, parsePrice } from '../../src/transform/index.js';
import { CURRENCY_CODES } from '../../src/transform/currency-codes.js';
import { feedItem } from './product-samples.js';

describe('price formats', () => {
  it.each([
    ['19.99 USD', '19.99 USD'],
    ['19.99USD', '19.99 USD'],
    ['USD 19.99', '19.99 USD'],
    ['USD19.99', '19.99 USD'],
    ['19.99 usd', '19.99 USD'],
    ['  19.99   EUR ', '19.99 EUR'],
    ['20 GBP', '20 GBP'],
    ['19.90 USD', '19.90 USD'],
    ['1500 JPY', '1500 JPY'],
    ['1.250 KWD', '1.250 KWD'],
    ['0.00 USD', '0.00 USD'],
    ['1299.00 USD', '1299.00 USD'],
  ])('"%s" is sent as "%s"', (written, sent) => {
    expect(parsePrice(written)).toStrictEqual({ ok: true, price: { amount: sent.split(' ')[0], currency: sent.split(' ')[1], text: sent } });
    expect(buildProduct(feedItem({ price: written }))).toMatchObject({ ok: true, product: { price: sent } });
  });

  it.each([
    ['19,99 EUR', '"19,99 EUR": use "." as the decimal point and no thousands separator (e.g. 19.99 USD)'],
    ['1,299.00 USD', '"1,299.00 USD": use "." as the decimal point and no thousands separator (e.g. 19.99 USD)'],
    ['EUR 19,99', '"EUR 19,99": use "." as the decimal point and no thousands separator (e.g. 19.99 USD)'],
    ['$19.99', '"$19.99" is not a number followed by an ISO 4217 currency code (e.g. 19.99 USD)'],
    ['19.99', '"19.99" is not a number followed by an ISO 4217 currency code (e.g. 19.99 USD)'],
    ['19.99 US Dollars', '"19.99 US Dollars" is not a number followed by an ISO 4217 currency code (e.g. 19.99 USD)'],
    ['-5.00 USD', '"-5.00 USD" is not a number followed by an ISO 4217 currency code (e.g. 19.99 USD)'],
    ['.99 USD', '".99 USD" is not a number followed by an ISO 4217 currency code (e.g. 19.99 USD)'],
    ['19. USD', '"19. USD" is not a number followed by an ISO 4217 currency code (e.g. 19.99 USD)'],
    ['1e3 USD', '"1e3 USD" is not a number followed by an ISO 4217 currency code (e.g. 19.99 USD)'],
    ['19.99 USD USD', '"19.99 USD USD" is not a number followed by an ISO 4217 currency code (e.g. 19.99 USD)'],
    ['19.99 XYZ', '"19.99 XYZ": XYZ is not an ISO 4217 currency code'],
    ['19.99 usx', '"19.99 usx": USX is not an ISO 4217 currency code'],
    ['19.99 XXX', '"19.99 XXX": XXX is not an ISO 4217 currency code'],
    ['19.99 HRK', '"19.99 HRK": HRK is not an ISO 4217 currency code'],
  ])('"%s" is rejected', (written, reason) => {
    expect(parsePrice(written)).toStrictEqual({ ok: false, reason });
    expect(buildProduct(feedItem({ price: written }))).toStrictEqual({ ok: false, id: 'SKU-001', reasons: [{ field: 'price', reason }] });
  });

  it('knows the ISO 4217 currencies, VED included, whatever the ICU data of Node', () => {
    expect(CURRENCY_CODES.size).toBe(157);
    for (const code of ['USD', 'EUR', 'JPY', 'GBP', 'CHF', 'VED', 'XCG', 'ZWG', 'SLE']) expect(CURRENCY_CODES.has(code)).toBe(true);
    for (const code of ['XXX', 'XTS', 'XAU', 'USN', 'HRK', 'CUC', 'usd']) expect(CURRENCY_CODES.has(code)).toBe(false);
  });
});

describe('sale_price', () => {
  it('is accepted when lower than price, in the same currency, normalized like price', () => {
    expect(buildProduct(feedItem({ price: '49.99 USD', sale_price: 'USD39.99' }))).toMatchObject({
      ok: true,
      product: { price: '49.99 USD', sale_price: '39.99 USD' },
    });
  });

  it('is rejected when equal to price', () => {
    expect(buildProduct(feedItem({ price: '49.99 USD', sale_price: '49.990 USD' }))).toStrictEqual({
      ok: false,
      id: 'SKU-001',
      reasons: [{ field: 'sale_price', reason: '"49.990 USD" is not lower than price "49.99 USD"' }],
    });
  });

  it('is rejected when higher than price', () => {
    expect(buildProduct(feedItem({ price: '49.99 USD', sale_price: '100 USD' }))).toStrictEqual({
      ok: false,
      id: 'SKU-001',
      reasons: [{ field: 'sale_price', reason: '"100 USD" is not lower than price "49.99 USD"' }],
    });
  });

  it('is rejected in another currency', () => {
    expect(buildProduct(feedItem({ price: '49.99 USD', sale_price: '39.99 EUR' }))).toStrictEqual({
      ok: false,
      id: 'SKU-001',
      reasons: [{ field: 'sale_price', reason: '"39.99 EUR" is not in the currency of price "49.99 USD"' }],
    });
  });

  it('is rejected in a bad format, with the same reasons as price', () => {
    expect(buildProduct(feedItem({ sale_price: '39,99 USD' }))).toStrictEqual({
      ok: false,
      id: 'SKU-001',
      reasons: [{ field: 'sale_price', reason: '"39,99 USD": use "." as the decimal point and no thousands separator (e.g. 19.99 USD)' }],
    });
  });

  it('is not compared with a price that is itself invalid', () => {
    expect(buildProduct(feedItem({ price: 'free', sale_price: '39.99 USD' }))).toStrictEqual({
      ok: false,
      id: 'SKU-001',
      reasons: [{ field: 'price', reason: '"free" is not a number followed by an ISO 4217 currency code (e.g. 19.99 USD)' }],
    });
  });
});

describe('compareAmounts', () => {
  it.each([
    ['39.99', '49.99', -1],
    ['49.99', '49.99', 0],
    ['49.990', '49.99', 0],
    ['049.99', '49.99', 0],
    ['50', '49.99', 1],
    ['9.99', '10', -1],
    ['100', '99.999', 1],
    ['0.1', '0.09', 1],
    ['19.9900000000000000001', '19.99', 1],
  ] as const)('compareAmounts(%s, %s) is %i', (a, b, expected) => {
    expect(compareAmounts(a, b)).toBe(expected);
    expect(compareAmounts(b, a)).toBe(-expected || 0);
  });
});
