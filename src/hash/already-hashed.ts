/**
 * Values that are already SHA-256 hashes. Advertisers often export identifiers already hashed;
 * hashing them again would make them unmatchable, so a value of exactly 64 hex characters (any
 * case) is taken as a hash and passed through lowercased. No raw identifier of any hashed type
 * can be 64 hex characters (an email has an @, a handle at most 15 characters, a twitter_id at
 * most 20 digits, a device id 32 or 16 hex digits, a phone number at most 15 digits), so the
 * rule never mistakes a real value for a hash.
 */

/** True when `text` is exactly 64 hex characters, in any case. */
export function isSha256Hex(text: string): boolean {
  if (text.length !== 64) return false;
  for (let i = 0; i < 64; i++) {
    const c = text.charCodeAt(i);
    const lower = c | 0x20; // folds A-F onto a-f
    if (!((c >= 48 && c <= 57) || (lower >= 97 && lower <= 102))) return false;
  }
  return true;
}

/** The hash in canonical form (lowercase) when `trimmed` is one, else undefined. */
export function alreadyHashed(trimmed: string): string | undefined {
  return isSha256Hex(trimmed) ? trimmed.toLowerCase() : undefined;
}
