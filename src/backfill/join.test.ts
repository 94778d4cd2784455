import { describe, expect, it } from 'vitest';
import type { AccountConfig } from '../config/types.js';
import { seriesNaming } from '../sources/series/index.js';
import { EMPTY_SERIES_STATE, HostLabels, type SeriesHostState } from '../sources/series/map.js';
import { encodeSeriesHost } from '../sources/series/state.js';
import type { DeltaState } from '../sources/series/deltas.js';
import { counterEnds, liveStartOf, liveStartsFrom } from './join.js';
import { HistoryBuffer, replayHistory } from './replay.js';
import type { HistoryStep } from './timeline.js';

const MIN = 60_000;
const T0 = Date.UTC(2026, 10, 1, 0, 0, 0);
const naming = seriesNaming({ metrics: { include: ['*'], exclude: [] }, metricOverrides: {}, ingestDelayMs: 3 * MIN, lateDataHorizonMs: 120 * MIN }, []);

const counter = (countingSinceMs: number): DeltaState => ({ total: 9, sum: 0, coveredUntilMs: T0 + 100 * MIN, countingSinceMs, intervalMs: MIN, holes: 0n, lastSeenMs: T0 + 103 * MIN });
const hostState = (counters: [string, DeltaState][]): SeriesHostState => ({ ...EMPTY_SERIES_STATE, counters: new Map(counters) });

describe('where the live exporter began counting', () => {
  it('is each counter\'s start, and the host\'s history ends at the latest of them', () => {
    const start = liveStartOf(hostState([['nginx.http.request.count', counter(T0 + 10 * MIN)], ['nginx.http.request.time', counter(T0 + 25 * MIN)], ['old.counter', counter(-Infinity)]]));
    expect(start?.untilMs).toBe(T0 + 25 * MIN);
    expect([...(start?.counters ?? [])]).toEqual([['nginx.http.request.count', T0 + 10 * MIN], ['nginx.http.request.time', T0 + 25 * MIN]]);
    expect(liveStartOf(hostState([['old.counter', counter(-Infinity)]])), 'a state file older than the start: not known').toBeUndefined();
  });

  it('is read per account and host from a state file; other upstreams and missing accounts are named as problems', () => {
    const series = [{ uuid: 'h1', state: encodeSeriesHost(hostState([['nginx.http.request.count', counter(T0 + 10 * MIN)]])), releasedAtMs: null }];
    const accounts = [
      { name: 'a', baseUrl: 'https://api.example' },
      { name: 'b', baseUrl: 'https://api.example' },
      { name: 'c', baseUrl: 'https://api.example' },
    ] as unknown as AccountConfig[];
    const { starts, problems } = liveStartsFrom(
      {
        savedAtMs: T0,
        accounts: {
          a: { baseUrl: 'https://api.example', sources: { series } },
          b: { baseUrl: 'https://other.example', sources: { series } },
        },
      },
      accounts,
    );
    expect(starts.get('a')?.get('h1')?.untilMs).toBe(T0 + 10 * MIN);
    expect(starts.has('b')).toBe(false);
    expect(problems).toEqual(['account b: the state file is of another upstream (https://other.example)', 'account c: not in the state file (the exporter has not polled it with this state file)']);
  });
});

function step(t: number, values: Record<string, number | null>): HistoryStep {
  return { t, intervalMs: MIN, points: Object.fromEntries(Object.entries(values).map(([name, value]) => [name, { timestamp: new Date(t).toISOString(), value }])) };
}

describe('history ending where each live counter began', () => {
  it('stops each counter (a delta, a timer\'s _sum and _count) at its own start; gauges and quantiles go on to the host\'s end', () => {
    const labels = new HostLabels('acme', 'h1');
    const start = liveStartOf(hostState([['nginx.http.request.count', counter(T0 + 5 * MIN)], ['nginx.http.request.time', counter(T0 + 8 * MIN)]]));
    if (!start) throw new Error('no start');
    const options = { account: 'acme', hostUuid: 'h1', labels, naming, ingestDelayMs: 3 * MIN, lateDataHorizonMs: 120 * MIN, nullHandling: 'skip' as const, counterEnds: counterEnds(start, naming, labels) };
    const steps = Array.from({ length: 8 }, (_, i) =>
      step(T0 + i * MIN, { 'nginx.http.request.count': 10, 'nginx.http.request.time': 0.5, 'nginx.http.request.time.count': 2, 'nginx.http.request.time.median': 0.4, 'system.load.1': i }),
    );
    const buffer = new HistoryBuffer();
    replayHistory(steps, EMPTY_SERIES_STATE, options, buffer);
    const series = buffer.take();
    const last = (name: string) => series.find((s) => s.name === name)?.samples.at(-1);
    expect(last('monapi_nginx_http_requests_total')).toEqual({ timestampMs: T0 + 5 * MIN, value: 40 });
    expect(last('monapi_nginx_http_request_duration_seconds_count')).toEqual({ timestampMs: T0 + 8 * MIN, value: 14 });
    expect(last('monapi_nginx_http_request_duration_seconds_sum')?.timestampMs).toBe(T0 + 8 * MIN);
    expect(last('monapi_system_load1')).toEqual({ timestampMs: T0 + 7 * MIN, value: 7 });
  });

  it('puts history\'s last counter sample 1 ms before the live start when the live exporter stamps its samples: its 0 has that time', () => {
    const labels = new HostLabels('acme', 'h1');
    const start = liveStartOf(hostState([['nginx.http.request.count', counter(T0 + 5 * MIN)]]));
    if (!start) throw new Error('no start');
    const options = { account: 'acme', hostUuid: 'h1', labels, naming, ingestDelayMs: 3 * MIN, lateDataHorizonMs: 120 * MIN, nullHandling: 'skip' as const, counterEnds: counterEnds(start, naming, labels), liveSampleTimestamps: true };
    const buffer = new HistoryBuffer();
    replayHistory(Array.from({ length: 8 }, (_, i) => step(T0 + i * MIN, { 'nginx.http.request.count': 10 })), EMPTY_SERIES_STATE, options, buffer);
    const samples = buffer.take().find((s) => s.name === 'monapi_nginx_http_requests_total')?.samples.slice(-2);
    expect(samples).toEqual([{ timestampMs: T0 + 4 * MIN, value: 30 }, { timestampMs: T0 + 5 * MIN - 1, value: 40 }]);
  });
});
