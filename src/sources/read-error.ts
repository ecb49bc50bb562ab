/**
 * Turns whatever a byte stream throws while it is read (file system, gzip, network, abort) into
 * a SourceError whose message names the source and says what went wrong in words.
 */
import { InternalError, SourceError } from '../errors.js';

function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The SourceError for a failure while reading `name`. `where` (e.g. "after line 120") is added
 * when the reader knows how far it got. A SourceError is returned unchanged.
 */
export function readFailure(error: unknown, name: string, where?: string): SourceError {
  if (error instanceof SourceError) return error;
  const at = where === undefined ? '' : ` ${where}`;
  const options = { cause: error };
  switch (errorCode(error)) {
    case 'Z_BUF_ERROR':
      return new SourceError(`${name} is cut short (unexpected end of gzip data)${at}`, {
        ...options,
        hint: 'the compressed file is incomplete: download or copy it again',
      });
    case 'Z_DATA_ERROR':
      // No position: zlib reads ahead of what the reader has seen ("at the start" was said of
      // a file whose whole compressed data was good and only bytes after it were not).
      return new SourceError(`${name} is not valid gzip data (${errorMessage(error)}): the file is damaged, or has bytes after its compressed data`, {
        ...options,
        hint: 'download or copy the file again; nothing was sent',
      });
    case 'ENOENT':
      return new SourceError(`${name} does not exist`, options);
    case 'EISDIR':
      return new SourceError(`${name} is a directory, not a file`, options);
    case 'EACCES':
    case 'EPERM':
      return new SourceError(`${name} cannot be read: permission denied`, options);
    case 'ABORT_ERR':
      return new SourceError(`reading ${name} was aborted${at}`, options);
    case 'ECONNRESET':
    case 'ECONNABORTED':
    case 'EPIPE':
    case 'ERR_STREAM_PREMATURE_CLOSE':
      return new SourceError(`the connection broke while reading ${name}${at} (${errorMessage(error)})`, options);
    default:
      return new SourceError(`cannot read ${name}${at}: ${errorMessage(error)}`, options);
  }
}

/** A thrown value as an Error (anything else is wrapped in InternalError). */
export function asError(thrown: unknown): Error {
  return thrown instanceof Error ? thrown : new InternalError(String(thrown), { cause: thrown });
}
