import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FamilySamples } from '../../exposition/model.js';
import { renderSampleLines } from '../../exposition/format.js';
import type { SeriesPoint } from './decode.js';
import { popcount } from './deltas.js';
import {
  counterKeysOf,
  EMPTY_SERIES_STATE,
  HostLabels,
  mapLatestValue,
  mapSeries,
  MissingPointTotals,
  requiredWindow,
  selectMetricNames,
  type SeriesBatch,
  type SeriesHostState,
  type SeriesMapOptions,
} from './map.js';
import { SeriesNaming } from './naming.js';
import { DeltaTable } from './delta-table.js';
import { SeriesPoints } from './points.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const naming = new SeriesNaming();
const host = { account: 'prod', hostUuid: 'h1' };
const L = 'account="prod",host_uuid="h1"';

/** Points every `intervalS` seconds starting at `startMs`. */
function points(startMs: number, values: readonly (number | null)[], intervalS = 60): SeriesPoint[] {
  return values.map((value, i) => ({ timestamp: new Date(startMs + i * intervalS * 1000).toISOString(), value }));
}

function batch(series: Record<string, SeriesPoint[]>, intervalSeconds = 60): SeriesBatch {
  return { intervalSeconds, points: Object.fromEntries(Object.entries(series).map(([name, list]) => [name, SeriesPoints.of(list)])) };
}

/** Exposition lines as the text format writes them, sorted. */
function lines(families: readonly FamilySamples[]): string[] {
  return families
    .flatMap((f) => renderSampleLines(f).split('\n'))
    .filter((l) => l !== '')
    .sort();
}

function metricLines(families: readonly FamilySamples[]): string[] {
  return lines(families).filter((l) => !l.startsWith('monapi_series_points_missing_total'));
}

const opts = (nowMs: number, extra: Partial<SeriesMapOptions> = {}): SeriesMapOptions => ({ ...host, nowMs, ingestDelayMs: 2 * MIN, naming, ...extra });

