/**
 * What may come before the header line of a CSV file: blank lines (spaces, tabs, CR only)
 * and Excel's `sep=;` line, which names the delimiter of the file (Excel writes it when asked
 * to, and reads it back; other tools do not know it and took it for the header, its cells
 * "sep=" and "" for the column names). The reader (csv-row-collector.ts) and the cutter of
 * large files into parts (csv-split.ts) use these same rules, so that both find the same header.
 */

const CR = 0x0d;
const SEP_PREFIX = 'sep=';

/** A line (without its LF) of spaces, tabs and CRs only. */
export function isBlankLine(line: Buffer): boolean {
  for (let i = 0; i < line.length; i++) {
    const byte = line[i];
    if (byte !== 0x20 && byte !== 0x09 && byte !== CR) return false;
  }
  return true;
}

/**
 * The delimiter a `sep=X` line (without its LF; a CR before it is allowed) names; undefined
 * for any other line. X is one character other than a quote, CR or LF; "sep=" is matched
 * ignoring case, as Excel does.
 */
export function sepLineDelimiter(line: Buffer): string | undefined {
  const end = line.length > 0 && line[line.length - 1] === CR ? line.length - 1 : line.length;
  if (end <= SEP_PREFIX.length || line.toString('latin1', 0, SEP_PREFIX.length).toLowerCase() !== SEP_PREFIX) return undefined;
  const delimiter = line.toString('utf8', SEP_PREFIX.length, end);
  if ([...delimiter].length !== 1 || /["\r\n]/.test(delimiter)) return undefined;
  return delimiter;
}
