/**
 * The error answers of the emulated service. Handlers throw an EmulatorHttpError; the server
 * turns it into `{"errors":[{code, message, parameter}], "request": {...}}` with its status.
 * The codes are the service's CAPS constants (x-ads-facts.md), plus the platform's numeric
 * codes 89 (revoked token) and 99 (bearer token asked for too often).
 */
import type { ServiceErrorItem } from '../api/errors.js';

/** One item of the `errors` array: the same shape the client reads (src/api/errors.ts). */
export type { ServiceErrorItem };

/** The error code the service uses for each status it answers with. */
export const ERROR_CODE_FOR_STATUS: Readonly<Record<number, string>> = {
  400: 'INVALID_PARAMETER',
  401: 'UNAUTHORIZED_ACCESS',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  408: 'CANCELLED_REQUEST',
  413: 'PAYLOAD_TOO_LARGE',
  423: 'LOCK_ACQUISITION_TIMEOUT',
  429: 'TOO_MANY_REQUESTS',
  500: 'INTERNAL_ERROR',
  502: 'SERVICE_UNAVAILABLE',
  503: 'SERVICE_UNAVAILABLE',
  504: 'SERVICE_UNAVAILABLE',
};

export function errorCodeForStatus(status: number): string {
  return ERROR_CODE_FOR_STATUS[status] ?? (status >= 500 ? 'INTERNAL_ERROR' : 'INVALID_PARAMETER');
}

export class EmulatorHttpError extends Error {
  constructor(
    readonly status: number,
    readonly errors: ServiceErrorItem[],
    /** Extra top-level members of the error body, e.g. operation_errors. */
    readonly extraBody: Readonly<Record<string, unknown>> = {},
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(errors[0]?.message ?? `HTTP ${status}`);
    this.name = 'EmulatorHttpError';
  }
}

export function invalidParameter(parameter: string | undefined, message: string): EmulatorHttpError {
  return new EmulatorHttpError(400, [{ code: 'INVALID_PARAMETER', message, ...(parameter === undefined ? {} : { parameter }) }]);
}

export function missingParameter(parameter: string, message = `${parameter} is required`): EmulatorHttpError {
  return new EmulatorHttpError(400, [{ code: 'MISSING_PARAMETER', message, parameter }]);
}

export function notFound(message: string, code: 'NOT_FOUND' | 'TAILORED_AUDIENCE_NOT_FOUND' = 'NOT_FOUND'): EmulatorHttpError {
  return new EmulatorHttpError(404, [{ code, message }]);
}

export function unauthorized(message: string): EmulatorHttpError {
  return new EmulatorHttpError(401, [{ code: 'UNAUTHORIZED_ACCESS', message }]);
}

/** The platform's answer to any use of an invalidated access token. */
export function revokedToken(): EmulatorHttpError {
  return new EmulatorHttpError(401, [{ code: 89, message: 'Invalid or expired token.' }]);
}

export function payloadTooLarge(limitBytes: number): EmulatorHttpError {
  return new EmulatorHttpError(413, [
    { code: 'PAYLOAD_TOO_LARGE', message: `the request body is larger than ${limitBytes} bytes` },
  ]);
}
