/** Product side of src/transform: feed item -> product payload (or reject), field mapping. */
export { buildProduct } from './build-product.js';
export type { ProductBuildResult } from './build-product.js';
export { attributeOfFieldName, validateFieldMapping } from './field-mapping.js';
export { fieldMappingSchema } from './field-mapping-schema.js';
export type { FieldMapping, FieldMappingError } from './field-mapping.js';
export {
  ADDITIONAL_IMAGE_LINKS_MAX,
  AGE_GROUP_VALUES,
  AVAILABILITY_VALUES,
  CONDITION_VALUES,
  DESCRIPTION_MAX_CHARACTERS,
  GENDER_VALUES,
  IDENTIFIER_ATTRIBUTES,
  PRODUCT_ATTRIBUTES,
  REQUIRED_ATTRIBUTES,
  SERVICE_GENERATED_ATTRIBUTES,
  TITLE_MAX_CHARACTERS,
  isProductAttribute,
} from './product-attributes.js';
export type { AgeGroup, Availability, Condition, Gender, ProductAttribute } from './product-attributes.js';
export { productSchema } from './product-schema.js';
export type { Product } from './product-schema.js';
export { canonicalProductJson, productContentHash } from './product-content-hash.js';
export type { RejectReason } from './product-rules.js';
export { IDENTIFIERS_FIELD } from './product-cross-rules.js';
export { htmlToPlainText } from './html-text.js';
export { parsePrice, compareAmounts } from './price.js';
export type { Price } from './price.js';
