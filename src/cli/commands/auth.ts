/**
 * `adsync auth login` and `adsync auth revoke`: the OAuth 1.0a PIN (oob) flow. Their work is
 * in ../actions/auth.ts, loaded when one of them runs (see commands/index.ts).
 */
import type { Command } from 'commander';
import type { LoginOptions, RevokeOptions } from '../actions/auth.js';
import type { CliContext } from '../context.js';

/** Where the credentials file is when --credentials-file is not given (actions/auth.ts credentialsPath), in its order. */
const CREDENTIALS_FILE_HELP =
  "credentials file (default: the settings' credentials_file, else ADSYNC_CREDENTIALS, else adsync/credentials.json in $XDG_CONFIG_HOME or ~/.config)";

export function registerAuth(program: Command, ctx: CliContext): void {
  const auth = program.command('auth').description('authorize adsync with X (OAuth 1.0a PIN flow) or revoke its token');
  auth
    .command('login')
    .description('authorize a user and store the access token in the credentials file')
    .option('--profile <name>', 'credentials profile to store (reads ADSYNC_<PROFILE>_CONSUMER_KEY/SECRET)', 'default')
    .option('--pin <pin>', 'finish a pending authorization with the PIN shown after approving')
    .option('--no-prompt', 'do not ask for the PIN on the terminal; finish later with --pin')
    .option('--print', 'print shell export lines instead of storing the tokens')
    .option('--credentials-file <path>', CREDENTIALS_FILE_HELP)
    .action(async (options: LoginOptions) => (await import('../actions/auth.js')).login(ctx, options));
  auth
    .command('revoke')
    .description("revoke the profile's access token (POST 1.1/oauth/invalidate_token)")
    .option('--profile <name>', 'credentials profile', 'default')
    .option('--credentials-file <path>', CREDENTIALS_FILE_HELP)
    .action(async (options: RevokeOptions) => (await import('../actions/auth.js')).revoke(ctx, options));
}
