import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { METRIC_CATALOGUE, type MetricKind, type SourceUnit } from '../../upstream/monitoring/metric-catalogue.js';
import { FAMILY_TABLE, TIMER_TABLE } from './family-table.js';
import { SeriesNaming, seriesMetricName, type SeriesMetric } from './naming.js';
import { seriesFamilyTable } from './docs.js';

/** `name{labels}` of the series a name feeds, and its type (timer parts: `summary/stat` or the max gauge). */
function placement(metric: SeriesMetric): { family: string; type: string; labels: Record<string, string> } {
  const { role } = metric;
  if (role.kind === 'timer') {
    return role.stat === 'max'
      ? { family: role.maxSpec.name, type: 'gauge', labels: { ...metric.labels } }
      : { family: role.spec.name, type: `summary/${role.stat}`, labels: { ...metric.labels } };
  }
  return { family: role.spec.name, type: role.spec.type, labels: { ...metric.labels } };
}

describe('seriesMetricName (mechanical fallback)', () => {
  it.each<{ dotted: string; kind: MetricKind; unit: SourceUnit; want: string; omUnit?: string }>([
    { dotted: 'app.cpu.user', kind: 'gauge', unit: 'percent', want: 'monapi_app_cpu_user_ratio', omUnit: 'ratio' },
    { dotted: 'app.net.bytes_rcvd', kind: 'delta', unit: 'bytes', want: 'monapi_app_net_bytes_rcvd_total' },
    { dotted: 'app.io.kbs_r', kind: 'delta', unit: 'kilobytes', want: 'monapi_app_io_kbs_r_bytes_total', omUnit: 'bytes' },
    { dotted: 'app.io.wait_r', kind: 'gauge', unit: 'milliseconds', want: 'monapi_app_io_wait_r_seconds', omUnit: 'seconds' },
    { dotted: 'app.cache.hit_ratio', kind: 'gauge', unit: 'percent', want: 'monapi_app_cache_hit_ratio', omUnit: 'ratio' },
    { dotted: 'app.fetch.total', kind: 'delta', unit: 'count', want: 'monapi_app_fetch_total' },
    { dotted: 'app.proc.total', kind: 'gauge', unit: 'count', want: 'monapi_app_proc_total_value' },
    { dotted: 'app.workers.count', kind: 'gauge', unit: 'count', want: 'monapi_app_workers_count_value' },
    { dotted: 'app.load.1', kind: 'gauge', unit: 'none', want: 'monapi_app_load_1' },
    { dotted: 'my-app.queue depth', kind: 'gauge', unit: 'none', want: 'monapi_my_app_queue_depth' },
    { dotted: 'app.disk.used|/var/log', kind: 'gauge', unit: 'none', want: 'monapi_app_disk_used__var_log' },
  ])('$dotted ($kind, $unit) → $want', ({ dotted, kind, unit, want, omUnit }) => {
    const got = seriesMetricName(dotted, { kind, unit });
    expect(got.name).toBe(want);
    expect(got.unit).toBe(omUnit);
  });
});

