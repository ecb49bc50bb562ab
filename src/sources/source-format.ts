/**
 * The format of a source when the job does not say: from the file extension (a .gz is looked
 * through), else, for a URL, from the Content-Type of the response.
 */
import { SourceError } from '../errors.js';
import type { SourceFormat } from './types.js';

const FORMAT_OF_EXTENSION: Readonly<Record<string, SourceFormat>> = {
  csv: 'csv',
  tsv: 'tsv',
  tab: 'tsv',
  // .txt exports are usually tab-separated; the delimiter is still detected from the header.
  txt: 'tsv',
  xml: 'xml',
  rss: 'xml',
  atom: 'xml',
};

const FORMAT_OF_CONTENT_TYPE: Readonly<Record<string, SourceFormat>> = {
  'text/csv': 'csv',
  'application/csv': 'csv',
  'text/tab-separated-values': 'tsv',
  'application/xml': 'xml',
  'text/xml': 'xml',
  'application/rss+xml': 'xml',
  'application/atom+xml': 'xml',
};

/** The extension of a path (or URL path), lowercased, after a trailing .gz; '' when none. */
export function extensionOf(path: string): string {
  let lower = path.toLowerCase();
  if (lower.endsWith('.gz')) lower = lower.slice(0, -3);
  const dot = lower.lastIndexOf('.');
  return dot > lower.lastIndexOf('/') ? lower.slice(dot + 1) : '';
}

export function formatOfPath(path: string): SourceFormat | undefined {
  return Object.hasOwn(FORMAT_OF_EXTENSION, extensionOf(path)) ? FORMAT_OF_EXTENSION[extensionOf(path)] : undefined;
}

export function formatOfContentType(contentType: string | undefined): SourceFormat | undefined {
  const mediaType = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return Object.hasOwn(FORMAT_OF_CONTENT_TYPE, mediaType) ? FORMAT_OF_CONTENT_TYPE[mediaType] : undefined;
}

export function unknownFormat(name: string, path: string): SourceError {
  const extension = extensionOf(path);
  const told = extension === '' ? 'it has no extension' : `".${extension}" is not a known extension`;
  return new SourceError(`cannot tell the format of ${name}: ${told}`, {
    hint: 'set source.format to csv, tsv or xml in the job file',
  });
}
