/** A small seeded PRNG (mulberry32): the same seed gives the same inputs on every machine. */
export function mulberry32(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    /** [0, 1) */
    next,
    /** integer in [0, n) */
    int: (n) => Math.floor(next() * n),
    /** one element of an array */
    pick: (list) => list[Math.floor(next() * list.length)],
    /** true with probability p */
    chance: (p) => next() < p,
    /** a key of a {key: weight} table, weights summing to anything */
    weighted(table) {
      let total = 0;
      for (const w of Object.values(table)) total += w;
      let r = next() * total;
      for (const [k, w] of Object.entries(table)) {
        r -= w;
        if (r < 0) return k;
      }
      return Object.keys(table)[0];
    },
  };
}

/** n random decimal digits as a string. */
export function digits(rng, n) {
  let s = '';
  for (let i = 0; i < n; i++) s += String.fromCharCode(48 + rng.int(10));
  return s;
}
