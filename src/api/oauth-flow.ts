/**
 * The OAuth 1.0a PIN (oob) three-legged flow and token revocation, on the platform address
 * (ADSYNC_API_URL). The request-token and access-token answers are ampersand-joined
 * key=value pairs, not JSON, whatever the endpoint information says.
 *
 * The tokens, secrets and PIN of the flow are registered as secrets as soon as adsync has them,
 * as the client registers its credentials: a refusal that quotes the request (its
 * Authorization header, its URL with the oauth_verifier) is then scrubbed from every message
 * and log line.
 */
import { z } from 'zod';
import { registerSecrets } from '../logging/secrets.js';
import type { AdsApiClient } from './client.js';
import { ApiRequestError } from './errors.js';
import type { TokenCredentials } from './oauth1.js';

/** Parses an ampersand-joined key=value answer. */
export function parseFormAnswer(body: Buffer | string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(body.toString()).entries()) out[k] = v;
  return out;
}

function requireFields<K extends string>(path: string, answer: Record<string, string>, keys: readonly K[]): Record<K, string> {
  const missing = keys.filter((k) => !answer[k]);
  if (missing.length > 0) {
    throw new ApiRequestError({ method: 'POST', path }, `POST ${path}: the answer lacks ${missing.join(', ')}`);
  }
  return answer;
}

export interface RequestToken extends TokenCredentials {
  callbackConfirmed: boolean;
}

/** Step 1: POST oauth/request_token with oauth_callback=oob, signed without a token. */
export async function obtainRequestToken(client: AdsApiClient, callback = 'oob'): Promise<RequestToken> {
  const path = '/oauth/request_token';
  return client.send({ method: 'POST', path, base: 'api', family: 'oauth', token: null, oauthParams: { oauth_callback: callback } }, (a) => {
    const answer = parseFormAnswer(a.body);
    const f = requireFields(path, answer, ['oauth_token', 'oauth_token_secret']);
    registerSecrets([f.oauth_token, f.oauth_token_secret]);
    return { token: f.oauth_token, tokenSecret: f.oauth_token_secret, callbackConfirmed: answer.oauth_callback_confirmed === 'true' };
  });
}

/** Step 2: the page the user opens to approve; it shows the PIN in oob mode. */
export function authorizeUrl(apiUrl: string, requestToken: string): string {
  return `${apiUrl.replace(/\/+$/, '')}/oauth/authorize?oauth_token=${encodeURIComponent(requestToken)}`;
}

export interface AccessToken extends TokenCredentials {
  userId: string;
  screenName: string;
}

/** Step 3: POST oauth/access_token with the verifier (the PIN), signed with the request token. */
export async function exchangeForAccessToken(client: AdsApiClient, requestToken: TokenCredentials, verifier: string): Promise<AccessToken> {
  const path = '/oauth/access_token';
  registerSecrets([requestToken.token, requestToken.tokenSecret, verifier]);
  return client.send(
    { method: 'POST', path, base: 'api', family: 'oauth', token: requestToken, query: { oauth_verifier: verifier } },
    (a) => {
      const answer = parseFormAnswer(a.body);
      registerSecrets([answer.oauth_token ?? '', answer.oauth_token_secret ?? '']);
      const f = requireFields(path, answer, ['oauth_token', 'oauth_token_secret', 'user_id', 'screen_name']);
      return { token: f.oauth_token, tokenSecret: f.oauth_token_secret, userId: f.user_id, screenName: f.screen_name };
    },
  );
}

const invalidateSchema = z.looseObject({ access_token: z.string() });

/** POST 1.1/oauth/invalidate_token.json, signed with the token being revoked. */
export async function invalidateAccessToken(client: AdsApiClient, token: TokenCredentials): Promise<void> {
  const path = '/1.1/oauth/invalidate_token.json';
  await client.send({ method: 'POST', path, base: 'api', family: 'oauth', token }, (a) => {
    let json: unknown;
    try {
      json = JSON.parse(a.body.toString('utf8'));
    } catch {
      json = undefined;
    }
    if (!invalidateSchema.safeParse(json).success) {
      throw new ApiRequestError({ method: 'POST', path }, `POST ${path}: unexpected answer (no access_token)`);
    }
  });
}
