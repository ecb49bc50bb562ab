/**
 * A file that the job says is Latin-1 (source.encoding: latin1), or an XML feed that declares
 * a Latin-1 encoding (ISO-8859-1, Windows-1252), but that is UTF-8: decoded as
 * Windows-1252, every accented letter became two or three characters ("Café" was uploaded as
 * "CafÃ©", an email with an umlaut was hashed as an address nobody has), without a word.
 *
 * Latin-1 text almost never is valid UTF-8: an accented letter is one byte of 0x80-0xFF
 * followed by ASCII, which UTF-8 does not allow. So the raw bytes are checked as UTF-8
 * (natively, per chunk) until the first byte that is not UTF-8, which settles it: Latin-1 as
 * declared, and nothing more is checked. A file whose non-ASCII bytes are all UTF-8 sequences
 * is UTF-8: SourceError, naming the line of the first one. A file of ASCII only is both.
 */
import { isAscii } from 'node:buffer';
import { SourceError } from '../errors.js';
import { Utf8Validator } from './utf8-validator.js';

const LF = 0x0a;

function lineFeedsIn(bytes: Buffer): number {
  let count = 0;
  for (let at = bytes.indexOf(LF); at !== -1; at = bytes.indexOf(LF, at + 1)) count++;
  return count;
}

function firstNonAsciiByte(bytes: Buffer): number {
  for (let i = 0; i < bytes.length; i++) if ((bytes[i] ?? 0) >= 0x80) return i;
  return bytes.length;
}

export class DeclaredLatin1Check {
  private readonly validator = new Utf8Validator();
  /** Not UTF-8: Latin-1 as declared. */
  private settled = false;
  /** Line feeds before the chunk being checked, while all of it was ASCII. */
  private lineFeeds = 0;
  /** The line of the first non-ASCII byte. */
  private firstNonAsciiLine: number | undefined;

  /**
   * @param name the file, for the message
   * @param declaredBy what says the file is Latin-1: the job, or the feed's XML declaration (its label)
   */
  constructor(
    private readonly name: string,
    private readonly declaredBy: { job: true } | { feedLabel: string } = { job: true },
  ) {}

  /** Checks the next chunk of raw bytes; throws once the file is known to be UTF-8. */
  check(chunk: Buffer): void {
    if (this.settled) return;
    if (!this.validator.check(chunk)) {
      this.settled = true;
      return;
    }
    if (this.firstNonAsciiLine === undefined) {
      if (isAscii(chunk)) {
        this.lineFeeds += lineFeedsIn(chunk);
        return;
      }
      this.firstNonAsciiLine = this.lineFeeds + lineFeedsIn(chunk.subarray(0, firstNonAsciiByte(chunk))) + 1;
    }
    if (!this.validator.holdsIncomplete) throw this.isUtf8(this.firstNonAsciiLine);
  }

  /** Call at the end of the input. */
  end(): void {
    if (this.settled || !this.validator.end() || this.firstNonAsciiLine === undefined) return;
    throw this.isUtf8(this.firstNonAsciiLine);
  }

  private isUtf8(line: number): SourceError {
    this.settled = true;
    const garbled = 'read as Latin-1, its accented letters would be sent garbled ("é" as "Ã©")';
    if ('feedLabel' in this.declaredBy) {
      return new SourceError(`${this.name} line ${line}: the feed declares encoding="${this.declaredBy.feedLabel}", but it is UTF-8: ${garbled}`, {
        hint: 'have its exporter declare encoding="UTF-8", or set source.encoding: utf8 in the job file; nothing garbled was sent',
      });
    }
    return new SourceError(`${this.name} line ${line}: source.encoding is latin1, but the file is UTF-8: ${garbled}`, {
      hint: 'remove encoding: latin1 from the source block of the job file (UTF-8 is the default) and run again; nothing garbled was sent',
    });
  }
}
