import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SeriesPoint } from '../../upstream/monitoring/schemas.js';
import { sampleLines } from '../../../test/support/family-lines.js';
import {
  EMPTY_SERIES_STATE,
  mapLatestValue,
  mapSeries,
  requiredWindow,
  selectMetricNames,
  type SeriesBatch,
  type SeriesHostState,
} from './map.js';
import { SeriesNaming } from './naming.js';

const MIN = 60_000;
const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const naming = new SeriesNaming();
const host = { account: 'prod', hostUuid: 'h1', hostname: 'web-1' };
const L = 'account="prod",host_uuid="h1",hostname="web-1"';

/** Points every `intervalS` seconds starting at `startMs`. */
function points(startMs: number, values: readonly (number | null)[], intervalS = 60): SeriesPoint[] {
  return values.map((value, i) => ({ timestamp: new Date(startMs + i * intervalS * 1000).toISOString(), value }));
}

function batch(series: Record<string, SeriesPoint[]>, intervalSeconds = 60): SeriesBatch {
  return { intervalSeconds, points: series };
}

function metricLines(families: ReturnType<typeof mapSeries>['families']): string[] {
  return sampleLines(families).filter((l) => !l.startsWith('monapi_series_points_missing_total'));
}

describe('mapSeries gauges', () => {
  it.each<{ name: string; input: Record<string, SeriesPoint[]>; want: string[] }>([
    {
      name: 'newest non-null point, percent → ratio',
      input: { 'system.cpu.user': points(T0 - 5 * MIN, [10, 20, 42.5, null, null]) },
      want: [`monapi_system_cpu_user_ratio{${L}} 0.425`],
    },
    {
      name: 'milliseconds → seconds',
      input: { 'system.io.wait_r': points(T0 - 2 * MIN, [250, null]) },
      want: [`monapi_system_io_wait_r_seconds{${L}} 0.25`],
    },
    {
      name: 'all null: not emitted',
      input: { 'system.load.1': points(T0 - 3 * MIN, [null, null, null]) },
      want: [],
    },
    {
      name: 'newest non-null older than 10 min: not emitted (never an old value)',
      input: { 'system.load.1': points(T0 - 12 * MIN, [1.5, null, null]) },
      want: [],
    },
    {
      name: 'unknown name: gauge as sent, negative and huge values kept',
      input: { 'custom.temp': points(T0 - MIN, [-12.5]), 'custom.big': points(T0 - MIN, [1e300]) },
      want: [`monapi_custom_big{${L}} 1e+300`, `monapi_custom_temp{${L}} -12.5`],
    },
    {
      name: 'percent above 100 (several cores) is passed on, not clamped',
      input: { 'nginx.workers.cpu.total': points(T0 - MIN, [150]) },
      want: [`monapi_nginx_workers_cpu_total_ratio{${L}} 1.5`],
    },
    {
      name: 'points out of order are sorted first',
      input: { 'system.load.5': [...points(T0 - MIN, [3]), ...points(T0 - 2 * MIN, [2])] },
      want: [`monapi_system_load_5{${L}} 3`],
    },
  ])('$name', ({ input, want }) => {
    const got = mapSeries(batch(input), EMPTY_SERIES_STATE, { ...host, nowMs: T0, ingestDelayMs: 2 * MIN, naming });
    expect(metricLines(got.families)).toEqual(want);
  });

  it.each<{ name: string; values: (number | null)[]; want: string[] }>([
    // Points at T0-5m..T0-1m; with a 2-minute ingest delay the agent must have reported up to T0-2m.
    { name: 'a gap the agent should have filled is NaN', values: [10, 20, null, null, null], want: [`monapi_system_cpu_user_ratio{${L}} NaN`] },
    { name: 'nulls only inside the ingest delay keep the newest value', values: [10, 20, 30, null, null], want: [`monapi_system_cpu_user_ratio{${L}} 0.3`] },
    { name: 'a value newer than the gap wins', values: [10, 20, null, 40, null], want: [`monapi_system_cpu_user_ratio{${L}} 0.4`] },
    { name: 'all null past the delay is NaN, not absent', values: [null, null, null, null, null], want: [`monapi_system_cpu_user_ratio{${L}} NaN`] },
  ])('null_handling nan: $name', ({ values, want }) => {
    const input = batch({ 'system.cpu.user': points(T0 - 5 * MIN, values) });
    const got = mapSeries(input, EMPTY_SERIES_STATE, { ...host, nowMs: T0, ingestDelayMs: 2 * MIN, naming, nullHandling: 'nan' });
    expect(metricLines(got.families)).toEqual(want);
  });

  it('stamps gauges and counters only when sample timestamps are switched on', () => {
    const input = batch({
      'system.cpu.user': points(T0 - 5 * MIN, [10, 20, 30, null, null]),
      'nginx.http.request.count': points(T0 - 5 * MIN, [1, 2, 3, null, null]),
    });
    const opts = { ...host, nowMs: T0, ingestDelayMs: 2 * MIN, naming };
    const plain = mapSeries(input, EMPTY_SERIES_STATE, opts);
    expect(plain.families.flatMap((f) => [...f.samples]).some((s) => 'timestampMs' in s)).toBe(false);
    const stamped = mapSeries(input, EMPTY_SERIES_STATE, { ...opts, sampleTimestamps: true });
    const byName = new Map(stamped.families.map((f) => [f.spec.name, f.samples[0]]));
    expect(byName.get('monapi_system_cpu_user_ratio')).toMatchObject({ value: 0.3, timestampMs: T0 - 3 * MIN });
    expect(byName.get('monapi_nginx_http_request_count_total')).toMatchObject({ value: 0, timestampMs: T0 - 2 * MIN });
  });

  it('respects a custom staleness limit', () => {
    const input = batch({ 'system.load.1': points(T0 - 3 * MIN, [1]) });
    const opts = { ...host, nowMs: T0, ingestDelayMs: 0, naming };
    expect(metricLines(mapSeries(input, EMPTY_SERIES_STATE, { ...opts, stalenessMs: 2 * MIN }).families)).toEqual([]);
    expect(metricLines(mapSeries(input, EMPTY_SERIES_STATE, { ...opts, stalenessMs: 3 * MIN }).families)).toHaveLength(1);
  });
});

