/**
 * Marks a bare "&" (AT&T, ?a=1&b=2) in feed text before saxes sees it. saxes reads everything
 * after a "&" as an entity name up to the next ";", across tags and chunks: one bare "&" could
 * swallow the rest of a feed and fail at its end with a misleading message. Each bare "&" is
 * replaced by the undefined entity &adsync-bare-ampersand; so that saxes reports it at once,
 * inside the item it belongs to, which is then rejected with a reason saying what to fix.
 *
 * CDATA sections, comments and processing instructions are left alone ("&" is literal there).
 * Text is handled in chunks; a reference, a "<![CDATA[" or an end marker split between two
 * chunks is carried over to the next one.
 */

export const BARE_AMPERSAND_ENTITY = 'adsync-bare-ampersand';
const MARKED = `&${BARE_AMPERSAND_ENTITY};`;

/** A well-formed entity or character reference starting at lastIndex. */
const REFERENCE = /&(?:#[0-9]{1,7}|#x[0-9a-fA-F]{1,6}|[A-Za-z_:][-A-Za-z0-9._:]{0,63});/y;
/** What may still grow into a reference when the chunk ends. */
const REFERENCE_PREFIX = /&(?:#[0-9]{0,7}|#x[0-9a-fA-F]{0,6}|[A-Za-z_:][-A-Za-z0-9._:]{0,63})?$/y;

type Section = 'markup' | 'cdata' | 'comment' | 'instruction';

const SECTION_END: Record<Exclude<Section, 'markup'>, string> = {
  cdata: ']]>',
  comment: '-->',
  instruction: '?>',
};

const CDATA_START = '<![CDATA[';
const COMMENT_START = '<!--';

function isPrefixOf(text: string, from: number, whole: string): boolean {
  return whole.startsWith(text.slice(from));
}

/** indexOf that is only run again once `from` has passed the last position found. */
class NextIndex {
  private found = -2;
  constructor(private readonly needle: string) {}
  reset(): void {
    this.found = -2;
  }
  from(text: string, position: number): number {
    if (this.found === -1 || this.found >= position) return this.found;
    this.found = text.indexOf(this.needle, position);
    return this.found;
  }
}

export class BareAmpersandMarker {
  private carry = '';
  private section: Section = 'markup';
  private readonly ampersands = new NextIndex('&');
  private readonly declarations = new NextIndex('<!');
  private readonly instructions = new NextIndex('<?');

  /** The text with bare ampersands marked; may hold back a few characters for the next call. */
  push(text: string): string {
    const input = this.carry === '' ? text : this.carry + text;
    this.carry = '';
    return this.mark(input, false);
  }

  /** True when the text so far ends outside CDATA sections, comments and processing instructions. */
  get inMarkup(): boolean {
    return this.section === 'markup';
  }

  /**
   * What was held back, when the text that follows starts with markup ("<" of a tag): a
   * reference cut short there is bare. undefined when inside a CDATA section, comment or
   * processing instruction (the text that follows does not start markup then).
   */
  beforeMarkup(): string | undefined {
    if (this.section !== 'markup') return undefined;
    return this.carry === '' ? '' : this.end();
  }

  /** What was held back, at the end of the input. */
  end(): string {
    const rest = this.carry;
    this.carry = '';
    return this.mark(rest, true);
  }

  private mark(input: string, atEnd: boolean): string {
    this.ampersands.reset();
    this.declarations.reset();
    this.instructions.reset();
    let out = '';
    let copiedTo = 0;
    let at = 0;
    while (at < input.length) {
      if (this.section !== 'markup') {
        const terminator = SECTION_END[this.section];
        const close = input.indexOf(terminator, at);
        if (close === -1) {
          // Keep the last characters: the terminator may straddle the chunk border.
          const keep = atEnd ? input.length : Math.max(at, input.length - (terminator.length - 1));
          this.carry = input.slice(keep);
          return out + input.slice(copiedTo, keep);
        }
        at = close + terminator.length;
        this.section = 'markup';
        continue;
      }
      const ampersand = this.ampersands.from(input, at);
      const declaration = this.declarations.from(input, at);
      const instruction = this.instructions.from(input, at);
      let next = ampersand;
      if (declaration !== -1 && (next === -1 || declaration < next)) next = declaration;
      if (instruction !== -1 && (next === -1 || instruction < next)) next = instruction;
      if (next === -1) {
        // A "<" at the very end may start "<!" or "<?".
        const keep = !atEnd && input.endsWith('<') ? input.length - 1 : input.length;
        this.carry = input.slice(keep);
        return out + input.slice(copiedTo, keep);
      }
      if (next === ampersand) {
        REFERENCE.lastIndex = next;
        if (REFERENCE.test(input)) {
          at = REFERENCE.lastIndex;
          continue;
        }
        REFERENCE_PREFIX.lastIndex = next;
        if (!atEnd && REFERENCE_PREFIX.test(input)) {
          this.carry = input.slice(next);
          return out + input.slice(copiedTo, next);
        }
        out += `${input.slice(copiedTo, next)}${MARKED}`;
        copiedTo = next + 1;
        at = next + 1;
        continue;
      }
      if (next === instruction) {
        this.section = 'instruction';
        at = next + 2;
      } else if (input.startsWith(CDATA_START, next)) {
        this.section = 'cdata';
        at = next + CDATA_START.length;
      } else if (input.startsWith(COMMENT_START, next)) {
        this.section = 'comment';
        at = next + COMMENT_START.length;
      } else if (!atEnd && (isPrefixOf(input, next, CDATA_START) || isPrefixOf(input, next, COMMENT_START))) {
        this.carry = input.slice(next);
        return out + input.slice(copiedTo, next);
      } else {
        at = next + 2; // <!DOCTYPE ...>: markup
      }
    }
    return out + input.slice(copiedTo);
  }
}
