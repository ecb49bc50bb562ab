import { alreadyHashed } from './already-hashed.js';
import { rejected, toNormalized } from './result.js';
import type { Normalized, NormalizedText } from './types.js';

/** RFC 5321 caps a forward path at 254 characters; anything longer is not an address. */
const MAX_EMAIL_LENGTH = 254;

/**
 * A local part: no whitespace (\s with the u flag covers Unicode spaces such as NBSP), no
 * control character (a NUL or a DEL is never typed into an address), and none of the RFC 5322
 * specials that only mark a display name, a bracketed address or a list around it
 * (< > ( ) [ ] , ; : \). Quotes, apostrophes, % and the other atext characters stay.
 */
const LOCAL_PART = String.raw`[^\s\p{Cc}@<>()[\]\\,;:]+`;
/**
 * A domain label, lowercased: ASCII letters, digits, hyphens and underscores, or characters
 * beyond ASCII (an internationalised domain) that are neither spaces nor control characters.
 * Any other ASCII character (' " / ? | < > , ; ...) never belongs to a domain name: it is what
 * is left of the quotes, brackets or link around an address.
 */
const DOMAIN_LABEL = String.raw`(?:[a-z0-9_\-]|[^\x00-\x7f\s\p{Cc}])+`;
/**
 * An address as the X docs need it: exactly one @, a non-empty local part, and a domain of at
 * least two non-empty dot-separated labels. Labels cannot contain a dot, so the pattern cannot
 * backtrack badly on long input.
 */
const EMAIL_PATTERN = new RegExp(`^${LOCAL_PART}@(?:${DOMAIN_LABEL}\\.)+${DOMAIN_LABEL}$`, 'u');

const EMPTY = rejected('empty email');
const NOT_AN_EMAIL = rejected('not an email address');
const TOO_LONG = rejected(`email address longer than ${MAX_EMAIL_LENGTH} characters`);

const NON_ASCII = /[^ -~\t\r\n]/;
/** Invisible format characters (zero-width space and joiners, soft hyphen, BOM): never part of an address. */
const FORMAT_CHARACTERS = /\p{Cf}/gu;
/** A mailto: link as a spreadsheet or a CRM writes it: the scheme (even twice) and any ?subject=... go. */
const MAILTO = /^(?:mailto:)+([^?]*)(?:\?.*)?$/is;

/**
 * The address of a mailto: link. A link is a URI (RFC 6068): its address may hold
 * percent-escapes (%2B for +, %40 for @, %C3%B6 for ö, as URL encoders write them), decoded
 * here; undefined when an escape is malformed (%zz): no address can be read from it.
 */
function mailtoAddress(link: string): string | undefined {
  if (!link.includes('%')) return link;
  try {
    return decodeURIComponent(link);
  } catch {
    return undefined;
  }
}

/** Text without invisible format characters, in NFKC, trimmed again; ASCII text is returned as is. */
function visibleForm(text: string): string {
  return NON_ASCII.test(text) ? text.replace(FORMAT_CHARACTERS, '').normalize('NFKC').trim() : text;
}

/**
 * Email: trim leading and trailing whitespace, lowercase. No provider-specific rewriting (no
 * Gmail dot or +tag removal): X matches on the address as the docs normalize it. What a
 * person cannot see or did not mean as part of the address goes first: a `mailto:` scheme
 * (its percent-escapes decoded: `mailto:ada%2Blists@x.com` is ada+lists@x.com), invisible
 * format characters (a zero-width space pasted from a web page), and compatibility
 * forms (NFKC: a fullwidth ＡＤＡ typed with an Asian keyboard layout is ada; é written as e and
 * a combining accent is the one character é).
 */
export function emailText(raw: string): NormalizedText {
  let trimmed = raw.trim();
  if (trimmed === '') return EMPTY;
  const hashed = alreadyHashed(trimmed);
  if (hashed !== undefined) return hashed;
  trimmed = visibleForm(trimmed);
  // "m" or "M" first: the common case pays one comparison, not a regular expression.
  const first = trimmed.charCodeAt(0);
  const link = first === 109 || first === 77 ? MAILTO.exec(trimmed) : null;
  if (link) {
    const address = mailtoAddress(link[1] ?? '');
    if (address === undefined) return NOT_AN_EMAIL;
    // What the escapes gave is read like any other address: invisible characters, NFKC.
    trimmed = visibleForm(address.trim());
  }
  if (trimmed === '') return EMPTY;
  if (trimmed.length > MAX_EMAIL_LENGTH) return TOO_LONG;
  const email = trimmed.toLowerCase();
  return EMAIL_PATTERN.test(email) ? email : NOT_AN_EMAIL;
}

/** The email as hashed: `"  Support@X.com "` gives `support@x.com`. */
export function normalizeEmail(raw: string): Normalized {
  return toNormalized(emailText(raw));
}
