import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { METRIC_CATALOGUE, type MetricKind, type SourceUnit } from '../../upstream/monitoring/metric-catalogue.js';
import { SeriesNaming, seriesMetricName } from './naming.js';

describe('seriesMetricName', () => {
  it.each<{ dotted: string; kind: MetricKind; unit: SourceUnit; want: string; omUnit?: string }>([
    { dotted: 'system.cpu.user', kind: 'gauge', unit: 'percent', want: 'monapi_system_cpu_user_ratio', omUnit: 'ratio' },
    { dotted: 'system.net.bytes_rcvd', kind: 'delta', unit: 'bytes', want: 'monapi_system_net_bytes_rcvd_total' },
    { dotted: 'nginx.http.request.count', kind: 'delta', unit: 'count', want: 'monapi_nginx_http_request_count_total' },
    { dotted: 'system.io.kbs_r', kind: 'delta', unit: 'kilobytes', want: 'monapi_system_io_kbs_r_bytes_total', omUnit: 'bytes' },
    { dotted: 'system.io.wait_r', kind: 'gauge', unit: 'milliseconds', want: 'monapi_system_io_wait_r_seconds', omUnit: 'seconds' },
    { dotted: 'nginx.http.request.time', kind: 'gauge', unit: 'seconds', want: 'monapi_nginx_http_request_time_seconds', omUnit: 'seconds' },
    { dotted: 'nginx.http.request.time.max', kind: 'gauge', unit: 'seconds', want: 'monapi_nginx_http_request_time_max_seconds', omUnit: 'seconds' },
    { dotted: 'nginx.http.request.time.pctl95', kind: 'gauge', unit: 'seconds', want: 'monapi_nginx_http_request_time_pctl95_seconds', omUnit: 'seconds' },
    { dotted: 'nginx.http.request.time.count', kind: 'delta', unit: 'count', want: 'monapi_nginx_http_request_time_count_total' },
    { dotted: 'varnish.cache.hit_ratio', kind: 'gauge', unit: 'percent', want: 'monapi_varnish_cache_hit_ratio', omUnit: 'ratio' },
    { dotted: 'varnish.fetch.total', kind: 'delta', unit: 'count', want: 'monapi_varnish_fetch_total' },
    { dotted: 'php.fpm.proc.total', kind: 'gauge', unit: 'count', want: 'monapi_php_fpm_proc_total_value' },
    { dotted: 'system.mem.total', kind: 'gauge', unit: 'bytes', want: 'monapi_system_mem_total_bytes', omUnit: 'bytes' },
    { dotted: 'nginx.http.status.5xx', kind: 'delta', unit: 'count', want: 'monapi_nginx_http_status_5xx_total' },
    { dotted: 'system.load.1', kind: 'gauge', unit: 'none', want: 'monapi_system_load_1' },
    { dotted: 'amplify.agent.status', kind: 'gauge', unit: 'status', want: 'monapi_amplify_agent_status' },
    { dotted: 'my-app.queue depth', kind: 'gauge', unit: 'none', want: 'monapi_my_app_queue_depth' },
  ])('$dotted ($kind, $unit) → $want', ({ dotted, kind, unit, want, omUnit }) => {
    const got = seriesMetricName(dotted, { kind, unit });
    expect(got.name).toBe(want);
    expect(got.unit).toBe(omUnit);
  });

  it('gives every catalogue name a distinct, valid family', () => {
    const naming = new SeriesNaming();
    const { metrics, collisions } = naming.resolve(METRIC_CATALOGUE.map((e) => e.name));
    expect(collisions).toEqual([]);
    expect(metrics).toHaveLength(METRIC_CATALOGUE.length);
    for (const m of metrics) {
      expect(m.spec.name).toMatch(/^monapi_[a-zA-Z0-9_]+$/);
      expect(m.spec.type === 'counter').toBe(m.spec.name.endsWith('_total'));
    }
  });
});

describe('SeriesNaming.resolve collisions', () => {
  it.each([
    {
      name: 'two unknown names: the lexicographically first keeps the name',
      input: ['foo_bar', 'foo.bar'],
      kept: ['foo.bar'],
      collisions: [{ familyKey: 'monapi_foo_bar', kept: 'foo.bar', dropped: ['foo_bar'] }],
    },
    {
      name: 'unknown loses to a known name even when the known one is absent',
      input: ['system.cpu.user_ratio'],
      kept: [],
      collisions: [{ familyKey: 'monapi_system_cpu_user_ratio', kept: 'system.cpu.user', dropped: ['system.cpu.user_ratio'] }],
    },
    {
      name: 'unknown gauge clashing with a counter family (OpenMetrics name) loses',
      input: ['nginx.cache.hit', 'nginx_cache.hit'],
      kept: ['nginx.cache.hit'],
      collisions: [{ familyKey: 'monapi_nginx_cache_hit', kept: 'nginx.cache.hit', dropped: ['nginx_cache.hit'] }],
    },
    {
      name: 'reserved exporter family',
      input: ['hosts', 'series.points_missing'],
      kept: [],
      collisions: [
        { familyKey: 'monapi_hosts', kept: undefined, dropped: ['hosts'] },
        { familyKey: 'monapi_series_points_missing', kept: undefined, dropped: ['series.points_missing'] },
      ],
    },
    { name: 'duplicates and empty names are ignored', input: ['a.b', 'a.b', ''], kept: ['a.b'], collisions: [] },
  ])('$name', ({ input, kept, collisions }) => {
    const naming = new SeriesNaming({ reservedFamilyNames: ['monapi_hosts'] });
    const got = naming.resolve(input);
    expect(got.metrics.map((m) => m.dotted)).toEqual(kept);
    expect(got.collisions).toEqual(collisions);
  });

  it('resolves collisions between overrides at construction, the same on every call', () => {
    const naming = new SeriesNaming({
      overrides: { 'app.x_y': { kind: 'delta', unit: 'count' }, 'app.x.y': { kind: 'delta', unit: 'count' } },
    });
    for (const input of [['app.x_y'], ['app.x_y', 'app.x.y']]) {
      const got = naming.resolve(input);
      expect(got.metrics.map((m) => m.dotted)).toEqual(input.includes('app.x.y') ? ['app.x.y'] : []);
      expect(got.collisions).toEqual([{ familyKey: 'monapi_app_x_y', kept: 'app.x.y', dropped: ['app.x_y'] }]);
    }
  });

  it('applies overrides over the catalogue', () => {
    const naming = new SeriesNaming({ overrides: { 'system.load.1': { kind: 'gauge', unit: 'percent' } } });
    expect(naming.metric('system.load.1').spec.name).toBe('monapi_system_load_1_ratio');
    expect(naming.metric('custom.thing').known).toBe(false);
  });
});

describe('docs/metrics/series.md', () => {
  it('lists every catalogue metric under the name and type the code gives it', () => {
    const doc = readFileSync(new URL('../../../docs/metrics/series.md', import.meta.url), 'utf8');
    const naming = new SeriesNaming();
    const missing = METRIC_CATALOGUE.map((e) => naming.metric(e.name).spec).filter(
      (spec) => !doc.includes(`| ${spec.name} | ${spec.type} |`),
    );
    expect(missing.map((s) => s.name)).toEqual([]);
  });
});
