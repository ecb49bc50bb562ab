/**
 * Credentials: where they come from and how they are kept out of every log, report, error
 * and database.
 *
 * A job without `credentials:` reads ADSYNC_CONSUMER_KEY, ADSYNC_CONSUMER_SECRET,
 * ADSYNC_ACCESS_TOKEN, ADSYNC_ACCESS_TOKEN_SECRET. A job with `credentials: acme` reads
 * ADSYNC_ACME_CONSUMER_KEY and so on. A value missing from the environment is taken from the
 * profile of the same name in the credentials file written by `adsync auth login`
 * (`default` for the unnamed profile). The credentials file must not be readable by group or
 * others; adsync refuses to read one that is.
 */
import { accessSync, chmodSync, closeSync, constants as fsConstants, existsSync, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { inspect } from 'node:util';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import type { ConsumerCredentials, TokenCredentials } from './oauth1.js';
import { expandHome } from '../config/home-path.js';

export const REDACTED = '[redacted]';

/** The four OAuth 1.0a values. Serializes and inspects with its secrets redacted. */
export class Credentials {
  constructor(
    readonly profile: string,
    readonly consumerKey: string,
    readonly consumerSecret: string,
    readonly accessToken: string,
    readonly accessTokenSecret: string,
  ) {}

  get consumer(): ConsumerCredentials {
    return { consumerKey: this.consumerKey, consumerSecret: this.consumerSecret };
  }

  get token(): TokenCredentials {
    return { token: this.accessToken, tokenSecret: this.accessTokenSecret };
  }

  /** All values that must never be written anywhere; used by redaction and by tests. */
  secrets(): string[] {
    return [this.consumerSecret, this.accessToken, this.accessTokenSecret];
  }

  toJSON(): Record<string, string> {
    return { profile: this.profile, consumerKey: this.consumerKey, consumerSecret: REDACTED, accessToken: REDACTED, accessTokenSecret: REDACTED };
  }

  [inspect.custom](): string {
    return `Credentials(${JSON.stringify(this.toJSON())})`;
  }
}

const PROFILE_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

/** Loose: keys adsync does not know (an operator's note, say) survive a rewrite by `auth login`. */
const profileSchema = z.looseObject({
  consumer_key: z.string().min(1).optional(),
  consumer_secret: z.string().min(1).optional(),
  access_token: z.string().min(1).optional(),
  access_token_secret: z.string().min(1).optional(),
  user_id: z.string().optional(),
  screen_name: z.string().optional(),
  /** Between the two steps of a non-interactive `adsync auth login`. */
  pending_request_token: z.string().optional(),
  pending_request_token_secret: z.string().optional(),
});
export type StoredProfile = z.infer<typeof profileSchema>;

const fileSchema = z.looseObject({ profiles: z.record(z.string(), profileSchema) });
export type CredentialsFile = z.infer<typeof fileSchema>;

export function defaultCredentialsPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.ADSYNC_CREDENTIALS) return expandHome(env.ADSYNC_CREDENTIALS, env);
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'adsync', 'credentials.json');
}

/** The default profile (the ADSYNC_* variables): `default`, in any case. */
export function isDefaultProfile(profile: string): boolean {
  return profile.toLowerCase() === 'default';
}

/** ` --profile <name>` for a command to suggest, nothing for the default profile. */
export function profileFlag(profile: string): string {
  return isDefaultProfile(profile) ? '' : ` --profile ${profile}`;
}

/** The environment variable prefix of a profile: ADSYNC_ or ADSYNC_<PROFILE>_. */
export function envPrefix(profile: string | undefined): string {
  if (profile === undefined || isDefaultProfile(profile)) return 'ADSYNC_';
  if (!PROFILE_NAME.test(profile)) {
    throw new ConfigError(`credentials profile "${profile}" is not a valid name`, {
      hint: 'use letters, digits and underscores, starting with a letter',
    });
  }
  return `ADSYNC_${profile.toUpperCase()}_`;
}

/**
 * A profile's key in the file. Profile names are case-insensitive, as their variables are
 * (acme, Acme and ACME all read ADSYNC_ACME_*): the name as given, else the one key that differs
 * from it only in case.
 */
export function profileKey(file: CredentialsFile, profile: string, path: string): string | undefined {
  if (Object.hasOwn(file.profiles, profile)) return profile;
  const matches = Object.keys(file.profiles).filter((name) => name.toLowerCase() === profile.toLowerCase());
  if (matches.length > 1) {
    throw new ConfigError(`credentials file ${path} has profiles ${matches.map((name) => `"${name}"`).join(', ')}, which differ only in case: adsync cannot tell which one is "${profile}"`, {
      hint: `keep one of them: profile names are read without regard to case, as their variables (${envPrefix(profile)}*) are`,
    });
  }
  return matches[0];
}

