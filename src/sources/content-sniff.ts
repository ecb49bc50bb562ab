/**
 * Recognises, from the first bytes of an input, content that is not a text file at all, so that
 * a reader can say "this is an Excel workbook" instead of producing a page of rejects.
 */

/**
 * How many first bytes are looked at. Readers collect this many (or the whole input, when it is
 * shorter) before they sniff, so that the verdict never depends on how the input was chunked.
 */
export const SNIFF_BYTES = 512;

export type ContentKind = 'text' | 'utf16' | 'gzip' | 'zip' | 'ole' | 'binary' | 'html';

/**
 * An HTML document's first tag, after a UTF-8 BOM and white space: what a feed URL serves
 * instead of the feed when a session expired or a proxy failed (with status 200), or what a
 * browser saved. Read as CSV, it made a header '<!DOCTYPE html>' and a job file error.
 */
const HTML_START = /^(?:\ufeff)?\s*<(?:!doctype\s+html|html)[\s>]/i;

export function sniffContent(head: Buffer): ContentKind {
  const b0 = head[0];
  const b1 = head[1];
  if (b0 === 0x1f && b1 === 0x8b) return 'gzip';
  if ((b0 === 0xff && b1 === 0xfe) || (b0 === 0xfe && b1 === 0xff)) return 'utf16';
  if (b0 === 0x50 && b1 === 0x4b && head[2] === 0x03 && head[3] === 0x04) return 'zip';
  if (b0 === 0xd0 && b1 === 0xcf && head[2] === 0x11 && head[3] === 0xe0) return 'ole';
  const nul = head.indexOf(0);
  if (nul !== -1 && nul < SNIFF_BYTES) return 'binary';
  if (HTML_START.test(head.toString('utf8', 0, SNIFF_BYTES))) return 'html';
  return 'text';
}

/** "is X; do Y" for content a text reader cannot read, undefined for text (UTF-16 included). */
export function describeNonText(kind: ContentKind): string | undefined {
  switch (kind) {
    case 'text':
      return undefined;
    case 'utf16':
      return undefined; // read: transcoded (CSV, Excel's "Unicode Text") or decoded (XML)
    case 'gzip':
      return 'is gzip-compressed; give it a .gz extension or open it with openSource()';
    case 'zip':
      return 'is a ZIP archive (an .xlsx workbook?); export the sheet as CSV';
    case 'ole':
      return 'is an Excel .xls workbook; export the sheet as CSV';
    case 'binary':
      return 'is not a text file (it contains NUL bytes near the start)';
    case 'html':
      return 'is an HTML page, not a CSV, TSV or XML file (a login or error page instead of the export?)';
  }
}
