/**
 * What the product rules need to know of a link: whether it is a URL (without whitespace,
 * and one the WHATWG URL parser accepts), its scheme, whether it has a host, and its path.
 *
 * `new URL` answers that for any text, but at ~250 ns a link it was a good part of checking
 * a product. Most links are plain: http(s)://, an ASCII host name, a path of characters the
 * parser keeps as they are. For those a regular expression gives the same answer the parser
 * would (test/emulator/web-url.test.ts holds it to that); every other text goes to the parser.
 */

export interface UrlParts {
  /** As URL.protocol: "https:", "http:", ... */
  protocol: string;
  /** URL.hostname is not empty. */
  hasHost: boolean;
  /** As URL.pathname. */
  pathname: string;
}

const WHITESPACE = /\s/;

/**
 * http or https, "//", a host name of ASCII letters, digits and hyphens in dot-separated
 * labels (no port, no user), a path of characters the parser leaves alone (no %, no
 * backslash), then any query and fragment without whitespace, which the parser never refuses.
 */
const PLAIN_WEB_URL = /^https?:\/\/[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*(?:\/[A-Za-z0-9\-._~!$&'()*+,;=:@/]*)?(?:\?[^#\s]*)?(?:#\S*)?$/;
const PUNYCODE_LABEL = /(?:^|\.)xn--/i;

const DOT = 46;
const SLASH = 47;
const QUESTION_MARK = 63;
const HASH = 35;

function isPathEnd(code: number): boolean {
  return code === QUESTION_MARK || code === HASH;
}

function isHostEnd(code: number): boolean {
  return code === SLASH || isPathEnd(code);
}

function isAsciiLetter(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}

/** The path has a "." or ".." segment (what /\/\.\.?(?:\/|$)/ finds). */
function hasDotSegment(path: string): boolean {
  for (let i = 1; i < path.length; i++) {
    if (path.charCodeAt(i) !== DOT || path.charCodeAt(i - 1) !== SLASH) continue;
    const next = i + 1 < path.length ? path.charCodeAt(i + 1) : SLASH;
    if (next === SLASH) return true;
    if (next === DOT && (i + 2 >= path.length || path.charCodeAt(i + 2) === SLASH)) return true;
  }
  return false;
}

/**
 * What the plain form still leaves to the parser: a last label it would read as an IPv4
 * number (here it must start with a letter), a label in punycode (xn--, which it validates),
 * and "." or ".." segments (which it removes from the path).
 */
function parserWouldRework(host: string, path: string): boolean {
  let lastLabel = host.length - 1;
  while (lastLabel > 0 && host.charCodeAt(lastLabel - 1) !== DOT) lastLabel--;
  if (!isAsciiLetter(host.charCodeAt(lastLabel))) return true;
  if (host.includes('-') && PUNYCODE_LABEL.test(host)) return true;
  return hasDotSegment(path);
}

/** The parts of a plain web URL read without the parser; undefined when the text is not one. */
export function plainWebUrlParts(text: string): UrlParts | undefined {
  if (!PLAIN_WEB_URL.test(text)) return undefined;
  // The form fixes where the parts are: "http" or "https", "://", the host up to the first
  // '/', '?' or '#', the path up to the first '?' or '#'.
  const https = text.charCodeAt(4) === 115;
  const hostStart = https ? 8 : 7;
  let hostEnd = hostStart;
  while (hostEnd < text.length && !isHostEnd(text.charCodeAt(hostEnd))) hostEnd++;
  let pathEnd = hostEnd;
  while (pathEnd < text.length && !isPathEnd(text.charCodeAt(pathEnd))) pathEnd++;
  const host = text.slice(hostStart, hostEnd);
  const path = text.slice(hostEnd, pathEnd);
  if (parserWouldRework(host, path)) return undefined;
  return { protocol: https ? 'https:' : 'http:', hasHost: true, pathname: path === '' ? '/' : path };
}

/** The parts of the URL, or undefined when the text holds whitespace or is not a URL. */
export function urlParts(text: string): UrlParts | undefined {
  const plain = plainWebUrlParts(text);
  if (plain !== undefined) return plain;
  if (WHITESPACE.test(text)) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  return { protocol: url.protocol, hasHost: url.hostname !== '', pathname: url.pathname };
}
