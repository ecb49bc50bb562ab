/**
 * One feed item in, one product ready to send (with its content hash) or one reject with every
 * reason out. Never throws on bad data.
 *
 * Order of the reasons: attributes in the order of the table (PRODUCT_ATTRIBUTES), then the
 * rules between attributes (brand/gtin/mpn, sale_price against price, inventory against
 * availability). Warnings: fields that are not sent, in feed order, then warnings about values.
 *
 * Hot path (a catalog run targets 40,000 items/s including XML parsing). Measured with Node 20
 * on the compiled code, on the 2-core machine of DESIGN.md while other work was running (best
 * of 15 runs over 1000 items each):
 *   9 required attributes, short description ................. 2.6-2.9 µs per item
 *   21 attributes, short description ......................... 4.7-5.0 µs
 *   21 attributes, 550-character HTML description (~30 tags) . 8.7-9.0 µs
 *     of which the content hash (canonical JSON + SHA-256) ..... 3.5-3.9 µs
 * A zod parse per item would add to that: productSchema.safeParse of the finished product
 * alone costs ~1.8 µs, and a zod input schema would still have to run the same normalizing
 * code (spellings, HTML, prices) in transforms. So the attributes are checked by hand-written
 * rules, and zod describes the result (product-schema.ts) and the job-file mapping.
 * test/transform/build-product.bench.ts measures the same under vitest, whose module runner
 * adds cost to every call across modules (~12 µs and ~4 µs there).
 */
import type { ProductPayload } from '../api/resources/catalogs.js';
import { sha256Hex } from '../hash/sha256.js';
import type { FeedItem } from '../sources/types.js';
import type { FieldMapping } from './field-mapping.js';
import { fieldResolverFor } from './field-mapping.js';
import { IDENTIFIER_ATTRIBUTES, PRODUCT_ATTRIBUTES, REQUIRED_ATTRIBUTES } from './product-attributes.js';
import type { ProductAttribute } from './product-attributes.js';
import { canonicalProductJson } from './product-content-hash.js';
import { checkAcrossAttributes } from './product-cross-rules.js';
import type { AttributeRule, RejectReason, RuleFindings } from './product-rules.js';
import { ATTRIBUTE_RULES, additionalImageLinks } from './product-rules.js';
import { quote } from './text-values.js';

export type ProductBuildResult =
  | {
      ok: true;
      id: string;
      product: ProductPayload;
      /** The product's canonical JSON (product-content-hash.ts): what is hashed, and what is sent. */
      json: string;
      contentHash: string;
      warnings: string[];
    }
  | { ok: false; id: string | undefined; reasons: RejectReason[] };

/** What the loop needs to know of each attribute, by index into PRODUCT_ATTRIBUTES. */
interface AttributePlan {
  name: ProductAttribute;
  /** undefined for additional_image_link, the one list-valued attribute. */
  rule: AttributeRule | undefined;
  required: boolean;
  identifier: boolean;
}

const REQUIRED: ReadonlySet<ProductAttribute> = new Set(REQUIRED_ATTRIBUTES);
const IDENTIFIERS: ReadonlySet<ProductAttribute> = new Set(IDENTIFIER_ATTRIBUTES);
const PLANS: readonly AttributePlan[] = PRODUCT_ATTRIBUTES.map((name) => ({
  name,
  rule: name === 'additional_image_link' ? undefined : ATTRIBUTE_RULES[name],
  required: REQUIRED.has(name),
  identifier: IDENTIFIERS.has(name),
}));
// The product is assembled with its attributes in name order, which makes its canonical JSON
// (product-content-hash.ts) a single JSON.stringify.
const NAME_ORDER: readonly number[] = PRODUCT_ATTRIBUTES.map((_, index) => index).sort((a, b) =>
  (PRODUCT_ATTRIBUTES[a] ?? '') < (PRODUCT_ATTRIBUTES[b] ?? '') ? -1 : 1,
);

type RawValue = string | string[] | undefined;

function merge(existing: RawValue, value: string | string[]): string | string[] {
  if (existing === undefined) return value;
  return [...(typeof existing === 'string' ? [existing] : existing), ...(typeof value === 'string' ? [value] : value)];
}

