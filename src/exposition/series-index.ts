/**
 * Which group holds each series, for duplicate detection, without a string per series.
 *
 * A series is identified by a 64-bit hash of its family name and its sorted label pairs,
 * kept in an open-addressing table of typed arrays: about 24 bytes per series outside the
 * V8 heap, against well over 100 bytes of heap for a `Map` from key strings (the key alone
 * is a string as long as the label pairs). At a million series that difference is the whole
 * heap budget. Two different series share a 64-bit hash with a probability of about
 * n² / 2^65 (3 in 100 million at a million series); the later one would then be dropped and
 * counted as a duplicate.
 */

/** The two 32-bit halves of a series hash. */
export interface SeriesHash {
  hi: number;
  lo: number;
}

/** Seeds the hash of a family's series with its name, so equal label sets in two families differ. */
export function familySeed(name: string): SeriesHash {
  const out = { hi: 0, lo: 0 };
  hashString(name, 0x9e3779b9, 0x85ebca6b, out);
  return out;
}

/**
 * A 64-bit hash of `text` in two multiply-xorshift lanes that mix into each other at the
 * end, written into `out` (no allocation per series).
 */
export function hashString(text: string, seedHi: number, seedLo: number, out: SeriesHash): void {
  let a = 0xdeadbeef ^ seedHi;
  let b = 0x41c6ce57 ^ seedLo;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x9e3779b1);
    b = Math.imul(b ^ c, 0x5f356495);
  }
  a = Math.imul(a ^ (a >>> 16), 0x85ebca6b) ^ Math.imul(b ^ (b >>> 13), 0xc2b2ae35);
  b = Math.imul(b ^ (b >>> 16), 0x85ebca6b) ^ Math.imul(a ^ (a >>> 13), 0xc2b2ae35);
  out.hi = a | 0;
  out.lo = b | 0;
}

const EMPTY = 0;
const INITIAL_CAPACITY = 1024;

/** Series hash -> owner (a positive group number), linear probing, at most half full. */
export class SeriesIndex {
  private his = new Int32Array(INITIAL_CAPACITY);
  private los = new Int32Array(INITIAL_CAPACITY);
  private owners = new Int32Array(INITIAL_CAPACITY);
  private mask = INITIAL_CAPACITY - 1;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /**
   * Gives the series to `owner` (> 0) if nobody holds it. Returns 0 when it did, otherwise
   * the current owner (which may be `owner` itself: a series given twice in one group).
   */
  claim(hi: number, lo: number, owner: number): number {
    if ((this.count + 1) * 2 > this.owners.length) this.grow();
    let i = lo & this.mask;
    for (;;) {
      const current = this.owners[i] as number;
      if (current === EMPTY) {
        this.his[i] = hi;
        this.los[i] = lo;
        this.owners[i] = owner;
        this.count++;
        return 0;
      }
      if (this.his[i] === hi && this.los[i] === lo) return current;
      i = (i + 1) & this.mask;
    }
  }

  /** Removes the series if `owner` holds it. */
  release(hi: number, lo: number, owner: number): void {
    let i = lo & this.mask;
    for (;;) {
      const current = this.owners[i] as number;
      if (current === EMPTY) return;
      if (this.his[i] === hi && this.los[i] === lo) {
        if (current === owner) this.removeAt(i);
        return;
      }
      i = (i + 1) & this.mask;
    }
  }

  /** Backward-shift deletion: later entries of the probe run move up, so no tombstones pile up. */
  private removeAt(hole: number): void {
    this.count--;
    let i = hole;
    let j = hole;
    for (;;) {
      j = (j + 1) & this.mask;
      if (this.owners[j] === EMPTY) break;
      const home = (this.los[j] as number) & this.mask;
      // Entry j may fill the hole at i unless its home lies cyclically in (i, j].
      const stays = i <= j ? home > i && home <= j : home > i || home <= j;
      if (stays) continue;
      this.his[i] = this.his[j] as number;
      this.los[i] = this.los[j] as number;
      this.owners[i] = this.owners[j] as number;
      i = j;
    }
    this.owners[i] = EMPTY;
  }

  private grow(): void {
    const { his, los, owners } = this;
    const capacity = owners.length * 2;
    this.his = new Int32Array(capacity);
    this.los = new Int32Array(capacity);
    this.owners = new Int32Array(capacity);
    this.mask = capacity - 1;
    this.count = 0;
    for (let i = 0; i < owners.length; i++) {
      const owner = owners[i] as number;
      if (owner !== EMPTY) this.claim(his[i] as number, los[i] as number, owner);
    }
  }
}