describe('mapSeries gauges', () => {
  it.each<{ name: string; input: Record<string, SeriesPoint[]>; want: string[] }>([
    {
      name: 'newest non-null point, percent → ratio, the mode as a label',
      input: { 'system.cpu.user': points(T0 - 5 * MIN, [10, 20, 42.5, null, null]), 'system.cpu.stolen': points(T0 - MIN, [1]) },
      want: [`monapi_system_cpu_time_ratio{${L},mode="steal"} 0.01`, `monapi_system_cpu_time_ratio{${L},mode="user"} 0.425`],
    },
    {
      name: 'milliseconds → seconds',
      input: { 'system.io.wait_r': points(T0 - 2 * MIN, [250, null]) },
      want: [`monapi_system_disk_read_wait_seconds{${L}} 0.25`],
    },
    {
      name: 'per-device names join their family with a label; the total is left out',
      input: {
        'system.disk.in_use': points(T0 - MIN, [40]),
        'system.disk.in_use|/': points(T0 - MIN, [50]),
        'system.disk.in_use|/var/lib/mysql': points(T0 - MIN, [75]),
      },
      want: [`monapi_system_filesystem_used_ratio{${L},mountpoint="/"} 0.5`, `monapi_system_filesystem_used_ratio{${L},mountpoint="/var/lib/mysql"} 0.75`],
    },
    { name: 'all null: not emitted', input: { 'system.load.1': points(T0 - 3 * MIN, [null, null, null]) }, want: [] },
    { name: 'newest non-null older than 10 min: not emitted (never an old value)', input: { 'system.load.1': points(T0 - 12 * MIN, [1.5, null, null]) }, want: [] },
    {
      name: 'unknown name: gauge as sent, negative and huge values kept',
      input: { 'custom.temp': points(T0 - MIN, [-12.5]), 'custom.big': points(T0 - MIN, [1e300]) },
      want: [`monapi_custom_big{${L}} 1e+300`, `monapi_custom_temp{${L}} -12.5`],
    },
    {
      name: 'percent above 100 (several cores) is passed on, not clamped',
      input: { 'nginx.workers.cpu.total': points(T0 - MIN, [150]) },
      want: [`monapi_nginx_workers_cpu_usage_ratio{${L}} 1.5`],
    },
    { name: 'points out of order are sorted first', input: { 'system.load.5': [...points(T0 - MIN, [3]), ...points(T0 - 2 * MIN, [2])] }, want: [`monapi_system_load5{${L}} 3`] },
  ])('$name', ({ input, want }) => {
    expect(metricLines(mapSeries(batch(input), EMPTY_SERIES_STATE, opts(T0)).families)).toEqual(want);
  });

  it.each<{ name: string; values: (number | null)[]; want: string[] }>([
    // Points at T0-5m..T0-1m; with a 2-minute ingest delay the agent must have reported up to T0-2m.
    { name: 'a gap the agent should have filled is NaN', values: [10, 20, null, null, null], want: [`monapi_system_cpu_time_ratio{${L},mode="user"} NaN`] },
    { name: 'nulls only inside the ingest delay keep the newest value', values: [10, 20, 30, null, null], want: [`monapi_system_cpu_time_ratio{${L},mode="user"} 0.3`] },
    { name: 'a value newer than the gap wins', values: [10, 20, null, 40, null], want: [`monapi_system_cpu_time_ratio{${L},mode="user"} 0.4`] },
    { name: 'all null past the delay is NaN, not absent', values: [null, null, null, null, null], want: [`monapi_system_cpu_time_ratio{${L},mode="user"} NaN`] },
  ])('null_handling nan: $name', ({ values, want }) => {
    const input = batch({ 'system.cpu.user': points(T0 - 5 * MIN, values) });
    expect(metricLines(mapSeries(input, EMPTY_SERIES_STATE, opts(T0, { nullHandling: 'nan' })).families)).toEqual(want);
  });

  it('stamps gauges and counters only when sample timestamps are switched on', () => {
    const input = batch({
      'system.cpu.user': points(T0 - 5 * MIN, [10, 20, 30, null, null]),
      'nginx.http.request.count': points(T0 - 5 * MIN, [1, 2, 3, null, null]),
    });
    const plain = mapSeries(input, EMPTY_SERIES_STATE, opts(T0));
    expect(plain.families.flatMap((f) => [...f.samples]).some((s) => 'timestampMs' in s)).toBe(false);
    const stamped = mapSeries(input, EMPTY_SERIES_STATE, opts(T0, { sampleTimestamps: true }));
    const byName = new Map(stamped.families.map((f) => [f.spec.name, f.samples[0]]));
    expect(byName.get('monapi_system_cpu_time_ratio')).toMatchObject({ value: 0.3, timestampMs: T0 - 3 * MIN });
    expect(byName.get('monapi_nginx_http_requests_total')).toMatchObject({ value: 0, timestampMs: T0 - 2 * MIN });
  });

  it('maps several batches as their merge (a later batch wins a name two carry), poll after poll with one host whose names change', () => {
    const labels = new HostLabels('prod', 'h1');
    const polls: { batches: Record<string, SeriesPoint[]>[]; naming?: SeriesNaming }[] = [
      { batches: [{ 'system.load.1': points(T0 - MIN, [1]), 'system.cpu.user': points(T0 - MIN, [10]) }, { 'system.load.5': points(T0 - MIN, [5]) }] },
      { batches: [{ 'system.load.1': points(T0 - MIN, [1]), 'system.cpu.user': points(T0 - MIN, [10]) }, { 'system.load.5': points(T0 - MIN, [5]) }] },
      { batches: [{ 'system.load.1': points(T0 - MIN, [1]), 'system.load.5': points(T0 - MIN, [2]) }, { 'system.load.5': points(T0 - MIN, [5]), 'system.load.1': points(T0 - MIN, [7]) }] },
      { batches: [{ 'system.load.5': points(T0 - MIN, [3]) }, { 'system.io.iops_r|sda': points(T0 - MIN, [4]), 'system.io.iops_w|sda': points(T0 - MIN, [6]) }] },
      { batches: [{ 'system.load.5': points(T0 - MIN, [3]) }, { 'system.io.iops_r|sda': points(T0 - MIN, [4]), 'system.io.iops_w|sda': points(T0 - MIN, [6]) }], naming: new SeriesNaming() },
    ];
    for (const { batches, naming: other } of polls) {
      const merged = batch(Object.assign({}, ...batches) as Record<string, SeriesPoint[]>);
      const want = mapSeries(merged, EMPTY_SERIES_STATE, opts(T0, other && { naming: other }));
      const got = mapSeries(batches.map((b) => batch(b)), EMPTY_SERIES_STATE, opts(T0, { labels, ...(other && { naming: other }) }));
      expect(metricLines(got.families)).toEqual(metricLines(want.families));
      expect(got.collisions).toEqual(want.collisions);
    }
  });

  it('respects a custom staleness limit', () => {
    const input = batch({ 'system.load.1': points(T0 - 3 * MIN, [1]) });
    expect(metricLines(mapSeries(input, EMPTY_SERIES_STATE, opts(T0, { ingestDelayMs: 0, stalenessMs: 2 * MIN })).families)).toEqual([]);
    expect(metricLines(mapSeries(input, EMPTY_SERIES_STATE, opts(T0, { ingestDelayMs: 0, stalenessMs: 3 * MIN })).families)).toHaveLength(1);
  });

  it('reuses one label object per series of a host across polls', () => {
    const labels = new HostLabels('prod', 'h1');
    const input = batch({ 'system.cpu.user': points(T0 - MIN, [1]), 'system.load.1': points(T0 - MIN, [1]) });
    const first = mapSeries(input, EMPTY_SERIES_STATE, opts(T0, { labels }));
    const second = mapSeries(input, first.state, opts(T0 + MIN, { labels }));
    const labelsOf = (r: typeof first) => r.families.filter((f) => f.spec.name !== 'monapi_series_points_missing_total').map((f) => f.samples[0]?.labels);
    expect(labelsOf(second)).toEqual(labelsOf(first));
    labelsOf(second).forEach((l, i) => expect(l).toBe(labelsOf(first)[i]));
  });

  it('shares one label object between the metrics of a host with the same metric labels', () => {
    const labels = new HostLabels('prod', 'h1');
    const naming = new SeriesNaming();
    const read = labels.of(naming.metric('system.io.iops_r|sda'));
    expect(labels.of(naming.metric('system.io.iops_w|sda'))).toBe(read);
    expect(labels.of(naming.metric('system.io.iops_r|sdb'))).not.toBe(read);
    expect(labels.of(naming.metric('system.io.iops_r|sdb'))).toEqual({ account: 'prod', host_uuid: 'h1', device: 'sdb' });
    expect(new HostLabels('prod', 'h2').of(naming.metric('system.io.iops_r|sda'))).toEqual({ account: 'prod', host_uuid: 'h2', device: 'sda' });
  });

  it('puts the host labels first and the metric labels after them', () => {
    const labels = new HostLabels('prod', 'h1');
    const metric = new SeriesNaming().metric('system.io.iops_r|sda');
    expect(Object.entries(labels.of(metric))).toEqual([['account', 'prod'], ['host_uuid', 'h1'], ['device', 'sda']]);
    expect(labels.of(new SeriesNaming().metric('system.load.1'))).toBe(labels.host);
  });

  it('keeps giving the same label object after many namings have come and gone (reloads)', () => {
    const labels = new HostLabels('prod', 'h1');
    const first = labels.of(new SeriesNaming().metric('system.io.iops_r|sda'));
    for (let reload = 0; reload < 3_000; reload++) labels.of(new SeriesNaming().metric('system.io.iops_r|sda'));
    expect(labels.of(new SeriesNaming().metric('system.io.iops_r|sda'))).toBe(first);
    expect(labels.remembered).toBeLessThanOrEqual(1_100);
    expect(labels.of(new SeriesNaming().metric('system.io.iops_r|sdb'))).toEqual({ account: 'prod', host_uuid: 'h1', device: 'sdb' });
  });
});

