/**
 * The credentials the emulated platform knows: the consumer (application), access tokens
 * (the seeded one and those issued by the PIN flow), request tokens of the three-legged flow,
 * and the application's one outstanding OAuth 2.0 bearer token.
 */
import { randomBytes, randomInt } from 'node:crypto';

export interface EmulatedUser {
  userId: string;
  screenName: string;
}

export interface AccessTokenRecord {
  token: string;
  secret: string;
  consumerKey: string;
  user: EmulatedUser;
  revoked: boolean;
}

export interface RequestTokenRecord {
  token: string;
  secret: string;
  consumerKey: string;
  /** `oob` or the URL the user returns to. */
  callback: string;
  /** Set when the user approved; the PIN in oob mode. */
  verifier: string | undefined;
  exchanged: boolean;
}

export interface SeedCredentials {
  consumerKey: string;
  consumerSecret: string;
  accessToken: string;
  accessTokenSecret: string;
}

function randomToken(bytes: number): string {
  return randomBytes(bytes).toString('base64url');
}

export class TokenRegistry {
  private readonly consumers = new Map<string, string>();
  private readonly accessTokens = new Map<string, AccessTokenRecord>();
  private readonly requestTokens = new Map<string, RequestTokenRecord>();
  private readonly bearerTokens = new Map<string, string>();

  constructor(
    private readonly seed: SeedCredentials,
    readonly user: EmulatedUser,
  ) {
    this.reset();
  }

  /** Back to the seeded consumer and access token; everything issued since is forgotten. */
  reset(): void {
    this.consumers.clear();
    this.accessTokens.clear();
    this.requestTokens.clear();
    this.bearerTokens.clear();
    this.consumers.set(this.seed.consumerKey, this.seed.consumerSecret);
    this.accessTokens.set(this.seed.accessToken, {
      token: this.seed.accessToken,
      secret: this.seed.accessTokenSecret,
      consumerKey: this.seed.consumerKey,
      user: this.user,
      revoked: false,
    });
  }

  consumerSecret(consumerKey: string): string | undefined {
    return this.consumers.get(consumerKey);
  }

  accessToken(token: string): AccessTokenRecord | undefined {
    return this.accessTokens.get(token);
  }

  requestToken(token: string): RequestTokenRecord | undefined {
    return this.requestTokens.get(token);
  }

  issueRequestToken(consumerKey: string, callback: string): RequestTokenRecord {
    const record: RequestTokenRecord = {
      token: randomToken(24),
      secret: randomToken(30),
      consumerKey,
      callback,
      verifier: undefined,
      exchanged: false,
    };
    this.requestTokens.set(record.token, record);
    return record;
  }

  /** The user approves the request token; returns the verifier (a 7-digit PIN). */
  approve(record: RequestTokenRecord): string {
    record.verifier ??= String(randomInt(1_000_000, 10_000_000));
    return record.verifier;
  }

  /** Exchanges an approved request token for a new access token of the emulated user. */
  exchange(record: RequestTokenRecord): AccessTokenRecord {
    record.exchanged = true;
    const access: AccessTokenRecord = {
      token: `${this.user.userId}-${randomToken(30)}`,
      secret: randomToken(33),
      consumerKey: record.consumerKey,
      user: this.user,
      revoked: false,
    };
    this.accessTokens.set(access.token, access);
    return access;
  }

  revoke(record: AccessTokenRecord): void {
    record.revoked = true;
  }

  /** The application's outstanding bearer token, issued on first request. */
  bearerToken(consumerKey: string): string {
    let token = this.bearerTokens.get(consumerKey);
    if (!token) {
      // Bearer tokens of the platform may hold percent-encoded characters.
      token = `AAAAAAAAAAAAAAAAAAAAA${randomToken(30)}%3D${randomToken(12)}`;
      this.bearerTokens.set(consumerKey, token);
    }
    return token;
  }

  /** Invalidates the outstanding bearer token if it is `token`; false when it is not. */
  invalidateBearerToken(consumerKey: string, token: string): boolean {
    if (this.bearerTokens.get(consumerKey) !== token) return false;
    this.bearerTokens.delete(consumerKey);
    return true;
  }
}
