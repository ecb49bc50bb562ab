/**
 * Product feeds written as CSV or TSV (Google Merchant TSV exports among them), read into the
 * FeedItem shape the XML reader gives.
 *
 * Field names come from the header: trimmed, lowercased, a "g:" prefix removed, runs of spaces
 * turned into "_" ("Image Link" -> image_link, "g:price" -> price). A column whose name occurs
 * more than once (additional_image_link twice) gives a string[] of its cells, in column order,
 * in every row; a single cell holding comma-separated links stays one string (the transform
 * splits it). Values are trimmed, like XML values; empty cells stay "" (the transform treats
 * empty as absent). Columns without a name are allowed, as in CRM exports (FeedColumns). Rows that cannot be read are RowRejects, as for readCsv.
 */
import { SourceError } from '../errors.js';
import type { ByteSource } from './byte-source.js';
import { readCsv, type CsvReadOptions } from './csv.js';
import type { FeedBatch, FeedItem } from './types.js';

const SPACES = /\s+/g;

/** The field name a CSV/TSV feed column header stands for. */
export function feedFieldName(header: string): string {
  let name = header.trim().toLowerCase();
  if (name.startsWith('g:')) name = name.slice(2).trim();
  return name.replace(SPACES, '_');
}

/**
 * A job's field mapping (attribute -> source field) for a CSV/TSV feed: each source field
 * named as feedFieldName names the columns, so `title: Product Name` finds the column headed
 * "Product Name" (read as the field product_name) and `id: SKU` the column "SKU".
 */
export function feedFieldMapping<K extends string>(mapping: Readonly<Partial<Record<K, string>>>): Partial<Record<K, string>> {
  const named: Partial<Record<K, string>> = {};
  for (const key of Object.keys(mapping) as K[]) {
    const source = mapping[key];
    if (source !== undefined) named[key] = feedFieldName(source);
  }
  return named;
}

/**
 * The field of a cell of a column without a name, when the cell holds a value: not an
 * attribute (it has a space, which field names never have), so the product gets the warning
 * `unknown attribute "column 11 (unnamed)" is not sent`.
 */
function unnamedColumnField(index: number): string {
  return `column ${index + 1} (unnamed)`;
}

/**
 * How the columns of a header become fields. A column without a name (a spreadsheet's stray
 * trailing delimiters, "price,,") gives no field: its empty cells are nothing, and a cell
 * with a value becomes an unnamedColumnField, which is not sent, with a warning.
 */
class FeedColumns {
  readonly names: string[];
  /** Per column: its name is shared with another column, so its values go in an array. */
  readonly repeated: boolean[];

  constructor(header: readonly string[], sourceName: string) {
    this.names = header.map(feedFieldName);
    const counts = new Map<string, number>();
    this.names.forEach((name, index) => {
      if ((header[index] ?? '').trim() === '') return;
      if (name === '') throw new SourceError(`${sourceName}: column ${index + 1} (${JSON.stringify(header[index])}) names no field`);
      counts.set(name, (counts.get(name) ?? 0) + 1);
    });
    this.repeated = this.names.map((name) => (counts.get(name) ?? 0) > 1);
  }

  fieldsOf(values: readonly string[]): FeedItem['fields'] {
    const fields = Object.create(null) as FeedItem['fields'];
    const names = this.names;
    for (let i = 0; i < names.length; i++) {
      const name = names[i] ?? '';
      const value = (values[i] ?? '').trim();
      if (name === '') {
        if (value !== '') fields[unnamedColumnField(i)] = value;
        continue;
      }
      if (this.repeated[i] === true) {
        const list = fields[name];
        if (Array.isArray(list)) list.push(value);
        else fields[name] = [value];
      } else {
        fields[name] = value;
      }
    }
    return fields;
  }
}

/** Reads a CSV/TSV product feed as FeedItems, in batches (see the module comment). */
export async function* readCsvFeed(source: ByteSource, options: CsvReadOptions = {}): AsyncGenerator<FeedBatch, void, undefined> {
  const reader = readCsv(source, { ...options, allowRepeatedColumns: true, allowUnnamedColumns: true });
  try {
    const columns = new FeedColumns(await reader.header(), source.name);
    for await (const batch of reader.batches()) {
      const rows = batch.rows;
      const items = new Array<FeedItem>(rows.length);
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i];
        if (row !== undefined) items[i] = { row: row.row, line: row.line, fields: columns.fieldsOf(row.values) };
      }
      yield { items, rejects: batch.rejects };
    }
  } finally {
    await reader.close();
  }
}
