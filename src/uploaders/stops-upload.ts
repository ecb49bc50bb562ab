/**
 * Which failures of a request stop an upload, rather than failing that request's records
 * only: sending more could not help. Credentials (401), permission (403), a missing target
 * (404), an https address that gives no TLS connection, an http address whose server wants https,
 * or an address that redirects, the service down (a retryable error
 * that outlived its retries), and a state database that refused a commit (the next commits
 * would fail too).
 */
import { AuthError, ForbiddenError, NotFoundError, RedirectedError, TlsError, TlsExpectedError } from '../api/errors.js';
import { StateError, type AdsyncError } from '../errors.js';

export function stopsUpload(error: AdsyncError): boolean {
  return (
    error instanceof AuthError ||
    error instanceof ForbiddenError ||
    error instanceof NotFoundError ||
    error instanceof TlsError ||
    error instanceof TlsExpectedError ||
    error instanceof RedirectedError ||
    error instanceof StateError ||
    error.retryable
  );
}