describe('curated names of the catalogue', () => {
  const naming = new SeriesNaming();
  it.each([
    { dotted: 'system.cpu.user', family: 'monapi_system_cpu_time_ratio', type: 'gauge', labels: { mode: 'user' } },
    { dotted: 'system.cpu.stolen', family: 'monapi_system_cpu_time_ratio', type: 'gauge', labels: { mode: 'steal' } },
    { dotted: 'system.load.15', family: 'monapi_system_load15', type: 'gauge', labels: {} },
    { dotted: 'system.mem.available', family: 'monapi_system_memory_available_bytes', type: 'gauge', labels: {} },
    { dotted: 'system.mem.pct_used', family: 'monapi_system_memory_used_ratio', type: 'gauge', labels: {} },
    { dotted: 'system.disk.free', family: 'monapi_system_filesystem_free_bytes', type: 'gauge', labels: {} },
    { dotted: 'system.disk.in_use|/', family: 'monapi_system_filesystem_used_ratio', type: 'gauge', labels: { mountpoint: '/' } },
    { dotted: 'system.io.iops_r|sda', family: 'monapi_system_disk_reads_completed_total', type: 'counter', labels: { device: 'sda' } },
    { dotted: 'system.io.kbs_w', family: 'monapi_system_disk_written_bytes_total', type: 'counter', labels: {} },
    { dotted: 'system.io.wait_r|nvme0n1', family: 'monapi_system_disk_read_wait_seconds', type: 'gauge', labels: { device: 'nvme0n1' } },
    { dotted: 'system.net.bytes_rcvd', family: 'monapi_system_network_receive_bytes_total', type: 'counter', labels: {} },
    { dotted: 'system.net.bytes_sent|eth0', family: 'monapi_system_network_transmit_bytes_total', type: 'counter', labels: { interface: 'eth0' } },
    { dotted: 'system.net.drops_in.count|lo', family: 'monapi_system_network_receive_drop_total', type: 'counter', labels: { interface: 'lo' } },
    { dotted: 'amplify.agent.status', family: 'monapi_agent_up', type: 'gauge', labels: {} },
    { dotted: 'nginx.http.request.count', family: 'monapi_nginx_http_requests_total', type: 'counter', labels: {} },
    { dotted: 'nginx.http.status.4xx', family: 'monapi_nginx_http_responses_total', type: 'counter', labels: { status_class: '4xx' } },
    { dotted: 'nginx.http.status.discarded', family: 'monapi_nginx_http_responses_total', type: 'counter', labels: { status_class: 'discarded' } },
    { dotted: 'nginx.http.status.404', family: 'monapi_nginx_http_responses_by_code_total', type: 'counter', labels: { code: '404' } },
    { dotted: 'nginx.http.method.options', family: 'monapi_nginx_http_requests_by_method_total', type: 'counter', labels: { method: 'OPTIONS' } },
    { dotted: 'nginx.http.v2', family: 'monapi_nginx_http_requests_by_protocol_total', type: 'counter', labels: { protocol: 'HTTP/2' } },
    { dotted: 'nginx.http.request.body_bytes_sent', family: 'monapi_nginx_http_body_sent_bytes_total', type: 'counter', labels: {} },
    { dotted: 'nginx.http.conn.idle', family: 'monapi_nginx_connections_waiting', type: 'gauge', labels: {} },
    { dotted: 'nginx.http.conn.current', family: 'monapi_nginx_connections_active', type: 'gauge', labels: {} },
    { dotted: 'nginx.http.conn.active', family: 'monapi_nginx_connections_busy', type: 'gauge', labels: {} },
    { dotted: 'nginx.cache.revalidated', family: 'monapi_nginx_cache_requests_total', type: 'counter', labels: { result: 'revalidated' } },
    { dotted: 'nginx.workers.cpu.total', family: 'monapi_nginx_workers_cpu_usage_ratio', type: 'gauge', labels: {} },
    { dotted: 'nginx.workers.io.kbs_r', family: 'monapi_nginx_workers_read_bytes_total', type: 'counter', labels: {} },
    { dotted: 'nginx.http.request.time', family: 'monapi_nginx_http_request_duration_seconds', type: 'summary/mean', labels: {} },
    { dotted: 'nginx.http.request.time.count', family: 'monapi_nginx_http_request_duration_seconds', type: 'summary/count', labels: {} },
    { dotted: 'nginx.upstream.connect.time.pctl95', family: 'monapi_nginx_upstream_connect_duration_seconds', type: 'summary/pctl95', labels: {} },
    { dotted: 'nginx.upstream.header.time.max', family: 'monapi_nginx_upstream_header_duration_max_seconds', type: 'gauge', labels: {} },
    { dotted: 'php.fpm.proc.total', family: 'monapi_phpfpm_total_processes', type: 'gauge', labels: {} },
    { dotted: 'mysql.global.commit', family: 'monapi_mysql_global_status_commands_total', type: 'counter', labels: { command: 'commit' } },
    { dotted: 'mysql.global.writes', family: 'monapi_mysql_writes_total', type: 'counter', labels: {} },
    { dotted: 'mysql.global.innodb_buffer_pool_pages_total', family: 'monapi_mysql_innodb_buffer_pool_total_pages', type: 'gauge', labels: {} },
    { dotted: 'mysql.global.innodb_buffer_pool_pages_free', family: 'monapi_mysql_global_status_buffer_pool_pages', type: 'gauge', labels: { state: 'free' } },
    { dotted: 'varnish.backend.fail', family: 'monapi_varnish_backend_connections_total', type: 'counter', labels: { result: 'failure' } },
    { dotted: 'varnish.fetch.total', family: 'monapi_varnish_fetches_total', type: 'counter', labels: {} },
  ])('$dotted → $family $labels', ({ dotted, family, type, labels }) => {
    expect(placement(naming.metric(dotted))).toEqual({ family, type, labels });
  });

  it('gives every catalogue name a series of its own, in valid families that follow the conventions', () => {
    const { metrics, collisions } = naming.resolve(METRIC_CATALOGUE.map((e) => e.name));
    expect(collisions).toEqual([]);
    expect(metrics).toHaveLength(METRIC_CATALOGUE.length);
    for (const family of naming.families()) {
      expect(family.name).toMatch(/^monapi_[a-z0-9_]+$/);
      expect(family.type === 'counter').toBe(family.name.endsWith('_total'));
      const stem = family.name.replace(/_total$/, '');
      // Units only as the last word, and declared when they are.
      expect(stem, family.name).not.toMatch(/_(bytes|seconds|ratio)_/);
      const unitWord = /_(bytes|seconds|ratio)$/.exec(stem)?.[1];
      expect(family.unit).toBe(unitWord);
      expect(family.help).not.toBe('');
    }
  });

  it('names every catalogue entry in the curated table, and each only once', () => {
    const curated = [...FAMILY_TABLE.flatMap((f) => Object.keys(f.members)), ...TIMER_TABLE.flatMap((t) => ['', '.count', '.max', '.median', '.pctl95'].map((s) => `${t.timer}${s}`))];
    expect(new Set(curated).size).toBe(curated.length);
    expect([...curated].sort()).toEqual(METRIC_CATALOGUE.map((e) => e.name).sort());
  });

  it('keeps kind and unit alike within a family, so its members share one spec', () => {
    for (const def of FAMILY_TABLE) {
      const specs = new Set(Object.keys(def.members).map((dotted) => naming.metric(dotted).role.spec));
      expect(specs.size, def.stem).toBe(1);
    }
  });

  it('keeps totals apart from their parts: sums over a family never count twice', () => {
    const familyOf = (dotted: string) => placement(naming.metric(dotted)).family;
    expect(familyOf('nginx.http.status.4xx')).not.toBe(familyOf('nginx.http.status.404'));
    expect(familyOf('mysql.global.writes')).not.toBe(familyOf('mysql.global.insert'));
    expect(familyOf('nginx.workers.cpu.total')).not.toBe(familyOf('nginx.workers.cpu.user'));
    expect(familyOf('nginx.http.request.count')).not.toBe(familyOf('nginx.http.method.get'));
  });
});

