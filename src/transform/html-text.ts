/**
 * description is plain text: HTML in a feed (common in shop exports) is turned into plain text
 * instead of rejecting the product.
 *
 * - Tags are removed. Block-level and unknown tags (<p>, <br>, <li>, <div>, ...) leave a space
 *   so words do not run together; inline ones (<b>, <span>, <a>, ...) leave nothing, so
 *   "<b>50</b>%" is "50%".
 * - Comments, <!DOCTYPE ...>, <?xml ...?> and script and style elements with their content
 *   are removed; a CDATA section keeps its text.
 * - Character references are decoded once (html-entities.ts): "&amp;lt;" gives "&lt;". Markup
 *   that decoding reveals ("&lt;p&gt;" in a CSV cell) is removed as markup, in another pass.
 * - Runs of whitespace and control characters (line breaks, tabs, no-break spaces, also when
 *   written as &nbsp; or &#10;) become one space; the result is trimmed.
 *
 * Not a sanitizer and not an HTML parser: "a < b" stays text; only something shaped like a tag
 * ("<" then a letter, "</" then a letter, "<!", "<?") is markup. A "<" whose tag never closes
 * is text.
 *
 * Hot path: one pass that jumps between "<" and "&" with indexOf (which scans far faster than a
 * regular expression or a character loop) and copies the text between as slices, then one
 * whitespace check. Measured on 550-character descriptions with ~30 tags (compiled, Node 20,
 * the 2-core machine of DESIGN.md): ~2 µs, against ~4.5 µs for tag, reference and whitespace
 * regular-expression passes and ~3 µs for a loop over every character.
 */
import { decodeEntities, decodeReferenceAt, isLetter } from './html-entities.js';
import { collapseWhitespace, isSpaceLike } from './text-values.js';

const INLINE_TAGS: ReadonlySet<string> = new Set([
  'a', 'abbr', 'b', 'bdi', 'bdo', 'cite', 'code', 'data', 'del', 'dfn', 'em', 'font', 'i', 'ins', 'kbd', 'mark', 'q',
  's', 'samp', 'small', 'span', 'strike', 'strong', 'sub', 'sup', 'time', 'tt', 'u', 'var', 'wbr',
]);

function isNameCharacter(c: number): boolean {
  return isLetter(c) || (c >= 48 && c <= 58) /* digits and ":" */ || c === 45 /* - */;
}

const SCRIPT_END = /<\/script\b[^>]*>/gi;
const STYLE_END = /<\/style\b[^>]*>/gi;

/** What markup at a "<" is: where it ends and whether it leaves a space. */
interface Markup {
  end: number;
  space: boolean;
}

/** Index just past the ">" that closes a tag whose attributes start at `from`, respecting quotes; -1 if none. */
function tagEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 62 /* > */) return i + 1;
    if (c === 34 /* " */ || c === 39 /* ' */) {
      const close = text.indexOf(c === 34 ? '"' : "'", i + 1);
      if (close === -1) return -1;
      i = close;
    }
  }
  return -1;
}

/** The markup starting at text[at] (a "<"), or undefined when the "<" is text. */
function markupAt(text: string, at: number): Markup | undefined {
  const next = text.charCodeAt(at + 1);
  if (next === 33 /* ! */) {
    if (text.startsWith('<!--', at)) {
      const close = text.indexOf('-->', at + 4);
      return { end: close === -1 ? text.length : close + 3, space: true };
    }
    if (text.startsWith('<![CDATA[', at)) return { end: at + 9, space: false };
    if (!isLetter(text.charCodeAt(at + 2))) return undefined;
    const close = text.indexOf('>', at + 2);
    return close === -1 ? undefined : { end: close + 1, space: true };
  }
  if (next === 63 /* ? */) {
    const close = text.indexOf('>', at + 2);
    return close === -1 ? undefined : { end: close + 1, space: true };
  }
  const closing = next === 47; /* / */
  const nameStart = closing ? at + 2 : at + 1;
  if (!isLetter(text.charCodeAt(nameStart))) return undefined;
  let nameEnd = nameStart + 1;
  while (isNameCharacter(text.charCodeAt(nameEnd))) nameEnd++;
  const end = tagEnd(text, nameEnd);
  if (end === -1) return undefined;
  const name = text.slice(nameStart, nameEnd).toLowerCase();
  if (!closing && (name === 'script' || name === 'style')) {
    // Up to the end tag, found without lower-casing the text (which can change its length).
    const endTag = name === 'script' ? SCRIPT_END : STYLE_END;
    endTag.lastIndex = end;
    const found = endTag.exec(text);
    return { end: found ? found.index + found[0].length : text.length, space: true };
  }
  // The name must end where HTML ends it ("<a<span>" is a tag named "a<span", not an <a>).
  const after = text.charCodeAt(nameEnd);
  const inline = (after === 62 /* > */ || after === 47 /* / */ || isSpaceLike(after)) && INLINE_TAGS.has(name);
  return { end, space: !inline };
}

