import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { advanceDelta, MISSING_REASONS, oldestOpenMs, popcount, type DeltaPoint, type DeltaState, type DeltaTally, type MissingReason } from './deltas.js';

const MIN = 60_000;
const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const HOUR = 60 * MIN;

/** Points every minute from `startMs`; a number is a delta, null a point with no data yet. */
function points(startMs: number, values: readonly (number | null)[], intervalMs = MIN): DeltaPoint[] {
  return values.map((value, i) => ({ t: startMs + i * intervalMs, value, sum: 0 }));
}

interface Poll {
  readonly nowMs: number;
  readonly startMs: number;
  readonly values: readonly (number | null)[];
  readonly intervalMs?: number;
}

const noMissing = (): Record<MissingReason, number> => ({ null: 0, window_gap: 0, partial_overlap: 0, invalid: 0 });

/** Runs polls in order with a 2-minute ingest delay; returns the total after each and the final state and tally. */
function run(polls: readonly Poll[], horizonMs = 2 * HOUR) {
  let state: DeltaState | undefined;
  const tally: DeltaTally = { missing: noMissing(), late: 0 };
  const totals: (number | undefined)[] = [];
  for (const poll of polls) {
    const intervalMs = poll.intervalMs ?? MIN;
    const clock = { nowMs: poll.nowMs, dueUntilMs: poll.nowMs - 2 * MIN, giveUpBeforeMs: poll.nowMs - horizonMs };
    state = advanceDelta(points(poll.startMs, poll.values, intervalMs), intervalMs, state, clock, tally);
    totals.push(state?.total);
  }
  return { totals, state, tally };
}