/** Runs polls of one delta metric; returns the counter after each and the final state. */
function runPolls(polls: readonly { nowMs: number; startMs: number; values: (number | null)[]; name?: string }[], extra: Partial<SeriesMapOptions> = {}) {
  let state: SeriesHostState = EMPTY_SERIES_STATE;
  const out: (string | undefined)[] = [];
  for (const poll of polls) {
    const name = poll.name ?? 'nginx.http.request.count';
    const result = mapSeries(batch({ [name]: points(poll.startMs, poll.values) }), state, opts(poll.nowMs, extra));
    state = result.state;
    out.push(metricLines(result.families)[0]);
  }
  return { out, state };
}

describe('mapSeries deltas → counters', () => {
  it('converts kilobyte deltas to bytes (KiB × 1024) under the curated name', () => {
    const { out } = runPolls([
      { nowMs: T0, startMs: T0 - 4 * MIN, values: [1, 1, null, null], name: 'system.io.kbs_r' },
      { nowMs: T0 + MIN, startMs: T0 - 4 * MIN, values: [1, 1, 2.5, null, null], name: 'system.io.kbs_r' },
    ]);
    expect(out).toEqual([`monapi_system_disk_read_bytes_total{${L}} 0`, `monapi_system_disk_read_bytes_total{${L}} 2560`]);
  });

  it('counts a late point once it arrives, and never again', () => {
    const { out, state } = runPolls([
      { nowMs: T0, startMs: T0 - 4 * MIN, values: [1, 1, null, null] },
      { nowMs: T0 + MIN, startMs: T0 - 4 * MIN, values: [1, 1, null, null, null] },
      { nowMs: T0 + 20 * MIN, startMs: T0 - 4 * MIN, values: [1, 1, 7, ...Array<number>(18).fill(0), null, null, null] },
      { nowMs: T0 + 21 * MIN, startMs: T0 - 4 * MIN, values: [1, 1, 7, ...Array<number>(19).fill(0), null, null, null] },
    ]);
    expect(out.map((l) => l?.split(' ')[1])).toEqual(['0', '0', '7', '7']);
    expect(state.missing).toEqual({ null: 0, window_gap: 0, partial_overlap: 0, invalid: 0 });
  });

  it('renders counters with host labels and keeps the missing points in the state', () => {
    const got = mapSeries(batch({ 'system.net.bytes_rcvd|eth0': points(T0 - 4 * MIN, [1, 1, null, null]) }), EMPTY_SERIES_STATE, opts(T0));
    expect(lines(got.families)).toEqual([`monapi_system_network_receive_bytes_total{${L},interface="eth0"} 0`]);
    expect(got.state.missing).toEqual({ null: 0, window_gap: 0, partial_overlap: 0, invalid: 0 });
  });
});

