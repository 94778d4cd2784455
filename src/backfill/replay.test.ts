import { describe, expect, it } from 'vitest';
import { seriesNaming } from '../sources/series/index.js';
import { EMPTY_SERIES_STATE, HostLabels, mapSeries } from '../sources/series/map.js';
import { HistoryBuffer, replayHistory, type HistorySeries } from './replay.js';
import type { HistoryStep } from './timeline.js';
import { SeriesPoints } from '../sources/series/points.js';

const MIN = 60_000;
const T0 = Date.UTC(2026, 10, 1, 0, 0, 0);
const naming = seriesNaming({ metrics: { include: ['*'], exclude: [] }, metricOverrides: {}, ingestDelayMs: 3 * MIN, lateDataHorizonMs: 120 * MIN }, []);
const options = { account: 'acme', hostUuid: 'h1', labels: new HostLabels('acme', 'h1'), naming, ingestDelayMs: 3 * MIN, lateDataHorizonMs: 120 * MIN, nullHandling: 'skip' as const };

function step(t: number, intervalS: number, values: Record<string, number | null>): HistoryStep {
  return { t, intervalMs: intervalS * 1000, points: Object.fromEntries(Object.entries(values).map(([name, value]) => [name, { timestamp: new Date(t).toISOString(), value }])) };
}

function byName(series: HistorySeries[], name: string, labels: Record<string, string> = {}): [number, number][] {
  const found = series.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return (found?.samples ?? []).map((s) => [(s.timestampMs - T0) / MIN, s.value]);
}

describe('replayHistory', () => {
  it('names history as live, stamps gauges with their bucket and counters with the end of what they counted', () => {
    const steps = [
      step(T0, 3600, { 'nginx.http.request.count': 600, 'system.load.1': 1.5 }),
      step(T0 + 60 * MIN, 3600, { 'nginx.http.request.count': 1200, 'system.load.1': 2 }),
      // Coarse to fine: the 900 s buckets go on from where the hour ended.
      step(T0 + 120 * MIN, 900, { 'nginx.http.request.count': 300, 'system.load.1': 0.5 }),
      step(T0 + 135 * MIN, 900, { 'nginx.http.request.count': null, 'system.load.1': null }),
      step(T0 + 150 * MIN, 60, { 'nginx.http.request.count': 7, 'system.load.1': 0.25 }),
    ];
    const buffer = new HistoryBuffer();
    const state = replayHistory(steps, EMPTY_SERIES_STATE, options, buffer);
    const series = buffer.take();
    // A counter starts at 0 after its first point, as the live exporter's does at first sight; a null point adds nothing.
    expect(byName(series, 'monapi_nginx_http_requests_total')).toEqual([
      [60, 0],
      [120, 1200],
      [135, 1500],
      [150, 1500],
      [151, 1507],
    ]);
    expect(byName(series, 'monapi_system_load1')).toEqual([
      [0, 1.5],
      [60, 2],
      [120, 0.5],
      [150, 0.25],
    ]);
    expect(series.find((s) => s.name === 'monapi_system_load1')?.labels).toEqual({ account: 'acme', host_uuid: 'h1' });
    expect(state.counters.get('nginx.http.request.count')).toMatchObject({ total: 1507, coveredUntilMs: T0 + 151 * MIN });
  });

  it('gives the same counter values as live polls of the same minutes', () => {
    const values = Array.from({ length: 30 }, (_, i) => (i * 7919) % 113);
    const steps = values.map((v, i) => step(T0 + i * MIN, 60, { 'nginx.http.request.count': v }));
    const buffer = new HistoryBuffer();
    replayHistory(steps, EMPTY_SERIES_STATE, options, buffer);
    const history = byName(buffer.take(), 'monapi_nginx_http_requests_total');

    // Live: a poll every minute of a 10-minute window, each as the exporter makes it.
    let state = EMPTY_SERIES_STATE;
    const live: [number, number][] = [];
    for (let minute = 1; minute <= 30; minute++) {
      const nowMs = T0 + minute * MIN + 3 * MIN;
      const points = values.map((value, i) => ({ timestamp: new Date(T0 + i * MIN).toISOString(), value })).slice(Math.max(0, minute - 10), minute);
      const result = mapSeries({ intervalSeconds: 60, points: { 'nginx.http.request.count': SeriesPoints.of(points) } }, state, { ...options, nowMs, sampleTimestamps: true });
      state = result.state;
      const sample = result.families.find((f) => f.spec.name === 'monapi_nginx_http_requests_total')?.samples[0] as { value: number; timestampMs: number } | undefined;
      if (sample) live.push([(sample.timestampMs - T0) / MIN, sample.value]);
    }
    expect(history).toEqual(live);
  });

  it('writes a timer as the live summary: quantiles at the bucket, _count and _sum at its end', () => {
    const steps = [0, 1, 2].map((i) =>
      step(T0 + i * MIN, 60, {
        'nginx.http.request.time': 0.2,
        'nginx.http.request.time.count': 10,
        'nginx.http.request.time.median': 0.1,
        'nginx.http.request.time.pctl95': 0.5,
        'nginx.http.request.time.max': 0.9,
      }),
    );
    const buffer = new HistoryBuffer();
    replayHistory(steps, EMPTY_SERIES_STATE, options, buffer);
    const series = buffer.take();
    expect(byName(series, 'monapi_nginx_http_request_duration_seconds_count')).toEqual([
      [1, 0],
      [2, 10],
      [3, 20],
    ]);
    expect(byName(series, 'monapi_nginx_http_request_duration_seconds_sum').map(([t, v]) => [t, Math.round(v * 1e9) / 1e9])).toEqual([
      [1, 0],
      [2, 2],
      [3, 4],
    ]);
    expect(byName(series, 'monapi_nginx_http_request_duration_seconds', { quantile: '0.95' })).toEqual([
      [0, 0.5],
      [1, 0.5],
      [2, 0.5],
    ]);
    expect(byName(series, 'monapi_nginx_http_request_duration_max_seconds')).toEqual([
      [0, 0.9],
      [1, 0.9],
      [2, 0.9],
    ]);
  });
});
