/** The identifier types of an audience user record, named as the Ads API names them. */
export const IDENTIFIER_TYPES = ['email', 'phone_number', 'handle', 'twitter_id', 'device_id', 'partner_user_id'] as const;
export type IdentifierType = (typeof IDENTIFIER_TYPES)[number];

/** What normalizing one raw value gives: the normalized text, or why it is not usable. */
export type Normalized = { ok: true; value: string } | { ok: false; reason: string };

/** Context a normalizer may need: the row's country, the job's default country. */
export interface NormalizeContext {
  /** ISO 3166-1 alpha-2, upper case, from the row's country column. */
  country?: string | undefined;
  /** ISO 3166-1 alpha-2, upper case, from the job's default_country. */
  defaultCountry?: string | undefined;
}
