import { describe, expect, it } from 'vitest';
import { buildProduct } from '../../src/transform/index.js';
import { parseInstant } from '../../src/transform/effective-date.js';
import { BASE_PRODUCT, feedItem } from './product-samples.js';

describe('inventory', () => {
  it('rejects 0 when availability is in stock', () => {
    expect(buildProduct(feedItem({ availability: 'in stock', inventory: '0' }))).toStrictEqual({
      ok: false,
      id: 'SKU-001',
      reasons: [{ field: 'inventory', reason: 'is 0; it must be at least 1 when availability is "in stock"' }],
    });
  });

  it('rejects 0 when a Google spelling says in stock', () => {
    expect(buildProduct(feedItem({ availability: 'in_stock', inventory: '000' }))).toMatchObject({
      ok: false,
      reasons: [{ field: 'inventory', reason: 'is 0; it must be at least 1 when availability is "in stock"' }],
    });
  });

  it('accepts 1 when availability is in stock, sent as a number', () => {
    expect(buildProduct(feedItem({ availability: 'in stock', inventory: '1' }))).toMatchObject({ ok: true, product: { inventory: 1 } });
  });

  it.each(['out of stock', 'preorder', 'available for order', 'discontinued'])('accepts 0 when availability is %s', (availability) => {
    expect(buildProduct(feedItem({ availability, inventory: '0' }))).toMatchObject({ ok: true, product: { availability, inventory: 0 } });
  });

  it('is optional, also when in stock', () => {
    expect(buildProduct(feedItem({ inventory: '' }))).toMatchObject({ ok: true, product: BASE_PRODUCT });
  });

  it.each(['-1', '1.5', '10.0', 'ten', '1e3', '+5', '1 000', '1234567890123456'])('rejects "%s"', (inventory) => {
    expect(buildProduct(feedItem({ inventory }))).toStrictEqual({
      ok: false,
      id: 'SKU-001',
      reasons: [{ field: 'inventory', reason: `"${inventory}" is not a whole number of 0 or more` }],
    });
  });

  it('accepts leading zeros and up to 15 digits', () => {
    expect(buildProduct(feedItem({ inventory: '0042' }))).toMatchObject({ ok: true, product: { inventory: 42 } });
    expect(buildProduct(feedItem({ inventory: '999999999999999' }))).toMatchObject({ ok: true, product: { inventory: 999999999999999 } });
  });
});

