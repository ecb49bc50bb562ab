/**
 * The rule of each attribute of the table, applied to one trimmed, non-empty value: returns the
 * value to send, or undefined after recording why it cannot be sent. Rules that involve two
 * attributes (sale_price against price, inventory against availability, the brand/gtin/mpn
 * requirement) are in product-cross-rules.ts.
 */
import type { ProductAttribute } from './product-attributes.js';
import {
  ADDITIONAL_IMAGE_LINKS_MAX,
  AGE_GROUP_VALUES,
  AVAILABILITY_VALUES,
  CONDITION_VALUES,
  CUSTOM_LABEL_ADVISED_MAX_CHARACTERS,
  DESCRIPTION_MAX_CHARACTERS,
  GENDER_VALUES,
  TITLE_MAX_CHARACTERS,
} from './product-attributes.js';
import { AGE_GROUP_SPELLINGS, AVAILABILITY_SPELLINGS, CONDITION_SPELLINGS, GENDER_SPELLINGS, mapSpelling } from './google-spellings.js';
import { decodeEntities } from './html-entities.js';
import { htmlToPlainText } from './html-text.js';
import { parsePrice } from './price.js';
import { httpsUrlProblem, listEntryUrl, nonImageExtension, splitUrlList, webUrlProblem } from './https-url.js';
import { gtinProblem } from './gtin.js';
import { parseEffectiveDateRange } from './effective-date.js';
import { characterCount, collapseWhitespace, exceedsCharacters, quote } from './text-values.js';

/** Why one attribute of one item cannot be sent. */
export interface RejectReason {
  field: string;
  reason: string;
}

/** Where rules record what they find about one item. */
export interface RuleFindings {
  reasons: RejectReason[];
  warnings: string[];
}

/** The rule of a single-valued attribute. Returns '' when nothing is left of the value. */
export type AttributeRule = (value: string, field: ProductAttribute, findings: RuleFindings) => string | number | undefined;

function reject(findings: RuleFindings, field: string, reason: string): undefined {
  findings.reasons.push({ field, reason });
  return undefined;
}

/** Text attributes: character references decoded, whitespace collapsed (no tag stripping). */
export function textValue(value: string): string {
  return collapseWhitespace(decodeEntities(value));
}

const asIs: AttributeRule = (value) => value;

const text: AttributeRule = (value) => textValue(value);

function limitedText(max: number, normalize: (value: string) => string): AttributeRule {
  return (value, field, findings) => {
    const normalized = normalize(value);
    if (exceedsCharacters(normalized, max)) {
      return reject(findings, field, `has ${characterCount(normalized)} characters; at most ${max} are allowed`);
    }
    return normalized;
  };
}

function enumeration(spellings: ReadonlyMap<string, string>, values: readonly string[]): AttributeRule {
  const allowed = values.join(', ');
  return (value, field, findings) => mapSpelling(spellings, value) ?? reject(findings, field, `${quote(value)} is not one of: ${allowed}`);
}

const price: AttributeRule = (value, field, findings) => {
  const parsed = parsePrice(value);
  return parsed.ok ? parsed.price.text : reject(findings, field, parsed.reason);
};

const httpsLink: AttributeRule = (value, field, findings) => {
  const problem = httpsUrlProblem(value);
  return problem === undefined ? value : reject(findings, field, problem);
};

function imageWarning(field: string, url: string, findings: RuleFindings): void {
  const extension = nonImageExtension(url);
  if (extension !== undefined) findings.warnings.push(`${field}: file extension ".${extension}" is not JPG, GIF, WEBP or PNG; the service may refuse the image`);
}

const imageLink: AttributeRule = (value, field, findings) => {
  const problem = webUrlProblem(value);
  if (problem !== undefined) return reject(findings, field, problem);
  imageWarning(field, value, findings);
  return value;
};

const CATEGORY_SEPARATOR = /\s*>\s*/g;
// After whitespace is collapsed: a ">" without a space on either side.
const UNSPACED_SEPARATOR = /(?:^|[^ ])>|>(?:$|[^ ])/;

/** Category paths: subcategories separated by " > " exactly. */
const categoryPath: AttributeRule = (value) => {
  const normalized = textValue(value);
  return UNSPACED_SEPARATOR.test(normalized) ? normalized.replace(CATEGORY_SEPARATOR, ' > ') : normalized;
};

