/**
 * Authentication of a request by its route's mode: OAuth 1.0a (oauth-verify.ts) for the API
 * and the token endpoints, HTTP Basic with the consumer key and secret for oauth2/token, and
 * nothing for the browser page of the flow.
 */
import { timingSafeEqual } from 'node:crypto';
import { unauthorized } from './errors.js';
import { verifyOAuth1, type OAuthVerifierDeps, type SignedRequestView } from './oauth-verify.js';
import type { AuthMode, Caller } from './routing.js';

function decodeComponent(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** HTTP Basic: base64 of percent-encoded key, a colon, percent-encoded secret. */
function verifyBasic(authorization: string | undefined, deps: OAuthVerifierDeps): Caller {
  const match = /^\s*Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization ?? '');
  if (!match?.[1]) throw unauthorized('this endpoint needs HTTP Basic authentication with the consumer key and secret');
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const key = colon < 0 ? undefined : decodeComponent(decoded.slice(0, colon));
  const secret = colon < 0 ? undefined : decodeComponent(decoded.slice(colon + 1));
  const expected = key === undefined ? undefined : deps.tokens.consumerSecret(key);
  if (key === undefined || secret === undefined || expected === undefined) throw unauthorized('unknown consumer key');
  const a = Buffer.from(secret);
  const b = Buffer.from(expected);
  if (a.length !== b.length || !timingSafeEqual(a, b)) throw unauthorized('wrong consumer secret');
  return { consumerKey: key, oauthParams: {} };
}

export function authenticate(mode: AuthMode, request: SignedRequestView, deps: OAuthVerifierDeps): Caller | undefined {
  switch (mode) {
    case 'none':
      return undefined;
    case 'basic':
      return verifyBasic(request.authorization, deps);
    default:
      return verifyOAuth1(request, mode, deps);
  }
}
