/**
 * Shared memory for handing identifier lists to the commit worker. A list is copied into a
 * slot (a SharedArrayBuffer) and the worker reads it in place; the slot is reused once the
 * worker is done with it. Lists transferred as fresh ArrayBuffers instead each became ~3 MB
 * of the worker's external memory, promoted to its old generation while the commit ran, and
 * freed only by its next full garbage collection: the process grew by ~70 MB over a
 * million-row upload.
 */
import type { IdentifierList, TransferableIdentifierList } from '../identifier-list.js';

/** Slots are sized in steps of this (a full request's identifiers take ~3 MB). */
const SLOT_STEP_BYTES = 256 * 1024;

export interface Slot {
  readonly buffer: SharedArrayBuffer;
}

export class SharedListSlots {
  private readonly free: SharedArrayBuffer[] = [];

  /** A slot of at least `bytes` (a free one if one is large enough). */
  take(bytes: number): Slot {
    const at = this.free.findIndex((b) => b.byteLength >= bytes);
    if (at >= 0) return { buffer: this.free.splice(at, 1)[0] as SharedArrayBuffer };
    // None is large enough: let one go, so there are never more slots than commits in flight.
    this.free.pop();
    return { buffer: new SharedArrayBuffer(Math.max(SLOT_STEP_BYTES, Math.ceil(bytes / SLOT_STEP_BYTES) * SLOT_STEP_BYTES)) };
  }

  give(slot: Slot): void {
    this.free.push(slot.buffer);
  }
}

/** Bytes a list takes in a slot (its arrays, each 4-byte aligned). */
export function sharedBytes(list: IdentifierList): number {
  const { length, ends } = list.view();
  const used = length === 0 ? 0 : (ends[length - 1] ?? 0);
  return align(length) + 8 * length + align(used);
}

function align(n: number): number {
  return (n + 3) & ~3;
}

/** Copies `list` into `slot` at `offset`; returns views of it (to post) and the offset after it. */
export function copyToSlot(list: IdentifierList, slot: Slot, offset: number): { views: TransferableIdentifierList; end: number } {
  const { length, codes, rows, ends, data } = list.view();
  const used = length === 0 ? 0 : (ends[length - 1] ?? 0);
  let at = offset;
  const c = new Uint8Array(slot.buffer, at, length);
  c.set(codes.subarray(0, length));
  at += align(length);
  const r = new Int32Array(slot.buffer, at, length);
  r.set(rows.subarray(0, length));
  at += 4 * length;
  const e = new Int32Array(slot.buffer, at, length);
  e.set(ends.subarray(0, length));
  at += 4 * length;
  const d = new Uint8Array(slot.buffer, at, used);
  d.set(data.subarray(0, used));
  at += align(used);
  return { views: { length, codes: c, rows: r, ends: e, data: d }, end: at };
}
