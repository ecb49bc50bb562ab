/**
 * Reading a request body into one Buffer, up to a limit. Past the limit nothing more is kept:
 * the rest is read and thrown away (so the client still receives the 413 instead of a reset
 * connection). A drop fault instead destroys the connection after the first part of the body.
 *
 * A body that arrives in several chunks is copied into one Buffer. For the routes whose handler
 * keeps nothing of the body (RouteDefinition.bodyIsTransient: the user batches of up to 5 MB),
 * that Buffer comes from a BodyBufferPool and goes back to it once the handler has answered:
 * a fresh 5 MB Buffer per request was ~1,200 first-touched pages (page faults are expensive on
 * the bench machine), ~0.9 s of the emulator's CPU over scenario 1's 46 requests.
 */
import type { IncomingMessage } from 'node:http';

/** A complete body comes with release(): call it once nothing reads the body any more (it may be a pooled Buffer). */
export type BodyRead = { kind: 'complete'; body: Buffer; release: () => void } | { kind: 'too_large' } | { kind: 'aborted' };

const NOTHING_TO_RELEASE = (): void => undefined;

const EMPTY = Buffer.alloc(0);

/**
 * Buffers for request bodies, reused from request to request. Each holds the largest body
 * taken (its pages are only touched as far as bodies reach); a few are kept.
 */
export class BodyBufferPool {
  private readonly free: Buffer[] = [];

  constructor(
    private readonly capacity: number,
    private readonly keep = 2,
  ) {}

  /** A Buffer of `size` bytes, and the function that hands it back once nothing reads it any more. */
  take(size: number): { body: Buffer; release: () => void } {
    if (size > this.capacity) return { body: Buffer.allocUnsafe(size), release: NOTHING_TO_RELEASE };
    const whole = this.free.pop() ?? Buffer.allocUnsafeSlow(this.capacity);
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      if (this.free.length < this.keep) this.free.push(whole);
    };
    return { body: whole.subarray(0, size), release };
  }
}

/** Reads the body; with a pool, a body of several chunks is copied into a pooled Buffer (release it when done). */
export function readBody(req: IncomingMessage, limitBytes: number, pool?: BodyBufferPool): Promise<BodyRead> {
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
      if (chunks.length > 1 && pool) {
        const { body, release } = pool.take(size);
        let at = 0;
        for (const chunk of chunks) at += chunk.copy(body, at);
        settle({ kind: 'complete', body, release });
      } else {
        settle({ kind: 'complete', body: chunks.length === 1 ? (chunks[0] ?? EMPTY) : chunks.length === 0 ? EMPTY : Buffer.concat(chunks, size), release: NOTHING_TO_RELEASE });
      }
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