/**
 * The one value of a single-valued attribute, trimmed: '' when absent or empty; undefined
 * (with a reason) when a repeated element or two fields give different values.
 */
function singleValue(raw: RawValue, field: ProductAttribute, findings: RuleFindings): string | undefined {
  if (raw === undefined) return '';
  if (typeof raw === 'string') return raw.trim();
  let first = '';
  let distinct: string[] | undefined;
  for (const value of raw) {
    const trimmed = value.trim();
    if (trimmed === '' || trimmed === first) continue;
    if (first === '') first = trimmed;
    else if (distinct === undefined) distinct = [first, trimmed];
    else if (!distinct.includes(trimmed)) distinct.push(trimmed);
  }
  if (distinct === undefined) return first;
  findings.reasons.push({ field, reason: `has ${distinct.length} different values (${distinct.map((v) => quote(v)).join(', ')}); one is expected` });
  return undefined;
}

/**
 * product_type may be given several times (Google Merchant takes up to 5 and uses the first):
 * the first non-empty value, with a warning when others differ.
 */
function firstValue(raw: RawValue, field: ProductAttribute, findings: RuleFindings): string {
  if (raw === undefined) return '';
  if (typeof raw === 'string') return raw.trim();
  const values = [...new Set(raw.map((v) => v.trim()).filter((v) => v !== ''))];
  if (values.length > 1) findings.warnings.push(`${field}: ${values.length} values; the first is sent (Google Merchant uses the first too)`);
  return values[0] ?? '';
}

function missing(field: ProductAttribute, source: string | undefined): RejectReason {
  return { field, reason: source === undefined ? 'is required' : `is required (source field ${quote(source)} is missing or empty)` };
}

export function buildProduct(item: FeedItem, mapping?: FieldMapping): ProductBuildResult {
  const resolver = fieldResolverFor(mapping);
  const findings: RuleFindings = { reasons: [], warnings: [] };
  const raw: RawValue[] = [];
  const fields = item.fields;
  for (const name in fields) {
    const value = fields[name];
    const route = resolver.route(name);
    if (route.warning !== undefined) findings.warnings.push(route.warning);
    if (value === undefined) continue;
    for (const index of route.attributes) raw[index] = merge(raw[index], value);
  }

  const values: (string | number | undefined)[] = [];
  let hasIdentifier = false;
  for (let index = 0; index < PLANS.length; index++) {
    const plan = PLANS[index];
    const value = raw[index];
    if (plan === undefined) continue;
    let result: string | number | undefined;
    if (plan.rule === undefined) {
      if (value === undefined) continue;
      result = additionalImageLinks(typeof value === 'string' ? [value] : value, findings);
    } else {
      const single = plan.name === 'product_type' ? firstValue(value, plan.name, findings) : singleValue(value, plan.name, findings);
      if (single === undefined) {
        // Given twice, differently: given all the same (its own reason says what is wrong).
        if (plan.identifier) hasIdentifier = true;
        continue;
      }
      if (single === '') {
        if (plan.required) findings.reasons.push(missing(plan.name, resolver.sources[index]));
        continue;
      }
      result = plan.rule(single, plan.name, findings);
    }
    if (result === '') {
      // Nothing left once markup, control characters and whitespace are removed.
      if (plan.required) findings.reasons.push({ field: plan.name, reason: 'is required (the value is empty once HTML and whitespace are removed)' });
      continue;
    }
    // A given but invalid identifier counts as given: its own reason says what is wrong.
    if (plan.identifier) hasIdentifier = true;
    values[index] = result;
  }
  const product: ProductPayload = {};
  for (const index of NAME_ORDER) {
    const value = values[index];
    if (value !== undefined) product[PRODUCT_ATTRIBUTES[index] ?? ''] = value;
  }
  checkAcrossAttributes(product, hasIdentifier, findings.reasons);

  const id = typeof product['id'] === 'string' ? product['id'] : undefined;
  if (findings.reasons.length > 0 || id === undefined) return { ok: false, id, reasons: findings.reasons };
  const json = canonicalProductJson(product);
  return { ok: true, id, product, json, contentHash: sha256Hex(json), warnings: findings.warnings };
}
