/**
 * Counter state that outlives what it counts for a grace period. A host that leaves the
 * host list, or a metric that leaves a host's response, loses its series at once, but its
 * running totals are kept for `graceMs`: when it comes back within that time its counters
 * continue instead of restarting at 0 (which Prometheus would read as a reset), and after
 * it the state is dropped, so memory stays bounded by what is present plus what left
 * recently.
 */

/**
 * Per-target state (by host uuid, website id, ...) with a grace period for targets that
 * went away. `release` starts the period; `get` finds the state during it; `set` makes the
 * target live again; `sweep` drops what waited longer than `graceMs`.
 */
export class GraceMap<K, V> {
  private readonly live = new Map<K, V>();
  private readonly released = new Map<K, { readonly value: V; readonly atMs: number }>();

  constructor(private readonly graceMs: number) {
    if (!(graceMs >= 0)) throw new Error(`GraceMap: grace period must be >= 0 ms, got ${graceMs}`);
  }

  get(key: K): V | undefined {
    return this.live.get(key) ?? this.released.get(key)?.value;
  }

  set(key: K, value: V): void {
    this.released.delete(key);
    this.live.set(key, value);
  }

  /** The target went away at `nowMs`: keep its state for the grace period. */
  release(key: K, nowMs: number): void {
    const value = this.live.get(key);
    if (value === undefined) return;
    this.live.delete(key);
    this.released.set(key, { value, atMs: nowMs });
  }

  /** Drops the state of targets released more than the grace period before `nowMs`; returns how many. */
  sweep(nowMs: number): number {
    let dropped = 0;
    for (const [key, { atMs }] of this.released) {
      if (nowMs - atMs > this.graceMs) {
        this.released.delete(key);
        dropped += 1;
      }
    }
    return dropped;
  }

  /** Every entry, with the time it was released (undefined while live). */
  *entries(): IterableIterator<[K, V, number | undefined]> {
    for (const [key, value] of this.live) yield [key, value, undefined];
    for (const [key, { value, atMs }] of this.released) yield [key, value, atMs];
  }

  /** Puts back an entry in its grace period (restored state whose target has not been seen yet). */
  restoreReleased(key: K, value: V, atMs: number): void {
    if (this.live.has(key)) return;
    this.released.set(key, { value, atMs });
  }

  /** Live and released entries. */
  get size(): number {
    return this.live.size + this.released.size;
  }

  get releasedSize(): number {
    return this.released.size;
  }
}

/**
 * The pure form for state maps that a mapper rebuilds on every poll: copies into `next` the
 * entries of `previous` that the poll did not produce (absent from the input) and were last
 * seen no more than `graceMs` before `nowMs`. Entries the poll produced are left as they are.
 */
export function carryAbsent<K, V>(
  previous: ReadonlyMap<K, V>,
  next: { has(key: K): boolean; set(key: K, value: V): unknown },
  lastSeenMs: (value: V) => number,
  nowMs: number,
  graceMs: number,
): void {
  for (const key of previous.keys()) {
    if (next.has(key)) continue;
    const value = previous.get(key) as V;
    if (nowMs - lastSeenMs(value) <= graceMs) next.set(key, value);
  }
}
