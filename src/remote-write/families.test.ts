import { describe, expect, it } from 'vitest';
import type { FamilySamples } from '../exposition/model.js';
import { familiesToTimeSeries, promClientToTimeSeries } from './families.js';

const T = 1_795_000_000_000;

describe('familiesToTimeSeries', () => {
  it('gives the series a scrape would: counters, info, summaries and histograms, with external labels under the own ones', () => {
    const families: FamilySamples[] = [
      { spec: { name: 'monapi_requests_total', type: 'counter', help: '' }, samples: [{ labels: { account: 'a', job: 'own' }, value: 7 }] },
      { spec: { name: 'monapi_host_info', type: 'info', help: '' }, samples: [{ labels: { host_uuid: 'h' }, value: 1, timestampMs: T - 60_000 }] },
      { spec: { name: 'monapi_duration_seconds', type: 'summary', help: '' }, samples: [{ labels: {}, quantiles: [[0.5, 0.1], [0.95, NaN]], sum: 2, count: 10 }] },
      { spec: { name: 'monapi_check_seconds', type: 'histogram', help: '' }, samples: [{ labels: { id: '1' }, buckets: [[0.25, 3], [1, 5]], sum: 2.5, count: 6 }] },
    ];
    const series = familiesToTimeSeries(families, T, { job: 'monapi', instance: 'x:1' });
    const flat = series.map((s) => [s.labels.__name__, { ...s.labels, __name__: undefined }, s.samples]);
    expect(flat).toEqual([
      ['monapi_requests_total', { account: 'a', job: 'own', instance: 'x:1', __name__: undefined }, [{ value: 7, timestampMs: T }]],
      ['monapi_host_info', { host_uuid: 'h', job: 'monapi', instance: 'x:1', __name__: undefined }, [{ value: 1, timestampMs: T - 60_000 }]],
      ['monapi_duration_seconds', { quantile: '0.5', job: 'monapi', instance: 'x:1', __name__: undefined }, [{ value: 0.1, timestampMs: T }]],
      ['monapi_duration_seconds', { quantile: '0.95', job: 'monapi', instance: 'x:1', __name__: undefined }, [{ value: NaN, timestampMs: T }]],
      ['monapi_duration_seconds_sum', { job: 'monapi', instance: 'x:1', __name__: undefined }, [{ value: 2, timestampMs: T }]],
      ['monapi_duration_seconds_count', { job: 'monapi', instance: 'x:1', __name__: undefined }, [{ value: 10, timestampMs: T }]],
      ['monapi_check_seconds_bucket', { id: '1', le: '0.25', job: 'monapi', instance: 'x:1', __name__: undefined }, [{ value: 3, timestampMs: T }]],
      ['monapi_check_seconds_bucket', { id: '1', le: '1', job: 'monapi', instance: 'x:1', __name__: undefined }, [{ value: 5, timestampMs: T }]],
      ['monapi_check_seconds_bucket', { id: '1', le: '+Inf', job: 'monapi', instance: 'x:1', __name__: undefined }, [{ value: 6, timestampMs: T }]],
      ['monapi_check_seconds_sum', { id: '1', job: 'monapi', instance: 'x:1', __name__: undefined }, [{ value: 2.5, timestampMs: T }]],
      ['monapi_check_seconds_count', { id: '1', job: 'monapi', instance: 'x:1', __name__: undefined }, [{ value: 6, timestampMs: T }]],
    ]);
  });

  it('takes prom-client self-metrics with their own sample names', () => {
    const series = promClientToTimeSeries(
      [{ name: 'monapi_exporter_x_seconds', values: [{ value: 4, labels: { le: 0.5 }, metricName: 'monapi_exporter_x_seconds_bucket' }, { value: 1, labels: {} }] }],
      T,
    );
    expect(series).toEqual([
      { labels: { le: '0.5', __name__: 'monapi_exporter_x_seconds_bucket' }, samples: [{ value: 4, timestampMs: T }] },
      { labels: { __name__: 'monapi_exporter_x_seconds' }, samples: [{ value: 1, timestampMs: T }] },
    ]);
  });
});