describe('MissingPointTotals', () => {
  const zero = { null: 0, window_gap: 0, partial_overlap: 0, invalid: 0 };
  it('sums what each host newly missed, per account and reason, and never decreases', () => {
    const totals = new MissingPointTotals();
    totals.add(zero, { ...zero, null: 2 });
    totals.add({ ...zero, null: 2 }, { ...zero, null: 3, window_gap: 1 });
    // Another host, and a host whose state was dropped and starts again from zero.
    totals.add(zero, { ...zero, invalid: 4 });
    totals.add({ ...zero, null: 9 }, zero);
    expect(lines(totals.families('a'))).toEqual([
      'monapi_series_points_missing_total{account="a",reason="invalid"} 4',
      'monapi_series_points_missing_total{account="a",reason="null"} 3',
      'monapi_series_points_missing_total{account="a",reason="partial_overlap"} 0',
      'monapi_series_points_missing_total{account="a",reason="window_gap"} 1',
    ]);
  });

  it('keeps the counter of a name absent from a poll for the grace period, then drops it', () => {
    const first = runPolls([
      { nowMs: T0, startMs: T0 - 4 * MIN, values: [1, 1, null, null] },
      { nowMs: T0 + MIN, startMs: T0 - 4 * MIN, values: [1, 1, 5, null, null] },
    ]).state;
    const absent = mapSeries([], first, opts(T0 + 30 * MIN, { counterGraceMs: HOUR }));
    expect(metricLines(absent.families)).toEqual([]);
    expect(absent.state.counters.get('nginx.http.request.count')?.total).toBe(5);
    // Back within the grace period: the counter continues, with the minutes it missed.
    const back = mapSeries(batch({ 'nginx.http.request.count': points(T0 - 2 * MIN, [5, ...Array<number>(31).fill(1), null, null]) }), absent.state, opts(T0 + 32 * MIN));
    expect(metricLines(back.families)).toEqual([`monapi_nginx_http_requests_total{${L}} ${5 + 31}`]);
    const gone = mapSeries([], first, opts(T0 + MIN + HOUR + 1, { counterGraceMs: HOUR }));
    expect(gone.state.counters.size).toBe(0);
  });

  it('a metric with no points yet starts at the next input that has some', () => {
    const { out } = runPolls([
      { nowMs: T0, startMs: T0, values: [] },
      { nowMs: T0 + MIN, startMs: T0 - 4 * MIN, values: [1, 1, 1, null, null] },
    ]);
    expect(out).toEqual([undefined, `monapi_nginx_http_requests_total{${L}} 0`]);
  });

  it('merges several responses of one host and reports collisions', () => {
    const got = mapSeries(
      [
        { host_uuid: 'h1', since: new Date(T0 - 2 * MIN).toISOString(), interval: 60, series: { 'system.load.1': SeriesPoints.of(points(T0 - MIN, [1])) } },
        batch({ 'foo.bar': points(T0 - MIN, [2]), foo_bar: points(T0 - MIN, [3]) }),
      ],
      EMPTY_SERIES_STATE,
      opts(T0, { ingestDelayMs: 0 }),
    );
    expect(metricLines(got.families)).toEqual([`monapi_foo_bar{${L}} 2`, `monapi_system_load1{${L}} 1`]);
    expect(got.collisions).toEqual([{ familyKey: 'monapi_foo_bar', kept: 'foo.bar', dropped: ['foo_bar'] }]);
  });

  it('rejects a batch with a bad interval, naming it', () => {
    expect(() => mapSeries(batch({}, 0), EMPTY_SERIES_STATE, opts(T0, { ingestDelayMs: 0 }))).toThrow(/interval/);
  });
});