/** Polls one delta metric in sequence; returns the counter value and missing stats after each. */
function runPolls(
  polls: readonly { nowMs: number; startMs: number; values: (number | null)[]; intervalS?: number; name?: string }[],
  ingestDelayMs = 2 * MIN,
) {
  let state: SeriesHostState = EMPTY_SERIES_STATE;
  const out: { value: number | undefined; missing: SeriesHostState['missing'] }[] = [];
  for (const poll of polls) {
    const name = poll.name ?? 'nginx.http.request.count';
    const result = mapSeries(batch({ [name]: points(poll.startMs, poll.values, poll.intervalS) }, poll.intervalS), state, {
      ...host,
      nowMs: poll.nowMs,
      ingestDelayMs,
      naming,
    });
    state = result.state;
    const counter = result.families.find((f) => f.spec.type === 'counter' && f.spec.name !== 'monapi_series_points_missing_total');
    const sample = counter?.samples[0];
    out.push({ value: sample && 'value' in sample ? sample.value : undefined, missing: state.missing });
  }
  return { out, state };
}

const NO_MISSING = { null: 0, window_gap: 0, partial_overlap: 0, invalid: 0 };

describe('mapSeries deltas → counters', () => {
  it.each([
    {
      name: 'first sight starts at 0, the next poll adds exactly the newly eligible point',
      polls: [
        // window [T0-10m, T0): eligible are points ending <= T0-2m, i.e. up to t = T0-3m
        { nowMs: T0, startMs: T0 - 10 * MIN, values: [1, 2, 3, 4, 5, 6, 7, 8, null, null] },
        { nowMs: T0 + MIN, startMs: T0 - 9 * MIN, values: [2, 3, 4, 5, 6, 7, 8, 9, null, null] },
      ],
      want: [0, 9],
      missing: NO_MISSING,
    },
    {
      name: 'the same poll twice adds nothing (overlapping windows)',
      polls: [
        { nowMs: T0, startMs: T0 - 10 * MIN, values: [1, 1, 1, 1, 1, 1, 1, 1, null, null] },
        { nowMs: T0 + 2 * MIN, startMs: T0 - 10 * MIN, values: [1, 1, 1, 1, 1, 1, 1, 1, 5, 7, 9, null] },
        { nowMs: T0 + 2 * MIN, startMs: T0 - 10 * MIN, values: [1, 1, 1, 1, 1, 1, 1, 1, 5, 7, 9, null] },
      ],
      want: [0, 12, 12],
      missing: NO_MISSING,
    },
    {
      name: 'a point still null inside the ingest delay is added once it is filled in',
      polls: [
        { nowMs: T0, startMs: T0 - 4 * MIN, values: [1, 1, null, null] },
        { nowMs: T0 + MIN, startMs: T0 - 4 * MIN, values: [1, 1, 6, null, null] },
      ],
      want: [0, 6],
      missing: NO_MISSING,
    },
    {
      name: 'an eligible null is skipped and counted as missing, never added later',
      polls: [
        { nowMs: T0, startMs: T0 - 4 * MIN, values: [1, 1, null, null] },
        { nowMs: T0 + MIN, startMs: T0 - 4 * MIN, values: [1, 1, null, null, null] },
        { nowMs: T0 + 2 * MIN, startMs: T0 - 4 * MIN, values: [1, 1, 50, 4, null, null] },
      ],
      want: [0, 0, 4],
      missing: { ...NO_MISSING, null: 1 },
    },
    {
      name: 'a window that does not reach back to the cursor counts the gap',
      polls: [
        { nowMs: T0, startMs: T0 - 4 * MIN, values: [1, 1, null, null] },
        // cursor at T0-2m; next window starts at T0+20m: 22 intervals never fetched
        { nowMs: T0 + 30 * MIN, startMs: T0 + 20 * MIN, values: [1, 2, 3, 4, 5, 6, 7, 8, null, null] },
      ],
      want: [0, 36],
      missing: { ...NO_MISSING, window_gap: 22 },
    },
    {
      name: 'negative deltas are invalid: skipped and counted, the counter never decreases',
      polls: [
        { nowMs: T0, startMs: T0 - 4 * MIN, values: [1, 1, null, null] },
        { nowMs: T0 + 2 * MIN, startMs: T0 - 2 * MIN, values: [5, -3, null, null] },
      ],
      want: [0, 5],
      missing: { ...NO_MISSING, invalid: 1 },
    },
    {
      name: 'a sum that would overflow to Infinity is invalid',
      polls: [
        { nowMs: T0, startMs: T0 - 4 * MIN, values: [1, 1, null, null] },
        { nowMs: T0 + 2 * MIN, startMs: T0 - 2 * MIN, values: [1.7e308, 1.7e308, null, null] },
      ],
      want: [0, 1.7e308],
      missing: { ...NO_MISSING, invalid: 1 },
    },
    {
      name: 'interval grows to 120 s after an outage: a straddling point is not double counted',
      polls: [
        // cursor ends at T0-2m+... : T0-3m point is the newest eligible, cursor = T0-2m
        { nowMs: T0, startMs: T0 - 5 * MIN, values: [1, 1, 1, null, null] },
        // 120 s points starting at T0-3m: [T0-3m,T0-1m) straddles the cursor, then [T0-1m,T0+1m), [T0+1m,T0+3m)
        { nowMs: T0 + 5 * MIN, startMs: T0 - 3 * MIN, values: [100, 20, 30, null], intervalS: 120 },
        // back to 60 s: [T0+3m, ...) continues exactly at the cursor
        { nowMs: T0 + 7 * MIN, startMs: T0 + MIN, values: [999, 999, 4, 5, null, null] },
      ],
      want: [0, 50, 59],
      missing: { ...NO_MISSING, partial_overlap: 1 },
    },
  ])('$name', ({ polls, want, missing }) => {
    const { out, state } = runPolls(polls);
    expect(out.map((o) => o.value)).toEqual(want);
    expect(state.missing).toEqual(missing);
  });

  it('converts kilobyte deltas to bytes (KiB × 1024)', () => {
    const { out } = runPolls([
      { nowMs: T0, startMs: T0 - 4 * MIN, values: [1, 1, null, null], name: 'system.io.kbs_r' },
      { nowMs: T0 + MIN, startMs: T0 - 4 * MIN, values: [1, 1, 2.5, null, null], name: 'system.io.kbs_r' },
    ]);
    expect(out.map((o) => o.value)).toEqual([0, 2560]);
  });

  it('renders counters with host labels and missing-point counters per reason', () => {
    const got = mapSeries(batch({ 'system.net.bytes_rcvd': points(T0 - 4 * MIN, [1, 1, null, null]) }), EMPTY_SERIES_STATE, {
      ...host,
      nowMs: T0,
      ingestDelayMs: 2 * MIN,
      naming,
    });
    expect(sampleLines(got.families)).toEqual([
      `monapi_series_points_missing_total{account="prod",host_uuid="h1",reason="invalid"} 0`,
      `monapi_series_points_missing_total{account="prod",host_uuid="h1",reason="null"} 0`,
      `monapi_series_points_missing_total{account="prod",host_uuid="h1",reason="partial_overlap"} 0`,
      `monapi_series_points_missing_total{account="prod",host_uuid="h1",reason="window_gap"} 0`,
      `monapi_system_net_bytes_rcvd_total{${L}} 0`,
    ]);
  });

  it('an empty input retracts every metric and drops counter state', () => {
    const first = runPolls([{ nowMs: T0, startMs: T0 - 4 * MIN, values: [1, 1, null, null] }]).state;
    const got = mapSeries([], first, { ...host, nowMs: T0 + MIN, ingestDelayMs: 2 * MIN, naming });
    expect(metricLines(got.families)).toEqual([]);
    expect(got.state.counters.size).toBe(0);
  });

  it('a metric with no points yet starts at the next input that has some', () => {
    const { out } = runPolls([
      { nowMs: T0, startMs: T0, values: [] },
      { nowMs: T0 + MIN, startMs: T0 - 4 * MIN, values: [1, 1, 1, null, null] },
    ]);
    expect(out.map((o) => o.value)).toEqual([undefined, 0]);
  });

  it('merges several responses of one host and reports collisions', () => {
    const got = mapSeries(
      [
        { host_uuid: 'h1', since: new Date(T0 - 2 * MIN).toISOString(), interval: 60, series: { 'system.load.1': points(T0 - MIN, [1]) } },
        batch({ 'foo.bar': points(T0 - MIN, [2]), foo_bar: points(T0 - MIN, [3]) }),
      ],
      EMPTY_SERIES_STATE,
      { ...host, nowMs: T0, ingestDelayMs: 0, naming },
    );
    expect(metricLines(got.families)).toEqual([`monapi_foo_bar{${L}} 2`, `monapi_system_load_1{${L}} 1`]);
    expect(got.collisions).toEqual([{ familyKey: 'monapi_foo_bar', kept: 'foo.bar', dropped: ['foo_bar'] }]);
  });

  it('rejects a batch with a bad interval, naming it', () => {
    expect(() => mapSeries(batch({}, 0), EMPTY_SERIES_STATE, { ...host, nowMs: T0, ingestDelayMs: 0, naming })).toThrow(/interval/);
  });

  it('counts every eligible point exactly once over random overlapping polls', () => {
    // Ground truth: one delta per minute. Each point is ingested within the delay, so an
    // eligible point is never null; the counter must equal the exact sum after its start.
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 400, maxLength: 400 }),
        fc.array(fc.record({ stepS: fc.integer({ min: 0, max: 1200 }), windowMin: fc.integer({ min: 1, max: 40 }) }), { minLength: 1, maxLength: 15 }),
        fc.integer({ min: 0, max: 5 }),
        (deltas, polls, delayMin) => {
          const base = T0 - 100 * MIN;
          const delay = delayMin * MIN;
          let now = base + 60 * MIN;
          let state: SeriesHostState = EMPTY_SERIES_STATE;
          let startCursor: number | undefined;
          let last = 0;
          for (const { stepS, windowMin } of polls) {
            now += stepS * 1000;
            // ask for at least what requiredWindow says, sometimes more
            const windowMinutes = Math.max(windowMin, Number(requiredWindow(state, now, delay).slice(0, -1)));
            const first = Math.ceil((now - windowMinutes * MIN - base) / MIN);
            const values: (number | null)[] = [];
            for (let i = first; base + i * MIN < now; i++) {
              const ingested = base + (i + 1) * MIN + delay <= now || (i * 7) % 3 === 0;
              values.push(ingested ? (deltas[i] ?? 0) : null);
            }
            const result = mapSeries(batch({ 'nginx.http.request.count': points(base + first * MIN, values) }), state, {
              ...host,
              nowMs: now,
              ingestDelayMs: delay,
              naming,
            });
            state = result.state;
            const cursor = state.counters.get('nginx.http.request.count');
            if (!cursor) return false;
            startCursor ??= cursor.coveredUntilMs;
            expect(cursor.total).toBeGreaterThanOrEqual(last);
            last = cursor.total;
            const fromI = (startCursor - base) / MIN;
            const toI = (cursor.coveredUntilMs - base) / MIN;
            const expected = deltas.slice(fromI, toI).reduce((a, b) => a + b, 0);
            expect(cursor.total).toBe(expected);
            expect(state.missing).toEqual(NO_MISSING);
            expect(cursor.coveredUntilMs).toBeLessThanOrEqual(now - delay);
            expect(cursor.coveredUntilMs).toBeGreaterThan(now - delay - MIN);
          }
          return true;
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('requiredWindow', () => {
  const counters = (ages: number[]) => new Map(ages.map((a, i) => [`m${i}`, { total: 0, coveredUntilMs: T0 - a }]));
  it.each([
    { name: 'no counters: the minimum (staleness 10 min)', ages: [], delay: 2 * MIN, want: '10m' },
    { name: 'large ingest delay dominates the minimum', ages: [], delay: 8 * MIN, want: '13m' },
    { name: 'oldest cursor plus margin', ages: [3 * MIN, 30 * MIN], delay: 2 * MIN, want: '32m' },
    { name: 'rounded up to whole minutes', ages: [30 * MIN + 1], delay: 0, want: '33m' },
    { name: 'capped at 4 h so the interval stays 60 s', ages: [10 * 60 * MIN], delay: 2 * MIN, want: '240m' },
  ])('$name', ({ ages, delay, want }) => {
    expect(requiredWindow({ ...EMPTY_SERIES_STATE, counters: counters(ages) }, T0, delay)).toBe(want);
  });

  it('honours a custom minimum', () => {
    expect(requiredWindow(EMPTY_SERIES_STATE, T0, 0, 60_000)).toBe('5m');
  });
});

describe('mapLatestValue', () => {
  const opts = { ...host, nowMs: T0, naming };
  it.each([
    {
      name: 'gauge in base units, same family as the series mapping',
      input: { host_uuid: 'h1', name: 'system.cpu.user', timestamp: new Date(T0 - MIN).toISOString(), value: 50 },
      want: [`monapi_system_cpu_user_ratio{${L}} 0.5`],
    },
    {
      name: 'null value',
      input: { host_uuid: 'h1', name: 'system.cpu.user', timestamp: null, value: null },
      want: [],
    },
    {
      name: 'stale value',
      input: { host_uuid: 'h1', name: 'system.cpu.user', timestamp: new Date(T0 - 11 * MIN).toISOString(), value: 50 },
      want: [],
    },
    {
      name: 'a delta cannot be a counter from one latest value',
      input: { host_uuid: 'h1', name: 'nginx.http.request.count', timestamp: new Date(T0 - MIN).toISOString(), value: 5 },
      want: [],
    },
  ])('$name', ({ input, want }) => {
    expect(sampleLines(mapLatestValue(input, opts).families)).toEqual(want);
  });

  it('gives the same family spec as the series mapping', () => {
    const latest = mapLatestValue({ host_uuid: 'h1', name: 'system.mem.used', timestamp: new Date(T0).toISOString(), value: 1 }, opts);
    const series = mapSeries(batch({ 'system.mem.used': points(T0, [1]) }), EMPTY_SERIES_STATE, { ...opts, ingestDelayMs: 0 });
    expect(latest.families[0]?.spec).toEqual(series.families[0]?.spec);
  });
});

describe('selectMetricNames', () => {
  const catalogue = {
    system: ['system.cpu.user', 'system.cpu.idle', 'system.mem.used'],
    nginx: ['nginx.http.request.count', 'nginx.http.request.time', 'nginx.http.request.time.max'],
    dup: ['system.cpu.user'],
  };
  it.each([
    { name: 'no filters: all, sorted, deduplicated', include: [], exclude: [], want: [...new Set(Object.values(catalogue).flat())].sort() },
    { name: 'include glob', include: ['system.cpu.*'], exclude: [], want: ['system.cpu.idle', 'system.cpu.user'] },
    { name: 'exclude wins', include: ['nginx.*'], exclude: ['*.max'], want: ['nginx.http.request.count', 'nginx.http.request.time'] },
    { name: 'nothing matches', include: ['mysql.*'], exclude: [], want: [] },
  ])('$name', ({ include, exclude, want }) => {
    expect(selectMetricNames(catalogue, { include, exclude })).toEqual(want);
  });
});
