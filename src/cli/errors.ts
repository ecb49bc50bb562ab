/**
 * How a failure is shown: one line naming what went wrong, a hint line when there is one,
 * never a stack trace (those go to the debug log). Secrets are scrubbed.
 */
import { isAdsyncError, ExitCode } from '../errors.js';
import { scrubSecrets } from '../logging/secrets.js';

export function describeFailure(error: unknown): { text: string; exitCode: number } {
  if (isAdsyncError(error)) {
    const hint = error.hint ? `\n  hint: ${error.hint}` : '';
    return { text: scrubSecrets(`adsync: ${error.message}${hint}\n`), exitCode: error.exitCode };
  }
  const message = error instanceof Error ? error.message : String(error);
  return {
    text: scrubSecrets(`adsync: internal error: ${message}\n  hint: this is a bug in adsync; run again with --log-level debug and report the output\n`),
    exitCode: ExitCode.failed,
  };
}
