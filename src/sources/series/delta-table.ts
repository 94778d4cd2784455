import { openSinceMs, type DeltaState } from './deltas.js';

/**
 * A host's counter states, packed: six numbers a counter in one Float64Array, the hole bitmaps
 * of the few counters that have open holes beside it, and the key-to-row index shared from one
 * poll to the next while the host's counters stay the same. At a million series, one state
 * object a counter (with three boxed times each) made 1.4 million of the 3.2 million objects
 * on the heap, and each poll replaced them all: every full collection traced and freed them.
 * Read as a map: `get` gives a fresh `DeltaState`, so callers never see the packing.
 */
export class DeltaTable implements ReadonlyMap<string, DeltaState> {
  /** Made by `DeltaTableBuilder`: `rows` numbers every key 0 to size - 1, in order. */
  constructor(
    readonly rows: ReadonlyMap<string, number>,
    private readonly numbers: Float64Array,
    private readonly holes: ReadonlyMap<number, bigint>,
  ) {}

  static from(entries: Iterable<readonly [string, DeltaState]>): DeltaTable {
    const builder = new DeltaTableBuilder(EMPTY);
    for (const [key, state] of entries) builder.set(key, state);
    return builder.finish();
  }

  /** The row index, to tell whether two tables share it (same counters in the same order). */
  sharesRowsWith(other: DeltaTable): boolean {
    return this.rows === other.rows;
  }

  get size(): number {
    return this.rows.size;
  }

  has(key: string): boolean {
    return this.rows.has(key);
  }

  get(key: string): DeltaState | undefined {
    const row = this.rows.get(key);
    return row === undefined ? undefined : this.at(row);
  }

  private at(row: number): DeltaState {
    const v = this.numbers;
    const at = row * WIDTH;
    return {
      total: v[at] as number,
      sum: v[at + 1] as number,
      coveredUntilMs: v[at + 2] as number,
      countingSinceMs: v[at + 3] as number,
      intervalMs: v[at + 4] as number,
      holes: this.holes.get(row) ?? 0n,
      lastSeenMs: v[at + 5] as number,
    };
  }

  keys(): MapIterator<string> {
    return this.rows.keys();
  }

  *values(): MapIterator<DeltaState> {
    for (const row of this.rows.values()) yield this.at(row);
  }

  *entries(): MapIterator<[string, DeltaState]> {
    for (const [key, row] of this.rows) yield [key, this.at(row)];
  }

  [Symbol.iterator](): MapIterator<[string, DeltaState]> {
    return this.entries();
  }

  forEach(callback: (value: DeltaState, key: string, map: ReadonlyMap<string, DeltaState>) => void, thisArg?: unknown): void {
    for (const [key, row] of this.rows) callback.call(thisArg, this.at(row), key, this);
  }

  /** Each counter's `oldestOpenMs` with its key, read from the packed numbers: no state made a counter (once a poll and host). */
  forEachOldestOpen(callback: (oldestOpenMs: number, key: string) => void): void {
    const v = this.numbers;
    for (const [key, row] of this.rows) {
      const at = row * WIDTH;
      callback(openSinceMs(v[at + 2] as number, this.holes.get(row) ?? 0n, v[at + 4] as number), key);
    }
  }
}

const WIDTH = 6;
const EMPTY = new DeltaTable(new Map(), new Float64Array(0), new Map());

/**
 * One poll's table, written counter by counter. When the poll writes exactly the previous
 * table's counters (the steady state), the next table shares its row index and only the
 * numbers are new: one array a host and poll instead of an object a counter.
 */
export class DeltaTableBuilder {
  private readonly previousRows: ReadonlyMap<string, number>;
  private readonly values: Float64Array;
  private readonly holes = new Map<number, bigint>();
  private readonly written: Uint8Array;
  private writtenCount = 0;
  /** Counters the previous table did not have, in the order they came. */
  private readonly added = new Map<string, DeltaState>();

  constructor(previous: ReadonlyMap<string, DeltaState>) {
    this.previousRows = previous instanceof DeltaTable ? previous.rows : sharedRowsOf([...previous.keys()]);
    this.values = new Float64Array(this.previousRows.size * WIDTH);
    this.written = new Uint8Array(this.previousRows.size);
  }

  has(key: string): boolean {
    const row = this.previousRows.get(key);
    if (row !== undefined) return this.written[row] === 1;
    return this.added.has(key);
  }

  set(key: string, state: DeltaState): this {
    const row = this.previousRows.get(key);
    if (row === undefined) {
      this.added.set(key, state);
      return this;
    }
    if (this.written[row] === 0) {
      this.written[row] = 1;
      this.writtenCount += 1;
    }
    write(this.values, this.holes, row, state);
    return this;
  }

  finish(): DeltaTable {
    if (this.added.size === 0 && this.writtenCount === this.previousRows.size) {
      return new DeltaTable(this.previousRows, this.values, this.holes);
    }
    const keys: string[] = [];
    const values = new Float64Array((this.writtenCount + this.added.size) * WIDTH);
    const holes = new Map<number, bigint>();
    for (const [key, from] of this.previousRows) {
      if (this.written[from] === 0) continue;
      const to = keys.length;
      keys.push(key);
      values.set(this.values.subarray(from * WIDTH, from * WIDTH + WIDTH), to * WIDTH);
      const open = this.holes.get(from);
      if (open !== undefined) holes.set(to, open);
    }
    for (const [key, state] of this.added) {
      const to = keys.length;
      keys.push(key);
      write(values, holes, to, state);
    }
    return new DeltaTable(sharedRowsOf(keys), values, holes);
  }
}

/**
 * Row indexes by their keys, shared by every host whose counters are the same names in the
 * same order (the hosts of one role report the same catalogue): one index for them all
 * instead of one a host. An entry goes when no table holds its index any more.
 */
const sharedRows = new Map<string, WeakRef<ReadonlyMap<string, number>>>();
const forgetRows = new FinalizationRegistry<string>((id) => {
  if (sharedRows.get(id)?.deref() === undefined) sharedRows.delete(id);
});

function sharedRowsOf(keys: readonly string[]): ReadonlyMap<string, number> {
  const id = JSON.stringify(keys);
  const known = sharedRows.get(id)?.deref();
  if (known !== undefined) return known;
  const rows = new Map<string, number>();
  for (const key of keys) rows.set(key, rows.size);
  sharedRows.set(id, new WeakRef(rows));
  forgetRows.register(rows, id);
  return rows;
}

function write(values: Float64Array, holes: Map<number, bigint>, row: number, state: DeltaState): void {
  const at = row * WIDTH;
  values[at] = state.total;
  values[at + 1] = state.sum;
  values[at + 2] = state.coveredUntilMs;
  values[at + 3] = state.countingSinceMs;
  values[at + 4] = state.intervalMs;
  values[at + 5] = state.lastSeenMs;
  if (state.holes === 0n) holes.delete(row);
  else holes.set(row, state.holes);
}
