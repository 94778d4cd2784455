import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { board, derivedVariable, graph, queryVariable, SCOPE, upDownMapping, withHostname, type PanelSpec, type Query, type RowSpec } from './common.js';

/**
 * Monapi / Hosts: what the agents report, per host. The `hostname` variable shows names;
 * the hidden `host` variable turns them into host_uuid values (host series carry only
 * account and host_uuid), and every query selects by it.
 */

const H = `${SCOPE}, account=~"$account", host_uuid=~"$host"`;
const RATE = '[$__rate_interval]';
const HOST_LEGEND = '{{account}} / {{hostname}}';

/** One series per host, named by its hostname. */
function perHost(expr: string, legend = HOST_LEGEND): Query {
  return { expr: withHostname(expr), legend };
}

const upTimeline = (title: string, description: string, metric: string): PanelSpec => ({
  kind: 'statetimeline',
  title,
  description,
  unit: 'none',
  w: 8,
  h: 8,
  mappings: [upDownMapping()],
  steps: [
    [null, 'red'],
    [1, 'green'],
  ],
  queries: [perHost(`${metric}{${H}}`)],
});

const host: RowSpec = {
  title: 'Hosts',
  panels: [
    {
      kind: 'table',
      title: 'Hosts',
      description: 'The selected hosts: whether their agent reports, whether the plan covers them, and when they last reported.',
      unit: 'none',
      w: 24,
      h: 6,
      queries: [
        { expr: `max by (account, host_uuid, hostname, host_type, agent_version) (monapi_host_info{${H}})` },
        { expr: `max by (account, host_uuid) (monapi_host_online{${H}})` },
        { expr: `max by (account, host_uuid) (monapi_host_allowed{${H}})` },
        { expr: `max by (account, host_uuid) (monapi_host_last_seen_timestamp_seconds{${H}}) * 1000` },
      ],
      transformations: [
        { id: 'merge', options: {} },
        {
          id: 'organize',
          options: {
            excludeByName: { Time: true, 'Value #A': true },
            renameByName: {
              account: 'Account',
              hostname: 'Hostname',
              host_uuid: 'UUID',
              host_type: 'Type',
              agent_version: 'Agent',
              'Value #B': 'Online',
              'Value #C': 'Within plan',
              'Value #D': 'Last report',
            },
          },
        },
      ],
      overrides: [
        { name: 'Online', properties: [{ id: 'mappings', value: [upDownMapping('yes', 'no')] }, { id: 'custom.cellOptions', value: { type: 'color-text' } }] },
        { name: 'Within plan', properties: [{ id: 'mappings', value: [upDownMapping('yes', 'no')] }, { id: 'custom.cellOptions', value: { type: 'color-text' } }] },
        { name: 'Last report', properties: [{ id: 'unit', value: 'dateTimeFromNow' }] },
      ],
    },
  ],
};