const gtin: AttributeRule = (value, field, findings) => {
  const problem = gtinProblem(value);
  return problem === undefined ? value : reject(findings, field, problem);
};

const WHOLE_NUMBER = /^\d{1,15}$/;

const inventory: AttributeRule = (value, field, findings) =>
  WHOLE_NUMBER.test(value) ? Number(value) : reject(findings, field, `${quote(value)} is not a whole number of 0 or more`);

const effectiveDate: AttributeRule = (value, field, findings) => {
  const parsed = parseEffectiveDateRange(value);
  return parsed.ok ? parsed.value : reject(findings, field, parsed.reason);
};

// #rgb, #rgba, #rrggbb, #rrggbbaa, and rrggbb without the "#".
const HEX_COLOR = /^(?:#(?:[0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})|[0-9a-f]{6})$/i;

/** True when the value, or one of its "/"-separated colors, is a hex code. */
export function isHexColor(value: string): boolean {
  if (!value.includes('/')) return HEX_COLOR.test(value);
  return value.split('/').some((part) => HEX_COLOR.test(part.trim()));
}

const color: AttributeRule = (value, field, findings) => {
  const normalized = textValue(value);
  return isHexColor(normalized) ? reject(findings, field, `${quote(normalized)} is a hex code; give the color's name (e.g. red)`) : normalized;
};

const customLabel: AttributeRule = (value, field, findings) => {
  const normalized = textValue(value);
  if (exceedsCharacters(normalized, CUSTOM_LABEL_ADVISED_MAX_CHARACTERS)) {
    findings.warnings.push(`${field}: longer than ${CUSTOM_LABEL_ADVISED_MAX_CHARACTERS} characters (Google Merchant's limit); sent as is`);
  }
  return normalized;
};

/** The rule of every single-valued attribute. */
export const ATTRIBUTE_RULES: Readonly<Record<Exclude<ProductAttribute, 'additional_image_link'>, AttributeRule>> = {
  id: asIs,
  title: limitedText(TITLE_MAX_CHARACTERS, textValue),
  description: limitedText(DESCRIPTION_MAX_CHARACTERS, htmlToPlainText),
  availability: enumeration(AVAILABILITY_SPELLINGS, AVAILABILITY_VALUES),
  condition: enumeration(CONDITION_SPELLINGS, CONDITION_VALUES),
  price,
  link: httpsLink,
  image_link: imageLink,
  brand: text,
  gtin,
  mpn: asIs,
  mobile_link: httpsLink,
  google_product_category: categoryPath,
  product_type: categoryPath,
  inventory,
  sale_price: price,
  sale_price_effective_date: effectiveDate,
  item_group_id: asIs,
  gender: enumeration(GENDER_SPELLINGS, GENDER_VALUES),
  color,
  size: text,
  age_group: enumeration(AGE_GROUP_SPELLINGS, AGE_GROUP_VALUES),
  custom_label_0: customLabel,
  custom_label_1: customLabel,
  custom_label_2: customLabel,
  custom_label_3: customLabel,
  custom_label_4: customLabel,
};

/**
 * additional_image_link: several values (a repeated element) and comma-separated lists alike;
 * at most 10 URLs, each an https URL. Sent as one comma-separated string.
 */
export function additionalImageLinks(values: readonly string[], findings: RuleFindings): string | undefined {
  const field = 'additional_image_link';
  const urls = splitUrlList(values);
  if (urls.length === 0) return '';
  const before = findings.reasons.length;
  if (urls.length > ADDITIONAL_IMAGE_LINKS_MAX) reject(findings, field, `has ${urls.length} URLs; at most ${ADDITIONAL_IMAGE_LINKS_MAX} are allowed`);
  urls.forEach((url, index) => {
    const problem = webUrlProblem(url);
    if (problem !== undefined) reject(findings, field, `URL ${index + 1}: ${problem}`);
    else imageWarning(field, url, findings);
  });
  if (findings.reasons.length !== before) return undefined;
  if (urls.some((url) => url.includes(','))) findings.warnings.push(`${field}: commas inside a URL are sent as %2C (the list is comma-separated)`);
  return urls.map(listEntryUrl).join(',');
}
