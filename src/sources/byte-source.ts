/**
 * What the readers read: an OpenedSource, or any byte stream with a name for messages (tests,
 * and callers that already hold a stream). The optional settings are those of OpenedSource.
 */
import type { OpenedSource, SourceFormat } from './types.js';

export interface ByteSource {
  /** File path or URL, for messages. */
  name: string;
  /** Chunks of bytes; strings are taken as UTF-8. */
  stream: AsyncIterable<Buffer | Uint8Array | string>;
  format?: SourceFormat | undefined;
  delimiter?: string | undefined;
  encoding?: 'utf8' | 'latin1' | undefined;
}

// An OpenedSource is a ByteSource: this line fails to compile the day the two drift apart.
const _openedSourceIsByteSource = (opened: OpenedSource): ByteSource => opened;
void _openedSourceIsByteSource;

/** The chunk as a Buffer, without copying when it already is one. */
export function asBuffer(chunk: Buffer | Uint8Array | string): Buffer {
  if (typeof chunk === 'string') return Buffer.from(chunk, 'utf8');
  if (Buffer.isBuffer(chunk)) return chunk;
  return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}
