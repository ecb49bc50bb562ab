/**
 * OAuth 1.0a HMAC-SHA1 request signing (RFC 5849), as the X platform checks it on every
 * Ads API call:
 * - RFC 3986 percent-encoding with uppercase hex (a space is %20, never +);
 * - the signature base string is METHOD & encode(base URL) & encode(sorted parameters);
 * - query parameters are signed, a form-urlencoded body is signed, a JSON body is not;
 * - every attempt, retries included, gets a fresh nonce and timestamp (callers call
 *   `authorizationHeader` once per attempt, never cache it).
 *
 * The same functions verify requests in the emulator (src/emulator).
 */
import { createHmac, randomFillSync } from 'node:crypto';

export interface ConsumerCredentials {
  consumerKey: string;
  consumerSecret: string;
}

export interface TokenCredentials {
  token: string;
  tokenSecret: string;
}

/** One name/value pair. Pairs, not a map: OAuth signs repeated names separately. */
export type ParamPair = readonly [name: string, value: string];

const RESERVED_BY_ENCODE_URI_COMPONENT = /[!'()*]/g;
/** Text that percent-encoding leaves as it is: every signed request has a dozen such values. */
const UNRESERVED_ONLY = /^[A-Za-z0-9\-._~]*$/;

/** RFC 3986 section 2.1 percent-encoding of everything but ALPHA / DIGIT / - . _ ~ */
export function percentEncode(value: string): string {
  if (UNRESERVED_ONLY.test(value)) return value;
  // toWellFormed: a lone surrogate would make encodeURIComponent throw; the platform
  // sees U+FFFD for it, and so do we.
  return encodeURIComponent(value.toWellFormed()).replace(
    RESERVED_BY_ENCODE_URI_COMPONENT,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/**
 * The base string URI (RFC 5849 3.4.1.2): lowercase scheme and host, the port only when it
 * is not the scheme's default, the path, and no query or fragment.
 */
export function baseStringUri(url: URL): string {
  const scheme = url.protocol.toLowerCase();
  const host = url.hostname.toLowerCase();
  const defaultPort = (scheme === 'http:' && url.port === '80') || (scheme === 'https:' && url.port === '443');
  const port = url.port && !defaultPort ? `:${url.port}` : '';
  return `${scheme}//${host}${port}${url.pathname}`;
}

/** Parameter normalization (RFC 5849 3.4.1.3.2): encode, sort by name then value, join. */
export function normalizeParameters(params: readonly ParamPair[]): string {
  return params
    .map(([k, v]) => [percentEncode(k), percentEncode(v)] as const)
    .sort(([ak, av], [bk, bv]) => (ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

/** Query pairs of a URL, decoded the way application/x-www-form-urlencoded is ('+' is a space). */
export function queryPairs(url: URL): ParamPair[] {
  return [...url.searchParams.entries()];
}

export function signatureBaseString(method: string, url: URL, params: readonly ParamPair[]): string {
  return [method.toUpperCase(), percentEncode(baseStringUri(url)), percentEncode(normalizeParameters(params))].join('&');
}

export function signingKey(consumerSecret: string, tokenSecret: string | undefined): string {
  return `${percentEncode(consumerSecret)}&${percentEncode(tokenSecret ?? '')}`;
}

export function hmacSha1Base64(key: string, text: string): string {
  return createHmac('sha1', key).update(text).digest('base64');
}

const NONCE_BYTES = 32;
/** Random bytes drawn for this many nonces at once: one draw from the system's generator costs as much as a whole signature. */
const NONCES_PER_DRAW = 128;
const nonceBytes = Buffer.alloc(NONCE_BYTES * NONCES_PER_DRAW);
/** Nonces of `nonceBytes` not handed out yet (each part is handed out once, then drawn afresh). */
let noncesLeft = 0;

/** 32 random bytes as 43 URL-safe ASCII characters (the platform asks for ASCII only). */
export function makeNonce(): string {
  if (noncesLeft === 0) {
    randomFillSync(nonceBytes);
    noncesLeft = NONCES_PER_DRAW;
  }
  noncesLeft -= 1;
  const at = noncesLeft * NONCE_BYTES;
  return nonceBytes.toString('base64url', at, at + NONCE_BYTES);
}

export interface SignInput {
  method: string;
  /** The full request URL, query string included. */
  url: URL;
  consumer: ConsumerCredentials;
  /** Absent for the request-token step. */
  token?: TokenCredentials | undefined;
  /** Parameters of an application/x-www-form-urlencoded body; omit for JSON or empty bodies. */
  formParams?: readonly ParamPair[];
  /** Extra oauth_* protocol parameters, such as oauth_callback or oauth_verifier. */
  extraOAuthParams?: Readonly<Record<string, string>>;
  /** For tests and published vectors only; by default every call draws fresh ones. */
  nonce?: string;
  timestamp?: number;
}

export interface SignedRequest {
  /** The oauth_* parameters including oauth_signature. */
  oauthParams: Record<string, string>;
  baseString: string;
  signature: string;
  /** The value of the Authorization header. */
  header: string;
}

export function signRequest(input: SignInput): SignedRequest {
  const oauthParams: Record<string, string> = {
    oauth_consumer_key: input.consumer.consumerKey,
    oauth_nonce: input.nonce ?? makeNonce(),
    oauth_signature_method: 'HMAC-SHA1',
    oauth_timestamp: String(input.timestamp ?? Math.floor(Date.now() / 1000)),
    oauth_version: '1.0',
    ...(input.token ? { oauth_token: input.token.token } : {}),
    ...input.extraOAuthParams,
  };
  const params: ParamPair[] = [...queryPairs(input.url), ...(input.formParams ?? []), ...Object.entries(oauthParams)];
  const baseString = signatureBaseString(input.method, input.url, params);
  const signature = hmacSha1Base64(signingKey(input.consumer.consumerSecret, input.token?.tokenSecret), baseString);
  const signed: Record<string, string> = { ...oauthParams, oauth_signature: signature };
  const header =
    'OAuth ' +
    Object.keys(signed)
      .sort()
      .map((k) => `${percentEncode(k)}="${percentEncode(signed[k] ?? '')}"`)
      .join(', ');
  return { oauthParams: signed, baseString, signature, header };
}

/**
 * Parses an `Authorization: OAuth ...` header into its parameters (RFC 5849 3.5.1).
 * Returns undefined when the header is not an OAuth header or is malformed.
 */
export function parseAuthorizationHeader(header: string | undefined): Record<string, string> | undefined {
  if (!header) return undefined;
  const match = /^\s*OAuth\s+(.*)$/is.exec(header);
  if (!match) return undefined;
  const out: Record<string, string> = {};
  const body = match[1] ?? '';
  const re = /\s*([^=\s,]+)\s*=\s*"([^"]*)"\s*(?:,|$)/gy;
  let consumed = 0;
  for (let m = re.exec(body); m; m = re.exec(body)) {
    const [, rawKey, rawValue] = m;
    if (rawKey === undefined || rawValue === undefined) return undefined;
    try {
      out[decodeURIComponent(rawKey)] = decodeURIComponent(rawValue);
    } catch {
      return undefined;
    }
    consumed = re.lastIndex;
  }
  if (body.slice(consumed).trim() !== '') return undefined;
  return out;
}