describe('per-device names', () => {
  const naming = new SeriesNaming();
  it.each([
    {
      name: 'the all-device total is left out where per-device names are present',
      input: ['system.io.iops_r', 'system.io.iops_r|sda', 'system.io.iops_r|sdb', 'system.io.iops_w'],
      kept: ['system.io.iops_r|sda', 'system.io.iops_r|sdb', 'system.io.iops_w'],
    },
    { name: 'a total without per-device names stays', input: ['system.net.bytes_rcvd', 'system.net.bytes_sent|eth0'], kept: ['system.net.bytes_rcvd', 'system.net.bytes_sent|eth0'] },
    { name: 'an unknown dotted name with | is named mechanically', input: ['custom.x|y'], kept: ['custom.x|y'] },
    { name: 'a known name without a device label is named mechanically', input: ['system.cpu.user|cpu0', 'system.cpu.user'], kept: ['system.cpu.user', 'system.cpu.user|cpu0'] },
  ])('$name', ({ input, kept }) => {
    const got = naming.resolve(input);
    expect(got.metrics.map((m) => m.dotted)).toEqual(kept);
    expect(got.collisions).toEqual([]);
  });

  it('fetches no total that the mapping would leave out', () => {
    expect(naming.fetchable(['system.disk.used', 'system.disk.used|/', 'system.disk.used|/boot', 'system.load.1'])).toEqual([
      'system.disk.used|/',
      'system.disk.used|/boot',
      'system.load.1',
    ]);
    const names = ['system.load.1'];
    expect(naming.fetchable(names)).toBe(names);
  });

  it('answers a shared (frozen) list from memory, and never remembers one that may change', () => {
    const shared = Object.freeze(['system.disk.used', 'system.disk.used|/']);
    const first = naming.fetchable(shared);
    expect(first).toEqual(['system.disk.used|/']);
    expect(naming.fetchable(shared)).toBe(first);
    const open = ['system.disk.used', 'system.disk.used|/'];
    expect(naming.fetchable(open)).toEqual(['system.disk.used|/']);
    open.pop();
    expect(naming.fetchable(open)).toEqual(['system.disk.used']);
  });

  it('names an unknown per-CPU name as an unknown gauge', () => {
    expect(naming.metric('system.cpu.user|cpu0')).toMatchObject({ known: false, familyKey: 'monapi_system_cpu_user_cpu0', labels: {} });
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
      name: 'an unknown name loses to a curated family even when no member is present',
      input: ['system.cpu.time_ratio'],
      kept: [],
      collisions: [{ familyKey: 'monapi_system_cpu_time_ratio', kept: 'system.cpu.idle', dropped: ['system.cpu.time_ratio'] }],
    },
    {
      name: 'an unknown gauge clashing with a counter family (OpenMetrics name) loses',
      input: ['nginx.http.requests', 'nginx.http.request.count'],
      kept: ['nginx.http.request.count'],
      collisions: [{ familyKey: 'monapi_nginx_http_requests', kept: 'nginx.http.request.count', dropped: ['nginx.http.requests'] }],
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
});

describe('metric_overrides', () => {
  it('changes kind and unit of a catalogue name, keeping its curated stem', () => {
    const naming = new SeriesNaming({ overrides: { 'system.load.1': { kind: 'gauge', unit: 'percent' } } });
    expect(placement(naming.metric('system.load.1'))).toEqual({ family: 'monapi_system_load1_ratio', type: 'gauge', labels: {} });
    expect(naming.metric('custom.thing').known).toBe(false);
  });

  it('answers a list of names asked again from memory, and the same names in another order alike', () => {
    const naming = new SeriesNaming();
    const names = ['custom.b', 'custom_b', 'system.cpu.user', 'system.load.1'];
    const first = naming.resolve(names);
    expect(naming.resolve(new Set(names))).toBe(first);
    const reordered = naming.resolve([...names].reverse());
    expect(reordered).toEqual(first);
    expect(first.metrics.map((m) => m.dotted)).toEqual(['custom.b', 'system.cpu.user', 'system.load.1']);
    expect(first.collisions).toEqual([{ familyKey: naming.metric('custom.b').familyKey, kept: 'custom.b', dropped: ['custom_b'] }]);
  });

  it('puts a new name into a curated family with its labels and the family HELP', () => {
    const naming = new SeriesNaming({ overrides: { 'system.cpu.nice': { kind: 'gauge', unit: 'percent', family: 'system_cpu_time', labels: { mode: 'nice' } } } });
    const nice = naming.metric('system.cpu.nice');
    expect(placement(nice)).toEqual({ family: 'monapi_system_cpu_time_ratio', type: 'gauge', labels: { mode: 'nice' } });
    expect(nice.role.spec).toBe(naming.metric('system.cpu.user').role.spec);
    expect(naming.resolve(['system.cpu.nice', 'system.cpu.user']).collisions).toEqual([]);
  });

  it.each([
    {
      name: 'the same labels as a member: the lexicographically first keeps the series',
      override: { kind: 'gauge' as const, unit: 'percent' as const, family: 'system_cpu_time', labels: { mode: 'user' } },
      kept: 'system.cpu.user',
    },
    {
      name: 'a counter on a gauge family name',
      override: { kind: 'delta' as const, unit: 'percent' as const, family: 'system_cpu_time', labels: { mode: 'nice' } },
      kept: 'system.cpu.idle',
    },
    {
      name: "a gauge on a summary's name",
      override: { kind: 'gauge' as const, unit: 'seconds' as const, family: 'nginx_http_request_duration' },
      kept: 'nginx.http.request.time',
    },
    {
      name: "a counter on a summary's _count",
      override: { kind: 'delta' as const, unit: 'count' as const, family: 'nginx_http_request_duration_seconds_count' },
      kept: 'nginx.http.request.time',
    },
  ])('an override that clashes loses: $name', ({ override, kept }) => {
    const naming = new SeriesNaming({ overrides: { 'zz.clash': override } });
    const got = naming.resolve(['zz.clash']);
    expect(got.metrics).toEqual([]);
    expect(got.collisions).toEqual([{ familyKey: naming.metric('zz.clash').familyKey, kept, dropped: ['zz.clash'] }]);
  });

  it('an override family under an exporter prefix is dropped', () => {
    const naming = new SeriesNaming({ overrides: { 'app.x': { kind: 'gauge', unit: 'none', family: 'exporter_x' } }, reservedPrefixes: ['monapi_exporter_'] });
    expect(naming.resolve(['app.x'])).toEqual({ metrics: [], collisions: [{ familyKey: 'monapi_exporter_x', kept: undefined, dropped: ['app.x'] }] });
  });

  it('gives a new name per-device series with device_label', () => {
    const naming = new SeriesNaming({ overrides: { 'app.queue.depth': { kind: 'gauge', unit: 'none', family: 'app_queue_depth', deviceLabel: 'queue' } } });
    expect(placement(naming.metric('app.queue.depth|mail'))).toEqual({ family: 'monapi_app_queue_depth', type: 'gauge', labels: { queue: 'mail' } });
    expect(naming.fetchable(['app.queue.depth', 'app.queue.depth|mail'])).toEqual(['app.queue.depth|mail']);
  });

  it('takes a timer part with a family of its own out of the timer', () => {
    const naming = new SeriesNaming({ overrides: { 'nginx.http.request.time.max': { kind: 'gauge', unit: 'seconds', family: 'nginx_slowest_request' } } });
    expect(placement(naming.metric('nginx.http.request.time.max'))).toEqual({ family: 'monapi_nginx_slowest_request_seconds', type: 'gauge', labels: {} });
    expect(placement(naming.metric('nginx.http.request.time.median')).type).toBe('summary/median');
  });
});

describe('src/sources/series/metrics.md', () => {
  it('holds the family table the code gives', () => {
    const doc = readFileSync(new URL('./metrics.md', import.meta.url), 'utf8');
    expect(doc).toContain(seriesFamilyTable());
  });
});
