/**
 * The spellings of enum values that feeds written for Google Merchant Center (and schema.org
 * markup) use, mapped to the values the Ads API takes. Matching ignores case and treats "_",
 * "-" and runs of spaces alike, so "in_stock", "In-Stock" and "IN  STOCK" are all "in stock".
 */
import type { AgeGroup, Availability, Condition, Gender } from './product-attributes.js';

const SEPARATORS = /[\s_-]+/g;

/** The form a spelling is looked up in: trimmed, lower case, one space for each "_", "-" or space run. */
export function spellingKey(value: string): string {
  return value.trim().toLowerCase().replace(SEPARATORS, ' ');
}

/** Keys are spellingKey() forms. */
export const AVAILABILITY_SPELLINGS: ReadonlyMap<string, Availability> = new Map<string, Availability>([
  ['in stock', 'in stock'],
  ['instock', 'in stock'], // schema.org InStock
  ['available for order', 'available for order'],
  ['backorder', 'available for order'], // Google Merchant
  ['back order', 'available for order'],
  ['preorder', 'preorder'], // also schema.org PreOrder
  ['pre order', 'preorder'],
  ['out of stock', 'out of stock'],
  ['outofstock', 'out of stock'], // schema.org OutOfStock
  ['discontinued', 'discontinued'],
]);

export const CONDITION_SPELLINGS: ReadonlyMap<string, Condition> = new Map<string, Condition>([
  ['new', 'new'],
  ['used', 'used'],
  ['refurbished', 'refurbished'],
  ['newcondition', 'new'], // schema.org NewCondition
  ['usedcondition', 'used'],
  ['refurbishedcondition', 'refurbished'],
]);

export const GENDER_SPELLINGS: ReadonlyMap<string, Gender> = new Map<string, Gender>([
  ['female', 'female'],
  ['male', 'male'],
  ['unisex', 'unisex'],
]);

export const AGE_GROUP_SPELLINGS: ReadonlyMap<string, AgeGroup> = new Map<string, AgeGroup>([
  ['adult', 'adult'],
  ['all ages', 'all ages'],
  ['allages', 'all ages'],
  ['teen', 'teen'],
  ['kids', 'kids'],
  ['toddler', 'toddler'],
  ['infant', 'infant'],
  ['newborn', 'newborn'],
]);

/** The API's value for a spelling, or undefined when the spelling is not known. */
export function mapSpelling<T extends string>(spellings: ReadonlyMap<string, T>, value: string): T | undefined {
  return spellings.get(value) ?? spellings.get(spellingKey(value));
}
