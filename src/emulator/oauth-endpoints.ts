/**
 * The platform's credential endpoints (platform-auth.md 4.1, 4.2):
 * - POST /oauth/request_token: signed without a token, oauth_callback (oob or a URL) required;
 *   answers oauth_token, oauth_token_secret, oauth_callback_confirmed=true as form text;
 * - GET /oauth/authorize and /oauth/authenticate: the approval page; POST /oauth/authorize
 *   approves, then shows the PIN (oob) or redirects to the callback with oauth_verifier;
 * - POST /oauth/access_token: signed with the request token, oauth_verifier required;
 *   answers oauth_token, oauth_token_secret, user_id, screen_name as form text;
 * - POST /1.1/oauth/invalidate_token(.json): signed with the token to revoke;
 * - POST /oauth2/token: HTTP Basic, grant_type=client_credentials; one bearer token per app;
 * - POST /oauth2/invalidate_token: signed with the consumer and an access token, access_token
 *   naming the bearer token.
 */
import { percentEncode } from '../api/oauth1.js';
import { approvalPage, pinPage, unknownTokenPage } from './authorize-page.js';
import { invalidParameter, missingParameter, unauthorized } from './errors.js';
import type { RouteContext } from './route-context.js';
import type { ApiRequest, RouteDefinition, RouteResult } from './routing.js';
import type { RequestTokenRecord } from './token-registry.js';

const FORM_TEXT = 'text/plain; charset=utf-8';
const HTML = 'text/html; charset=utf-8';

function formText(pairs: Record<string, string>): RouteResult {
  const text = Object.entries(pairs)
    .map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`)
    .join('&');
  return { status: 200, text, contentType: FORM_TEXT };
}

function isCallbackUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

/** The callback URL with oauth_token and oauth_verifier appended. */
function callbackWithVerifier(record: RequestTokenRecord, verifier: string): string {
  const url = new URL(record.callback);
  url.searchParams.set('oauth_token', record.token);
  url.searchParams.set('oauth_verifier', verifier);
  return url.toString();
}

function requireCaller(req: ApiRequest): NonNullable<ApiRequest['caller']> {
  if (!req.caller) throw unauthorized('this request must be signed');
  return req.caller;
}

export function oauthRoutes(ctx: RouteContext): RouteDefinition[] {
  const { tokens } = ctx;
  const authorizePage: RouteDefinition['handle'] = (req) => {
    const record = tokens.requestToken(req.params.get('oauth_token') ?? '');
    if (!record || record.exchanged) return { status: 404, text: unknownTokenPage(), contentType: HTML };
    return { status: 200, text: approvalPage(record.token), contentType: HTML };
  };
  const invalidateAccessToken: RouteDefinition['handle'] = (req) => {
    const access = requireCaller(req).accessToken;
    if (!access) throw unauthorized('this request must be signed with the access token to revoke');
    tokens.revoke(access);
    return { status: 200, json: { access_token: access.token } };
  };
  return [
    {
      method: 'POST',
      pattern: '/oauth/request_token',
      auth: 'consumer_only',
      family: null,
      handle(req) {
        const caller = requireCaller(req);
        const callback = caller.oauthParams.oauth_callback;
        if (callback === undefined || callback === '') throw missingParameter('oauth_callback', 'oauth_callback is required: oob, or the URL to return to');
        if (callback !== 'oob' && !isCallbackUrl(callback)) throw invalidParameter('oauth_callback', 'oauth_callback must be oob or an http(s) URL');
        req.params.enumValue('svc_auth_access_type', ['read', 'write'], false);
        const record = tokens.issueRequestToken(caller.consumerKey, callback);
        return formText({ oauth_token: record.token, oauth_token_secret: record.secret, oauth_callback_confirmed: 'true' });
      },
    },
    { method: 'GET', pattern: '/oauth/authorize', auth: 'none', family: null, handle: authorizePage },
    { method: 'GET', pattern: '/oauth/authenticate', auth: 'none', family: null, handle: authorizePage },
    {
      method: 'POST',
      pattern: '/oauth/authorize',
      auth: 'none',
      family: null,
      handle(req) {
        const record = tokens.requestToken(req.params.get('oauth_token') ?? '');
        if (!record || record.exchanged) return { status: 404, text: unknownTokenPage(), contentType: HTML };
        const verifier = tokens.approve(record);
        if (record.callback === 'oob') return { status: 200, text: pinPage(verifier), contentType: HTML };
        const location = callbackWithVerifier(record, verifier);
        return { status: 302, text: `Redirecting to ${location}`, contentType: FORM_TEXT, headers: { location } };
      },
    },
    {
      method: 'POST',
      pattern: '/oauth/access_token',
      auth: 'request_token',
      family: null,
      handle(req) {
        const caller = requireCaller(req);
        const record = caller.requestToken;
        if (!record) throw unauthorized('this request must be signed with the request token');
        const named = req.params.get('oauth_token');
        if (named !== undefined && named !== record.token) throw unauthorized('oauth_token does not name the request token the request is signed with');
        const verifier = caller.oauthParams.oauth_verifier;
        if (verifier === undefined || verifier === '') throw unauthorized('oauth_verifier is required');
        if (record.verifier === undefined || verifier !== record.verifier) throw unauthorized('invalid oauth_verifier');
        const access = tokens.exchange(record);
        return formText({
          oauth_token: access.token,
          oauth_token_secret: access.secret,
          user_id: access.user.userId,
          screen_name: access.user.screenName,
        });
      },
    },
    { method: 'POST', pattern: '/1.1/oauth/invalidate_token', auth: 'access_token', family: null, handle: invalidateAccessToken },
    { method: 'POST', pattern: '/1.1/oauth/invalidate_token.json', auth: 'access_token', family: null, handle: invalidateAccessToken },
    {
      method: 'POST',
      pattern: '/oauth2/token',
      auth: 'basic',
      family: 'oauth2_token',
      handle(req) {
        const caller = requireCaller(req);
        if (req.contentType !== 'application/x-www-form-urlencoded') {
          throw invalidParameter('Content-Type', 'Content-Type must be application/x-www-form-urlencoded;charset=UTF-8');
        }
        const grantType = req.params.get('grant_type');
        if (grantType === undefined || grantType === '') throw missingParameter('grant_type');
        if (grantType !== 'client_credentials') throw invalidParameter('grant_type', 'grant_type must be client_credentials');
        return { status: 200, json: { token_type: 'bearer', access_token: tokens.bearerToken(caller.consumerKey) } };
      },
    },
    {
      method: 'POST',
      pattern: '/oauth2/invalidate_token',
      auth: 'access_token',
      family: null,
      handle(req) {
        const caller = requireCaller(req);
        const token = req.params.required('access_token');
        if (!tokens.invalidateBearerToken(caller.consumerKey, token)) {
          throw invalidParameter('access_token', 'access_token is not the outstanding bearer token of this application');
        }
        return { status: 200, json: { access_token: token } };
      },
    },
  ];
}
