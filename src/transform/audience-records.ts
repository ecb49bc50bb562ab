/**
 * Turns CRM export rows into audience identifiers: each configured identifier column is
 * normalized and hashed (src/hash) and appended to an IdentifierList; a row is kept when at
 * least one identifier is valid, each invalid one is dropped and counted; a row with none
 * becomes a reject.
 */
import { ConfigError, SourceError } from '../errors.js';
import { hashIdentifier } from '../hash/index.js';
import type { IdentifierType } from '../hash/types.js';
import type { CsvBatch, CsvRow } from '../sources/types.js';
import { FIELD_CODES, FieldTally, type CountsByField, type IdentifierList } from '../state/identifier-list.js';

export interface AudienceColumnsSpec {
  /** Identifier type -> source column name. */
  identifiers: Partial<Record<IdentifierType, string>>;
  countryColumn?: string | undefined;
  defaultCountry?: string | undefined;
}

export interface IdentifierProblem {
  field: IdentifierType;
  reason: string;
}

export type AudienceRowResult =
  | { ok: true; added: number; invalid: IdentifierProblem[] }
  | { ok: false; problems: IdentifierProblem[]; reason: string };

const NO_PROBLEMS: IdentifierProblem[] = [];

/**
 * How a CRM export's header is read: a column without a name, or a name used twice, is
 * refused only when the job names it (AudienceRowMapper): a trailing delimiter or a second
 * "Name" column of the CRM must not stop a run that does not read them.
 */
export const EXPORT_HEADER_OPTIONS = { allowRepeatedColumns: true, allowUnnamedColumns: true } as const;

/** The columns of a name: those named exactly so, else those equal ignoring case and surrounding spaces. */
function matchingColumns(header: readonly string[], name: string): number[] {
  const where = (test: (h: string) => boolean): number[] => header.flatMap((h, i) => (test(h) ? [i] : []));
  const exact = where((h) => h === name);
  if (exact.length > 0) return exact;
  const wanted = name.trim().toLowerCase();
  return where((h) => h.trim().toLowerCase() === wanted);
}

export class AudienceRowMapper {
  /** In field-code order, so that a row's identifiers come out grouped as one user record expects. */
  private readonly columns: { field: IdentifierType; code: number; index: number }[];
  private readonly countryIndex: number;

  /** Resolves the job's column names against the export's header; names every missing one. */
  constructor(
    header: readonly string[],
    private readonly spec: AudienceColumnsSpec,
    sourceName: string,
  ) {
    const missing: string[] = [];
    const ambiguous: string[] = [];
    /** The one column of a name the job gives (-1 when none or several: recorded as a problem). */
    const resolve = (what: string, column: string): number => {
      const found = matchingColumns(header, column);
      if (found.length === 0) missing.push(`${what} -> "${column}"`);
      if (found.length > 1) ambiguous.push(`${what} -> "${column}" (columns ${found.map((i) => i + 1).join(', ')})`);
      return found.length === 1 ? (found[0] ?? -1) : -1;
    };
    this.columns = [];
    for (const [field, column] of Object.entries(spec.identifiers) as [IdentifierType, string][]) {
      const index = resolve(field, column);
      if (index >= 0) this.columns.push({ field, code: FIELD_CODES[field], index });
    }
    this.columns.sort((a, b) => a.code - b.code);
    this.countryIndex = spec.countryColumn === undefined ? -1 : resolve('country_column', spec.countryColumn);
    if (ambiguous.length > 0) {
      throw new SourceError(`${sourceName} has more than one column for ${ambiguous.join(', ')}: adsync cannot tell which one to read`, {
        hint: 'give those columns their own names in the export',
      });
    }
    if (missing.length > 0) {
      throw new ConfigError(
        `${sourceName} has no column for ${missing.join(', ')}; its columns are: ${header.map((h) => `"${h}"`).join(', ')}`,
        { hint: 'fix audience.identifiers (or country_column) in the job file to name columns of the export' },
      );
    }
  }

  /** The column index of an identifier type (-1 when not mapped). */
  columnOf(field: IdentifierType): number {
    return this.columns.find((c) => c.field === field)?.index ?? -1;
  }

