/**
 * Single-line text as the catalog wants it, and how its length is counted.
 *
 * Length is counted in Unicode code points, not UTF-16 units and not bytes: "😀" counts 1, as
 * a person counting characters would; a letter with a combining accent written as two code
 * points counts 2. The API states its limits in "characters" without saying more; code points
 * never reject a title a person would call 150 characters long.
 */

// Whitespace (what \s matches) and the C0/C1 control characters, which cannot be shown: all
// of them become spaces. Only what changes is matched: a run of two or more, or a single one
// that is not a plain space (replacing every run, most of which are one space, costs 2.5x).
// eslint-disable-next-line no-control-regex -- control characters are the point
const TO_ONE_SPACE = /[\s\u0000-\u001f\u007f-\u009f]{2,}|[\u0000-\u001f\u007f-\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]/g;
// The same test, written to scan faster (single characters first, then a space followed by one).
// eslint-disable-next-line no-control-regex -- as above
const HAS_TO_ONE_SPACE = /[\u0000-\u001f\u007f-\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]| [\s\u0000-\u001f\u007f-\u009f]/;

/**
 * Single-line text: every run of whitespace and control characters (line breaks, tabs,
 * no-break spaces, NUL) becomes one space; the result is trimmed.
 */
export function collapseWhitespace(text: string): string {
  if (!HAS_TO_ONE_SPACE.test(text)) return text.trim();
  return text.replace(TO_ONE_SPACE, ' ').trim();
}

/** A character code that collapseWhitespace turns into a space (the set TO_ONE_SPACE matches). */
export function isSpaceLike(c: number): boolean {
  if (c <= 0x20) return true;
  if (c < 0x7f) return false;
  if (c <= 0xa0) return true;
  return c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

/** Number of Unicode code points (a surrogate pair counts once; a lone surrogate counts once). */
export function characterCount(text: string): number {
  let count = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        count--;
        i++;
      }
    }
  }
  return count;
}

/** characterCount(text) > max, without counting when the UTF-16 length already settles it. */
export function exceedsCharacters(text: string, max: number): boolean {
  return text.length > max && characterCount(text) > max;
}

/** A value for a message: quoted, shortened to 80 characters. */
export function quote(value: string): string {
  const shown = value.length > 80 ? `${value.slice(0, 77)}...` : value;
  return JSON.stringify(shown);
}
