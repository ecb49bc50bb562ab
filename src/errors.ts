/**
 * The error base every module throws across its border. Each error says whether retrying
 * the same operation can help (`retryable`) and which process exit code it maps to, so the
 * runner and the CLI never have to guess from a message.
 *
 * Exit codes (the public contract of DESIGN.md): 0 success; 1 the run failed; 2 usage or
 * configuration error; 3 authentication error (revoked or invalid token).
 */
import { scrubSecrets } from './logging/secrets.js';

export const ExitCode = {
  ok: 0,
  failed: 1,
  usage: 2,
  auth: 3,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export interface AdsyncErrorOptions {
  cause?: unknown;
  /** A short "what to do about it" line shown after the message. */
  hint?: string;
}

export abstract class AdsyncError extends Error {
  /** A stable machine-readable name of the failure, used in JSON output and logs. */
  abstract readonly code: string;
  /** True when the same operation may succeed if tried again later. */
  abstract readonly retryable: boolean;
  /** The process exit code this error ends a command with. */
  readonly exitCode: ExitCode = ExitCode.failed;
  readonly hint: string | undefined;

  constructor(message: string, options: AdsyncErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.hint = options.hint;
  }
}

/** A job file, a settings file, a flag or an environment variable is wrong. Exit 2. */
export class ConfigError extends AdsyncError {
  readonly code = 'CONFIG_ERROR';
  readonly retryable = false;
  override readonly exitCode = ExitCode.usage;
}

/** A source (export or feed) cannot be read or parsed at all. */
export class SourceError extends AdsyncError {
  readonly code = 'SOURCE_ERROR';
  readonly retryable = false;
}

/**
 * A run refused to do something destructive or unsafe (an empty feed in mirror mode, a
 * delete ratio above the limit). Nothing was changed.
 */
export class GuardError extends AdsyncError {
  readonly code = 'GUARD_REFUSED';
  readonly retryable = false;
}

/** Another run of the same job holds the lock. */
export class LockedError extends AdsyncError {
  readonly code = 'JOB_LOCKED';
  readonly retryable = false;
}

/** The state database cannot be opened, read or written. */
export class StateError extends AdsyncError {
  readonly code = 'STATE_ERROR';
  readonly retryable = false;
}

/** The run was interrupted (SIGTERM/SIGINT) after its in-flight work was committed. */
export class InterruptedError extends AdsyncError {
  readonly code = 'INTERRUPTED';
  readonly retryable = true;
}

/** Wraps anything that is not an AdsyncError so it can cross a module border typed. */
export class InternalError extends AdsyncError {
  readonly code = 'INTERNAL_ERROR';
  readonly retryable = false;
}

export function isAdsyncError(error: unknown): error is AdsyncError {
  return error instanceof AdsyncError;
}

/** A line break (LF, CR, CRLF, VT, FF, NEL, U+2028, U+2029) with the blanks around it. */
const LINE_BREAK = /[ \t]*(?:\r\n|[\n\r\v\f\u0085\u2028\u2029])\s*/g;
/** Control characters other than line breaks: C0 (a tab aside), DEL and C1. */
// eslint-disable-next-line no-control-regex -- finding them is its purpose
const CONTROL = /[\u0000-\u0008\u000e-\u001f\u007f-\u0084\u0086-\u009f]/g;

/**
 * Text as one line, for anything adsync prints or records (a message may quote the service, a
 * server, a file): a line break, with the blanks around it, becomes "; " (a space after a colon
 * or a semicolon: a list keeps its items apart), none at either end; a tab a space; any other
 * control character (an escape sequence of a terminal, a NUL) is written out as \xNN. Nothing
 * is dropped.
 */
export function oneLine(text: string): string {
  return text
    .replace(LINE_BREAK, (found: string, at: number) => {
      if (at === 0 || at + found.length === text.length) return '';
      return /[:;]/.test(text.charAt(at - 1)) ? ' ' : '; ';
    })
    .replace(/\t/g, ' ')
    .replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/**
 * A message (with its hint in parentheses, when there is one) as adsync reports it: one line
 * (oneLine), without the secrets adsync knows of (a message may quote the service, which may
 * quote the request). For a summary, a log, the run history or an alert.
 */
export function reportedText(message: string, hint?: string): string {
  return scrubSecrets(oneLine(hint ? `${message} (${hint})` : message));
}

/** The error's message and hint as reportedText gives them. */
export function reportedMessage(error: AdsyncError): string {
  return reportedText(error.message, error.hint);
}

/** Returns the error as an AdsyncError, wrapping foreign errors in InternalError. */
export function toAdsyncError(error: unknown): AdsyncError {
  if (error instanceof AdsyncError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new InternalError(message, { cause: error });
}