/** Whether the text holds markup (something shaped like a tag after a "<"). */
function hasMarkup(text: string): boolean {
  for (let at = text.indexOf('<'); at !== -1; at = text.indexOf('<', at + 1)) if (markupAt(text, at) !== undefined) return true;
  return false;
}

export function htmlToPlainText(html: string): string {
  let text = plainTextPass(html);
  // Markup escaped once more ("&lt;p&gt;", as CSV exports and CDATA sections hold it) is markup
  // once decoded: the service refuses it as HTML tags, so it goes too.
  for (let pass = 0; pass < 2 && text.includes('<') && hasMarkup(text); pass++) text = plainTextPass(text);
  return text;
}

function plainTextPass(html: string): string {
  // No markup (most CSV feeds): references and whitespace only.
  if (!html.includes('<')) return collapseWhitespace(decodeEntities(html));
  // Markup and references are replaced in one pass that jumps from one "<" or "&" to the
  // next. Block markup swallows the whitespace around it and leaves one space, so the usual
  // "</p>\n  <li>" leaves nothing for the whitespace pass at the end to replace.
  let out = '';
  let spaced = true; // out is empty or ends with a space
  let copied = 0;
  let lt = html.indexOf('<');
  let amp = html.indexOf('&');
  let cdataEnd = -1;
  for (;;) {
    let at = lt;
    if (at === -1 || (amp !== -1 && amp < at)) at = amp;
    if (cdataEnd !== -1 && (at === -1 || cdataEnd < at)) at = cdataEnd;
    if (at === -1) break;
    if (at === cdataEnd) {
      out += html.slice(copied, at);
      spaced = at > copied ? isSpaceLike(html.charCodeAt(at - 1)) : spaced;
      copied = at + 3;
      cdataEnd = -1;
    } else if (at === lt) {
      const markup = markupAt(html, at);
      if (markup === undefined) {
        lt = html.indexOf('<', at + 1);
        continue;
      }
      if (markup.space) {
        let textEnd = at;
        while (textEnd > copied && isSpaceLike(html.charCodeAt(textEnd - 1))) textEnd--;
        if (textEnd > copied) out += html.slice(copied, textEnd);
        if (textEnd > copied || !spaced) out += ' ';
        spaced = true;
        copied = markup.end;
        while (copied < html.length && isSpaceLike(html.charCodeAt(copied))) copied++;
      } else {
        out += html.slice(copied, at);
        spaced = at > copied ? isSpaceLike(html.charCodeAt(at - 1)) : spaced;
        copied = markup.end;
        if (markup.end === at + 9) cdataEnd = html.indexOf(']]>', copied);
      }
    } else {
      const reference = decodeReferenceAt(html, at);
      if (reference === undefined) {
        amp = html.indexOf('&', at + 1);
        continue;
      }
      out += html.slice(copied, at) + reference.value;
      spaced = reference.value.length === 1 && isSpaceLike(reference.value.charCodeAt(0));
      copied = reference.end;
    }
    if (lt !== -1 && lt < copied) lt = html.indexOf('<', copied);
    if (amp !== -1 && amp < copied) amp = html.indexOf('&', copied);
  }
  return collapseWhitespace(out + html.slice(copied));
}
