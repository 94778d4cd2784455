import { describe, expect, it } from 'vitest';
import { DeltaTable, DeltaTableBuilder } from './delta-table.js';
import { oldestOpenMs, type DeltaState } from './deltas.js';

const state = (total: number, extra: Partial<DeltaState> = {}): DeltaState => ({
  total,
  sum: total / 2,
  coveredUntilMs: 1_795_348_800_000 + total,
  countingSinceMs: 1_795_340_000_000,
  intervalMs: 60_000,
  holes: 0n,
  lastSeenMs: 1_795_348_900_000,
  ...extra,
});

const asEntries = (map: ReadonlyMap<string, DeltaState>) => [...map];

describe('DeltaTable', () => {
  it('reads back every field as written, holes, -Infinity and fractions included, in insertion order', () => {
    const written: [string, DeltaState][] = [
      ['a', state(1)],
      ['b', state(2.5, { holes: (1n << 119n) | 5n, countingSinceMs: -Infinity })],
      ['c', state(0, { sum: 1e300, intervalMs: 300_000 })],
    ];
    const table = DeltaTable.from(written);
    expect(asEntries(table)).toEqual(written);
    expect(table.size).toBe(3);
    expect([...table.keys()]).toEqual(['a', 'b', 'c']);
    expect([...table.values()]).toEqual(written.map(([, s]) => s));
    expect(table.get('b')).toEqual(written[1]?.[1]);
    expect(table.get('missing')).toBeUndefined();
    expect(table.has('c')).toBe(true);
    const seen: string[] = [];
    table.forEach((value, key, map) => {
      seen.push(`${key}:${value.total}`);
      expect(map).toBe(table);
    });
    expect(seen).toEqual(['a:1', 'b:2.5', 'c:0']);
    const open: string[] = [];
    table.forEachOldestOpen((openMs, key) => open.push(`${key}:${openMs}`));
    expect(open).toEqual(written.map(([key, s]) => `${key}:${oldestOpenMs(s)}`));
  });

  const steps: {
    name: string;
    previous: [string, DeltaState][];
    writes: [string, DeltaState][];
    want: [string, DeltaState][];
    sharesRows: boolean;
  }[] = [
    { name: 'the same counters: the row index is shared', previous: [['a', state(1)], ['b', state(2)]], writes: [['b', state(4)], ['a', state(3)]], want: [['a', state(3)], ['b', state(4)]], sharesRows: true },
    { name: 'a counter added: after the previous ones', previous: [['a', state(1)]], writes: [['n', state(9)], ['a', state(2)]], want: [['a', state(2)], ['n', state(9)]], sharesRows: false },
    { name: 'a counter not written: gone', previous: [['a', state(1)], ['b', state(2)], ['c', state(3)]], writes: [['c', state(5)], ['a', state(4)]], want: [['a', state(4)], ['c', state(5)]], sharesRows: false },
    {
      name: 'holes follow their counter when rows move',
      previous: [['a', state(1, { holes: 1n })], ['b', state(2, { holes: 2n })], ['c', state(3, { holes: 4n })]],
      writes: [['c', state(6, { holes: 8n })], ['b', state(5, { holes: 0n })]],
      want: [['b', state(5)], ['c', state(6, { holes: 8n })]],
      sharesRows: false,
    },
    { name: 'a hole closed in place', previous: [['a', state(1, { holes: 3n })]], writes: [['a', state(1)]], want: [['a', state(1)]], sharesRows: true },
    { name: 'an added counter written twice: the last write', previous: [], writes: [['n', state(1)], ['n', state(2)]], want: [['n', state(2)]], sharesRows: false },
    { name: 'nothing before, nothing now', previous: [], writes: [], want: [], sharesRows: true },
  ];

  it.each(steps)('the next poll: $name', ({ previous, writes, want, sharesRows }) => {
    const before = DeltaTable.from(previous);
    const builder = new DeltaTableBuilder(before);
    for (const [key, value] of writes) builder.set(key, value);
    const next = builder.finish();
    expect(asEntries(next)).toEqual(want);
    expect(next.sharesRowsWith(before)).toBe(sharesRows);
    // The previous table is a value: building the next one leaves it as it was.
    expect(asEntries(before)).toEqual(previous);
  });

  it('tells which counters were written this poll, old and new', () => {
    const builder = new DeltaTableBuilder(DeltaTable.from([['a', state(1)], ['b', state(2)]]));
    builder.set('b', state(3));
    builder.set('n', state(4));
    expect(['a', 'b', 'n', 'x'].map((key) => builder.has(key))).toEqual([false, true, true, false]);
  });

  it('shares one row index between hosts with the same counters in the same order', () => {
    const hostA = DeltaTable.from([['x.count', state(1)], ['y.count', state(2)]]);
    const hostB = DeltaTable.from([['x.count', state(7)], ['y.count', state(8)]]);
    const reordered = DeltaTable.from([['y.count', state(8)], ['x.count', state(7)]]);
    expect(hostB.sharesRowsWith(hostA)).toBe(true);
    expect(reordered.sharesRowsWith(hostA)).toBe(false);
    expect(hostB.get('x.count')?.total).toBe(7);
    expect(hostA.get('x.count')?.total).toBe(1);
  });

  it('starts from a plain map (a state restored from the file)', () => {
    const restored = new Map([['a', state(1)], ['b', state(2, { holes: 7n })]]);
    const builder = new DeltaTableBuilder(restored);
    builder.set('a', state(3));
    builder.set('b', state(4, { holes: 6n }));
    const next = builder.finish();
    expect(asEntries(next)).toEqual([['a', state(3)], ['b', state(4, { holes: 6n })]]);
    expect(next.sharesRowsWith(DeltaTable.from([['a', state(0)], ['b', state(0)]])), 'the row index of every host with these counters').toBe(true);
  });
});
