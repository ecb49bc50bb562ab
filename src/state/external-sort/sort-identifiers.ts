/**
 * The order of a batch of identifiers by (field code, value bytes), the order of SQLite's
 * BLOB keys (memcmp, then the shorter first), with identical values next to each other.
 *
 * Sorting with a comparator costs a call per comparison (~20 per identifier at 100,000); this
 * sorts numbers instead: identifiers are grouped by field, then sorted by a number made of the
 * next four value bytes and the position in the group, with Float64Array.prototype.sort (native,
 * no callback). Groups of values whose four bytes are equal and that go on are sorted again by
 * the next four bytes: SHA-256 values need one round, a partner id like "crm-00001234" three.
 */
import { compareValues } from './packed-records.js';

const POSITION_BITS = 18;
/** The most identifiers one call may sort: positions take 18 bits of the sort number. */
export const MAX_SORT_BATCH = 2 ** POSITION_BITS;
const POSITION_SCALE = 2 ** POSITION_BITS;
/** Groups this small are sorted by insertion with full comparisons. */
const SMALL_GROUP = 16;
const MAX_CODES = 256;

export interface SortableIdentifiers {
  readonly length: number;
  readonly codes: Uint8Array;
  readonly ends: Int32Array;
  readonly data: Buffer;
}

/** Returns the indices of `ids` in (field, value) order. */
export function sortedOrder(ids: SortableIdentifiers): Int32Array {
  const n = ids.length;
  if (n > MAX_SORT_BATCH) throw new RangeError(`sortedOrder: ${n} identifiers, at most ${MAX_SORT_BATCH}`);
  // Group by field code (a counting sort), keeping the input order inside each group.
  const starts = new Int32Array(MAX_CODES + 1);
  for (let i = 0; i < n; i++) starts[(ids.codes[i] ?? 0) + 1] = (starts[(ids.codes[i] ?? 0) + 1] ?? 0) + 1;
  for (let c = 0; c < MAX_CODES; c++) starts[c + 1] = (starts[c + 1] ?? 0) + (starts[c] ?? 0);
  const order = new Int32Array(n);
  const next = starts.slice(0, MAX_CODES);
  for (let i = 0; i < n; i++) {
    const c = ids.codes[i] ?? 0;
    order[next[c] ?? 0] = i;
    next[c] = (next[c] ?? 0) + 1;
  }
  const sorter = new GroupSorter(ids, order);
  for (let c = 0; c < MAX_CODES; c++) sorter.sort(starts[c] ?? 0, starts[c + 1] ?? 0, 0);
  return order;
}

class GroupSorter {
  private readonly numbers: Float64Array;
  /** The window key of order[i] after the last sort of the range holding i. */
  private readonly windows: Float64Array;
  private readonly scratch: Int32Array;

  constructor(
    private readonly ids: SortableIdentifiers,
    private readonly order: Int32Array,
  ) {
    this.numbers = new Float64Array(order.length);
    this.windows = new Float64Array(order.length);
    this.scratch = new Int32Array(order.length);
  }

  private start(i: number): number {
    return i === 0 ? 0 : (this.ids.ends[i - 1] ?? 0);
  }

  /**
   * Bytes [4 * depth, 4 * depth + 4) of value i as a number (zero-padded), times 8, plus how
   * many of those four bytes the value has (0-4): values that end inside the window come
   * before longer ones with the same padded bytes, as in byte order.
   */
  private window(i: number, depth: number): number {
    const from = this.start(i) + depth * 4;
    const end = this.ids.ends[i] ?? 0;
    const data = this.ids.data;
    let w = 0;
    for (let b = 0; b < 4; b++) w = w * 256 + (from + b < end ? (data[from + b] ?? 0) : 0);
    return w * 8 + Math.max(0, Math.min(4, end - from));
  }

  /** Sorts order[from, to), whose values agree on their first 4 * depth bytes. */
  sort(from: number, to: number, depth: number): void {
    const n = to - from;
    if (n < 2) return;
    if (n <= SMALL_GROUP) {
      this.insertionSort(from, to);
      return;
    }
    const { order, numbers, windows, scratch } = this;
    const keys = numbers.subarray(0, n);
    for (let k = 0; k < n; k++) keys[k] = this.window(order[from + k] ?? 0, depth) * POSITION_SCALE + k;
    keys.sort();
    for (let k = 0; k < n; k++) {
      const key = keys[k] ?? 0;
      const window = Math.floor(key / POSITION_SCALE);
      scratch[k] = order[from + (key - window * POSITION_SCALE)] ?? 0;
      windows[from + k] = window;
    }
    order.set(scratch.subarray(0, n), from);
    // Runs of equal windows whose values go on past the window: sort them by the next bytes.
    // (Equal windows that end inside it are identical values: already together.)
    for (let g = from; g < to; ) {
      const w = windows[g] ?? 0;
      let e = g + 1;
      while (e < to && windows[e] === w) e++;
      if (e - g > 1 && w % 8 === 4) this.sort(g, e, depth + 1);
      g = e;
    }
  }

  private compare(i: number, j: number): number {
    const { ids } = this;
    return compareValues(ids.data, this.start(i), ids.ends[i] ?? 0, ids.data, this.start(j), ids.ends[j] ?? 0);
  }

  private insertionSort(from: number, to: number): void {
    const order = this.order;
    for (let k = from + 1; k < to; k++) {
      const v = order[k] ?? 0;
      let m = k - 1;
      while (m >= from && this.compare(order[m] ?? 0, v) > 0) {
        order[m + 1] = order[m] ?? 0;
        m--;
      }
      order[m + 1] = v;
    }
  }
}
