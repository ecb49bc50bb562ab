/**
 * Secret values known to this process (consumer secret, tokens, token secrets). Every log
 * line and every error message printed by the CLI passes through `scrubSecrets` as a last
 * line of defence behind the structural redaction (Credentials.toJSON, pino redact paths).
 */
const known = new Set<string>();

/** Registers values that must never be written anywhere. Values under 6 characters are ignored. */
export function registerSecrets(values: Iterable<string>): void {
  for (const v of values) if (v.length >= 6) known.add(v);
}

export function scrubSecrets(text: string): string {
  let out = text;
  for (const secret of known) {
    if (out.includes(secret)) out = out.split(secret).join('[redacted]');
    const encoded = encodeURIComponent(secret);
    if (encoded !== secret && out.includes(encoded)) out = out.split(encoded).join('[redacted]');
  }
  return out;
}

/** For tests. */
export function forgetSecrets(): void {
  known.clear();
}
