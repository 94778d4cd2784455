import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createUpstreamMetrics } from './metrics.js';

describe('createUpstreamMetrics', () => {
  it('registers on the registry it is given, not the global one', async () => {
    const registry = new Registry();
    createUpstreamMetrics(registry);
    const names = (await registry.getMetricsAsJSON()).map((m) => m.name).sort();
    expect(names).toEqual([
      'monapi_decode_dropped_items_total',
      'monapi_upstream_request_duration_seconds',
      'monapi_upstream_requests_total',
      'monapi_upstream_response_bytes_total',
      'monapi_upstream_responses_cut_off_total',
    ]);
  });

  it('can be created once per registry without name clashes', () => {
    expect(() => {
      createUpstreamMetrics(new Registry());
      createUpstreamMetrics(new Registry());
    }).not.toThrow();
  });

  it.each([
    [false, '{api="releases",endpoint="/release",code="timeout"} 1'],
    [true, '{api="releases",account="default",endpoint="/release",code="timeout"} 1'],
  ])('with accountLabel %s labels requests as %s', async (accountLabel, labels) => {
    const registry = new Registry();
    const metrics = createUpstreamMetrics(registry, { accountLabel });
    metrics.observeRequest({ api: 'releases', endpoint: '/release', code: 'timeout', durationSeconds: 5, bytes: 0 });
    expect(await registry.metrics()).toContain(`monapi_upstream_requests_total${labels}`);
  });

  it('observes durations into the given buckets and sums bytes', async () => {
    const registry = new Registry();
    const metrics = createUpstreamMetrics(registry, { durationBuckets: [0.1, 1] });
    const base = { api: 'monitoring', endpoint: '/hosts' } as const;
    metrics.observeRequest({ ...base, code: 200, durationSeconds: 0.05, bytes: 100 });
    metrics.observeRequest({ ...base, code: 200, durationSeconds: 0.5, bytes: 250 });
    const text = await registry.metrics();
    expect(text).toContain('monapi_upstream_request_duration_seconds_bucket{le="0.1",api="monitoring",endpoint="/hosts"} 1');
    expect(text).toContain('monapi_upstream_request_duration_seconds_bucket{le="1",api="monitoring",endpoint="/hosts"} 2');
    expect(text).toContain('monapi_upstream_response_bytes_total{api="monitoring",endpoint="/hosts"} 350');
    expect(text).toContain('monapi_upstream_requests_total{api="monitoring",endpoint="/hosts",code="200"} 2');
  });

  it('counts dropped items by reason, every reason at 0 once an endpoint has been decoded', async () => {
    const registry = new Registry();
    const metrics = createUpstreamMetrics(registry, { accountLabel: true });
    metrics.countDropped({ api: 'monitoring', endpoint: '/hosts', account: 'eu' }, []);
    metrics.countDropped({ api: 'monitoring', endpoint: '/websites', account: 'eu' }, [
      { reason: 'missing_field' },
      { reason: 'missing_field' },
      { reason: 'wrong_type' },
    ]);
    const text = await registry.metrics();
    for (const reason of ['not_an_object', 'missing_field', 'wrong_type', 'invalid_value']) {
      expect(text).toContain(`monapi_decode_dropped_items_total{account="eu",endpoint="/hosts",reason="${reason}"} 0`);
    }
    expect(text).toContain('monapi_decode_dropped_items_total{account="eu",endpoint="/websites",reason="missing_field"} 2');
    expect(text).toContain('monapi_decode_dropped_items_total{account="eu",endpoint="/websites",reason="wrong_type"} 1');
    expect(text).toContain('monapi_decode_dropped_items_total{account="eu",endpoint="/websites",reason="invalid_value"} 0');
  });
});