const system: RowSpec = {
  title: 'System',
  panels: [
    graph('CPU busy', 'Share of CPU time not idle over the last minute, all CPUs together.', 'percentunit', [perHost(`1 - monapi_system_cpu_time_ratio{${H}, mode="idle"}`)], { min: 0, max: 1 }),
    graph(
      'CPU by mode',
      'Average share of CPU time per mode over the selected hosts.',
      'percentunit',
      [{ expr: `avg by (mode) (monapi_system_cpu_time_ratio{${H}})`, legend: '{{mode}}' }],
      { stack: true, min: 0, max: 1 },
    ),
    graph('Load average (1 minute)', 'Processes running or waiting for a CPU, averaged over one minute.', 'short', [perHost(`monapi_system_load1{${H}}`)], { min: 0 }),
    graph(
      'Memory in use',
      'Memory in use (total minus available) as a share of physical memory.',
      'percentunit',
      [perHost(`monapi_system_memory_used_bytes{${H}} / monapi_system_memory_total_bytes{${H}}`)],
      { min: 0, max: 1 },
    ),
    graph(
      'File system space in use',
      'Share of each mounted file system in use.',
      'percentunit',
      [perHost(`monapi_system_filesystem_used_ratio{${H}}`, `${HOST_LEGEND} {{mountpoint}}`)],
      { min: 0, max: 1 },
    ),
    graph('Disk throughput', 'Bytes read from and written to block devices.', 'Bps', [
      perHost(`sum by (account, host_uuid) (rate(monapi_system_disk_read_bytes_total{${H}}${RATE}))`, `${HOST_LEGEND} read`),
      perHost(`sum by (account, host_uuid) (rate(monapi_system_disk_written_bytes_total{${H}}${RATE}))`, `${HOST_LEGEND} written`),
    ]),
    graph('Network throughput', 'Bytes received and sent, loopback excluded.', 'Bps', [
      perHost(`sum by (account, host_uuid) (rate(monapi_system_network_receive_bytes_total{${H}, interface!~"lo.*"}${RATE}))`, `${HOST_LEGEND} received`),
      perHost(`sum by (account, host_uuid) (rate(monapi_system_network_transmit_bytes_total{${H}, interface!~"lo.*"}${RATE}))`, `${HOST_LEGEND} sent`),
    ]),
    graph('Disk wait', 'Mean time a read or a write took over the last minute, slowest device.', 's', [
      perHost(`max by (account, host_uuid) (monapi_system_disk_read_wait_seconds{${H}})`, `${HOST_LEGEND} read`),
      perHost(`max by (account, host_uuid) (monapi_system_disk_write_wait_seconds{${H}})`, `${HOST_LEGEND} write`),
    ]),
    upTimeline('Agent', 'Whether the monitoring agent reports (its own amplify.agent.status).', 'monapi_agent_up'),
  ],
};

const nginx: RowSpec = {
  title: 'nginx',
  panels: [
    graph('Requests', 'Client requests per second.', 'reqps', [perHost(`rate(monapi_nginx_http_requests_total{${H}}${RATE})`)], { min: 0 }),
    graph(
      'Responses by status class',
      'Responses per second by status class over the selected hosts, from the access log.',
      'reqps',
      [{ expr: `sum by (status_class) (rate(monapi_nginx_http_responses_total{${H}}${RATE}))`, legend: '{{status_class}}' }],
      { stack: true, min: 0 },
    ),
    graph('Connections', 'Client connections over the selected hosts, by state (stub_status).', 'short', [
      { expr: `sum(monapi_nginx_connections_active{${H}})`, legend: 'active' },
      { expr: `sum(monapi_nginx_connections_waiting{${H}})`, legend: 'waiting' },
      { expr: `sum(monapi_nginx_connections_reading{${H}})`, legend: 'reading' },
      { expr: `sum(monapi_nginx_connections_writing{${H}})`, legend: 'writing' },
    ]),
    graph('Request time', 'Time nginx took to serve a request: 95th percentile of the newest minute, and the mean over the range.', 's', [
      perHost(`monapi_nginx_http_request_duration_seconds{${H}, quantile="0.95"}`, `${HOST_LEGEND} p95`),
      perHost(
        `rate(monapi_nginx_http_request_duration_seconds_sum{${H}}${RATE}) / rate(monapi_nginx_http_request_duration_seconds_count{${H}}${RATE})`,
        `${HOST_LEGEND} mean`,
      ),
    ]),
    graph('Upstream response time', 'Time to receive the response from an upstream server: 95th percentile of the newest minute.', 's', [
      perHost(`monapi_nginx_upstream_response_duration_seconds{${H}, quantile="0.95"}`, `${HOST_LEGEND} p95`),
    ]),
    upTimeline('nginx running', 'Whether nginx runs, as the agent sees it.', 'monapi_nginx_up'),
  ],
};

const phpfpm: RowSpec = {
  title: 'PHP-FPM',
  panels: [
    graph('Active processes', 'PHP-FPM processes serving a request.', 'short', [perHost(`monapi_phpfpm_active_processes{${H}}`)], { min: 0 }),
    graph('Accepted connections', 'Connections accepted by the pools, per second.', 'reqps', [perHost(`rate(monapi_phpfpm_accepted_connections_total{${H}}${RATE})`)], { min: 0 }),
    graph('Listen queue', 'Requests waiting for a free process.', 'short', [perHost(`monapi_phpfpm_listen_queue{${H}}`)], { min: 0 }),
    graph('Slow requests', 'Requests slower than request_slowlog_timeout, per second.', 'reqps', [perHost(`rate(monapi_phpfpm_slow_requests_total{${H}}${RATE})`)], { min: 0 }),
    graph('Process limit reached', 'Times the process limit (pm.max_children) was reached.', 'short', [perHost(`monapi_phpfpm_max_children_reached{${H}}`)], { min: 0 }),
    upTimeline('PHP-FPM running', 'Whether php-fpm runs, as the agent sees it.', 'monapi_phpfpm_up'),
  ],
};

