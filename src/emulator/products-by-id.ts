/**
 * A catalog's products by their advertiser id (exact string equality), for the lookup every
 * product of a PUT needs. A Map keyed by the id strings compares strings while probing, which
 * reads each stored id from wherever it lies in memory: with ~200,000 products those reads
 * made the lookups one of the emulator's largest costs. Here the Map is keyed by a 32-bit
 * hash of the id, compared as a number inside the table, and ids that share a hash share an
 * entry (a list), so only the candidates' ids are read.
 */

interface Identified {
  readonly id: string;
}

/** A 32-bit hash of the text (a small integer in V8, compared cheaply as a Map key). */
function hashOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h | 0;
}

export class ProductsById<T extends Identified> {
  /** hash -> the product with an id of that hash, or the list of them when several share it. */
  private readonly entries = new Map<number, T | T[]>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(id: string): T | undefined {
    const entry = this.entries.get(hashOf(id));
    if (entry === undefined) return undefined;
    if (!Array.isArray(entry)) return entry.id === id ? entry : undefined;
    return entry.find((p) => p.id === id);
  }

  /** Adds a product whose id is not held yet. */
  add(product: T): void {
    const hash = hashOf(product.id);
    const entry = this.entries.get(hash);
    if (entry === undefined) this.entries.set(hash, product);
    else if (Array.isArray(entry)) entry.push(product);
    else this.entries.set(hash, [entry, product]);
    this.count += 1;
  }

  delete(product: T): void {
    const hash = hashOf(product.id);
    const entry = this.entries.get(hash);
    if (entry === product) {
      this.entries.delete(hash);
    } else if (Array.isArray(entry) && entry.includes(product)) {
      const others = entry.filter((p) => p !== product);
      this.entries.set(hash, others.length === 1 ? (others[0] as T) : others);
    } else {
      return;
    }
    this.count -= 1;
  }

  clear(): void {
    this.entries.clear();
    this.count = 0;
  }
}