describe('mapSeries timers → one summary and a max gauge', () => {
  const timer = 'nginx.http.request.time';
  /** Five names of the timer from T0-4m; count and mean per minute, quantiles and max as gauges. */
  function timerBatch(counts: (number | null)[], means: (number | null)[], start = T0 - 4 * MIN) {
    return batch({
      [timer]: points(start, means),
      [`${timer}.count`]: points(start, counts),
      [`${timer}.max`]: points(start, means.map((m) => (m === null ? null : m * 3))),
      [`${timer}.median`]: points(start, means.map((m) => (m === null ? null : m / 2))),
      [`${timer}.pctl95`]: points(start, means.map((m) => (m === null ? null : m * 2))),
    });
  }
  const S = 'monapi_nginx_http_request_duration_seconds';
  const MAX = 'monapi_nginx_http_request_duration_max_seconds';

  it('starts _count and _sum at 0, adds each due minute once, quantiles and max from the newest minute', () => {
    const first = mapSeries(timerBatch([10, 20, null, null], [0.1, 0.2, null, null]), EMPTY_SERIES_STATE, opts(T0));
    expect(metricLines(first.families)).toEqual([
      `${S}_count{${L}} 0`,
      `${S}_sum{${L}} 0`,
      `${MAX}{${L}} 0.6000000000000001`,
      `${S}{${L},quantile="0.5"} 0.1`,
      `${S}{${L},quantile="0.95"} 0.4`,
    ].sort());
    // The minute at T0-2m arrives 10 minutes late with its mean: 4 requests of 0.5 s.
    const later = mapSeries(timerBatch([10, 20, null, 4, 0, ...Array<number | null>(9).fill(0), null], [0.1, 0.2, null, 0.5, null, ...Array<number | null>(9).fill(null), null]), first.state, opts(T0 + 10 * MIN));
    const second = mapSeries(timerBatch([10, 20, 6, 4, 0, ...Array<number | null>(9).fill(0), null], [0.1, 0.2, 1, 0.5, null, ...Array<number | null>(9).fill(null), null]), later.state, opts(T0 + 10 * MIN));
    expect(metricLines(later.families).filter((l) => l.includes('_count') || l.includes('_sum'))).toEqual([`${S}_count{${L}} 4`, `${S}_sum{${L}} 2`]);
    expect(metricLines(second.families).filter((l) => l.includes('_count') || l.includes('_sum'))).toEqual([`${S}_count{${L}} 10`, `${S}_sum{${L}} 8`]);
    expect(second.latePoints).toBe(1);
  });

  it('waits for the mean of a minute whose count arrived without it', () => {
    const first = mapSeries(timerBatch([1, 1, null, null], [1, 1, null, null]), EMPTY_SERIES_STATE, opts(T0));
    const countOnly = mapSeries(timerBatch([1, 1, 3, null, null], [1, 1, null, null, null]), first.state, opts(T0 + MIN));
    const both = mapSeries(timerBatch([1, 1, 3, null, null, null], [1, 1, 0.5, null, null, null]), countOnly.state, opts(T0 + 2 * MIN));
    const count = (r: typeof first) => metricLines(r.families).find((l) => l.startsWith(`${S}_count`));
    expect([count(countOnly), count(both)]).toEqual([`${S}_count{${L}} 0`, `${S}_count{${L}} 3`]);
  });

  it('shows unknown quantiles as NaN and needs the mean and count for the summary', () => {
    const noQuantiles = mapSeries(
      batch({ [timer]: points(T0 - 4 * MIN, [1, 1, null, null]), [`${timer}.count`]: points(T0 - 4 * MIN, [1, 1, null, null]) }),
      EMPTY_SERIES_STATE,
      opts(T0),
    );
    expect(metricLines(noQuantiles.families)).toEqual([`${S}_count{${L}} 0`, `${S}_sum{${L}} 0`, `${S}{${L},quantile="0.5"} NaN`, `${S}{${L},quantile="0.95"} NaN`]);
    const maxOnly = mapSeries(batch({ [`${timer}.max`]: points(T0 - MIN, [2]), [`${timer}.median`]: points(T0 - MIN, [1]) }), EMPTY_SERIES_STATE, opts(T0));
    expect(metricLines(maxOnly.families)).toEqual([`${MAX}{${L}} 2`]);
  });
});