describe('advanceDelta', () => {
  it.each<{ name: string; polls: Poll[]; totals: (number | undefined)[]; missing?: Partial<Record<MissingReason, number>>; late?: number; horizonMs?: number }>([
    {
      name: 'first sight starts at 0; the next poll adds exactly the newly due point',
      polls: [
        // due are points ending <= T0-2m, i.e. up to t = T0-3m
        { nowMs: T0, startMs: T0 - 10 * MIN, values: [1, 2, 3, 4, 5, 6, 7, 8, null, null] },
        { nowMs: T0 + MIN, startMs: T0 - 9 * MIN, values: [2, 3, 4, 5, 6, 7, 8, 9, null, null] },
      ],
      totals: [0, 9],
    },
    {
      name: 'overlapping polls add nothing twice',
      polls: [
        { nowMs: T0, startMs: T0 - 10 * MIN, values: [1, 1, 1, 1, 1, 1, 1, 1, null, null] },
        { nowMs: T0 + 2 * MIN, startMs: T0 - 10 * MIN, values: [1, 1, 1, 1, 1, 1, 1, 1, 5, 7, 9, null] },
        { nowMs: T0 + 2 * MIN, startMs: T0 - 10 * MIN, values: [1, 1, 1, 1, 1, 1, 1, 1, 5, 7, 9, null] },
      ],
      totals: [0, 12, 12],
    },
    {
      name: 'a point null inside the ingest delay is added when due',
      polls: [
        { nowMs: T0, startMs: T0 - 4 * MIN, values: [1, 1, null, null] },
        { nowMs: T0 + MIN, startMs: T0 - 4 * MIN, values: [1, 1, 6, null, null] },
      ],
      totals: [0, 6],
    },
    {
      name: 'a due null is a hole: added once when it arrives late, never again',
      polls: [
        { nowMs: T0, startMs: T0 - 4 * MIN, values: [1, 1, null, null] },
        { nowMs: T0 + MIN, startMs: T0 - 4 * MIN, values: [1, 1, null, null, null] },
        { nowMs: T0 + 30 * MIN, startMs: T0 - 4 * MIN, values: [1, 1, 50, ...Array<number>(29).fill(1), null, null] },
        { nowMs: T0 + 30 * MIN, startMs: T0 - 4 * MIN, values: [1, 1, 50, ...Array<number>(29).fill(1), null, null] },
      ],
      totals: [0, 0, 50 + 29, 50 + 29],
      late: 1,
    },
    {
      name: 'a hole that never fills is given up after the horizon and counted once',
      polls: [
        { nowMs: T0, startMs: T0 - 4 * MIN, values: [1, 1, null, null] },
        { nowMs: T0 + MIN, startMs: T0 - 4 * MIN, values: [1, 1, null, null, null] },
        { nowMs: T0 + 2 * HOUR, startMs: T0 - 4 * MIN, values: [1, 1, null, ...Array<number>(119).fill(1), null, null] },
        { nowMs: T0 + 2 * HOUR + MIN, startMs: T0 - 4 * MIN, values: [1, 1, null, ...Array<number>(120).fill(1), null, null] },
        // arrives after the horizon: never counted
        { nowMs: T0 + 2 * HOUR + 2 * MIN, startMs: T0 - 4 * MIN, values: [1, 1, 1000, ...Array<number>(121).fill(1), null, null] },
      ],
      totals: [0, 0, 119, 120, 121],
      missing: { null: 1 },
    },
    {
      name: 'horizon 0: a due null is given up at once, as without late data',
      polls: [
        { nowMs: T0, startMs: T0 - 4 * MIN, values: [1, 1, null, null] },
        { nowMs: T0 + MIN, startMs: T0 - 4 * MIN, values: [1, 1, null, null, null] },
        { nowMs: T0 + 2 * MIN, startMs: T0 - 4 * MIN, values: [1, 1, 50, 4, null, null] },
      ],
      totals: [0, 0, 4],
      missing: { null: 1 },
      horizonMs: 0,
    },
    {
      name: 'a window that does not reach back to the cursor counts the gap',
      polls: [
        { nowMs: T0, startMs: T0 - 4 * MIN, values: [1, 1, null, null] },
        // cursor at T0-2m; next window starts at T0+20m: 22 intervals never fetched
        { nowMs: T0 + 30 * MIN, startMs: T0 + 20 * MIN, values: [1, 2, 3, 4, 5, 6, 7, 8, null, null] },
      ],
      totals: [0, 36],
      missing: { window_gap: 22 },
    },
    {
      name: 'negative deltas are invalid, on time or late: skipped and counted',
      polls: [
        { nowMs: T0, startMs: T0 - 4 * MIN, values: [1, 1, null, null] },
        { nowMs: T0 + 2 * MIN, startMs: T0 - 2 * MIN, values: [5, null, null, null] },
        { nowMs: T0 + 2 * MIN, startMs: T0 - 2 * MIN, values: [5, -3, null, null] },
      ],
      totals: [0, 5, 5],
      missing: { invalid: 1 },
    },
    {
      name: 'a sum that would overflow to Infinity is invalid',
      polls: [
        { nowMs: T0, startMs: T0 - 4 * MIN, values: [1, 1, null, null] },
        { nowMs: T0 + 2 * MIN, startMs: T0 - 2 * MIN, values: [1.7e308, 1.7e308, null, null] },
      ],
      totals: [0, 1.7e308],
      missing: { invalid: 1 },
    },
    {
      name: 'interval grows to 120 s: a straddling point is not counted twice, open holes are given up',
      polls: [
        { nowMs: T0, startMs: T0 - 5 * MIN, values: [1, 1, 1, null, null] },
        { nowMs: T0 + MIN, startMs: T0 - 5 * MIN, values: [1, 1, 1, null, null, null] },
        // cursor at T0-1m with a hole at T0-2m; 120 s points [T0-2m, T0) straddle the cursor
        { nowMs: T0 + 5 * MIN, startMs: T0 - 2 * MIN, values: [100, 20, 30, null], intervalMs: 2 * MIN },
        // back to 60 s: [T0+2m, ...) continues exactly at the cursor
        { nowMs: T0 + 7 * MIN, startMs: T0 + MIN, values: [999, 4, 5, 6, null, null] },
      ],
      totals: [0, 0, 20, 35],
      missing: { partial_overlap: 1, null: 1 },
    },
  ])('$name', ({ polls, totals, missing, late, horizonMs }) => {
    const got = run(polls, horizonMs);
    expect(got.totals).toEqual(totals);
    expect(got.tally.missing).toEqual({ ...noMissing(), ...missing });
    expect(got.tally.late).toBe(late ?? 0);
  });

  it('adds a timer minute to total and sum together', () => {
    const tally: DeltaTally = { missing: noMissing(), late: 0 };
    const clock = (nowMs: number) => ({ nowMs, dueUntilMs: nowMs - 2 * MIN, giveUpBeforeMs: nowMs - 2 * HOUR });
    const first = advanceDelta([{ t: T0 - 4 * MIN, value: 3, sum: 0.6 }], MIN, undefined, clock(T0), tally);
    const timer = (value: number | null, sum: number): DeltaPoint[] => [{ t: T0 - 2 * MIN, value, sum }];
    const held = advanceDelta(timer(null, 0), MIN, first, clock(T0 + MIN), tally);
    const filled = advanceDelta(timer(4, 1.2), MIN, held, clock(T0 + 10 * MIN), tally);
    expect([first?.total, first?.sum]).toEqual([0, 0]);
    expect([held?.total, held?.holes]).toEqual([0, 1n]);
    expect([filled?.total, filled?.sum, filled?.holes]).toEqual([4, 1.2, 0n]);
  });

  it('keeps where it began counting, its first cursor, through later polls: the point the backfill ends history at', () => {
    const { state } = run([
      { nowMs: T0, startMs: T0 - 10 * MIN, values: [1, 1, 1, 1, 1, 1, 1, 1, null, null] },
      { nowMs: T0 + 5 * MIN, startMs: T0 - 10 * MIN, values: [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, null, null] },
    ]);
    // First sight at T0: due up to T0-2m, so the counter holds every minute from T0-2m on and none before.
    expect(state).toMatchObject({ countingSinceMs: T0 - 2 * MIN, coveredUntilMs: T0 + 3 * MIN, total: 5 });
  });

  it('keeps one bigint of holes behind the cursor, not an object per point', () => {
    const nulls = Array<null>(120).fill(null);
    const { state, tally } = run([
      { nowMs: T0, startMs: T0 - 4 * MIN, values: [1, 1, null, null] },
      { nowMs: T0 + 120 * MIN, startMs: T0 - 4 * MIN, values: [1, 1, ...nulls, null, null] },
    ], 3 * HOUR);
    expect(state).toBeDefined();
    if (!state) return;
    expect(popcount(state.holes)).toBe(120);
    expect(oldestOpenMs(state)).toBe(T0 - 2 * MIN);
    expect(Object.values(state).every((v) => typeof v === 'number' || typeof v === 'bigint')).toBe(true);
    expect(tally.missing).toEqual(noMissing());
  });
});

