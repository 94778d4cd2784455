/**
 * Stateless 32-bit hashing. Every simulated value is a pure function of (seed, account,
 * host, metric, minute) through these, so a world of any size and retention costs no
 * memory per point and any point can be computed in any order.
 */

/** murmur3's finaliser: spreads every input bit over the output. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function step(h: number, k: number): number {
  k = Math.imul(k | 0, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, 0x1b873593);
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

// Fixed arities instead of rest parameters: these run hundreds of thousands of times per
// series request and must not allocate.
export function hash2(a: number, b: number): number {
  return fmix32(step(step(0x2545f491, a), b) ^ 8);
}

export function hash3(a: number, b: number, c: number): number {
  return fmix32(step(step(step(0x2545f491, a), b), c) ^ 12);
}

export function hash4(a: number, b: number, c: number, d: number): number {
  return fmix32(step(step(step(step(0x2545f491, a), b), c), d) ^ 16);
}

/** FNV-1a of a string, for seeds and metric names. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return fmix32(h);
}

/** A hash as a number in [0, 1). */
export function unit(h: number): number {
  return (h >>> 0) / 4294967296;
}

/** A roughly standard normal value (Irwin-Hall of the four bytes), within about ±3.5. */
export function normal(h: number): number {
  const sum = (h & 0xff) + ((h >>> 8) & 0xff) + ((h >>> 16) & 0xff) + ((h >>> 24) & 0xff);
  return (sum / 255 - 2) * 1.7320508;
}

export function pick<T>(h: number, items: readonly T[]): T {
  const item = items[(h >>> 0) % items.length];
  if (item === undefined) throw new Error('pick from an empty list');
  return item;
}

/** Picks by weight: `weighted(h, [['a', 3], ['b', 1]])` gives 'a' three times in four. */
export function weighted<T>(h: number, choices: readonly (readonly [T, number])[]): T {
  const total = choices.reduce((sum, [, w]) => sum + w, 0);
  let target = unit(h) * total;
  for (const [value, w] of choices) {
    if (target < w) return value;
    target -= w;
  }
  const last = choices[choices.length - 1];
  if (!last) throw new Error('weighted pick from an empty list');
  return last[0];
}

/** 32 lowercase hex characters. */
export function hex32(a: number, b: number, c: number): string {
  let out = '';
  for (let k = 0; k < 4; k++) out += hash4(a, b, c, k).toString(16).padStart(8, '0');
  return out;
}
