/**
 * openSource: a job's `source:` (a local file or an http(s) URL) opened as a stream of
 * decompressed bytes, with its format settled and what progress reporting needs.
 *
 * - Gzip is undone when the first bytes are the gzip magic (1f 8b), whatever the extension;
 *   a .gz file that is not compressed after all is read as it is.
 * - The format is spec.format, else the extension (after .gz), else for a URL the
 *   Content-Type; otherwise SourceError asking for source.format.
 * - bytesRead() and sizeBytes count raw bytes (compressed ones for gzip).
 * - Errors raised while the stream is read later (a truncated gzip, a broken connection) are
 *   turned into SourceErrors by the readers (readCsv, readXmlFeed...).
 */
import { resolve } from 'node:path';
import { addAbortSignal } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { SourceError } from '../errors.js';
import { displayUrl } from './display-url.js';
import { gunzip } from './gzip.js';
import { openFile, type RawInput } from './open-file.js';
import { openHttp } from './open-http.js';
import { formatOfContentType, formatOfPath, unknownFormat } from './source-format.js';
import type { OpenedSource, SourceFormat, SourceSpec } from './types.js';

export interface OpenSourceOptions {
  /** Aborts the connection or the file read (the stream then fails with a SourceError). */
  signal?: AbortSignal | undefined;
  /** HTTP: connection, headers and body inactivity timeout in ms (default 30,000). */
  timeoutMs?: number | undefined;
}

export const DEFAULT_HTTP_TIMEOUT_MS = 30_000;
const SOURCE_FORMATS: ReadonlySet<string> = new Set<SourceFormat>(['csv', 'tsv', 'xml']);
const HTTP_URL = /^https?:\/\//i;

function checkedFormat(format: string | undefined, name: string): SourceFormat | undefined {
  if (format === undefined) return undefined;
  if (!SOURCE_FORMATS.has(format)) {
    throw new SourceError(`source.format of ${name} is ${JSON.stringify(format)}`, { hint: 'source.format is csv, tsv or xml' });
  }
  return format as SourceFormat;
}

function openedFrom(spec: SourceSpec, name: string, format: SourceFormat, raw: RawInput, signal: AbortSignal | undefined): OpenedSource {
  const stream = raw.gzipMagic ? gunzip(raw.stream) : raw.stream;
  // The stream the reader reads fails with ABORT_ERR itself (not a "connection reset" of a
  // socket torn down by the abort): readers report "reading ... was aborted".
  if (signal !== undefined) addAbortSignal(signal, stream);
  return {
    name,
    format,
    stream,
    sizeBytes: raw.sizeBytes,
    bytesRead: () => raw.bytesRead(),
    delimiter: spec.delimiter,
    encoding: spec.encoding,
    readOnce: raw.readOnce,
  };
}

function localPath(path: string): string {
  if (!path.startsWith('file:')) return resolve(path);
  try {
    return fileURLToPath(path);
  } catch (error) {
    throw new SourceError(`source.path ${JSON.stringify(path)} is not a valid file: URL`, { cause: error });
  }
}

export async function openSource(spec: SourceSpec, options: OpenSourceOptions = {}): Promise<OpenedSource> {
  options.signal?.throwIfAborted();
  if (HTTP_URL.test(spec.path)) {
    let url: URL;
    try {
      url = new URL(spec.path);
    } catch {
      // Neither the path nor the parser's TypeError (its `input`) goes into the error: a URL
      // that cannot be parsed cannot be masked, and it may hold a password or a token.
      throw new SourceError('source.path is not a valid URL (not repeated here: it may hold a password or a token)', {
        hint: 'check its host and port; in a user:password@ part, write / @ : # ? as %2F %40 %3A %23 %3F',
      });
    }
    const name = displayUrl(url);
    const declared = checkedFormat(spec.format, name);
    const input = await openHttp(url, { signal: options.signal, timeoutMs: options.timeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS });
    const format = declared ?? formatOfPath(url.pathname) ?? formatOfPath(input.finalUrl.pathname) ?? formatOfContentType(input.contentType);
    if (format === undefined) {
      input.stream.destroy();
      throw unknownFormat(name, url.pathname);
    }
    return openedFrom(spec, name, format, input, options.signal);
  }
  const path = localPath(spec.path);
  const declared = checkedFormat(spec.format, path);
  const format = declared ?? formatOfPath(path);
  const input = await openFile(path);
  if (format === undefined) {
    input.stream.destroy();
    throw unknownFormat(path, path);
  }
  return openedFrom(spec, path, format, input, options.signal);
}