describe('popcount', () => {
  it.each([
    [0n, 0],
    [1n, 1],
    [0b1011n, 3],
    [(1n << 120n) - 1n, 120],
  ])('%s → %i', (bits, want) => {
    expect(popcount(bits)).toBe(want);
  });
  it('lists every reason once', () => {
    expect(new Set(MISSING_REASONS).size).toBe(4);
  });
});

describe('points that end before the oldest open hole and the cursor', () => {
  it('change nothing, so the mapper may leave them out (random polls: same state and tally with and without them)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            advanceMin: fc.integer({ min: 0, max: 30 }),
            windowMin: fc.integer({ min: 1, max: 150 }),
            nullChance: fc.double({ min: 0, max: 1, noNaN: true }),
            values: fc.array(fc.oneof(fc.integer({ min: 0, max: 50 }), fc.constant(-1)), { minLength: 150, maxLength: 150 }),
            seed: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 150, maxLength: 150 }),
            interval: fc.constantFrom(MIN, MIN, MIN, 5 * MIN),
          }),
          { minLength: 2, maxLength: 8 },
        ),
        (polls) => {
          let nowMs = T0;
          let full: DeltaState | undefined;
          let trimmed: DeltaState | undefined;
          const fullTally: DeltaTally = { missing: noMissing(), late: 0 };
          const trimmedTally: DeltaTally = { missing: noMissing(), late: 0 };
          for (const poll of polls) {
            nowMs += poll.advanceMin * MIN;
            const clock = { nowMs, dueUntilMs: nowMs - 2 * MIN, giveUpBeforeMs: nowMs - 2 * HOUR };
            const count = Math.max(1, Math.floor((poll.windowMin * MIN) / poll.interval));
            const start = Math.floor((nowMs - count * poll.interval) / poll.interval) * poll.interval;
            const all = points(
              start,
              Array.from({ length: count }, (_, i) => ((poll.seed[i] ?? 0) < poll.nullChance ? null : (poll.values[i] ?? 0))),
              poll.interval,
            );
            const settled = trimmed ? oldestOpenMs(trimmed) : -Infinity;
            expect(trimmed).toEqual(full);
            full = advanceDelta(all, poll.interval, full, clock, fullTally);
            trimmed = advanceDelta(trimmed ? all.filter((p) => p.t + poll.interval > settled) : all, poll.interval, trimmed, clock, trimmedTally);
            expect(trimmed).toEqual(full);
            expect(trimmedTally).toEqual(fullTally);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
