/**
 * Decoding of "Latin-1" text the way browsers (WHATWG Encoding) do it: as Windows-1252, which is
 * ISO-8859-1 plus printable characters in 0x80-0x9F (the euro sign, curly quotes, dashes) that
 * Excel on Windows writes. Node's TextDecoder('windows-1252') decodes those bytes as C1 control
 * characters instead, and Buffer's 'latin1' too, hence this table.
 */

/** Code points of bytes 0x80-0x9F; the five bytes Windows-1252 leaves undefined map to themselves. */
const HIGH_CONTROL_RANGE: readonly number[] = [
  0x20ac, 0x81, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8d, 0x017d, 0x8f,
  0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0x9d, 0x017e, 0x0178,
];

const HAS_C1_CHARACTER = /[\x80-\x9f]/;
const C1_CHARACTERS = /[\x80-\x9f]/g;

function windows1252Character(c1: string): string {
  return String.fromCharCode(HIGH_CONTROL_RANGE[c1.charCodeAt(0) - 0x80] ?? c1.charCodeAt(0));
}

/** The bytes decoded as Windows-1252 (every byte is one character: no state across chunks). */
export function decodeWindows1252(bytes: Buffer): string {
  const text = bytes.toString('latin1');
  return HAS_C1_CHARACTER.test(text) ? text.replace(C1_CHARACTERS, windows1252Character) : text;
}