describe('late data over random arrivals (property)', () => {
  const HORIZON = 2 * HOUR;
  type Arrival = { readonly kind: 'on_time' } | { readonly kind: 'late'; readonly minutes: number } | { readonly kind: 'never' };
  const arrival: fc.Arbitrary<Arrival> = fc.oneof(
    { weight: 6, arbitrary: fc.constant({ kind: 'on_time' as const }) },
    // Late, but early enough that a poll (at most 30 min apart) sees it before the horizon.
    { weight: 3, arbitrary: fc.integer({ min: 1, max: 89 }).map((minutes) => ({ kind: 'late' as const, minutes })) },
    { weight: 1, arbitrary: fc.constant({ kind: 'never' as const }) },
  );

  it('counts exactly the points that arrived, once each, over overlapping polls and permanent gaps', () => {
    const MINUTES = 700;
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: MINUTES, maxLength: MINUTES }),
        fc.array(arrival, { minLength: MINUTES, maxLength: MINUTES }),
        fc.array(fc.record({ stepS: fc.integer({ min: 0, max: 1800 }), extraMin: fc.integer({ min: 0, max: 60 }) }), { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 0, max: 5 }),
        (deltas, arrivals, polls, delayMin) => {
          const base = T0 - 100 * MIN;
          const delay = delayMin * MIN;
          const arrivedAt = (i: number): number => {
            const a = arrivals[i] ?? { kind: 'on_time' };
            const end = base + (i + 1) * MIN;
            return a.kind === 'on_time' ? end : a.kind === 'late' ? end + a.minutes * MIN : Infinity;
          };
          const count = 'nginx.http.request.time.count';
          const mean = 'nginx.http.request.time';
          const meanOf = (i: number) => ((i % 7) + 1) / 10;
          let now = base + 60 * MIN;
          let state: SeriesHostState = EMPTY_SERIES_STATE;
          let start: number | undefined;
          let last = 0;
          for (const { stepS, extraMin } of polls) {
            now += stepS * 1000;
            const keys = counterKeysOf(['nginx.http.request.count', count], naming);
            const window = Number(requiredWindow(state, now, delay, undefined, keys).slice(0, -1)) + extraMin;
            const first = Math.max(0, Math.ceil((now - Math.min(window, 240) * MIN - base) / MIN));
            const values: (number | null)[] = [];
            const means: (number | null)[] = [];
            for (let i = first; base + i * MIN < now; i++) {
              const there = arrivedAt(i) <= now;
              values.push(there ? (deltas[i] ?? 0) : null);
              means.push(there ? meanOf(i) : null);
            }
            const start0 = base + first * MIN;
            const input = batch({ 'nginx.http.request.count': points(start0, values), [count]: points(start0, values), [mean]: points(start0, means) });
            state = mapSeries(input, state, opts(now, { ingestDelayMs: delay, lateDataHorizonMs: HORIZON })).state;
            const counter = state.counters.get('nginx.http.request.count');
            if (!counter) return false;
            start ??= counter.coveredUntilMs;
            expect(counter.total).toBeGreaterThanOrEqual(last);
            last = counter.total;
          }
          const counter = state.counters.get('nginx.http.request.count');
          const timer = state.counters.get(mean);
          if (!counter || !timer || start === undefined) return false;
          const range = [];
          for (let i = (start - base) / MIN; i < (counter.coveredUntilMs - base) / MIN; i++) range.push(i);
          const arrived = range.filter((i) => arrivedAt(i) <= now);
          const truth = arrived.reduce((sum, i) => sum + (deltas[i] ?? 0), 0);
          expect(counter.total).toBe(truth);
          expect(timer.total).toBe(truth);
          expect(timer.sum).toBeCloseTo(arrived.reduce((sum, i) => sum + (deltas[i] ?? 0) * meanOf(i), 0), 6);
          const givenUp = range.filter((i) => arrivedAt(i) === Infinity && base + (i + 1) * MIN < now - HORIZON).length;
          // Each permanent gap is given up once, for the plain counter and for the timer.
          expect(state.missing).toEqual({ null: 2 * givenUp, window_gap: 0, partial_overlap: 0, invalid: 0 });
          const pending = range.filter((i) => arrivedAt(i) > now && base + (i + 1) * MIN >= now - HORIZON).length;
          expect(popcount(counter.holes)).toBe(pending);
          return true;
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('requiredWindow', () => {
  const counter = (ageMs: number, holes = 0n) => ({ total: 0, sum: 0, coveredUntilMs: T0 - ageMs, countingSinceMs: T0 - ageMs, intervalMs: MIN, holes, lastSeenMs: T0 });
  const counters = (entries: [string, ReturnType<typeof counter>][]) => ({ ...EMPTY_SERIES_STATE, counters: new Map(entries) });
  it.each([
    { name: 'no counters: the minimum (staleness 10 min)', state: counters([]), delay: 2 * MIN, want: '10m' },
    { name: 'large ingest delay dominates the minimum', state: counters([]), delay: 8 * MIN, want: '13m' },
    { name: 'oldest cursor plus margin', state: counters([['a', counter(3 * MIN)], ['b', counter(30 * MIN)]]), delay: 2 * MIN, want: '32m' },
    { name: 'rounded up to whole minutes', state: counters([['a', counter(30 * MIN + 1)]]), delay: 0, want: '33m' },
    { name: 'an open hole 90 minutes behind the cursor', state: counters([['a', counter(3 * MIN, 1n << 89n)]]), delay: 2 * MIN, want: '95m' },
    { name: 'capped at 4 h so the interval stays 60 s', state: counters([['a', counter(10 * HOUR)]]), delay: 2 * MIN, want: '240m' },
  ])('$name', ({ state, delay, want }) => {
    expect(requiredWindow(state, T0, delay)).toBe(want);
    // The same from the packed table a poll leaves.
    expect(requiredWindow({ ...state, counters: DeltaTable.from(state.counters) }, T0, delay)).toBe(want);
  });

  it('honours a custom minimum, and only the counters of the names requested', () => {
    expect(requiredWindow(EMPTY_SERIES_STATE, T0, 0, 60_000)).toBe('5m');
    const state = counters([['gone.metric', counter(50 * MIN)], ['nginx.http.request.time', counter(20 * MIN)]]);
    expect(requiredWindow(state, T0, 0, undefined, counterKeysOf(['nginx.http.request.time.count', 'system.load.1'], naming))).toBe('22m');
    expect(requiredWindow({ ...state, counters: DeltaTable.from(state.counters) }, T0, 0, undefined, counterKeysOf(['nginx.http.request.time.count', 'system.load.1'], naming))).toBe('22m');
  });
});

describe('host state size', () => {
  it('stays a fixed number of objects however many metrics and missing points (150 names, 120 open minutes)', () => {
    const names = Array.from({ length: 150 }, (_, i) => `app.metric${i}`);
    const overrides = Object.fromEntries(names.map((n) => [n, { kind: 'delta' as const, unit: 'count' as const }]));
    const wide = new SeriesNaming({ overrides });
    const run = (nulls: number) => {
      const first = mapSeries(batch(Object.fromEntries(names.map((n) => [n, points(T0 - 4 * MIN, [1, 1, null, null])]))), EMPTY_SERIES_STATE, opts(T0, { naming: wide }));
      const now = T0 + nulls * MIN;
      const values = [1, 1, ...Array<null>(nulls).fill(null), null, null];
      return mapSeries(batch(Object.fromEntries(names.map((n) => [n, points(T0 - 4 * MIN, values)]))), first.state, opts(now, { naming: wide, lateDataHorizonMs: 3 * HOUR })).state;
    };
    const objects = (state: SeriesHostState): number => {
      const seen = new Set<object>();
      const visit = (value: unknown): void => {
        if (typeof value !== 'object' || value === null || seen.has(value)) return;
        seen.add(value);
        const children = value instanceof Map ? [...value.values()] : Object.values(value);
        children.forEach(visit);
      };
      visit(state);
      return seen.size;
    };
    const few = run(10);
    const many = run(120);
    expect([...many.counters.values()].every((c) => popcount(c.holes) === 120)).toBe(true);
    expect(objects(many)).toBe(objects(few));
    // The state, the missing counts, and the counter table: its row index, its numbers and its hole bitmaps.
    expect(objects(many)).toBe(6);
  });
});

describe('mapLatestValue', () => {
  const latestOpts = { ...host, nowMs: T0, naming };
  it.each([
    {
      name: 'gauge in base units, same family as the series mapping',
      input: { host_uuid: 'h1', name: 'system.cpu.user', timestamp: new Date(T0 - MIN).toISOString(), value: 50 },
      want: [`monapi_system_cpu_time_ratio{${L},mode="user"} 0.5`],
    },
    {
      name: "a timer's max",
      input: { host_uuid: 'h1', name: 'nginx.http.request.time.max', timestamp: new Date(T0 - MIN).toISOString(), value: 0.25 },
      want: [`monapi_nginx_http_request_duration_max_seconds{${L}} 0.25`],
    },
    { name: 'null value', input: { host_uuid: 'h1', name: 'system.cpu.user', timestamp: null, value: null }, want: [] },
    { name: 'stale value', input: { host_uuid: 'h1', name: 'system.cpu.user', timestamp: new Date(T0 - 11 * MIN).toISOString(), value: 50 }, want: [] },
    {
      name: 'a delta cannot be a counter from one latest value',
      input: { host_uuid: 'h1', name: 'nginx.http.request.count', timestamp: new Date(T0 - MIN).toISOString(), value: 5 },
      want: [],
    },
    {
      name: 'nor a quantile a summary',
      input: { host_uuid: 'h1', name: 'nginx.http.request.time.median', timestamp: new Date(T0 - MIN).toISOString(), value: 5 },
      want: [],
    },
  ])('$name', ({ input, want }) => {
    expect(lines(mapLatestValue(input, latestOpts).families)).toEqual(want);
  });

  it('gives the same family spec as the series mapping', () => {
    const latest = mapLatestValue({ host_uuid: 'h1', name: 'system.mem.used', timestamp: new Date(T0).toISOString(), value: 1 }, latestOpts);
    const series = mapSeries(batch({ 'system.mem.used': points(T0, [1]) }), EMPTY_SERIES_STATE, { ...latestOpts, ingestDelayMs: 0 });
    expect(latest.families[0]?.spec).toEqual(series.families[0]?.spec);
  });
});

describe('selectMetricNames', () => {
  const catalogue = {
    system: ['system.cpu.user', 'system.cpu.idle', 'system.mem.used', 'system.net.bytes_rcvd|lo'],
    nginx: ['nginx.http.request.count', 'nginx.http.request.time', 'nginx.http.request.time.max'],
    dup: ['system.cpu.user'],
  };
  it.each([
    { name: 'no filters: all, sorted, deduplicated', include: [], exclude: [], want: [...new Set(Object.values(catalogue).flat())].sort() },
    { name: 'include glob', include: ['system.cpu.*'], exclude: [], want: ['system.cpu.idle', 'system.cpu.user'] },
    { name: 'exclude wins', include: ['nginx.*'], exclude: ['*.max'], want: ['nginx.http.request.count', 'nginx.http.request.time'] },
    { name: 'exclude a per-device name', include: ['system.*'], exclude: ['*|lo'], want: ['system.cpu.idle', 'system.cpu.user', 'system.mem.used'] },
    { name: 'nothing matches', include: ['mysql.*'], exclude: [], want: [] },
  ])('$name', ({ include, exclude, want }) => {
    expect(selectMetricNames(catalogue, { include, exclude })).toEqual(want);
  });
});
