/**
 * Rules between attributes, checked after each attribute passed its own rule: one of brand,
 * gtin and mpn present; sale_price lower than price and in its currency; inventory at least 1
 * when the product is in stock.
 */
import type { ProductPayload } from '../api/resources/catalogs.js';
import { compareAmounts, parsePrice } from './price.js';
import type { RejectReason } from './product-rules.js';
import { quote } from './text-values.js';

/** The field named by the reason given when none of brand, gtin and mpn is present. */
export const IDENTIFIERS_FIELD = 'brand/gtin/mpn';

/**
 * @param product the values that passed their own rules
 * @param hasIdentifier whether the item gave any of brand, gtin or mpn (valid or not: an
 *   invalid gtin is reported by its own rule, not again as a missing identifier)
 */
export function checkAcrossAttributes(product: ProductPayload, hasIdentifier: boolean, reasons: RejectReason[]): void {
  if (!hasIdentifier) reasons.push({ field: IDENTIFIERS_FIELD, reason: 'one of brand, gtin or mpn is required' });

  const { price, sale_price: salePrice } = product;
  if (typeof price === 'string' && typeof salePrice === 'string') {
    const regular = parsePrice(price);
    const sale = parsePrice(salePrice);
    if (regular.ok && sale.ok) {
      if (sale.price.currency !== regular.price.currency) {
        reasons.push({ field: 'sale_price', reason: `${quote(salePrice)} is not in the currency of price ${quote(price)}` });
      } else if (compareAmounts(sale.price.amount, regular.price.amount) >= 0) {
        reasons.push({ field: 'sale_price', reason: `${quote(salePrice)} is not lower than price ${quote(price)}` });
      }
    }
  }

  const { inventory } = product;
  if (product.availability === 'in stock' && typeof inventory === 'number' && inventory < 1) {
    reasons.push({ field: 'inventory', reason: `is ${inventory}; it must be at least 1 when availability is "in stock"` });
  }
}
