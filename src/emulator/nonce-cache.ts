/**
 * The nonces seen per consumer key, to refuse a replayed request. A nonce must be remembered
 * as long as its timestamp is acceptable (±skew), so nonces live in two generations that
 * rotate every 2 × skew: a nonce is kept at least that long, and memory stays bounded by the
 * request rate.
 */
export class NonceCache {
  private current = new Set<string>();
  private previous = new Set<string>();
  private rotatedAt: number;

  constructor(
    private readonly generationMs: number,
    private readonly now: () => number,
  ) {
    this.rotatedAt = now();
  }

  /** Records the nonce; false when it was already used by this consumer key. */
  claim(consumerKey: string, nonce: string): boolean {
    const t = this.now();
    if (t - this.rotatedAt >= this.generationMs) {
      this.previous = t - this.rotatedAt >= 2 * this.generationMs ? new Set() : this.current;
      this.current = new Set();
      this.rotatedAt = t;
    }
    const key = `${consumerKey}\u0000${nonce}`;
    if (this.current.has(key) || this.previous.has(key)) return false;
    this.current.add(key);
    return true;
  }

  clear(): void {
    this.current.clear();
    this.previous.clear();
    this.rotatedAt = this.now();
  }
}
