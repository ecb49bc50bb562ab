/**
 * Reading a YAML file (job or settings) and turning schema failures into messages that name
 * the file, the field path and what is expected.
 */
import { lstatSync, readFileSync, readlinkSync } from 'node:fs';
import { isAlias, LineCounter, parseDocument, visit, type Document } from 'yaml';
import type { z } from 'zod';
import { ConfigError } from '../errors.js';

/** Where the first alias to an anchor not set before it is (an offset), if there is one. */
function firstUnresolvedAlias(doc: Document): number | undefined {
  let offset: number | undefined;
  visit(doc, {
    Alias: (_key, node) => {
      if (offset === undefined && isAlias(node) && node.resolve(doc) === undefined) offset = node.range?.[0];
      return offset === undefined ? undefined : visit.BREAK;
    },
  });
  return offset;
}

function notValidYaml(file: string, message: string, offset: number | undefined, lineCounter: LineCounter, cause?: unknown): ConfigError {
  const pos = offset === undefined ? undefined : lineCounter.linePos(offset);
  const where = pos === undefined ? '' : ` line ${pos.line}, column ${pos.col}`;
  return new ConfigError(`${file}${where}: not valid YAML: ${message.split('\n')[0] ?? ''}`, cause === undefined ? {} : { cause });
}

// A plain number written with a leading zero: 00042, 007, -01.5 (not 0, 0.5 or 0x1F).
const LEADING_ZERO = /^[-+]?0\d/;

/**
 * YAML reads a plain 00042 as the number 42. In a job file such a value is an id (a SKU in
 * product_ids, a catalog id), whose zeros are part of it: it is kept as the text written. Where
 * a number is expected (concurrency: 04), the schema then says so instead of guessing.
 */
function keepLeadingZeros(doc: Document): void {
  visit(doc, {
    Scalar: (_key, node) => {
      if (typeof node.value === 'number' && node.type === 'PLAIN' && typeof node.source === 'string' && LEADING_ZERO.test(node.source)) node.value = node.source;
    },
  });
}

/**
 * Parses YAML text; a syntax error names the file, line and column. So do the errors the
 * library only finds when it builds the value: an alias to an anchor that is not set before
 * it (with its line), and too many aliases (an alias bomb; the library gives no position).
 */
export function parseYaml(text: string, file: string): unknown {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: true, lineCounter });
  const first = doc.errors[0];
  if (first) throw notValidYaml(file, first.message, first.pos[0], lineCounter);
  keepLeadingZeros(doc);
  try {
    return doc.toJS({ maxAliasCount: 100 }) as unknown;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const offset = message.startsWith('Unresolved alias') ? firstUnresolvedAlias(doc) : undefined;
    throw notValidYaml(file, message, offset, lineCounter, error);
  }
}

/** Where a symbolic link points (as written in it); undefined for anything else. */
function linkTarget(path: string): string | undefined {
  try {
    return lstatSync(path).isSymbolicLink() ? readlinkSync(path) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads and parses a YAML file. `what` names the file's kind for a path that is a folder
 * ("jobs is a directory, not a job file"); `directoryHint` may say what to do instead.
 */
export function readYamlFile(path: string, display: string, what: string, directoryHint?: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const link = code === 'ENOENT' ? linkTarget(path) : undefined;
    const message =
      link !== undefined
        ? `${display} is a symbolic link to ${link}, which does not exist`
        : code === 'ENOENT'
          ? `${display} does not exist`
          : code === 'EISDIR'
            ? `${display} is a directory, not a ${what}${directoryHint === undefined ? '' : ` (${directoryHint})`}`
            : `${display} cannot be read: ${(error as Error).message}`;
    throw new ConfigError(message, { cause: error });
  }
  return parseYaml(text, display);
}

/**
 * A URL may hold a password or a token (a webhook's path is its secret): a message, which goes
 * to logs and alerts, does not repeat one, whether it is a whole value or inside one (`path:https://...`,
 * a space missing after the colon) or a key (`alerts: { https://... }`).
 */
const URL_IN_TEXT = /[a-z][a-z0-9+.-]*:\/\//i;
const NOT_REPEATED = 'not repeated here: it may hold a password or a token';

/** Whether the text begins with a URL's scheme (https://, sftp://, ...). */
export function startsWithUrl(text: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(text);
}

/** Whether the text is or holds a URL, which a message must not repeat. */
function holdsUrl(text: string): boolean {
  return URL_IN_TEXT.test(text);
}

/** A key or path element as a message names it: one holding a URL is not repeated. */
function describeKey(key: PropertyKey): string {
  const text = String(key);
  return holdsUrl(text) ? `<a URL, ${NOT_REPEATED}>` : text;
}

function describeInput(input: unknown): string {
  if (input === undefined) return 'nothing';
  if (input === null) return 'null';
  if (typeof input === 'string' && startsWithUrl(input.trim())) return `a URL (${NOT_REPEATED})`;
  if (typeof input === 'string' && holdsUrl(input)) return `text holding a URL (${NOT_REPEATED})`;
  if (typeof input === 'string') return `"${input.length > 60 ? `${input.slice(0, 57)}...` : input}"`;
  if (typeof input === 'number' || typeof input === 'boolean' || typeof input === 'bigint') return `${typeof input} ${String(input)}`;
  if (Array.isArray(input)) return 'a list';
  return 'a mapping';
}

/**
 * Edits from `a` to `b`: insertions, deletions, substitutions and swaps of two neighbouring
 * characters (optimal string alignment), so "emial" is one edit from "email".
 */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  const at = (i: number, j: number): number => rows[i]?.[j] ?? 0;
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i] ?? [];
    for (let j = 1; j <= b.length; j++) {
      let d = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, at(i - 2, j - 2) + 1);
      row[j] = d;
    }
  }
  return at(a.length, b.length);
}

