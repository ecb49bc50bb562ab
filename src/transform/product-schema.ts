/**
 * zod schema of a product as sent (the output of buildProduct): the attribute table as types,
 * for code that wants a typed `Product`, for the emulator to check a PUT body the way the
 * service does, and for tests to check buildProduct against. Built on the same checks as the
 * rules, so the two cannot drift apart.
 *
 * Not used on the hot path: buildProduct checks each attribute by hand (see build-product.ts
 * for the measurement that decided it).
 */
import { z } from 'zod';
import type { ProductAttribute } from './product-attributes.js';
import {
  ADDITIONAL_IMAGE_LINKS_MAX,
  AGE_GROUP_VALUES,
  AVAILABILITY_VALUES,
  CONDITION_VALUES,
  DESCRIPTION_MAX_CHARACTERS,
  GENDER_VALUES,
  TITLE_MAX_CHARACTERS,
} from './product-attributes.js';
import { parseEffectiveDateRange } from './effective-date.js';
import { gtinProblem } from './gtin.js';
import { httpsUrlProblem, splitUrlList, webUrlProblem } from './https-url.js';
import { parsePrice } from './price.js';
import { checkAcrossAttributes } from './product-cross-rules.js';
import type { RejectReason } from './product-rules.js';
import { isHexColor } from './product-rules.js';
import { exceedsCharacters } from './text-values.js';

const text = z.string().min(1);
const limitedText = (max: number) => text.refine((v) => !exceedsCharacters(v, max), `at most ${max} characters`);
const httpsUrl = z.string().refine((v) => httpsUrlProblem(v) === undefined, 'must be a valid https URL');
const imageUrl = z.string().refine((v) => webUrlProblem(v) === undefined, 'must be a valid http or https URL');
const price = z.string().refine((v) => {
  const parsed = parsePrice(v);
  return parsed.ok && parsed.price.text === v;
}, 'must be "<amount> <ISO 4217 code>" (e.g. 19.99 USD)');
const imageList = z.string().refine((v) => {
  const urls = splitUrlList([v]);
  return urls.length > 0 && urls.length <= ADDITIONAL_IMAGE_LINKS_MAX && urls.every((url) => webUrlProblem(url) === undefined);
}, `must be 1 to ${ADDITIONAL_IMAGE_LINKS_MAX} comma-separated http or https URLs`);

const shape = {
  id: text,
  title: limitedText(TITLE_MAX_CHARACTERS),
  description: limitedText(DESCRIPTION_MAX_CHARACTERS),
  availability: z.enum(AVAILABILITY_VALUES),
  condition: z.enum(CONDITION_VALUES),
  price,
  link: httpsUrl,
  image_link: imageUrl,
  brand: text.optional(),
  gtin: z.string().refine((v) => gtinProblem(v) === undefined, 'must be a GTIN with a valid check digit').optional(),
  mpn: text.optional(),
  mobile_link: httpsUrl.optional(),
  additional_image_link: imageList.optional(),
  google_product_category: text.optional(),
  product_type: text.optional(),
  inventory: z.number().int().min(0).optional(),
  sale_price: price.optional(),
  sale_price_effective_date: z.string().refine((v) => parseEffectiveDateRange(v).ok, 'must be two ISO 8601 instants joined by "/", start before end').optional(),
  item_group_id: text.optional(),
  gender: z.enum(GENDER_VALUES).optional(),
  color: text.refine((v) => !isHexColor(v), 'must be a color name, not a hex code').optional(),
  size: text.optional(),
  age_group: z.enum(AGE_GROUP_VALUES).optional(),
  custom_label_0: text.optional(),
  custom_label_1: text.optional(),
  custom_label_2: text.optional(),
  custom_label_3: text.optional(),
  custom_label_4: text.optional(),
} satisfies Record<ProductAttribute, z.ZodType>;

export const productSchema = z.strictObject(shape).superRefine((product, ctx) => {
  const reasons: RejectReason[] = [];
  const hasIdentifier = product.brand !== undefined || product.gtin !== undefined || product.mpn !== undefined;
  checkAcrossAttributes(product, hasIdentifier, reasons);
  for (const { field, reason } of reasons) ctx.addIssue({ code: 'custom', message: reason, path: [field] });
});

/** A product as sent, typed attribute by attribute. */
export type Product = z.infer<typeof productSchema>;