/** A profile as stored in the credentials file, found as profileKey finds it. */
export function readStoredProfile(path: string, profile: string): StoredProfile | undefined {
  const file = readCredentialsFile(path);
  const key = file && profileKey(file, profile, path);
  return file && key !== undefined ? file.profiles[key] : undefined;
}

/**
 * Reads the credentials file, refusing one that group or others can read. Returns undefined
 * when the file does not exist.
 */
export function readCredentialsFile(path: string): CredentialsFile | undefined {
  if (!existsSync(path)) return undefined;
  let text: string;
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    throw fileError('read', path, error);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) {
      throw new ConfigError(`credentials file ${path} is not a file`, { hint: 'name the file itself (credentials_file, ADSYNC_CREDENTIALS or --credentials-file), not its folder' });
    }
    const mode = stat.mode;
    if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
      throw new ConfigError(
        `credentials file ${path} can be ${(mode & 0o044) === 0 ? 'changed' : 'read'} by others (mode ${(mode & 0o777).toString(8)}); adsync will not use it`,
        { hint: `run: chmod 600 ${path}` },
      );
    }
    text = readFileSync(fd, 'utf8');
  } catch (error) {
    throw error instanceof ConfigError ? error : fileError('read', path, error);
  } finally {
    closeSync(fd);
  }
  // Empty: made ahead with `touch` and `chmod 600` for `adsync auth login` to fill.
  if (text.trim() === '') return { profiles: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not the parser's message: it quotes the text, which holds secrets.
    throw new ConfigError(`credentials file ${path} is not valid JSON`, {
      hint: `correct it (adsync writes {"profiles": {"<profile>": {"consumer_key": ..., "access_token": ...}}}), or move it away and run \`adsync auth login\` again for each profile it held: login does not overwrite a file it cannot read`,
    });
  }
  const result = fileSchema.safeParse(parsed);
  if (!result.success) {
    // Where, and what is wrong there; never the value (zod's messages name only types and lengths).
    const problems = result.error.issues.slice(0, 3).map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'the file'}: ${issue.message}`);
    throw new ConfigError(`credentials file ${path} is not as adsync writes it: ${problems.join('; ')}`, {
      hint: 'it is {"profiles": {"<profile>": {"consumer_key": "...", "consumer_secret": "...", "access_token": "...", "access_token_secret": "..."}}}, every value text in quotes and not empty; leave out a value you do not have',
    });
  }
  return result.data;
}

/**
 * The file a write replaces: the target of a symbolic link (followed even when it dangles),
 * so that a link (to a secrets volume, say) stays a link and its target gets the update.
 */
function writeTarget(path: string): string {
  let current = path;
  for (let hops = 0; hops < 40; hops++) {
    let link: string;
    try {
      if (!lstatSync(current).isSymbolicLink()) return current;
      link = readlinkSync(current);
    } catch {
      return current;
    }
    current = resolve(dirname(current), link);
  }
  return current;
}

/**
 * Writes (or updates) one profile; the file is created with mode 0600 and replaced atomically.
 * A credentials file that is a symbolic link stays one: its target is replaced.
 */
export function writeCredentialsProfile(credentialsPath: string, profile: string, values: { [K in keyof StoredProfile]?: string | undefined }): void {
  envPrefix(profile); // validates the name
  const path = writeTarget(credentialsPath);
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  } catch (error) {
    throw fileError('write', path, error);
  }
  withWriteLock(path, () => {
    const current = readCredentialsFile(path) ?? { profiles: {} };
    const key = profileKey(current, profile, path) ?? profile;
    current.profiles[key] = { ...current.profiles[key], ...values };
    const tmp = `${path}.${process.pid}.tmp`;
    try {
      writeFileSync(tmp, `${JSON.stringify(current, null, 2)}\n`, { mode: 0o600 });
      chmodSync(tmp, 0o600);
      renameSync(tmp, path);
    } catch (error) {
      try {
        rmSync(tmp, { force: true });
      } catch {
        // Nothing was written there.
      }
      throw fileError('write', path, error);
    }
  });
}

/**
 * Checks that writeCredentialsProfile can write the file, for `adsync auth login` to call
 * before it asks the platform for anything: a PIN works once, so a file refused after the
 * exchange would lose the new token. Its folder must be a folder this user can create files
 * in (tried with an empty file, removed at once); a folder still to be made, the nearest
 * folder above it that exists. Throws the ConfigError the write would, naming the path and why.
 */
export function checkCredentialsWritable(credentialsPath: string): void {
  const path = writeTarget(credentialsPath);
  const folder = dirname(path);
  let existing = folder;
  for (;;) {
    try {
      if (!statSync(existing).isDirectory()) throw fileError('write', path, undefined, `${existing} is not a folder`);
      break;
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      // Not there yet (made by the write), or a file in the way above it: look further up.
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || dirname(existing) === existing) throw fileError('write', path, error);
      existing = dirname(existing);
    }
  }
  try {
    if (existing !== folder) accessSync(existing, fsConstants.W_OK | fsConstants.X_OK);
    else {
      const probe = `${path}.${process.pid}.tmp`;
      closeSync(openSync(probe, 'w', 0o600));
      rmSync(probe, { force: true });
    }
  } catch (error) {
    throw fileError('write', path, error);
  }
}

const LOCK_WAIT_MS = 10_000;
/** A lock older than this was left by a process that died while holding it. */
const LOCK_STALE_MS = 30_000;

/**
 * Runs one read-modify-write of the credentials file under `<file>.lock`, so that two
 * `adsync auth` commands at once (two profiles logged in by a script) do not drop each
 * other's profile.
 */
function withWriteLock(path: string, update: () => void): void {
  const lock = `${path}.lock`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx', 0o600));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw fileError('write', path, error);
    }
    if (lockAgeMs(lock) > LOCK_STALE_MS) {
      rmSync(lock, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new ConfigError(`the credentials file ${path} is being written by another adsync (lock file ${lock})`, {
        hint: `run the command again; if no other \`adsync auth\` command is running, remove ${lock}`,
      });
    }
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
  }
  try {
    update();
  } finally {
    rmSync(lock, { force: true });
  }
}

