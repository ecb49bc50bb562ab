/**
 * Bytes of an XML feed to text, in the feed's encoding: source.encoding when the job sets one,
 * else a byte order mark, else the encoding="..." of the XML declaration, else UTF-8. Decoders
 * keep state across chunks, so a character split between two chunks is decoded whole.
 *
 * ISO-8859-1 (and its aliases) is decoded as Windows-1252, as browsers do.
 */
import { StringDecoder } from 'node:string_decoder';
import { TextDecoder } from 'node:util';
import { SourceError } from '../errors.js';
import { DeclaredLatin1Check } from './declared-latin1-check.js';
import { decodeWindows1252 } from './windows-1252.js';

export interface XmlTextDecoder {
  /** 'utf-8', 'windows-1252' or another WHATWG encoding name. */
  readonly encoding: string;
  decode(bytes: Buffer): string;
  /** What is left at the end of the input (an incomplete character). */
  end(): string;
}

class Utf8Decoder implements XmlTextDecoder {
  readonly encoding = 'utf-8';
  private readonly decoder = new StringDecoder('utf8');
  decode(bytes: Buffer): string {
    return this.decoder.write(bytes);
  }
  end(): string {
    return this.decoder.end();
  }
}

class Windows1252Decoder implements XmlTextDecoder {
  readonly encoding = 'windows-1252';
  decode(bytes: Buffer): string {
    return decodeWindows1252(bytes);
  }
  end(): string {
    return '';
  }
}

class WhatwgDecoder implements XmlTextDecoder {
  readonly encoding: string;
  constructor(private readonly decoder: TextDecoder) {
    this.encoding = decoder.encoding;
  }
  decode(bytes: Buffer): string {
    return this.decoder.decode(bytes, { stream: true });
  }
  end(): string {
    return this.decoder.decode();
  }
}

const DECLARED_ENCODING = /^<\?xml\s[^>]*?\bencoding\s*=\s*["']([A-Za-z0-9._:-]+)["']/;

/** The encoding label of the XML declaration at the start of `head`, if it has one. */
export function declaredEncoding(head: Buffer): string | undefined {
  const start = head.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf])) ? 3 : 0;
  const text = head.toString('latin1', start, Math.min(head.length, start + 512));
  return DECLARED_ENCODING.exec(text)?.[1];
}

function decoderForLabel(label: string, name: string, origin: string): XmlTextDecoder {
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(label, { fatal: false });
  } catch (error) {
    throw new SourceError(`${name} ${origin} encoding "${label}", which adsync cannot decode`, {
      cause: error,
      hint: 'convert the feed to UTF-8',
    });
  }
  // A feed read this far is ASCII-compatible: a declared UTF-16 (no BOM, no NUL bytes) is wrong.
  if (decoder.encoding === 'utf-8' || (origin === 'declares' && decoder.encoding.startsWith('utf-16'))) return new Utf8Decoder();
  if (decoder.encoding === 'windows-1252') return new Windows1252Decoder();
  return new WhatwgDecoder(decoder);
}

/**
 * The decoder for a feed whose first bytes are `head` (at least the first 512 bytes, or the
 * whole input when it is shorter).
 */
export function xmlTextDecoderFor(head: Buffer, encoding: 'utf8' | 'latin1' | undefined, name: string): XmlTextDecoder {
  if (encoding === 'latin1') return new Windows1252Decoder();
  if (encoding === 'utf8') return new Utf8Decoder();
  const b0 = head[0];
  const b1 = head[1];
  if (b0 === 0xef && b1 === 0xbb && head[2] === 0xbf) return new Utf8Decoder();
  if ((b0 === 0xff && b1 === 0xfe) || (b0 === 0x3c && b1 === 0x00)) return decoderForLabel('utf-16le', name, 'has');
  if ((b0 === 0xfe && b1 === 0xff) || (b0 === 0x00 && b1 === 0x3c)) return decoderForLabel('utf-16be', name, 'has');
  const label = declaredEncoding(head);
  return label === undefined ? new Utf8Decoder() : decoderForLabel(label, name, 'declares');
}

/**
 * For a feed decoded as Windows-1252 (`head`: its first bytes): the check that it is not UTF-8
 * after all, naming what declared it Latin-1 (the job's source.encoding, or the feed itself).
 */
export function declaredLatin1CheckFor(head: Buffer, encoding: 'utf8' | 'latin1' | undefined, name: string): DeclaredLatin1Check {
  return new DeclaredLatin1Check(name, encoding === 'latin1' ? { job: true } : { feedLabel: declaredEncoding(head) ?? 'ISO-8859-1' });
}
