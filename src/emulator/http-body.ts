/**
 * Reading a request body into one Buffer, up to a limit. Past the limit nothing more is kept:
 * the rest is read and thrown away (so the client still receives the 413 instead of a reset
 * connection). A drop fault instead destroys the connection after the first part of the body.
 */
import type { IncomingMessage } from 'node:http';

export type BodyRead = { kind: 'complete'; body: Buffer } | { kind: 'too_large' } | { kind: 'aborted' };

const EMPTY = Buffer.alloc(0);

export function readBody(req: IncomingMessage, limitBytes: number): Promise<BodyRead> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limitBytes) {
    req.resume();
    return Promise.resolve({ kind: 'too_large' });
  }
  return new Promise<BodyRead>((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (result: BodyRead): void => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limitBytes) {
        chunks.length = 0;
        settle({ kind: 'too_large' });
        req.resume();
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => {
      settle({ kind: 'complete', body: chunks.length === 1 ? (chunks[0] ?? EMPTY) : chunks.length === 0 ? EMPTY : Buffer.concat(chunks, size) });
    });
    req.once('error', () => settle({ kind: 'aborted' }));
    req.once('close', () => {
      if (!req.complete) settle({ kind: 'aborted' });
    });
  });
}

/** Destroys the connection once part of the body has arrived (at once when there is none). */
export function dropAfterPartOfBody(req: IncomingMessage): void {
  const destroy = (): void => {
    req.socket.destroy();
  };
  const declared = Number(req.headers['content-length'] ?? '0');
  if (!(declared > 0) && req.headers['transfer-encoding'] === undefined) {
    destroy();
    return;
  }
  req.once('data', destroy);
  req.once('end', destroy);
}
