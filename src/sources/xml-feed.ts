/**
 * Streaming reader of XML product feeds (RSS 2.0 and Atom, Google Merchant format) into
 * FeedItems, in batches (one per input chunk). The rules of what an item and a field are live
 * in xml-item-collector.ts.
 *
 * Chunks are decoded in the feed's encoding and written to saxes as they arrive; memory stays
 * flat whatever the size of the feed. Limits keep hostile input flat too: nesting depth, item
 * size, and stretches without markup (a giant text, comment, CDATA or DOCTYPE, which saxes
 * would otherwise buffer whole).
 *
 * A bare "&" is marked before saxes sees it (xml-bare-ampersand.ts), so that it rejects its
 * item instead of swallowing the rest of the feed into an entity name.
 *
 * Entities: saxes knows only the five XML entities and character references. It never reads
 * an external entity, and it expands nothing declared in a DOCTYPE; a DOCTYPE that declares
 * entities (billion laughs, file:///etc/passwd) is refused outright with a SourceError.
 *
 * A feed that is not well-formed, or ends in the middle of an item, ends with a SourceError
 * naming the line and column, thrown after the items read before it were yielded: the caller
 * sees the feed was incomplete.
 */
import { SaxesParser } from 'saxes';
import { SourceError } from '../errors.js';
import { asBuffer, type ByteSource } from './byte-source.js';
import { describeNonText, SNIFF_BYTES, sniffContent } from './content-sniff.js';
import { asError, readFailure } from './read-error.js';
import { BareAmpersandMarker } from './xml-bare-ampersand.js';
import type { FeedBatch } from './types.js';
import { Utf8Validator } from './utf8-validator.js';
import { FeedItemCollector, xmlFeedLimits, type XmlFeedLimits } from './xml-item-collector.js';
import type { DeclaredLatin1Check } from './declared-latin1-check.js';
import { declaredLatin1CheckFor, xmlTextDecoderFor, type XmlTextDecoder } from './xml-text-decoder.js';

export interface XmlFeedOptions {
  /** Overrides the source's encoding and the feed's own declaration. */
  encoding?: 'utf8' | 'latin1' | undefined;
  limits?: Partial<XmlFeedLimits> | undefined;
  /** Most characters accepted without any markup event (default 16 Mi). */
  maxCharsWithoutMarkup?: number | undefined;
}

const DEFAULT_MAX_CHARS_WITHOUT_MARKUP = 16 * 1024 * 1024;

/** Drives saxes over decoded chunks and watches for stretches without markup. */
class XmlFeedParser {
  readonly collector: FeedItemCollector;
  private readonly parser = new SaxesParser<{ xmlns: false; position: true }>({ xmlns: false, position: true });
  private readonly validator = new Utf8Validator();
  private readonly ampersands = new BareAmpersandMarker();
  private decoder: XmlTextDecoder | undefined;
  /** A feed decoded as Windows-1252: whether it is UTF-8 after all. */
  private latin1Check: DeclaredLatin1Check | undefined;
  private head: Buffer[] = [];
  private headBytes = 0;

  constructor(
    private readonly name: string,
    private readonly options: XmlFeedOptions,
  ) {
    this.collector = new FeedItemCollector(name, xmlFeedLimits(options.limits), this.parser);
    this.collector.listenTo(this.parser);
  }

  get line(): number {
    return this.parser.line;
  }

  push(bytes: Buffer): void {
    if (this.decoder === undefined) {
      this.head.push(bytes);
      this.headBytes += bytes.length;
      if (this.headBytes >= SNIFF_BYTES) this.startDecoding();
      return;
    }
    this.write(bytes);
  }

  end(): void {
    if (this.decoder === undefined) {
      if (this.headBytes === 0) throw new SourceError(`${this.name} is empty`);
      this.startDecoding();
    }
    if (this.decoder?.encoding === 'utf-8' && !this.validator.end()) this.collector.checkValuesForBadBytes = true;
    this.latin1Check?.end();
    const rest = this.ampersands.push(this.decoder?.end() ?? '') + this.ampersands.end();
    if (rest !== '') this.writeText(rest);
    this.parser.close();
  }

  private startDecoding(): void {
    const head = Buffer.concat(this.head);
    this.head = [];
    const kind = sniffContent(head);
    const decoder = xmlTextDecoderFor(head, this.options.encoding, this.name);
    if (!decoder.encoding.startsWith('utf-16')) {
      const problem = describeNonText(kind);
      if (problem !== undefined) throw new SourceError(`${this.name} ${problem}`);
    }
    this.decoder = decoder;
    if (decoder.encoding === 'windows-1252') this.latin1Check = declaredLatin1CheckFor(head, this.options.encoding, this.name);
    this.write(head);
  }

  private write(bytes: Buffer): void {
    const decoder = this.decoder;
    if (decoder === undefined) return;
    if (decoder.encoding === 'utf-8' && !this.collector.checkValuesForBadBytes && !this.validator.check(bytes)) {
      this.collector.checkValuesForBadBytes = true;
    }
    this.latin1Check?.check(bytes);
    this.writeText(this.ampersands.push(decoder.decode(bytes)));
  }

  private writeText(text: string): void {
    this.parser.write(text);
    const limit = this.options.maxCharsWithoutMarkup ?? DEFAULT_MAX_CHARS_WITHOUT_MARKUP;
    if (this.collector.charsWithoutMarkup(text.length) > limit) {
      throw this.collector.failure(
        `more than ${limit} characters without any markup (a text, CDATA, comment or DOCTYPE that large is refused)`,
      );
    }
  }
}

/** Reads the items of an RSS 2.0 or Atom feed, in batches; see the module comment. */
export async function* readXmlFeed(source: ByteSource, options: XmlFeedOptions = {}): AsyncGenerator<FeedBatch, void, undefined> {
  const reader = new XmlFeedParser(source.name, { ...options, encoding: options.encoding ?? source.encoding });
  const collector = reader.collector;
  let failure: Error | undefined;
  try {
    for await (const chunk of source.stream) {
      try {
        reader.push(asBuffer(chunk));
      } catch (error) {
        failure = asError(error);
      }
      if (collector.hasBatch()) yield collector.takeBatch();
      if (failure !== undefined) throw failure;
    }
  } catch (error) {
    if (error === failure) throw error;
    throw readFailure(error, source.name, `after line ${reader.line}`);
  }
  try {
    reader.end();
  } catch (error) {
    failure = asError(error);
  }
  if (collector.hasBatch()) yield collector.takeBatch();
  if (failure !== undefined) throw failure;
}