const mysql: RowSpec = {
  title: 'MySQL',
  panels: [
    graph('Questions', 'Statements sent by clients, per second.', 'ops', [perHost(`rate(monapi_mysql_global_status_questions_total{${H}}${RATE})`)], { min: 0 }),
    graph(
      'Statements by command',
      'Statements per second by command over the selected hosts.',
      'ops',
      [{ expr: `sum by (command) (rate(monapi_mysql_global_status_commands_total{${H}}${RATE}))`, legend: '{{command}}' }],
      { stack: true, min: 0 },
    ),
    graph('Threads', 'Open connections and threads not sleeping.', 'short', [
      perHost(`monapi_mysql_global_status_threads_connected{${H}}`, `${HOST_LEGEND} connected`),
      perHost(`monapi_mysql_global_status_threads_running{${H}}`, `${HOST_LEGEND} running`),
    ]),
    graph('Slow queries', 'Queries slower than long_query_time, per second.', 'ops', [perHost(`rate(monapi_mysql_global_status_slow_queries_total{${H}}${RATE})`)], { min: 0 }),
    graph('Buffer pool hit ratio', 'Share of InnoDB buffer pool reads served from memory.', 'percentunit', [perHost(`monapi_mysql_innodb_buffer_pool_hit_ratio{${H}}`)], { max: 1 }),
    graph('Buffer pool in use', 'Share of InnoDB buffer pool pages in use.', 'percentunit', [perHost(`monapi_mysql_innodb_buffer_pool_used_ratio{${H}}`)], { min: 0, max: 1 }),
  ],
};

const varnish: RowSpec = {
  title: 'Varnish',
  panels: [
    graph(
      'Cache lookups by result',
      'Cache lookups per second by result over the selected hosts.',
      'ops',
      [{ expr: `sum by (result) (rate(monapi_varnish_cache_requests_total{${H}}${RATE}))`, legend: '{{result}}' }],
      { stack: true, min: 0 },
    ),
    graph('Cache hit ratio', 'Share of cache lookups that hit.', 'percentunit', [perHost(`monapi_varnish_cache_hit_ratio{${H}}`)], { max: 1 }),
    graph('Client requests', 'Client requests per second.', 'reqps', [perHost(`rate(monapi_varnish_client_requests_total{${H}}${RATE})`)], { min: 0 }),
    graph(
      'Backend connections by result',
      'Backend connection attempts per second by result over the selected hosts.',
      'ops',
      [{ expr: `sum by (result) (rate(monapi_varnish_backend_connections_total{${H}}${RATE}))`, legend: '{{result}}' }],
      { stack: true, min: 0 },
    ),
    graph('Objects', 'Objects in the cache.', 'short', [perHost(`monapi_varnish_objects{${H}}`)], { min: 0 }),
    graph('Worker threads', 'Varnish worker threads.', 'short', [perHost(`monapi_varnish_threads{${H}}`)], { min: 0 }),
  ],
};

export function hostsDashboard(): Dashboard {
  return board({
    uid: 'monapi-hosts',
    title: 'Monapi / Hosts',
    description: 'System, nginx, PHP-FPM, MySQL and Varnish metrics of the selected hosts, as their agents report them to the Monitoring API.',
    variables: [
      queryVariable('hostname', 'Host', `label_values(monapi_host_info{${SCOPE}, account=~"$account"}, hostname)`),
      derivedVariable('host', 'Host UUID', `label_values(monapi_host_info{${SCOPE}, account=~"$account", hostname=~"$hostname"}, host_uuid)`),
    ],
    // The agents report once a minute: shorter rate windows would hold no new point half the time.
    minInterval: '1m',
    rows: [host, system, nginx, phpfpm, mysql, varnish],
  });
}
