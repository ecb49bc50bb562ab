/**
 * The zod schema of a `catalog.fields:` mapping (field-mapping.ts's rules as zod issues). Its
 * own module: the feed-reading threads build products with field-mapping.ts and never parse a
 * job file, so they do not load zod (~70 ms a thread) for it.
 */
import { z } from 'zod';
import type { ProductAttribute } from './product-attributes.js';
import { isProductAttribute } from './product-attributes.js';
import { validateFieldMapping, type FieldMapping } from './field-mapping.js';

/**
 * zod schema of `catalog.fields:` for the job-file schema; its issues carry the key as path
 * and the messages of validateFieldMapping.
 */
export const fieldMappingSchema = z
  .record(z.string(), z.unknown())
  .superRefine((value, ctx) => {
    for (const error of validateFieldMapping(value)) {
      ctx.addIssue({ code: 'custom', message: error.message, path: error.key === '' ? [] : [error.key] });
    }
  })
  .transform((value): FieldMapping => {
    const mapping: Partial<Record<ProductAttribute, string>> = {};
    for (const [key, source] of Object.entries(value)) {
      if (isProductAttribute(key) && typeof source === 'string') mapping[key] = source;
    }
    return mapping;
  });
