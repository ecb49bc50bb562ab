/**
 * A URL as it may appear in messages and logs: credentials and query values are secrets as
 * often as not (feed URLs carry access keys), so they are replaced by "***".
 */
export function displayUrl(url: URL): string {
  const shown = new URL(url.href);
  if (shown.username !== '') shown.username = '***';
  if (shown.password !== '') shown.password = '***';
  const names = [...new Set(shown.searchParams.keys())];
  if (names.length > 0) shown.search = names.map((name) => `${encodeURIComponent(name)}=***`).join('&');
  return shown.href;
}

/** A URL given as text, as displayUrl shows it; one that cannot be parsed is not shown at all. */
export function displayUrlText(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'a URL that is not valid';
  }
  return displayUrl(url);
}