function lockAgeMs(lock: string): number {
  try {
    return Date.now() - statSync(lock).mtimeMs;
  } catch {
    return 0; // released meanwhile: try again
  }
}

/** A file-system failure on the credentials file, as the operator can act on it (never a bug report). */
function fileError(action: 'read' | 'write', path: string, error: unknown, why?: string): ConfigError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const reason = why ?? (code === 'EACCES' || code === 'EPERM' ? 'permission denied' : code === 'EROFS' ? 'the file system is read-only' : (error as Error).message);
  const hint =
    action === 'read'
      ? `make ${path} readable by the user adsync runs as (and mode 0600), or name another file with credentials_file, ADSYNC_CREDENTIALS or --credentials-file`
      : `make the folder ${dirname(path)} writable by the user adsync runs as, or name another file with --credentials-file (or credentials_file, ADSYNC_CREDENTIALS)`;
  return new ConfigError(`cannot ${action} the credentials file ${path}: ${reason}`, { cause: error, hint });
}

export interface LoadCredentialsOptions {
  profile?: string | undefined;
  env?: NodeJS.ProcessEnv;
  credentialsPath?: string | undefined;
  /** The consumer pair alone is enough (for `adsync auth login`). */
  consumerOnly?: boolean;
}

const FIELDS = [
  ['consumerKey', 'CONSUMER_KEY', 'consumer_key'],
  ['consumerSecret', 'CONSUMER_SECRET', 'consumer_secret'],
  ['accessToken', 'ACCESS_TOKEN', 'access_token'],
  ['accessTokenSecret', 'ACCESS_TOKEN_SECRET', 'access_token_secret'],
] as const;

/**
 * What to do about missing values. The consumer key and secret are the app's: only the
 * operator can set them (`adsync auth login` needs them to start). The access token and
 * secret are what `adsync auth login` obtains.
 */
function incompleteHint(profile: string, prefix: string, path: string, missing: readonly string[], consumerOnly: boolean): string {
  const login = `adsync auth login${profileFlag(profile)}`;
  const consumerMissing = missing.some((name) => name === `${prefix}CONSUMER_KEY` || name === `${prefix}CONSUMER_SECRET`);
  if (!consumerMissing) return `set the environment variables, or run \`${login}\` to store the profile (README, "Credentials")`;
  const setConsumer = `set ${prefix}CONSUMER_KEY and ${prefix}CONSUMER_SECRET to your app's consumer key and secret (the developer portal's "Keys and tokens"), or put consumer_key and consumer_secret in profile "${profile}" of ${path}`;
  if (consumerOnly) return `${setConsumer}; then run \`${login}\` again (README, "Credentials")`;
  return `${setConsumer}; then set the access token variables too, or run \`${login}\` to store them (README, "Credentials")`;
}

