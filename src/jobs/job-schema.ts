/**
 * The job file schema (YAML, one per ads account and sync). The block present says the
 * kind: `audience:` (custom audience or do-not-reach list) or `catalog:`. Unknown keys are
 * errors, so a misspelt key never silently falls back to a default.
 */
import { z } from 'zod';
import { alertsSchema, refreshAfterDays, retrySchema, timerMs } from '../config/settings.js';
import { IDENTIFIER_TYPES } from '../hash/types.js';

/** An id: a string, or a YAML number that is a safe integer (big ones must be quoted). */
const idSchema = z
  .union([z.string().trim().min(1), z.number()])
  .superRefine((v, ctx) => {
    if (typeof v === 'string') return;
    if (!Number.isInteger(v) || v < 0) ctx.addIssue({ code: 'custom', message: 'an id is text or a whole number' });
    else if (!Number.isSafeInteger(v)) ctx.addIssue({ code: 'custom', message: 'this number is too long to be read exactly: put it in quotes' });
  })
  .transform(String);

const ratio = z.number().min(0).max(1);

export const sourceSchema = z.strictObject({
  path: z.string().trim().min(1),
  format: z.enum(['csv', 'tsv', 'xml']).optional(),
  // A tab is hard to write in YAML ("\t" in double quotes): `tab` and an unquoted \t say it too.
  delimiter: z
    .preprocess((v) => (v === 'tab' || v === '\\t' ? '\t' : v), z.enum([',', ';', '\t', '|']))
    .optional(),
  encoding: z.enum(['utf8', 'latin1']).optional(),
});

const identifiersSchema = z
  .strictObject(Object.fromEntries(IDENTIFIER_TYPES.map((t) => [t, z.string().trim().min(1).optional()])) as Record<
    (typeof IDENTIFIER_TYPES)[number],
    z.ZodOptional<z.ZodString>
  >)
  .refine((m) => Object.values(m).some((v) => v !== undefined), { message: `name at least one identifier column (${IDENTIFIER_TYPES.join(', ')})` });

export const audienceSchema = z
  .strictObject({
    custom_audience_id: idSchema.optional(),
    do_not_reach_list_id: idSchema.optional(),
    mode: z.enum(['mirror', 'add', 'remove']).default('mirror'),
    identifiers: identifiersSchema,
    country_column: z.string().trim().min(1).optional(),
    default_country: z.string().trim().optional(),
    refresh_after_days: refreshAfterDays.optional(),
    max_remove_ratio: ratio.optional(),
  })
  .refine((a) => (a.custom_audience_id === undefined) !== (a.do_not_reach_list_id === undefined), {
    message: 'give exactly one of custom_audience_id and do_not_reach_list_id',
  });

const productSetSchema = z.union([
  z.strictObject({
    name: z.string().trim().min(1),
    description: z.string().optional(),
    product_ids: z.array(idSchema).min(1),
  }),
  z.strictObject({
    name: z.string().trim().min(1),
    description: z.string().optional(),
    filters: z
      .array(
        z.strictObject({
          attribute: z.enum(['price', 'product_type', 'google_product_category', 'sale_price', 'inventory', 'custom_label_0', 'custom_label_1', 'custom_label_2', 'custom_label_3', 'custom_label_4']),
          operator: z.enum(['GREATER_THAN', 'EQUAL_TO', 'LESS_THAN', 'MATCH', 'NOT_CONTAINS', 'CONTAINS']),
          value: z.union([z.string(), z.number()]).transform(String),
        }),
      )
      .min(1),
  }),
]);

export const catalogSchema = z.strictObject({
  product_catalog_id: idSchema,
  mode: z.enum(['mirror', 'upsert']).default('mirror'),
  max_delete_ratio: ratio.optional(),
  fields: z.record(z.string(), z.string().trim().min(1)).optional(),
  product_sets: z.array(productSetSchema).optional(),
});

/**
 * A job's name (given, or its file's name without the extension): it names folders (the
 * rejects files), locks, checkpoints and the run history, so nothing that could leave a folder.
 */
export const JOB_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
export const JOB_NAME_RULE = 'use letters, digits, dot, dash and underscore, starting with a letter or digit';

export const jobFileSchema = z
  .strictObject({
    name: z.string().trim().regex(JOB_NAME, JOB_NAME_RULE).optional(),
    account_id: idSchema,
    credentials: z.string().trim().regex(/^[A-Za-z][A-Za-z0-9_]*$/, 'a profile name: letters, digits and underscores').optional(),
    schedule: z.string().trim().min(1).optional(),
    timezone: z.string().trim().min(1).optional(),
    source: sourceSchema,
    audience: audienceSchema.optional(),
    catalog: catalogSchema.optional(),
    max_reject_ratio: ratio.optional(),
    alerts: alertsSchema.optional(),
    concurrency: z.number().int().min(1).max(64).optional(),
    request_timeout_ms: timerMs.min(1).optional(),
    retry: retrySchema.optional(),
  })
  .refine((j) => (j.audience === undefined) !== (j.catalog === undefined), {
    message: 'a job has exactly one of an `audience:` block and a `catalog:` block',
  });

export type JobFile = z.output<typeof jobFileSchema>;

/** Known keys per block, for "did you mean" suggestions. */
export function knownJobKeys(path: readonly PropertyKey[]): readonly string[] | undefined {
  const p = path.map(String).join('.');
  if (p === '') return Object.keys(jobFileSchema.shape);
  if (p === 'source') return Object.keys(sourceSchema.shape);
  if (p === 'audience') return ['custom_audience_id', 'do_not_reach_list_id', 'mode', 'identifiers', 'country_column', 'default_country', 'refresh_after_days', 'max_remove_ratio'];
  if (p === 'audience.identifiers') return IDENTIFIER_TYPES;
  if (p === 'catalog') return Object.keys(catalogSchema.shape);
  if (p === 'alerts') return Object.keys(alertsSchema.shape);
  if (p === 'retry') return Object.keys(retrySchema.shape);
  return undefined;
}
