/**
 * Links the catalog takes: absolute https URLs (http too for images) that a URL parser
 * accepts, written without spaces. Values are sent as written (no re-encoding, no
 * lower-casing), only checked.
 */
import { quote } from './text-values.js';

const HTTPS_PREFIX = /^https:\/\/[^/\s?#]/i;
const WEB_PREFIX = /^https?:\/\/[^/\s?#]/i;
// The common case in one scan: https (or http), a host, no whitespace anywhere.
const PLAIN_HTTPS = /^https:\/\/[^/\s?#]\S*$/i;
const PLAIN_WEB = /^https?:\/\/[^/\s?#]\S*$/i;
const HTTP_PREFIX = /^http:\/\//i;
const WHITESPACE = /\s/;
// Separates URLs in a comma-separated list; a comma inside a URL (image CDNs use them:
// .../w_500,h_500/...) is not followed by a scheme and stays in its URL.
const LIST_SEPARATOR = /\s*,\s*(?=[a-z][a-z0-9+.-]*:\/\/)/i;

/** Why the value is not an https URL (or, with `httpsOnly` false, an http or https one). */
function urlProblem(url: string, httpsOnly: boolean): string | undefined {
  if ((httpsOnly ? PLAIN_HTTPS : PLAIN_WEB).test(url) && URL.canParse(url)) return undefined;
  if (httpsOnly && HTTP_PREFIX.test(url)) return `${quote(url)} must use https`;
  if ((httpsOnly ? HTTPS_PREFIX : WEB_PREFIX).test(url) && WHITESPACE.test(url)) return `${quote(url)} contains whitespace; encode a space as %20`;
  return `${quote(url)} is not a valid ${httpsOnly ? 'https' : 'http or https'} URL`;
}

/** Why the value is not an https URL, or undefined when it is one. */
export function httpsUrlProblem(url: string): string | undefined {
  return urlProblem(url, true);
}

/**
 * Why the value is not an http or https URL (images: ads-api.md asks https of link and
 * mobile_link only), or undefined when it is one.
 */
export function webUrlProblem(url: string): string | undefined {
  return urlProblem(url, false);
}

/**
 * A URL as an entry of a comma-separated list: its own commas (image CDNs use them:
 * .../w_500,h_500/...) percent-encoded, or the service would split the URL in two.
 */
export function listEntryUrl(url: string): string {
  return url.includes(',') ? url.replaceAll(',', '%2C') : url;
}

/** The URLs of a comma-separated list, or of each of several values; empty entries dropped. */
export function splitUrlList(values: readonly string[]): string[] {
  const urls: string[] = [];
  for (const value of values) {
    if (!value.includes(',')) {
      const url = value.trim();
      if (url !== '') urls.push(url);
      continue;
    }
    for (const part of value.split(LIST_SEPARATOR)) {
      const url = part.replace(/^[\s,]+|[\s,]+$/g, '');
      if (url !== '') urls.push(url);
    }
  }
  return urls;
}

const IMAGE_EXTENSIONS: ReadonlySet<string> = new Set(['jpg', 'jpeg', 'gif', 'webp', 'png']);
const EXTENSION = /\.([A-Za-z][A-Za-z0-9]{0,4})$/;

/**
 * The file extension of the URL's path when there is one and it is not JPG, GIF, WEBP or PNG;
 * undefined otherwise (no extension proves nothing: image CDNs often serve paths without one).
 */
export function nonImageExtension(url: string): string | undefined {
  let end = url.length;
  const query = url.indexOf('?');
  if (query !== -1) end = query;
  const fragment = url.indexOf('#');
  if (fragment !== -1 && fragment < end) end = fragment;
  const pathStart = url.indexOf('/', 'https://'.length);
  if (pathStart === -1 || pathStart > end) return undefined;
  const match = EXTENSION.exec(url.slice(pathStart, end));
  if (!match?.[1]) return undefined;
  const extension = match[1].toLowerCase();
  return IMAGE_EXTENSIONS.has(extension) ? undefined : extension;
}
