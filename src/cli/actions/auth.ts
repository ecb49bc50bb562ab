/**
 * The work of `adsync auth login` and `adsync auth revoke` (commands/auth.ts): the OAuth 1.0a
 * PIN (oob) flow.
 *
 * On a terminal, login prints the authorize URL and asks for the PIN. Elsewhere (or with
 * --no-prompt) it stores the pending request token in the credentials file and exits; the
 * second step is `adsync auth login --pin <PIN>`.
 */
import { AdsApiClient } from '../../api/client.js';
import { checkCredentialsWritable, Credentials, defaultCredentialsPath, envPrefix, isDefaultProfile, loadCredentials, profileFlag, readCredentialsFile, readStoredProfile, writeCredentialsProfile } from '../../api/credentials.js';
import { authorizeUrl, exchangeForAccessToken, invalidateAccessToken, obtainRequestToken } from '../../api/oauth-flow.js';
import { AuthError, ConsumerKeyRejectedError, PinRejectedError } from '../../api/errors.js';
import { ConfigError } from '../../errors.js';
import type { CliContext } from '../context.js';

export interface RevokeOptions {
  profile: string;
  credentialsFile?: string;
}

export interface LoginOptions {
  profile: string;
  pin?: string;
  prompt: boolean;
  print?: boolean;
  credentialsFile?: string;
}

function credentialsPath(ctx: CliContext, explicit: string | undefined): string {
  return explicit ?? ctx.settings.credentialsFile ?? defaultCredentialsPath(ctx.env);
}

function flowClient(ctx: CliContext, credentials: Credentials): AdsApiClient {
  const s = ctx.settings;
  return new AdsApiClient({ credentials, adsUrl: s.adsUrl, apiUrl: s.apiUrl, retry: { ...s.retry, budgetMs: 60_000 }, logger: ctx.logger });
}

/** A word as the shell reads it: quoted unless it is plain. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** `adsync auth login` with the flags the operator gave that the next step needs too. */
function loginCommand(ctx: CliContext, options: LoginOptions, extra: string[] = []): string {
  const words = ['adsync'];
  const config = ctx.globalOptions().config;
  if (config !== undefined) words.push('--config', shellWord(config));
  words.push('auth', 'login');
  if (!isDefaultProfile(options.profile)) words.push('--profile', shellWord(options.profile));
  if (options.credentialsFile !== undefined) words.push('--credentials-file', shellWord(options.credentialsFile));
  words.push(...extra);
  if (!options.prompt && !extra.includes('--pin')) words.push('--no-prompt');
  if (options.print) words.push('--print');
  return words.join(' ');
}

