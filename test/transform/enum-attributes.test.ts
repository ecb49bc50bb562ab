import { describe, expect, it } from 'vitest';
import { buildProduct } from '../../src/transform/index.js';
import { feedItem } from './product-samples.js';

/** [attribute, spelling in the feed, value sent] for every spelling that is accepted. */
const ACCEPTED: [string, string, string][] = [
  ['availability', 'in stock', 'in stock'],
  ['availability', 'In Stock', 'in stock'],
  ['availability', 'in_stock', 'in stock'],
  ['availability', 'IN_STOCK', 'in stock'],
  ['availability', 'in-stock', 'in stock'],
  ['availability', 'InStock', 'in stock'],
  ['availability', ' in  stock ', 'in stock'],
  ['availability', 'available for order', 'available for order'],
  ['availability', 'available_for_order', 'available for order'],
  ['availability', 'backorder', 'available for order'],
  ['availability', 'BackOrder', 'available for order'],
  ['availability', 'back_order', 'available for order'],
  ['availability', 'preorder', 'preorder'],
  ['availability', 'PreOrder', 'preorder'],
  ['availability', 'pre-order', 'preorder'],
  ['availability', 'pre_order', 'preorder'],
  ['availability', 'out of stock', 'out of stock'],
  ['availability', 'out_of_stock', 'out of stock'],
  ['availability', 'Out-Of-Stock', 'out of stock'],
  ['availability', 'OutOfStock', 'out of stock'],
  ['availability', 'discontinued', 'discontinued'],
  ['availability', 'Discontinued', 'discontinued'],
  ['condition', 'new', 'new'],
  ['condition', 'NEW', 'new'],
  ['condition', 'NewCondition', 'new'],
  ['condition', 'used', 'used'],
  ['condition', 'Used', 'used'],
  ['condition', 'UsedCondition', 'used'],
  ['condition', 'refurbished', 'refurbished'],
  ['condition', 'Refurbished', 'refurbished'],
  ['condition', 'RefurbishedCondition', 'refurbished'],
  ['gender', 'female', 'female'],
  ['gender', 'Female', 'female'],
  ['gender', 'male', 'male'],
  ['gender', 'MALE', 'male'],
  ['gender', 'unisex', 'unisex'],
  ['gender', 'Unisex', 'unisex'],
  ['age_group', 'adult', 'adult'],
  ['age_group', 'Adult', 'adult'],
  ['age_group', 'all ages', 'all ages'],
  ['age_group', 'all_ages', 'all ages'],
  ['age_group', 'All-Ages', 'all ages'],
  ['age_group', 'allages', 'all ages'],
  ['age_group', 'teen', 'teen'],
  ['age_group', 'kids', 'kids'],
  ['age_group', 'Kids', 'kids'],
  ['age_group', 'toddler', 'toddler'],
  ['age_group', 'infant', 'infant'],
  ['age_group', 'newborn', 'newborn'],
  ['age_group', 'NewBorn', 'newborn'],
];

describe('enum attributes: every accepted spelling', () => {
  it.each(ACCEPTED)('%s "%s" is sent as "%s"', (attribute, spelling, value) => {
    const result = buildProduct(feedItem({ [attribute]: spelling }));
    expect(result.ok && result.product[attribute]).toBe(value);
  });
});

describe('enum attributes: a wrong value', () => {
  it.each([
    ['availability', 'in stok', 'in stock, available for order, preorder, out of stock, discontinued'],
    ['availability', 'limited availability', 'in stock, available for order, preorder, out of stock, discontinued'],
    ['availability', 'yes', 'in stock, available for order, preorder, out of stock, discontinued'],
    ['condition', 'like new', 'new, used, refurbished'],
    ['condition', 'damaged', 'new, used, refurbished'],
    ['gender', 'women', 'female, male, unisex'],
    ['gender', 'f', 'female, male, unisex'],
    ['age_group', 'kid', 'adult, all ages, teen, kids, toddler, infant, newborn'],
    ['age_group', 'baby', 'adult, all ages, teen, kids, toddler, infant, newborn'],
  ])('%s "%s" is rejected', (attribute, spelling, allowed) => {
    expect(buildProduct(feedItem({ [attribute]: spelling }))).toStrictEqual({
      ok: false,
      id: 'SKU-001',
      reasons: [{ field: attribute, reason: `"${spelling}" is not one of: ${allowed}` }],
    });
  });
});
