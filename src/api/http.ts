/**
 * HTTP transport on node:http/node:https with keep-alive agents and Buffer bodies.
 * Measured here: global fetch spends 4-5x the CPU of node:http on 1 MB bodies and a string
 * body costs 5x a Buffer, and audience uploads are 5 MB each, so this is the only transport.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { oneLine } from '../errors.js';
import { NetworkError, TlsError, TlsExpectedError } from './errors.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface HttpRequest {
  method: HttpMethod;
  url: URL;
  headers: Record<string, string>;
  body?: Buffer | undefined;
  /** Whole-exchange limit: connect, send, wait and read. */
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

export interface HttpResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

const httpAgent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 64 });

/** TLS protocol failures and refused certificates, by the code Node gives them. */
const TLS_PROTOCOL = /^(EPROTO|ERR_SSL_\w+)$/;
const TLS_CERTIFICATE = /^(ERR_TLS_CERT\w+|\w*CERT\w*|UNABLE_TO_\w+|HOSTNAME_MISMATCH|INVALID_CA|INVALID_PURPOSE|PATH_LENGTH_EXCEEDED)$/;

/** Why a TLS connection failed, in one line: OpenSSL's reason rather than its dump of codes and source files. */
function tlsReason(err: NodeJS.ErrnoException): string {
  const openssl = /SSL routines:[^:]*:([^:]+):/.exec(err.message)?.[1];
  if (openssl === 'wrong version number') return 'its answer is not TLS (wrong version number): the server there may speak http, not https';
  return openssl ?? `${err.code ?? 'TLS'} ${oneLine(err.message)}`;
}

/** How long the TLS probe of an http address that hung up may take (speaksTls). */
const TLS_PROBE_MS = 3000;

/** Codes of an http server that hangs up on a request, or answers bytes that are not HTTP: a TLS server does either. */
const HUNG_UP = /^(ECONNRESET|EPIPE|HPE_\w+)$/;

/**
 * Whether the server of an http address completes a TLS handshake (within TLS_PROBE_MS): then
 * it wants https. Nothing is sent over the connection, and it is closed at once.
 */
function speaksTls(url: URL, timeoutMs: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const socket = tls.connect({ host, port: Number(url.port || 80), rejectUnauthorized: false, ...(net.isIP(host) === 0 ? { servername: host } : {}) });
    const done = (speaks: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(speaks);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once('secureConnect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('close', () => done(false));
  });
}

/**
 * Sends one request. Every failure without an HTTP answer is a (retryable) NetworkError, but
 * a TLS connection that fails (TlsError), and an http address whose server hangs up without an
 * answer and speaks TLS (TlsExpectedError): that address fails the same way every time.
 */
export function sendHttp(req: HttpRequest): Promise<HttpResponse> {
  const isHttps = req.url.protocol === 'https:';
  const transport = isHttps ? https : http;
  const path = req.url.pathname;
  return new Promise<HttpResponse>((resolve, reject) => {
    let settled = false;
    const fail = (reason: string, cause?: unknown, error?: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // The signal is the run's: a listener left on it would keep this request until the run ends.
      req.signal?.removeEventListener('abort', onAbort);
      request.destroy();
      reject(error ?? new NetworkError(req.method, path, oneLine(reason), cause));
    };
    /** An http address hung up on the request: a TLS server does that; one that is, fails it for good (TlsExpectedError). */
    const failUnlessTls = (reason: string, cause: unknown): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
      request.destroy();
      void speaksTls(req.url, Math.min(TLS_PROBE_MS, req.timeoutMs)).then((speaks) =>
        reject(speaks ? new TlsExpectedError(req.method, path, req.url.host, cause) : new NetworkError(req.method, path, oneLine(reason), cause)),
      );
    };
    const headers: Record<string, string | number> = { ...req.headers };
    if (req.body) headers['content-length'] = req.body.length;
    const request = transport.request(req.url, {
      method: req.method,
      headers,
      agent: isHttps ? httpsAgent : httpAgent,
    });
    const timer = setTimeout(() => fail(`no complete answer within ${req.timeoutMs} ms`), req.timeoutMs);
    const onAbort = (): void => fail('aborted');
    if (req.signal) {
      if (req.signal.aborted) {
        onAbort();
        return;
      }
      req.signal.addEventListener('abort', onAbort, { once: true });
    }
    request.on('error', (err: NodeJS.ErrnoException) => {
      const code = err.code ?? '';
      const certificate = TLS_CERTIFICATE.test(code);
      if (isHttps && (certificate || TLS_PROTOCOL.test(code))) fail(err.message, err, new TlsError(req.method, path, req.url.host, tlsReason(err), certificate, err));
      else if (!isHttps && HUNG_UP.test(code)) failUnlessTls(`${code} ${err.message}`, err);
      else if (err.code === 'ECONNREFUSED') fail(`ECONNREFUSED: nothing accepts connections at ${req.url.host} (the service is down, or the host or port of the address is wrong)`, err);
      else fail(err.code ? `${err.code} ${err.message}` : err.message, err);
    });
    request.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', (err) => fail(`reading the answer: ${err.message}`, err));
      res.on('aborted', () => fail('the connection closed in the middle of the answer'));
      res.on('end', () => {
        if (settled) return;
        if (!res.complete) {
          fail('the connection closed in the middle of the answer');
          return;
        }
        settled = true;
        clearTimeout(timer);
        req.signal?.removeEventListener('abort', onAbort);
        // One chunk (most answers) is the body as it is: Buffer.concat would copy it into a new allocation.
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: chunks.length === 1 && chunks[0] !== undefined ? chunks[0] : Buffer.concat(chunks) });
      });
    });
    request.end(req.body);
  });
}

/** Closes idle keep-alive sockets so a finished process can exit at once. */
export function closeIdleConnections(): void {
  httpAgent.destroy();
  httpsAgent.destroy();
}
