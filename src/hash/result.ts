import type { Normalized, NormalizedText, Rejected } from './types.js';

/**
 * A rejection with a fixed reason. Rejections are shared between calls (no allocation per
 * rejected value), so they are frozen: nobody may change a reason under another caller.
 */
export function rejected(reason: string): Rejected {
  return Object.freeze({ ok: false, reason });
}

/** Wraps the internal form of a normalizer's answer into the public Normalized. */
export function toNormalized(text: NormalizedText): Normalized {
  return typeof text === 'string' ? { ok: true, value: text } : text;
}
