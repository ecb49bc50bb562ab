/**
 * Which delimiter a CSV file uses, told from its header line: the candidate (comma, semicolon,
 * tab, pipe) that occurs most often outside double quotes. Ties go to the earlier candidate in
 * that order. A TSV source takes the tab whenever its header holds one.
 */

export const DELIMITER_CANDIDATES = [',', ';', '\t', '|'] as const;
export type DetectedDelimiter = (typeof DELIMITER_CANDIDATES)[number];

const QUOTE = 0x22;
const COMMA = 0x2c;
const SEMICOLON = 0x3b;
const TAB = 0x09;
const PIPE = 0x7c;

/** Counts of each candidate outside quotes in `line` (one header line, without its line break). */
function countCandidates(line: Buffer): [comma: number, semicolon: number, tab: number, pipe: number] {
  let comma = 0;
  let semicolon = 0;
  let tab = 0;
  let pipe = 0;
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const byte = line[i];
    if (byte === QUOTE) quoted = !quoted;
    else if (quoted) continue;
    else if (byte === COMMA) comma++;
    else if (byte === SEMICOLON) semicolon++;
    else if (byte === TAB) tab++;
    else if (byte === PIPE) pipe++;
  }
  return [comma, semicolon, tab, pipe];
}

export function detectDelimiter(headerLine: Buffer, preferTab: boolean): DetectedDelimiter {
  const counts = countCandidates(headerLine);
  if (preferTab && counts[2] > 0) return '\t';
  let best = -1;
  let bestCount = 0;
  counts.forEach((count, index) => {
    if (count > bestCount) {
      best = index;
      bestCount = count;
    }
  });
  if (best === -1) return preferTab ? '\t' : ',';
  return DELIMITER_CANDIDATES[best] ?? ',';
}
