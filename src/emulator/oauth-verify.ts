/**
 * OAuth 1.0a verification of a request (RFC 5849), as the platform checks every API call:
 * the Authorization header is parsed; the signed parameters are its oauth_* parameters (minus
 * oauth_signature and realm), the query and an application/x-www-form-urlencoded body (a JSON
 * body is not signed); the HMAC-SHA1 signature is recomputed over the base string built with
 * the request's Host header, and compared. Then the timestamp must be within the skew and the
 * nonce new for the consumer key. The primitives are those of the client (src/api/oauth1.ts),
 * so both sides share one implementation of percent-encoding and the base string.
 */
import { timingSafeEqual } from 'node:crypto';
import { hmacSha1Base64, parseAuthorizationHeader, queryPairs, signatureBaseString, signingKey, type ParamPair } from '../api/oauth1.js';
import { revokedToken, unauthorized } from './errors.js';
import type { NonceCache } from './nonce-cache.js';
import type { Caller } from './routing.js';
import type { TokenRegistry } from './token-registry.js';

/** What must sign the request: an access token, a request token, or the consumer alone. */
export type SignerKind = 'access_token' | 'request_token' | 'consumer_only';

export interface SignedRequestView {
  method: string;
  /** The request URL as the client addressed it: http://<Host header><path and query>. */
  url: URL;
  authorization: string | undefined;
  /** The parsed body when it is application/x-www-form-urlencoded. */
  form: URLSearchParams | undefined;
}

export interface OAuthVerifierDeps {
  tokens: TokenRegistry;
  nonces: NonceCache;
  now: () => number;
  timestampSkewSeconds: number;
}

const REQUIRED = ['oauth_consumer_key', 'oauth_nonce', 'oauth_signature', 'oauth_signature_method', 'oauth_timestamp'] as const;

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Verifies the request or throws the service's 401. */
export function verifyOAuth1(request: SignedRequestView, signer: SignerKind, deps: OAuthVerifierDeps): Caller {
  const header = parseAuthorizationHeader(request.authorization);
  if (!header) throw unauthorized('the request carries no valid OAuth 1.0a Authorization header');
  for (const name of REQUIRED) {
    if (!header[name]) throw unauthorized(`the Authorization header lacks ${name}`);
  }
  if (header.oauth_signature_method !== 'HMAC-SHA1') throw unauthorized('oauth_signature_method must be HMAC-SHA1');
  if (header.oauth_version !== undefined && header.oauth_version !== '1.0') throw unauthorized('oauth_version must be 1.0');

  const consumerKey = header.oauth_consumer_key ?? '';
  const consumerSecret = deps.tokens.consumerSecret(consumerKey);
  if (consumerSecret === undefined) throw unauthorized('unknown consumer key');

  const token = header.oauth_token;
  let tokenSecret: string | undefined;
  const caller: Caller = { consumerKey, oauthParams: {} };
  if (signer === 'consumer_only') {
    if (token !== undefined) throw unauthorized('this request is signed with the consumer key alone, without oauth_token');
  } else if (token === undefined || token === '') {
    throw unauthorized('the Authorization header lacks oauth_token');
  } else if (signer === 'access_token') {
    const record = deps.tokens.accessToken(token);
    if (!record || record.consumerKey !== consumerKey) throw unauthorized('invalid or unknown access token');
    tokenSecret = record.secret;
    caller.accessToken = record;
  } else {
    const record = deps.tokens.requestToken(token);
    if (!record || record.consumerKey !== consumerKey || record.exchanged) throw unauthorized('invalid or unknown request token');
    tokenSecret = record.secret;
    caller.requestToken = record;
  }

  const timestamp = /^\d{1,12}$/.test(header.oauth_timestamp ?? '') ? Number(header.oauth_timestamp) : NaN;
  const nowSeconds = deps.now() / 1000;
  if (!Number.isFinite(timestamp) || Math.abs(nowSeconds - timestamp) > deps.timestampSkewSeconds) {
    throw unauthorized(`oauth_timestamp is more than ${deps.timestampSkewSeconds} seconds away from the server's clock`);
  }

  const formPairs: ParamPair[] = request.form ? [...request.form.entries()] : [];
  const query = queryPairs(request.url);
  const headerPairs: ParamPair[] = [];
  for (const name of Object.keys(header)) {
    if (name.startsWith('oauth_') && name !== 'oauth_signature') headerPairs.push([name, header[name] ?? '']);
  }
  const params: ParamPair[] = headerPairs.concat(query, formPairs);
  const expected = hmacSha1Base64(signingKey(consumerSecret, tokenSecret), signatureBaseString(request.method, request.url, params));
  if (!sameText(expected, header.oauth_signature ?? '')) throw unauthorized('the OAuth signature does not match the request');

  if (!deps.nonces.claim(consumerKey, header.oauth_nonce ?? '')) throw unauthorized('oauth_nonce was already used');
  if (caller.accessToken?.revoked) throw revokedToken();

  // The protocol parameters as the handlers see them: the header's win over the query's, which win over the form's.
  const oauthParams: Record<string, string> = {};
  for (const pairs of [formPairs, query, headerPairs]) {
    for (const [k, v] of pairs) if (k.startsWith('oauth_')) oauthParams[k] = v;
  }
  caller.oauthParams = oauthParams;
  return caller;
}
