/** The start banner of `adsync emulator`: where it listens, the seeded ids and credentials. */
import type { EmulatorCredentials } from './options.js';
import type { SeedIds } from './store.js';

export interface BannerInput {
  url: string;
  ids: SeedIds;
  credentials: EmulatorCredentials;
  /** Shown as given, e.g. "default" or "off". */
  rateLimits?: string;
}

export function formatEmulatorBanner(input: BannerInput): string {
  const { url, ids, credentials } = input;
  const rows: [string, string][] = [
    ['account', ids.accountId],
    ['product catalog', ids.catalogId],
    ['custom audience', ids.customAudienceId],
    ['do-not-reach list', ids.doNotReachListId],
    ['consumer key', credentials.consumerKey],
    ['consumer secret', credentials.consumerSecret],
    ['access token', credentials.accessToken],
    ['access token secret', credentials.accessTokenSecret],
    ...(input.rateLimits === undefined ? [] : ([['rate limits', input.rateLimits]] as [string, string][])),
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  return [
    `X Ads API emulator listening on ${url}`,
    '',
    ...rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`),
    '',
    'Point adsync at it with:',
    `  export ADSYNC_ADS_URL=${url} ADSYNC_API_URL=${url}`,
    `  export ADSYNC_CONSUMER_KEY=${credentials.consumerKey} ADSYNC_CONSUMER_SECRET=${credentials.consumerSecret}`,
    `  export ADSYNC_ACCESS_TOKEN=${credentials.accessToken} ADSYNC_ACCESS_TOKEN_SECRET=${credentials.accessTokenSecret}`,
    '',
    `Admin endpoints: ${url}/_emulator/state, /_emulator/faults, /_emulator/reset`,
  ].join('\n');
}
