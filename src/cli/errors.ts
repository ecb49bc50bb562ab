/**
 * How a failure is shown: one line naming what went wrong, a hint line when there is one,
 * never a stack trace (those go to the debug log). Secrets are scrubbed, and whatever the
 * message quotes (the service, a server, a file) cannot break the line (oneLine). A job or
 * settings file that is not valid lists its problems one per line under the first, as adsync
 * wrote them (ConfigError): each of those lines is one line the same way.
 */
import { ConfigError, isAdsyncError, ExitCode, oneLine } from '../errors.js';
import { scrubSecrets } from '../logging/secrets.js';

export function describeFailure(error: unknown): { text: string; exitCode: number } {
  if (isAdsyncError(error)) {
    const message = error instanceof ConfigError ? error.message.split('\n').map(oneLine).join('\n') : oneLine(error.message);
    const hint = error.hint ? `\n  hint: ${oneLine(error.hint)}` : '';
    return { text: scrubSecrets(`adsync: ${message}${hint}\n`), exitCode: error.exitCode };
  }
  const message = error instanceof Error ? error.message : String(error);
  return {
    text: scrubSecrets(`adsync: internal error: ${oneLine(message)}\n  hint: this is a bug in adsync; run again with --log-level debug and report the output\n`),
    exitCode: ExitCode.failed,
  };
}