export async function login(ctx: CliContext, options: LoginOptions): Promise<void> {
  const path = credentialsPath(ctx, options.credentialsFile);
  const consumer = loadCredentials({ profile: options.profile, env: ctx.env, credentialsPath: path, consumerOnly: true });
  // The file the tokens go to must be usable before the user approves: a PIN works once, so a
  // file refused after the exchange (mode 644, not JSON, a folder, a folder that cannot be
  // written or made) would lose the new token.
  if (!options.print) {
    readCredentialsFile(path);
    checkCredentialsWritable(path);
  }
  const client = flowClient(ctx, new Credentials(options.profile, consumer.consumerKey, consumer.consumerSecret, '', ''));
  const out = ctx.io.stderr;

  let requestToken: { token: string; tokenSecret: string };
  let pin = options.pin?.trim(); // as pasted from the page, perhaps with a space or line end
  if (pin === undefined) {
    requestToken = await obtainRequestToken(client).catch((error: unknown) => {
      // Signed with the app's key and secret alone: not the access token AuthError's hint names.
      if (!(error instanceof AuthError) || error.clockOff) throw error;
      const prefix = envPrefix(options.profile);
      throw new ConsumerKeyRejectedError(
        error,
        `check ${prefix}CONSUMER_KEY and ${prefix}CONSUMER_SECRET (or consumer_key and consumer_secret in profile "${options.profile}" of ${path}): they must be your app's consumer key and secret (the developer portal's "Keys and tokens"), with which this first step alone is signed`,
      );
    });
    out(`Open this address in a browser, sign in as the advertiser's user and approve adsync:\n\n  ${authorizeUrl(ctx.settings.apiUrl, requestToken.token)}\n\n`);
    if (ctx.io.prompt && options.prompt) {
      pin = (await ctx.io.prompt('PIN shown after approving: ')).trim();
    } else {
      writeCredentialsProfile(path, options.profile, {
        consumer_key: consumer.consumerKey,
        consumer_secret: consumer.consumerSecret,
        pending_request_token: requestToken.token,
        pending_request_token_secret: requestToken.tokenSecret,
      });
      out(`Then finish with:\n\n  ${loginCommand(ctx, options, ['--pin', '<PIN>'])}\n`);
      return;
    }
  } else {
    const stored = readStoredProfile(path, options.profile);
    if (!stored?.pending_request_token || !stored.pending_request_token_secret) {
      throw new ConfigError(`no authorization is pending for profile "${options.profile}" in ${path}`, {
        hint: `run \`${loginCommand(ctx, options)}\` first (without --pin) and open the address it prints; a PIN can be used only once`,
      });
    }
    requestToken = { token: stored.pending_request_token, tokenSecret: stored.pending_request_token_secret };
  }
  const prompted = options.pin === undefined;
  if (!pin) {
    // At the prompt: an empty line, Ctrl-C or Ctrl-D. The request token was not stored (a
    // terminal login keeps it in memory), so this authorization cannot be finished any more.
    throw prompted
      ? new ConfigError('no PIN was entered: the authorization was not finished and nothing was stored', {
          hint: `run \`${loginCommand(ctx, options)}\` again and enter the PIN shown after approving (or add --no-prompt to finish later with --pin)`,
        })
      : new ConfigError('--pin is empty', { hint: `run \`${loginCommand(ctx, options, ['--pin', '<PIN>'])}\` with the PIN the authorization page shows` });
  }

  let access: Awaited<ReturnType<typeof exchangeForAccessToken>>;
  try {
    access = await exchangeForAccessToken(client, requestToken, pin);
  } catch (error) {
    // A clock that is off fails every signature: not the PIN's fault, and a new PIN would fail too.
    if (!(error instanceof AuthError) || error.revoked || error.clockOff) throw error;
    const again = loginCommand(ctx, options);
    throw new PinRejectedError(
      error,
      prompted
        ? `run \`${again}\` again, approve on the address it prints and enter the PIN that page shows`
        : `run \`${loginCommand(ctx, options, ['--pin', '<PIN>'])}\` again with the PIN the authorization page shows, or start again with \`${again}\` if that PIN was already used or the page is gone`,
    );
  }
  const prefix = envPrefix(options.profile);
  if (options.print) {
    // The new tokens go to stdout only, as asked, and first: the PIN is used up now.
    ctx.io.stdout(
      [
        `export ${prefix}CONSUMER_KEY='${consumer.consumerKey}'`,
        `export ${prefix}CONSUMER_SECRET='${consumer.consumerSecret}'`,
        `export ${prefix}ACCESS_TOKEN='${access.token}'`,
        `export ${prefix}ACCESS_TOKEN_SECRET='${access.tokenSecret}'`,
        '',
      ].join('\n'),
    );
    // Clear the pending token the first step stored (a login on a terminal stored nothing).
    if (!prompted) writeCredentialsProfile(path, options.profile, { pending_request_token: undefined, pending_request_token_secret: undefined });
  } else {
    writeCredentialsProfile(path, options.profile, {
      consumer_key: consumer.consumerKey,
      consumer_secret: consumer.consumerSecret,
      access_token: access.token,
      access_token_secret: access.tokenSecret,
      user_id: access.userId,
      screen_name: access.screenName,
      pending_request_token: undefined,
      pending_request_token_secret: undefined,
    });
  }
  out(
    `Authorized as @${access.screenName} (user ${access.userId}).${options.print ? '' : ` Profile "${options.profile}" is stored in ${path} (mode 0600).`}\n`,
  );
  if (!options.print) out(shadowNote(ctx.env, prefix));
}

