import { describe, expect, it } from 'vitest';
import { buildProduct } from '../../src/transform/index.js';
import { gtinCheckDigit } from '../../src/transform/gtin.js';
import { feedItem } from './product-samples.js';

const NO_IDENTIFIER = { field: 'brand/gtin/mpn', reason: 'one of brand, gtin or mpn is required' };

describe('brand, gtin, mpn: at least one', () => {
  it.each([
    [{ brand: 'Acme' }],
    [{ gtin: '4006381333931' }],
    [{ mpn: 'MW-001' }],
    [{ brand: 'Acme', gtin: '4006381333931' }],
    [{ brand: 'Acme', mpn: 'MW-001' }],
    [{ gtin: '4006381333931', mpn: 'MW-001' }],
    [{ brand: 'Acme', gtin: '4006381333931', mpn: 'MW-001' }],
  ])('accepts %o', (identifiers: Record<string, string>) => {
    const result = buildProduct(feedItem({ brand: undefined, ...identifiers }));
    expect(result).toMatchObject({ ok: true, product: identifiers });
  });

  it('rejects an item with none of the three', () => {
    expect(buildProduct(feedItem({ brand: undefined }))).toStrictEqual({ ok: false, id: 'SKU-001', reasons: [NO_IDENTIFIER] });
  });

  it('rejects an item whose three are empty or only whitespace', () => {
    expect(buildProduct(feedItem({ brand: ' ', gtin: '', mpn: '\t' }))).toStrictEqual({ ok: false, id: 'SKU-001', reasons: [NO_IDENTIFIER] });
    expect(buildProduct(feedItem({ brand: '&nbsp;' }))).toStrictEqual({ ok: false, id: 'SKU-001', reasons: [NO_IDENTIFIER] });
  });

  it('reports an invalid gtin once, not again as a missing identifier', () => {
    expect(buildProduct(feedItem({ brand: undefined, gtin: '12345' }))).toStrictEqual({
      ok: false,
      id: 'SKU-001',
      reasons: [{ field: 'gtin', reason: '"12345" has 5 digits; a GTIN has 8, 12, 13 or 14' }],
    });
  });

  it('reports a brand given twice with different values once (a CSV with brand and g:brand columns), not again as a missing identifier', () => {
    expect(buildProduct(feedItem({ brand: ['Acme', 'Acme Inc'] }))).toStrictEqual({
      ok: false,
      id: 'SKU-001',
      reasons: [{ field: 'brand', reason: 'has 2 different values ("Acme", "Acme Inc"); one is expected' }],
    });
  });
});

describe('gtin', () => {
  it.each([
    ['GTIN-8', '96385074'],
    ['UPC-A (GTIN-12)', '036000291452'],
    ['EAN-13 (GTIN-13)', '4006381333931'],
    ['UPC as GTIN-13, leading zero kept', '0036000291452'],
    ['GTIN-14', '00012345600012'],
    ['GTIN-14 with packaging digit', '10012345678902'],
  ])('accepts a %s: %s', (_name, gtin) => {
    expect(buildProduct(feedItem({ gtin }))).toMatchObject({ ok: true, product: { gtin } });
  });

  it('trims surrounding whitespace', () => {
    expect(buildProduct(feedItem({ gtin: ' 4006381333931 ' }))).toMatchObject({ ok: true, product: { gtin: '4006381333931' } });
  });

  it.each([
    ['1234567', '"1234567" has 7 digits; a GTIN has 8, 12, 13 or 14'],
    ['123456789', '"123456789" has 9 digits; a GTIN has 8, 12, 13 or 14'],
    ['0306406152', '"0306406152" has 10 digits; a GTIN has 8, 12, 13 or 14'],
    ['12345678901', '"12345678901" has 11 digits; a GTIN has 8, 12, 13 or 14'],
    ['123456789012345', '"123456789012345" has 15 digits; a GTIN has 8, 12, 13 or 14'],
    ['96385075', '"96385075" has a wrong check digit (expected 4)'],
    ['036000291453', '"036000291453" has a wrong check digit (expected 2)'],
    ['4006381333932', '"4006381333932" has a wrong check digit (expected 1)'],
    ['00012345600013', '"00012345600013" has a wrong check digit (expected 2)'],
    ['400-6381-33393-1', '"400-6381-33393-1" must contain digits only'],
    ['4006381 333931', '"4006381 333931" must contain digits only'],
    ['4.006381333931E12', '"4.006381333931E12" must contain digits only'],
    ['abc', '"abc" must contain digits only'],
  ])('rejects %s', (gtin, reason) => {
    expect(buildProduct(feedItem({ gtin }))).toStrictEqual({ ok: false, id: 'SKU-001', reasons: [{ field: 'gtin', reason }] });
  });

  it('computes GS1 check digits', () => {
    expect(gtinCheckDigit('400638133393')).toBe(1);
    expect(gtinCheckDigit('03600029145')).toBe(2);
    expect(gtinCheckDigit('9638507')).toBe(4);
    expect(gtinCheckDigit('0001234560001')).toBe(2);
    expect(gtinCheckDigit('000000000000')).toBe(0);
  });
});
