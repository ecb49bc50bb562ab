/**
 * Loading a job file: YAML, the schema, then the checks a schema cannot make (cron syntax,
 * time zone, country codes, identifier types a do-not-reach list accepts, the source
 * format), all reported at once with the file and field named. Paths in a job file are
 * relative to the folder of the job file as named: for a symbolic link, the link's folder
 * (the path is not resolved to the link's target), as README says.
 */
import { statSync } from 'node:fs';
import { basename, dirname, extname, isAbsolute, relative, resolve } from 'node:path';
import { expandHome } from '../config/home-path.js';
import { alertsSchema, isValidTimezone, retryDelayProblem, retryFrom, type Settings } from '../config/settings.js';
import { parseWithSchema, readYamlFile, startsWithUrl } from '../config/yaml-file.js';
import { ConfigError } from '../errors.js';
import { normalizeCountry } from '../hash/country.js';
import type { IdentifierType } from '../hash/types.js';
import { extensionOf, formatOfPath } from '../sources/source-format.js';
import type { SourceSpec } from '../sources/types.js';
import type { RunKind } from '../state/store.js';
import type { Job, JobBase, ProductSetSpec } from './job.js';
import { JOB_NAME, JOB_NAME_RULE, jobFileSchema, knownJobKeys, type JobFile } from './job-schema.js';
import { cron } from './node-cron.js';
import { validateFieldMapping } from '../transform/field-mapping.js';

/** Identifier types a do-not-reach list takes (ads-api.md 4.2). */
const DO_NOT_REACH_IDENTIFIERS: readonly IdentifierType[] = ['email', 'phone_number'];

/** A job file as messages name it: relative to the working directory when it is below it. */
export function displayPath(file: string, cwd: string): string {
  const rel = relative(cwd, file);
  return rel.startsWith('..') || isAbsolute(rel) ? file : rel;
}

function isUrl(path: string): boolean {
  return /^https?:\/\//i.test(path);
}

/** A URL of another scheme (sftp://, ftp://, s3://): not a path either, and it may hold a password. */
function isUnreadableUrl(path: string): boolean {
  return startsWithUrl(path) && !isUrl(path);
}

export interface LoadJobOptions {
  cwd?: string;
  /** Replaces the job's source (backfill --source), resolved against the working directory. */
  sourceOverride?: string | undefined;
}

export interface PeekedJobFile {
  name: string;
  kind: RunKind | undefined;
  /** The file as named (relative to the working directory when it is below it). */
  file: string;
  /** The file's own `alerts.webhook_url` when it holds a valid one; null when it turns alerts off; undefined when it says neither. */
  webhookUrl: string | null | undefined;
}

/**
 * What a job file that failed to load tells, as far as it can be read: its name (`name:`
 * when it is a valid job name, else the file name), its kind from the block present, and
 * its own alerts webhook.
 */
export function peekJobFile(path: string, cwd: string = process.cwd()): PeekedJobFile {
  const file = resolve(cwd, path);
  const display = displayPath(file, cwd);
  let name = basename(file, extname(file));
  let kind: RunKind | undefined;
  let webhookUrl: string | null | undefined;
  try {
    const d: unknown = readYamlFile(file, display, 'job file');
    if (isRecord(d)) {
      if (typeof d.name === 'string' && JOB_NAME.test(d.name)) name = d.name;
      if (isRecord(d.alerts)) {
        const own = alertsSchema.shape.webhook_url.safeParse(d.alerts.webhook_url);
        if (own.success) webhookUrl = own.data;
      }
      const audience = d.audience;
      if (d.catalog !== undefined && audience === undefined) kind = 'catalog';
      else if (audience !== undefined && d.catalog === undefined) {
        kind = isRecord(audience) && 'do_not_reach_list_id' in audience ? 'do_not_reach' : 'custom_audience';
      }
    }
  } catch {
    // Unreadable or not YAML: the file name is all there is.
  }
  return { name, kind, file: display, webhookUrl };
}