/**
 * The environment wins over the file, value by value: an access token variable still set
 * (the old, perhaps revoked, token) would keep being used instead of the one just stored.
 */
function shadowNote(env: NodeJS.ProcessEnv, prefix: string): string {
  const set = ['ACCESS_TOKEN', 'ACCESS_TOKEN_SECRET'].map((name) => prefix + name).filter((name) => env[name]);
  if (set.length === 0) return '';
  return `Note: ${set.join(' and ')} ${set.length === 1 ? 'is' : 'are'} set in this environment and win${set.length === 1 ? 's' : ''} over the credentials file: unset ${set.length === 1 ? 'it' : 'them'} (or set ${set.length === 1 ? 'it' : 'them'} to the new values) wherever jobs get their environment, or they keep using the old token.\n`;
}

export async function revoke(ctx: CliContext, options: RevokeOptions): Promise<void> {
  const path = credentialsPath(ctx, options.credentialsFile);
  const prefix = envPrefix(options.profile);
  if (!ctx.env[`${prefix}ACCESS_TOKEN`] && !readStoredProfile(path, options.profile)?.access_token) {
    // Not "incomplete, run auth login": that would make a new token, the opposite of what was asked.
    throw new ConfigError(`profile "${options.profile}" has no access token to revoke: ${prefix}ACCESS_TOKEN is not set and ${path} holds none for it`, {
      hint: `it was revoked (and removed) already, or never stored here; a token jobs take from their environment is revoked by running this command with that environment`,
    });
  }
  const credentials = loadCredentials({ profile: options.profile, env: ctx.env, credentialsPath: path });
  let already = false;
  try {
    await invalidateAccessToken(flowClient(ctx, credentials), credentials.token);
  } catch (error) {
    // Revoked before (by the user, or a revoke whose answer was lost): what was asked is done.
    if (!(error instanceof AuthError) || !error.revoked) throw error;
    already = true;
  }
  const stored = readStoredProfile(path, options.profile);
  if (stored?.access_token === credentials.accessToken) {
    writeCredentialsProfile(path, options.profile, { access_token: undefined, access_token_secret: undefined });
  }
  ctx.io.stderr(
    (already
      ? `The access token of profile "${options.profile}" was already revoked; it can no longer be used.\n`
      : `Revoked the access token of profile "${options.profile}"; it can no longer be used.\n`) + revokedFromEnvironmentNote(ctx, options.profile, path, stored?.access_token, credentials.accessToken),
  );
}

/**
 * The token revoked is the environment's when its variable is set (it wins over the file, as
 * for jobs): the variables now hold a revoked token, and a different token in the file was
 * left as it was. Both are said, or `revoke` would seem to have revoked the file's token.
 */
function revokedFromEnvironmentNote(ctx: CliContext, profile: string, path: string, storedToken: string | undefined, revoked: string): string {
  const prefix = envPrefix(profile);
  if (!ctx.env[`${prefix}ACCESS_TOKEN`]) return '';
  const vars = `${prefix}ACCESS_TOKEN and ${prefix}ACCESS_TOKEN_SECRET`;
  let note = `It was the token in ${prefix}ACCESS_TOKEN (set in this environment, which wins over the credentials file): unset ${vars} wherever jobs get their environment.\n`;
  if (storedToken !== undefined && storedToken !== revoked) {
    note += `Profile "${profile}" of ${path} holds another access token, which was not revoked: to revoke it too, run \`adsync auth revoke${profileFlag(profile)}\` where ${vars} are not set.\n`;
  }
  return note;
}