  /** Appends the row's valid identifiers to `into` (tagged with the row number). */
  mapInto(row: CsvRow, into: IdentifierList): AudienceRowResult {
    let invalid = NO_PROBLEMS;
    let added = 0;
    const countryCell = this.countryIndex >= 0 ? row.values[this.countryIndex]?.trim() : undefined;
    const ctx = { country: countryCell === '' ? undefined : countryCell, defaultCountry: this.spec.defaultCountry };
    for (const { field, code, index } of this.columns) {
      const raw = row.values[index];
      if (raw === undefined || raw.trim() === '') continue;
      const result = hashIdentifier(field, raw, ctx);
      if (result.ok) {
        into.pushText(code, result.value, row.row);
        added += 1;
      } else {
        if (invalid === NO_PROBLEMS) invalid = [];
        invalid.push({ field, reason: result.reason });
      }
    }
    if (added > 0) return { ok: true, added, invalid };
    return {
      ok: false,
      problems: invalid,
      reason: invalid.length === 0 ? 'no identifier values in the row' : invalid.map((p) => `${p.field}: ${p.reason}`).join('; '),
    };
  }
}

/** One line of the rejects file about a row. */
export interface RowRejectEntry {
  row: number;
  line: number;
  field: string;
  reason: string;
  value?: string | undefined;
  /** The row was kept for its other identifiers; this value alone was dropped. */
  kept?: boolean | undefined;
}

/** Said of an identifier that a row with other valid identifiers drops. */
const DROPPED = ' (dropped; the row is kept for its other identifiers)';

/** What one batch of CSV rows gives: identifiers, counts, and the rows to reject. */
export interface MappedBatch {
  ids: IdentifierList;
  /** Rows read (readable and not). */
  read: number;
  valid: number;
  /** Identifier values kept, by type (one per non-empty valid cell: repeated values counted each time). */
  validIdentifiers: CountsByField;
  /** Identifier values not usable, by type: those kept rows dropped and those of rejected rows. */
  invalid: CountsByField;
  /** Each rejected row's entries, in row order; unreadable rows among them. */
  rejects: RowRejectEntry[][];
  /** The rows the source could not read at all. */
  unreadable: { row: number; line: number; reason: string }[];
}

/** Maps a batch of rows (skipping rows up to `skipRows`) into `ids`. */
export function mapCsvBatch(batch: CsvBatch, mapper: AudienceRowMapper, ids: IdentifierList, withValues: boolean, skipRows = 0): MappedBatch {
  const out: MappedBatch = { ids, read: 0, valid: 0, validIdentifiers: {}, invalid: {}, rejects: [], unreadable: [] };
  const firstId = ids.length;
  for (const r of batch.rejects) {
    if (r.row <= skipRows) continue;
    out.read += 1;
    out.rejects.push([{ row: r.row, line: r.line, field: '', reason: r.reason }]);
    out.unreadable.push({ row: r.row, line: r.line, reason: r.reason });
  }
  for (const row of batch.rows) {
    if (row.row <= skipRows) continue;
    out.read += 1;
    const result = mapper.mapInto(row, ids);
    for (const p of result.ok ? result.invalid : result.problems) out.invalid[p.field] = (out.invalid[p.field] ?? 0) + 1;
    if (result.ok) {
      out.valid += 1;
      if (result.invalid.length > 0) {
        out.rejects.push(
          result.invalid.map((p) => ({ row: row.row, line: row.line, field: p.field, reason: `${p.reason}${DROPPED}`, value: withValues ? row.values[mapper.columnOf(p.field)] : undefined, kept: true })),
        );
      }
    } else {
      out.rejects.push(
        result.problems.length > 0
          ? result.problems.map((p) => ({ row: row.row, line: row.line, field: p.field, reason: p.reason, value: withValues ? row.values[mapper.columnOf(p.field)] : undefined }))
          : [{ row: row.row, line: row.line, field: '', reason: result.reason }],
      );
    }
  }
  const valid = new FieldTally();
  for (let i = firstId; i < ids.length; i++) valid.add(ids.code(i));
  out.validIdentifiers = valid.counts();
  // Unreadable rows come first in a batch from the reader; the rejects file follows the rows.
  if (batch.rejects.length > 0 && batch.rows.length > 0) out.rejects.sort((a, b) => (a[0]?.row ?? 0) - (b[0]?.row ?? 0));
  return out;
}
