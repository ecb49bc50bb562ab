/** The identifier types of an audience user record, named as the Ads API names them. */
export const IDENTIFIER_TYPES = ['email', 'phone_number', 'handle', 'twitter_id', 'device_id', 'partner_user_id'] as const;
export type IdentifierType = (typeof IDENTIFIER_TYPES)[number];

/** What normalizing one raw value gives: the normalized text, or why it is not usable. */
export type Normalized = { ok: true; value: string } | { ok: false; reason: string };

/** The rejecting half of Normalized: why a raw value is not usable. */
export type Rejected = Extract<Normalized, { ok: false }>;

/**
 * What the normalizers of src/hash compute internally: the normalized text itself, or a
 * rejection. A bare string on the success path saves an allocation per value on the hot path;
 * the public normalizers wrap it into a Normalized.
 */
export type NormalizedText = string | Rejected;

/** Context a normalizer may need: the row's country, the job's default country. */
export interface NormalizeContext {
  /** ISO 3166-1 alpha-2, upper case, from the row's country column. */
  country?: string | undefined;
  /** ISO 3166-1 alpha-2, upper case, from the job's default_country. */
  defaultCountry?: string | undefined;
}

/** One normalizer per identifier type: raw text in, normalized text (before hashing) out. */
export type Normalizer = (raw: string, ctx?: NormalizeContext) => Normalized;