/** The known keys of the object schema at `path`, to suggest a fix for a misspelt key. */
export type KnownKeys = (path: readonly PropertyKey[]) => readonly string[] | undefined;

/**
 * The known key an unknown one is probably a misspelling of: the closest (ignoring case), when
 * it is at most a third of the unknown key's length of edits away ("pth" -> "path",
 * "identifers" -> "identifiers"; "bar" is not "name").
 */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  const limit = Math.floor(key.length / 3);
  let best: { key: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance <= limit && (best === undefined || distance < best.distance)) best = { key: candidate, distance };
  }
  return best?.key;
}

/** One issue as message lines (an issue may hold several problems: unknown keys, a union's). */
export function formatIssue(issue: z.core.$ZodIssue, knownKeys?: KnownKeys): string[] {
  const path = issue.path.map(describeKey).join('.');
  const at = path === '' ? '' : `${path}: `;
  switch (issue.code) {
    case 'invalid_type':
      return [issue.input === undefined ? `${at}is required (${issue.expected})` : `${at}expected ${issue.expected}, got ${describeInput(issue.input)}`];
    case 'invalid_union': {
      const branches = issue.errors;
      // Every alternative refused the value's type: "expected string or number, got a list".
      const typeOnly = branches.every((b) => b.length === 1 && b[0]?.code === 'invalid_type' && b[0].path.length === 0);
      if (typeOnly && branches.length > 0) {
        const expected = branches.map((b) => (b[0]?.code === 'invalid_type' ? b[0].expected : '')).join(' or ');
        return [issue.input === undefined ? `${at}is required (${expected})` : `${at}expected ${expected}, got ${describeInput(issue.input)}`];
      }
      // Otherwise report the alternative that came closest (fewest problems).
      const closest = [...branches].sort((a, b) => a.length - b.length)[0];
      if (closest && closest.length > 0) return closest.flatMap((i) => formatIssue({ ...i, path: [...issue.path, ...i.path] }, knownKeys));
      return [`${at}${issue.message}`];
    }
    case 'invalid_value':
      return [`${at}expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, got ${describeInput(issue.input)}`];
    case 'unrecognized_keys': {
      const known = knownKeys?.(issue.path) ?? [];
      const prefix = path === '' ? '' : `${path}.`;
      return issue.keys.map((k) => {
        const best = closestKey(k, known);
        const suggestion = best !== undefined ? ` (did you mean "${best}"?)` : known.length > 0 ? ` (allowed: ${known.join(', ')})` : '';
        return `${prefix}${describeKey(k)}: unknown key${suggestion}`;
      });
    }
    default:
      return [`${at}${issue.message}`];
  }
}

/** Validates `data` against `schema`, or throws a ConfigError listing every problem, one a line. */
export function parseWithSchema<S extends z.ZodType>(schema: S, data: unknown, display: string, knownKeys?: KnownKeys): z.output<S> {
  const result = schema.safeParse(data, { reportInput: true });
  if (result.success) return result.data;
  const lines = result.error.issues.flatMap((i) => formatIssue(i, knownKeys));
  throw new ConfigError(`${display} is not valid:\n  ${lines.join('\n  ')}`);
}
