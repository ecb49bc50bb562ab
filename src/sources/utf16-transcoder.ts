/**
 * UTF-16 text (Excel's "Unicode Text" export: UTF-16LE with a byte order mark, tab separated)
 * turned into UTF-8 as it streams, so that the CSV reader reads it like any other file. The
 * decoder keeps a character split between two chunks (an odd byte, half a surrogate pair)
 * for the next one; the byte order mark is dropped.
 */
import { TextDecoder } from 'node:util';

const REPLACEMENT_CHARACTER = '\ufffd';

export class Utf16Transcoder {
  private readonly decoder: TextDecoder;
  /** Some bytes were not UTF-16 (an unpaired surrogate, an odd byte at the end): U+FFFD stands for them. */
  sawInvalid = false;

  constructor(bigEndian: boolean) {
    this.decoder = new TextDecoder(bigEndian ? 'utf-16be' : 'utf-16le', { fatal: false, ignoreBOM: false });
  }

  /** The UTF-8 of the next chunk (what it completes). */
  push(bytes: Buffer): Buffer {
    return this.utf8(this.decoder.decode(bytes, { stream: true }));
  }

  /** The UTF-8 of what is left at the end of the input. */
  end(): Buffer {
    return this.utf8(this.decoder.decode());
  }

  private utf8(text: string): Buffer {
    if (!this.sawInvalid && text.includes(REPLACEMENT_CHARACTER)) this.sawInvalid = true;
    return Buffer.from(text, 'utf8');
  }
}