describe('sale_price_effective_date', () => {
  it.each([
    ['2024-11-29T00:00:00Z/2024-12-02T23:59:59Z', '2024-11-29T00:00:00Z/2024-12-02T23:59:59Z'],
    ['2024-11-29T00:00Z/2024-12-02T23:59Z', '2024-11-29T00:00Z/2024-12-02T23:59Z'],
    ['2024-02-24T13:00-0800/2024-02-29T15:30-0800', '2024-02-24T13:00-0800/2024-02-29T15:30-0800'],
    ['2024-02-24T13:00:00+01:00 / 2024-02-29T15:30:00.250+01:00', '2024-02-24T13:00:00+01:00/2024-02-29T15:30:00.250+01:00'],
    // An offset of hours only is sent with its minutes: the emulator (like many parsers) takes only +HH:MM or +HHMM.
    ['2024-02-24T13:00:00+05/2024-02-24T13:00:01-03', '2024-02-24T13:00:00+05:00/2024-02-24T13:00:01-03:00'],
    // Same wall-clock time, different zones: 10:00+02:00 is 08:00Z, before 09:00Z.
    ['2024-06-01T10:00+02:00/2024-06-01T09:00Z', '2024-06-01T10:00+02:00/2024-06-01T09:00Z'],
  ])('accepts "%s"', (written, sent) => {
    expect(buildProduct(feedItem({ sale_price: '39.99 USD', sale_price_effective_date: written }))).toMatchObject({
      ok: true,
      product: { sale_price_effective_date: sent },
    });
  });

  const example = '(e.g. 2024-02-24T13:00:00Z/2024-02-29T23:59:59Z)';
  it.each([
    ['2024-11-29T00:00:00Z', `"2024-11-29T00:00:00Z" is not two ISO 8601 instants joined by "/" ${example}`],
    ['2024-11-29T00:00:00Z/', `"2024-11-29T00:00:00Z/" is not two ISO 8601 instants joined by "/" ${example}`],
    ['a/b/c', `"a/b/c" is not two ISO 8601 instants joined by "/" ${example}`],
    ['2024-11-29/2024-12-02', `"2024-11-29" and "2024-12-02" are not ISO 8601 instants with date, time and time zone ${example}`],
    ['2024-11-29T00:00:00/2024-12-02T00:00:00Z', `"2024-11-29T00:00:00" is not an ISO 8601 instant with date, time and time zone ${example}`],
    ['2023-02-29T00:00Z/2023-03-02T00:00Z', `"2023-02-29T00:00Z" is not an ISO 8601 instant with date, time and time zone ${example}`],
    ['2024-11-29T24:00Z/2024-12-02T00:00Z', `"2024-11-29T24:00Z" is not an ISO 8601 instant with date, time and time zone ${example}`],
    ['2024-13-01T00:00Z/2024-12-02T00:00Z', `"2024-13-01T00:00Z" is not an ISO 8601 instant with date, time and time zone ${example}`],
    ['2024-11-29 00:00Z/2024-12-02T00:00Z', `"2024-11-29 00:00Z" is not an ISO 8601 instant with date, time and time zone ${example}`],
    ['2024-12-02T00:00Z/2024-11-29T00:00Z', 'start 2024-12-02T00:00Z is not before end 2024-11-29T00:00Z'],
    ['2024-12-02T00:00Z/2024-12-02T00:00Z', 'start 2024-12-02T00:00Z is not before end 2024-12-02T00:00Z'],
    ['2024-06-01T10:00+02:00/2024-06-01T08:00Z', 'start 2024-06-01T10:00+02:00 is not before end 2024-06-01T08:00Z'],
  ])('rejects "%s"', (written, reason) => {
    expect(buildProduct(feedItem({ sale_price: '39.99 USD', sale_price_effective_date: written }))).toStrictEqual({
      ok: false,
      id: 'SKU-001',
      reasons: [{ field: 'sale_price_effective_date', reason }],
    });
  });

  it('parses instants to epoch milliseconds', () => {
    expect(parseInstant('2024-02-29T12:00:00Z')).toBe(Date.UTC(2024, 1, 29, 12));
    expect(parseInstant('2024-02-29T12:00:00.5-0130')).toBe(Date.UTC(2024, 1, 29, 13, 30, 0, 500));
    expect(parseInstant('2024-02-30T12:00:00Z')).toBeUndefined();
  });
});

describe('color: a name, not a hex code', () => {
  it.each(['Red', 'Navy Blue', 'Black/White', 'Beige', 'Fab', 'Bad', 'Deadbeef', '100% Cotton White'])('accepts "%s"', (color) => {
    expect(buildProduct(feedItem({ color }))).toMatchObject({ ok: true, product: { color } });
  });

  it.each(['#fff', '#FFF', '#ffff', '#a1b2c3', '#A1B2C3', '#a1b2c3ff', 'a1b2c3', 'FFFFFF', '000000', 'Red/#00ff00', ' #ff0000 '])('rejects "%s"', (color) => {
    expect(buildProduct(feedItem({ color }))).toStrictEqual({
      ok: false,
      id: 'SKU-001',
      reasons: [{ field: 'color', reason: `"${color.trim()}" is a hex code; give the color's name (e.g. red)` }],
    });
  });
});

describe('size and item_group_id', () => {
  it('are free strings', () => {
    expect(buildProduct(feedItem({ size: '42 EU / 9 US', item_group_id: 'SWEATER-MW' }))).toMatchObject({
      ok: true,
      product: { size: '42 EU / 9 US', item_group_id: 'SWEATER-MW' },
    });
  });
});
