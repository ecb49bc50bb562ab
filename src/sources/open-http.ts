/**
 * An http:// or https:// source opened for streaming with node:http (global fetch costs 4-5x
 * the CPU on large bodies). Up to 5 redirects are followed; any other status outside 2xx is a
 * SourceError naming the URL and the status. The body is never held in memory: it is handed on
 * as it arrives, decoded when the server sent it with Content-Encoding gzip, deflate or br.
 *
 * Timeouts (timeoutMs, default 30 s; a run gives its request_timeout_ms): for the connection
 * and the response headers, then for the body while the reader waits for it. A body paused
 * because the reader is busy (a slow upload downstream) does not time out.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { pipeline, Transform, type Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { SourceError } from '../errors.js';
import { displayUrl } from './display-url.js';
import { startsWithGzipMagic } from './gzip.js';
import type { RawInput } from './open-file.js';
import { readFailure } from './read-error.js';

export interface HttpOpenOptions {
  signal?: AbortSignal | undefined;
  timeoutMs: number;
}

export interface HttpInput extends RawInput {
  /** The URL the body came from, after redirects. */
  finalUrl: URL;
  contentType: string | undefined;
}

export const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);
const DECODED_CHUNK_BYTES = 64 * 1024;

function requestOnce(url: URL, name: string, options: HttpOpenOptions): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(url, {
      method: 'GET',
      headers: { 'accept-encoding': 'gzip, deflate, br', 'user-agent': 'adsync' },
      signal: options.signal,
      timeout: options.timeoutMs,
    });
    request.on('timeout', () => {
      request.destroy(new SourceError(`${name} did not answer within ${options.timeoutMs} ms`, { hint: 'check the URL, or raise request_timeout_ms (job file or settings)' }));
    });
    request.on('error', (error) => reject(readFailure(error, name)));
    request.on('response', (response) => {
      request.setTimeout(0);
      resolve(response);
    });
    request.end();
  });
}

/**
 * The URL a redirect's Location names. One that is not a URL is a SourceError without its
 * cause: the parser's TypeError carries the base URL as given (password and query included).
 */
function resolveLocation(location: string, current: URL, name: string): URL {
  try {
    return new URL(location, current);
  } catch {
    throw new SourceError(`${name} redirects to a Location that is not a valid URL`, {
      hint: 'the server answers with a broken redirect: check the URL, or ask the owner of the server to fix it',
    });
  }
}

async function responseFollowingRedirects(url: URL, options: HttpOpenOptions): Promise<{ response: IncomingMessage; finalUrl: URL }> {
  const name = displayUrl(url);
  let current = url;
  for (let redirects = 0; ; redirects++) {
    const response = await requestOnce(current, name, options);
    const status = response.statusCode ?? 0;
    const location = response.headers.location;
    if (REDIRECT_STATUSES.has(status) && location !== undefined) {
      response.resume();
      if (redirects === MAX_REDIRECTS) throw new SourceError(`${name} redirects more than ${MAX_REDIRECTS} times`);
      const next = resolveLocation(location, current, name);
      if (next.protocol !== 'http:' && next.protocol !== 'https:') {
        throw new SourceError(`${name} redirects to a ${next.protocol} URL, which adsync cannot read`);
      }
      current = next;
      continue;
    }
    if (status < 200 || status > 299) {
      response.resume();
      const via = current.href === url.href ? '' : ` (redirected to ${displayUrl(current)})`;
      throw new SourceError(`${name}${via} answered HTTP ${status}${response.statusMessage ? ` ${response.statusMessage}` : ''}`, {
        hint: status === 401 || status === 403 ? 'the feed URL needs access rights the job does not have' : undefined,
      });
    }
    return { response, finalUrl: current };
  }
}

/** Destroys `response` when it stays flowing without data for timeoutMs. */
function watchBodyInactivity(response: IncomingMessage, name: string, timeoutMs: number, bytesRead: () => number): void {
  let lastBytes = -1;
  const timer = setInterval(() => {
    const bytes = bytesRead();
    const waitingForData = response.readableFlowing === true && bytes === lastBytes;
    lastBytes = bytes;
    if (waitingForData) {
      response.destroy(new SourceError(`${name} sent no data for ${timeoutMs} ms after ${bytes} bytes`, { hint: 'the server stalled: try again later, or raise request_timeout_ms (job file or settings)' }));
    }
  }, timeoutMs);
  timer.unref();
  response.once('close', () => clearInterval(timer));
}

function contentDecoder(encoding: string | undefined, name: string): Transform | undefined {
  switch ((encoding ?? '').trim().toLowerCase()) {
    case '':
    case 'identity':
      return undefined;
    case 'gzip':
    case 'x-gzip':
      return createGunzip({ chunkSize: DECODED_CHUNK_BYTES });
    case 'deflate':
      return createInflate({ chunkSize: DECODED_CHUNK_BYTES });
    case 'br':
      return createBrotliDecompress({ chunkSize: DECODED_CHUNK_BYTES });
    default:
      throw new SourceError(`${name} was sent with Content-Encoding ${JSON.stringify(encoding)}, which adsync cannot decode`);
  }
}

/** Waits for the first chunk of `stream` and puts it back; undefined when the stream is empty. */
export async function peekFirstChunk(stream: Readable): Promise<Buffer | undefined> {
  for (;;) {
    const chunk = stream.read() as Buffer | null;
    if (chunk !== null) {
      stream.unshift(chunk);
      return chunk;
    }
    if (stream.readableEnded || stream.destroyed) return undefined;
    await new Promise<void>((resolve, reject) => {
      const settle = (): void => {
        stream.off('readable', settle);
        stream.off('end', settle);
        stream.off('error', fail);
        resolve();
      };
      const fail = (error: unknown): void => {
        settle();
        reject(error instanceof Error ? error : new Error(String(error)));
      };
      stream.on('readable', settle);
      stream.on('end', settle);
      stream.on('error', fail);
    });
  }
}

export async function openHttp(url: URL, options: HttpOpenOptions): Promise<HttpInput> {
  const name = displayUrl(url);
  const { response, finalUrl } = await responseFollowingRedirects(url, options);
  let counted = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      counted += chunk.length;
      callback(null, chunk);
    },
  });
  watchBodyInactivity(response, name, options.timeoutMs, () => counted);
  let decoder: Transform | undefined;
  try {
    decoder = contentDecoder(response.headers['content-encoding'], name);
  } catch (error) {
    response.destroy();
    throw error;
  }
  const stream = decoder === undefined ? pipeline(response, counter, () => undefined) : pipeline(response, counter, decoder, () => undefined);
  let head: Buffer | undefined;
  try {
    head = await peekFirstChunk(stream);
  } catch (error) {
    stream.destroy();
    throw readFailure(error, name);
  }
  const length = Number(response.headers['content-length']);
  return {
    stream,
    sizeBytes: Number.isSafeInteger(length) && length >= 0 ? length : undefined,
    bytesRead: () => counted,
    gzipMagic: startsWithGzipMagic(head),
    finalUrl,
    contentType: response.headers['content-type'],
  };
}