/**
 * A key, token or secret as given. They never contain spaces or quotes: spaces, a carriage
 * return (an env file saved on Windows) or quotes around one (kept by `docker --env-file`)
 * would only make every signature wrong, so they are refused here, by name, before any work.
 */
function plainValue(value: string, where: string, profile: string): string {
  const quoted = /^(["']).*\1$/s.test(value);
  if (value === value.trim() && !quoted) return value;
  const what = quoted ? 'quotes' : 'spaces or a line break';
  throw new ConfigError(`credentials profile "${profile}": ${where} has ${what} around its value`, {
    hint: "remove them where it is set: keys, tokens and secrets never contain them (docker's --env-file and docker compose keep quotes and spaces as part of a value; a file saved with Windows line ends adds a carriage return)",
  });
}

/** A key and its secret, a token and its secret: each secret signs with its own key or token. */
const PAIRS = [
  [FIELDS[0], FIELDS[1]],
  [FIELDS[2], FIELDS[3]],
] as const;

/**
 * Values are merged one by one (the environment wins), but a key or token set in the
 * environment, other than the file's, with the secret taken from the file, is signed with the
 * secret of the file's key or token: every request would be refused as "not properly
 * authenticated", which points at nothing. Refused here instead, naming the variable missing.
 * (A secret set in the environment with the file's key or token may be the file's correction.)
 */
function checkPairs(profile: string, prefix: string, path: string, values: Record<string, string>, fromFile: ReadonlySet<string>, stored: StoredProfile): void {
  for (const [[idField, idEnv, idFile], [secretField, secretEnv, secretFile]] of PAIRS) {
    const storedId = stored[idFile];
    if (!fromFile.has(secretField) || fromFile.has(idField) || storedId === undefined || storedId === values[idField]) continue;
    throw new ConfigError(
      `credentials profile "${profile}": ${prefix}${idEnv} is set but ${prefix}${secretEnv} is not, and the ${secretFile} in profile "${profile}" of ${path} goes with another ${idFile}`,
      { hint: `set ${prefix}${secretEnv} too (the two go together), or unset ${prefix}${idEnv} to use the pair in the credentials file` },
    );
  }
}

/** Resolves a profile's credentials from the environment, then the credentials file. */
export function loadCredentials(options: LoadCredentialsOptions = {}): Credentials {
  const env = options.env ?? process.env;
  const profile = options.profile ?? 'default';
  const prefix = envPrefix(profile);
  const path = options.credentialsPath ?? defaultCredentialsPath(env);
  let file: CredentialsFile | undefined;
  let key: string | undefined;
  let stored: StoredProfile | undefined;
  const values: Record<string, string> = {};
  const fromFileFields = new Set<string>();
  const missing: string[] = [];
  const wanted = options.consumerOnly ? FIELDS.slice(0, 2) : FIELDS;
  for (const [field, envName, fileName] of wanted) {
    const fromEnv = env[prefix + envName];
    if (fromEnv) {
      values[field] = plainValue(fromEnv, prefix + envName, profile);
      continue;
    }
    if (stored === undefined) {
      file = readCredentialsFile(path);
      key = file && profileKey(file, profile, path);
      stored = (file && key !== undefined ? file.profiles[key] : undefined) ?? {};
    }
    const fromFile = stored[fileName];
    if (fromFile) {
      values[field] = plainValue(fromFile, `${fileName} in profile "${profile}" of ${path}`, profile);
      fromFileFields.add(field);
    } else missing.push(prefix + envName);
  }
  if (stored !== undefined) checkPairs(profile, prefix, path, values, fromFileFields, stored);
  const others = file ? Object.keys(file.profiles).filter((name) => name !== key) : [];
  if (!options.consumerOnly && missing.length === wanted.length && file && key === undefined && others.length > 0) {
    // Nothing anywhere: most likely a misspelt `credentials:` in the job file.
    throw new ConfigError(
      `credentials profile "${profile}" does not exist: no ${prefix}* variable is set and ${path} has no profile "${profile}" (it has ${others.map((name) => `"${name}"`).join(', ')})`,
      { hint: `check the spelling of \`credentials:\` in the job file; ${incompleteHint(profile, prefix, path, missing, false)}` },
    );
  }
  if (missing.length > 0) {
    throw new ConfigError(
      `credentials profile "${profile}" is incomplete: ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set and not in ${path}`,
      { hint: incompleteHint(profile, prefix, path, missing, options.consumerOnly === true) },
    );
  }
  return new Credentials(
    profile,
    values.consumerKey ?? '',
    values.consumerSecret ?? '',
    values.accessToken ?? '',
    values.accessTokenSecret ?? '',
  );
}
