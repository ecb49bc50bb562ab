/**
 * Shared pieces of the emulator conformance suite: an emulator per test file, the real client
 * pointed at it, raw HTTP for exact bytes and hand-made requests, hashing, valid products.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import { AdsApiClient, type AdsApiClientOptions } from '../../src/api/client.js';
import { Credentials } from '../../src/api/credentials.js';
import { signRequest, type ParamPair, type TokenCredentials } from '../../src/api/oauth1.js';
import { startEmulator, type EmulatorHandle, type EmulatorOptions } from '../../src/emulator/index.js';

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Starts an emulator on 127.0.0.1 and a free port. */
export function start(options: EmulatorOptions = {}): Promise<EmulatorHandle> {
  return startEmulator({ port: 0, ...options });
}

export function credentialsOf(emu: EmulatorHandle, token?: TokenCredentials): Credentials {
  const c = emu.credentials;
  return new Credentials('default', c.consumerKey, c.consumerSecret, token?.token ?? c.accessToken, token?.tokenSecret ?? c.accessTokenSecret);
}

/** The real client, pointed at the emulator, without retries unless asked. */
export function clientFor(emu: EmulatorHandle, options: Partial<AdsApiClientOptions> = {}): AdsApiClient {
  return new AdsApiClient({
    credentials: credentialsOf(emu),
    adsUrl: emu.url,
    apiUrl: emu.url,
    retry: { retries: 0 },
    rateLimits: {},
    timeoutMs: 5_000,
    ...options,
  });
}

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: unknown;
}

export interface RawRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
}

/** One HTTP exchange with exactly the given bytes (no client library in between). */
export function raw(emu: EmulatorHandle, request: RawRequest): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const body = typeof request.body === 'string' ? Buffer.from(request.body) : request.body;
    const req = http.request(
      `${emu.url}${request.path}`,
      {
        method: request.method,
        headers: { ...(body ? { 'content-length': String(body.length) } : {}), ...request.headers },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export interface SignedRawRequest {
  method: string;
  /** Path and query, e.g. /12/accounts?count=1 */
  path: string;
  body?: Buffer | string;
  contentType?: string;
  form?: ParamPair[];
  token?: TokenCredentials | null;
  nonce?: string;
  timestamp?: number;
  extraOAuthParams?: Record<string, string>;
}

/** The Authorization header the project's signer makes for a request to the emulator. */
export function authorizationFor(emu: EmulatorHandle, request: SignedRawRequest): string {
  const c = emu.credentials;
  return signRequest({
    method: request.method,
    url: new URL(emu.url + request.path),
    consumer: { consumerKey: c.consumerKey, consumerSecret: c.consumerSecret },
    token: request.token === null ? undefined : (request.token ?? { token: c.accessToken, tokenSecret: c.accessTokenSecret }),
    ...(request.form ? { formParams: request.form } : {}),
    ...(request.nonce ? { nonce: request.nonce } : {}),
    ...(request.timestamp === undefined ? {} : { timestamp: request.timestamp }),
    ...(request.extraOAuthParams ? { extraOAuthParams: request.extraOAuthParams } : {}),
  }).header;
}

/** A request signed by the project's signer, sent with exact bytes. */
export function signedRaw(emu: EmulatorHandle, request: SignedRawRequest): Promise<RawAnswer> {
  const headers: Record<string, string> = { authorization: authorizationFor(emu, request) };
  if (request.contentType) headers['content-type'] = request.contentType;
  return raw(emu, { method: request.method, path: request.path, headers, ...(request.body === undefined ? {} : { body: request.body }) });
}

/** A JSON request signed by the project's signer (JSON bodies are not signed). */
export function signedJson(emu: EmulatorHandle, method: string, path: string, body: unknown): Promise<RawAnswer> {
  return signedRaw(emu, { method, path, body: JSON.stringify(body), contentType: 'application/json' });
}

/** POSTs to an admin endpoint. */
export function admin(emu: EmulatorHandle, method: string, path: string, body?: unknown): Promise<RawAnswer> {
  return raw(emu, {
    method,
    path,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
}

/** A product that passes every rule; override or remove (undefined) attributes to break one. */
export function product(id: string, overrides: Record<string, string | number | undefined> = {}): Record<string, string | number> {
  const base: Record<string, string | number | undefined> = {
    id,
    title: `Product ${id}`,
    description: `The product ${id}`,
    availability: 'in stock',
    condition: 'new',
    price: '19.99 USD',
    link: `https://shop.example.com/p/${id}`,
    image_link: `https://shop.example.com/i/${id}.jpg`,
    brand: 'Acme',
    inventory: 5,
    ...overrides,
  };
  const out: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined) out[k] = v;
  return out;
}