/** Where a job's alerts go: its own `alerts.webhook_url`, none when that is null, else the settings'. */
export function alertsWebhook(own: string | null | undefined, settings: Settings): string | undefined {
  return own === null ? undefined : (own ?? settings.alerts.webhookUrl);
}

export function loadJob(path: string, settings: Settings, options: LoadJobOptions = {}): Job {
  const cwd = options.cwd ?? process.cwd();
  const file = resolve(cwd, path);
  const display = displayPath(file, cwd);
  const data: unknown = readYamlFile(file, display, 'job file', 'adsync schedule --jobs <dir> runs every job file of a folder');
  let parsed: JobFile;
  try {
    parsed = parseWithSchema(jobFileSchema, data, display, knownJobKeys);
  } catch (error) {
    // Every problem at once: the value checks of the keys the schema did not refuse too.
    const more = error instanceof ConfigError ? valueProblems(valuesOf(data), settings) : [];
    if (more.length > 0) throw new ConfigError(`${(error as ConfigError).message}\n  ${more.join('\n  ')}`, { cause: error });
    throw error;
  }
  return resolveJob(parsed, file, display, settings, cwd, options);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The values valueProblems checks, as a job file that the schema refused holds them. */
function valuesOf(data: unknown): { schedule?: unknown; timezone?: unknown; defaultCountry?: unknown } {
  if (!isRecord(data)) return {};
  return { schedule: data.schedule, timezone: data.timezone, defaultCountry: isRecord(data.audience) ? data.audience.default_country : undefined };
}

/** Checks of single values that a schema cannot make: cron syntax, time zone, country code. Values that are not strings are the schema's to report. */
function valueProblems(v: { schedule?: unknown; timezone?: unknown; defaultCountry?: unknown }, settings: Settings): string[] {
  const problems: string[] = [];
  const timezone = v.timezone === undefined ? settings.timezone : v.timezone;
  if (typeof v.schedule === 'string') {
    const check = cron().validateDetailed(v.schedule);
    if (!check.valid) problems.push(`schedule: "${v.schedule}" is not a valid cron expression (${check.errors.map((e) => e.message).join('; ')})`);
    else if (neverFires(v.schedule, typeof timezone === 'string' && isValidTimezone(timezone) ? timezone : undefined)) {
      problems.push(`schedule: "${v.schedule}" never fires: no time in the next 100 years matches all of its fields (the day of the month and the week day must both match)`);
    }
  }
  if (typeof timezone === 'string' && !isValidTimezone(timezone)) problems.push(`timezone: unknown time zone "${timezone}" (use an IANA name such as Europe/Berlin)`);
  if (typeof v.defaultCountry === 'string' && normalizeCountry(v.defaultCountry) === undefined) {
    problems.push(`audience.default_country: "${v.defaultCountry}" is not an ISO 3166-1 alpha-2 country code (e.g. US, GB, DE)`);
  }
  return problems;
}

/**
 * A valid expression that no time matches (the 1st to 7th of February on its fifth Monday, the
 * last day of a month on its first Monday): node-cron searches 100 years for its next run and
 * throws, which stopped `adsync schedule` at start instead of skipping the job.
 */
function neverFires(schedule: string, timezone: string | undefined): boolean {
  const task = cron().createTask(schedule, () => undefined, { timezone });
  try {
    task.getNextRuns(1);
    return false;
  } catch {
    return true;
  } finally {
    void task.destroy();
  }
}

function resolveJob(f: JobFile, file: string, display: string, settings: Settings, cwd: string, options: LoadJobOptions): Job {
  const problems = valueProblems({ schedule: f.schedule, timezone: f.timezone, defaultCountry: f.audience?.default_country }, settings);
  const timezone = f.timezone ?? settings.timezone;

  const rawSource = expandHome(options.sourceOverride ?? f.source.path);
  const sourcePath = isUrl(rawSource) ? rawSource : resolve(options.sourceOverride === undefined ? dirname(file) : cwd, rawSource);
  const source: SourceSpec = { path: sourcePath, format: f.source.format, delimiter: f.source.delimiter, encoding: f.source.encoding };
  // A --source that cannot be read as given is its own problem, not the job file's.
  const overrideProblem = options.sourceOverride === undefined ? undefined : sourceOverrideProblem(options.sourceOverride, sourcePath, source.format, display);
  // A URL may still say its format in its Content-Type; a file must say it in its name.
  if (options.sourceOverride === undefined && isUrl(sourcePath) && !URL.canParse(sourcePath)) {
    // Not repeated: a URL that cannot be parsed cannot be masked, and it may hold a password or a token.
    problems.push('source.path: not a valid URL (not repeated here: it may hold a password or a token); check its host and port, and in a user:password@ part write / @ : # ? as %2F %40 %3A %23 %3F');
  }
  // Taken for a local path, it was quoted in full (password included) by every message about it.
  const unreadableUrl = options.sourceOverride === undefined && isUnreadableUrl(rawSource);
  if (unreadableUrl) problems.push('source.path: a URL adsync cannot read: only http:// and https:// are (not repeated here: it may hold a password or a token)');
  if (options.sourceOverride === undefined && !unreadableUrl && source.format === undefined && !isUrl(sourcePath) && formatOfPath(sourcePath) === undefined) {
    problems.push(`source.format: cannot tell the format of "${rawSource}" from its name; set format: csv, tsv or xml`);
  }

  const name = f.name ?? basename(file, extname(file));
  // A name from the file name is held to the rule of `name:` ("...yaml" is not job "..").
  if (f.name === undefined && !JOB_NAME.test(name)) problems.push(`name: "${name}" (from the file name) is not a job name: ${JOB_NAME_RULE}; rename the file or set name: in it`);

  const base: JobBase = {
    name,
    file,
    accountId: f.account_id,
    credentials: f.credentials,
    schedule: f.schedule,
    timezone,
    source,
    maxRejectRatio: f.max_reject_ratio ?? settings.maxRejectRatio,
    alerts: {
      webhookUrl: alertsWebhook(f.alerts?.webhook_url, settings),
      rejectRatio: f.alerts?.reject_ratio ?? settings.alerts.rejectRatio,
    },
    concurrency: f.concurrency ?? settings.concurrency,
    requestTimeoutMs: f.request_timeout_ms ?? settings.requestTimeoutMs,
    retry: retryFrom(f.retry, settings.retry),
  };

  // The job's retry keys over the settings': the delays in effect must still make sense.
  const retryProblem = retryDelayProblem(base.retry, (key) => (f.retry?.[key] !== undefined ? '' : settings.file === undefined ? ', the default' : ', from the settings'));
  if (retryProblem !== undefined) problems.push(retryProblem);

  let job: Job | undefined;
  if (f.audience) {
    const a = f.audience;
    // An unknown code is one of valueProblems'.
    const defaultCountry = a.default_country === undefined ? undefined : normalizeCountry(a.default_country);
    const identifiers = Object.fromEntries(Object.entries(a.identifiers).filter(([, v]) => v !== undefined)) as Partial<Record<IdentifierType, string>>;
    const spec = {
      mode: a.mode,
      identifiers,
      countryColumn: a.country_column,
      defaultCountry,
      refreshAfterDays: a.refresh_after_days ?? settings.refreshAfterDays,
      maxRemoveRatio: a.max_remove_ratio ?? settings.maxRemoveRatio,
    };
    if (a.do_not_reach_list_id !== undefined) {
      const unsupported = Object.keys(identifiers).filter((t) => !DO_NOT_REACH_IDENTIFIERS.includes(t as IdentifierType));
      if (unsupported.length > 0) {
        problems.push(`audience.identifiers: a do-not-reach list takes only ${DO_NOT_REACH_IDENTIFIERS.join(' and ')}, not ${unsupported.join(', ')}`);
      }
      job = { ...base, kind: 'do_not_reach', doNotReachListId: a.do_not_reach_list_id, audience: spec };
    } else {
      job = { ...base, kind: 'custom_audience', customAudienceId: a.custom_audience_id ?? '', audience: spec };
    }
  } else if (f.catalog) {
    const c = f.catalog;
    // A feed's fields are named without a namespace prefix (<g:sku> is the field sku; CSV drops
    // a g: too): a mapping may name the element as it is written in the feed.
    const fields = Object.fromEntries(Object.entries(c.fields ?? {}).map(([key, source]) => [key, source.startsWith('g:') ? source.slice(2).trim() : source]));
    for (const e of validateFieldMapping(fields)) problems.push(`catalog.fields${e.key ? `.${e.key}` : ''}: ${e.message}`);
    const productSets: ProductSetSpec[] = (c.product_sets ?? []).map((s) =>
      'product_ids' in s
        ? { type: 'MANUAL', name: s.name, description: s.description, productIds: s.product_ids }
        : { type: 'FILTERED', name: s.name, description: s.description, filters: s.filters },
    );
    const names = productSets.map((s) => s.name);
    const dup = names.find((n, i) => names.indexOf(n) !== i);
    if (dup !== undefined) problems.push(`catalog.product_sets: the name "${dup}" is used twice`);
    for (const set of productSets) {
      if (set.type !== 'FILTERED') continue;
      set.filters.forEach((filter, i) => {
        const problem = productSetFilterProblem(filter);
        if (problem !== undefined) problems.push(`catalog.product_sets "${set.name}" filters[${i}]: ${problem}`);
      });
    }
    job = {
      ...base,
      kind: 'catalog',
      catalog: { catalogId: c.product_catalog_id, mode: c.mode, maxDeleteRatio: c.max_delete_ratio ?? settings.maxDeleteRatio, fields, productSets },
    };
  }
  if (problems.length > 0 || job === undefined) {
    throw new ConfigError(`${display} is not valid:\n  ${problems.join('\n  ')}`);
  }
  if (overrideProblem !== undefined) throw overrideProblem;
  return job;
}

const NUMERIC_FILTER_ATTRIBUTES: readonly string[] = ['price', 'sale_price', 'inventory'];

/** What the service would refuse in a FILTERED product set's filter (it would fail every run), if anything. */
function productSetFilterProblem(filter: { attribute: string; operator: string; value: string }): string | undefined {
  if (filter.value.trim() === '') return 'value must not be empty';
  if (filter.operator !== 'GREATER_THAN' && filter.operator !== 'LESS_THAN') return undefined;
  if (!NUMERIC_FILTER_ATTRIBUTES.includes(filter.attribute)) {
    return `${filter.operator} compares numbers: it applies to ${NUMERIC_FILTER_ATTRIBUTES.join(', ')} only, not ${filter.attribute}`;
  }
  if (!Number.isFinite(Number(filter.value))) return `${filter.operator} needs a number (e.g. 20), not ${JSON.stringify(filter.value)}`;
  return undefined;
}

/**
 * `backfill --source`: a folder, or a file whose name does not say its format (when the job
 * does not set source.format). The path is relative to the working directory.
 */
function sourceOverrideProblem(given: string, path: string, format: string | undefined, display: string): ConfigError | undefined {
  if (isUrl(path)) return undefined;
  let isDirectory = false;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch {
    // A file that does not exist is reported when the backfill opens it.
  }
  if (isDirectory) {
    return new ConfigError(`--source ${given}: is a folder, not a file`, {
      hint: 'name the file to upload (csv, tsv, xml, or .gz of them); --source is relative to the current directory',
    });
  }
  if (format !== undefined || formatOfPath(path) !== undefined) return undefined;
  const extension = extensionOf(path);
  return new ConfigError(
    `--source ${given}: cannot tell its format from the name (${extension === '' ? 'it has no extension' : `".${extension}" is not a known extension`})`,
    {
      hint: `give the file the extension of its format (.csv, .tsv, .tab, .txt, .xml, .rss, .atom, or .gz of them; a symbolic link so named will do), or, if the job's own source has the same format, set source.format: csv, tsv or xml in ${display}`,
    },
  );
}
