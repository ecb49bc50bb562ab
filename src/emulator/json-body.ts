/** Reading the JSON body of a request: the content type the service requires, then one parse. */
import { invalidParameter, missingParameter } from './errors.js';
import type { ApiRequest } from './routing.js';

/** The body parsed as JSON; 400 when Content-Type is not application/json or the JSON is bad. */
export function readJsonBody(req: ApiRequest): unknown {
  if (req.contentType !== 'application/json') {
    throw invalidParameter('Content-Type', `Content-Type must be application/json, got ${req.contentType ?? 'none'}`);
  }
  if (req.body.length === 0) throw missingParameter('body', 'the request needs a JSON body');
  try {
    return JSON.parse(req.body.toString('utf8')) as unknown;
  } catch (error) {
    throw invalidParameter('body', `the body is not valid JSON: ${(error as Error).message}`);
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The body as a JSON object; 400 otherwise. */
export function readJsonObject(req: ApiRequest): Record<string, unknown> {
  const body = readJsonBody(req);
  if (!isPlainObject(body)) throw invalidParameter('body', 'the body must be a JSON object');
  return body;
}
