import { alreadyHashed } from './already-hashed.js';
import { rejected, toNormalized } from './result.js';
import type { Normalized, NormalizedText } from './types.js';

/** An X handle after lowercasing: 1 to 15 letters, digits or underscores. */
const HANDLE_PATTERN = /^[a-z0-9_]{1,15}$/;

/**
 * A profile URL (already lowercased): optional scheme, optional www. or mobile., x.com or
 * twitter.com, the handle (an @ before it tolerated), an optional trailing slash, and an
 * optional query or fragment. Deeper paths (x.com/jack/status/1) are not profiles.
 */
const PROFILE_URL_PATTERN = /^(?:https?:\/\/)?(?:(?:www|mobile)\.)?(?:x|twitter)\.com\/@?([a-z0-9_]{1,15})\/?(?:[?#].*)?$/s;

const EMPTY = rejected('empty handle');
const NOT_A_HANDLE = rejected('not an X handle (1-15 letters, digits or _)');

/** Handle: trim, drop one leading @, lowercase; a profile URL gives the handle it names. */
export function handleText(raw: string): NormalizedText {
  const trimmed = raw.trim();
  if (trimmed === '') return EMPTY;
  const hashed = alreadyHashed(trimmed);
  if (hashed !== undefined) return hashed;
  let handle = trimmed.toLowerCase();
  if (handle.charCodeAt(0) === 64 /* @ */) handle = handle.slice(1);
  if (HANDLE_PATTERN.test(handle)) return handle;
  const fromUrl = PROFILE_URL_PATTERN.exec(handle)?.[1];
  return fromUrl ?? NOT_A_HANDLE;
}

/** The handle as hashed: `" @Jack"` and `https://x.com/Jack/` give `jack`. */
export function normalizeHandle(raw: string): Normalized {
  return toNormalized(handleText(raw));
}
