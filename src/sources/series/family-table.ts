import type { Labels } from '../../exposition/model.js';

/**
 * The curated names of the agent's metric catalogue: which Prometheus family each dotted
 * name belongs to and the labels that tell it apart from the other members. Related names
 * are one family with a label (CPU modes, HTTP status classes, methods, protocol versions,
 * mysql commands, cache results), laid out like node_exporter, nginx-prometheus-exporter,
 * mysqld_exporter and php-fpm_exporter where they measure the same thing, so that
 * `sum()` over a family's labels is always meaningful: a total never shares a family with
 * its parts (status classes and specific codes, `mysql.global.writes` and the commands,
 * worker CPU total and its modes are separate families).
 *
 * A stem is the family name after `monapi_`, without the base unit word and without
 * `_total`; both are appended from the catalogue's kind and unit (naming.ts). Kind and
 * unit come from the catalogue and must agree within a family (checked by the tests).
 */

export type DeviceLabel = 'device' | 'interface' | 'mountpoint';

export interface FamilyDefinition {
  readonly stem: string;
  /** What the family measures, the first sentence of its HELP. */
  readonly description: string;
  /** Dotted agent names of the family and the labels that set each apart. */
  readonly members: Readonly<Record<string, Labels>>;
  /**
   * Per-device names (`system.io.iops_r|sda`: dotted name, `|`, the device, interface or
   * mount point) join the family of their dotted name with this label.
   */
  readonly deviceLabel?: DeviceLabel;
}

/**
 * A timer `X` (mean), `X.count`, `X.max`, `X.median`, `X.pctl95` becomes one summary
 * `monapi_<stem>_seconds` (quantiles 0.5 and 0.95, `_sum`, `_count`) and one gauge
 * `monapi_<stem>_max_seconds`.
 */
export interface TimerDefinition {
  readonly stem: string;
  readonly description: string;
  readonly timer: string;
}

function family(stem: string, description: string, members: Readonly<Record<string, Labels>>, deviceLabel?: DeviceLabel): FamilyDefinition {
  return deviceLabel === undefined ? { stem, description, members } : { stem, description, members, deviceLabel };
}

/** A family of one dotted name. */
function single(stem: string, description: string, dotted: string, deviceLabel?: DeviceLabel): FamilyDefinition {
  return family(stem, description, { [dotted]: {} }, deviceLabel);
}

/** `labelled('mode', 'system.cpu.', { user: 'user', stolen: 'steal' })`: `system.cpu.user` → `{mode="user"}`... */
function labelled(label: string, prefix: string, values: Readonly<Record<string, string>>): Record<string, Labels> {
  return Object.fromEntries(Object.entries(values).map(([suffix, value]) => [`${prefix}${suffix}`, { [label]: value }]));
}

const same = (...values: string[]): Record<string, string> => Object.fromEntries(values.map((v) => [v, v]));

export const FAMILY_TABLE: readonly FamilyDefinition[] = [
  // system: node_exporter's layout
  family(
    'system_cpu_time',
    'Share of CPU time spent in each mode over the last minute, all CPUs together (user includes nice; system includes irq and softirq; steal is what the agent calls stolen).',
    labelled('mode', 'system.cpu.', { user: 'user', system: 'system', iowait: 'iowait', idle: 'idle', stolen: 'steal' }),
  ),
  single('system_load1', 'Load average over 1 minute.', 'system.load.1'),
  single('system_load5', 'Load average over 5 minutes.', 'system.load.5'),
  single('system_load15', 'Load average over 15 minutes.', 'system.load.15'),
  single('system_memory_total', 'Physical memory.', 'system.mem.total'),
  single('system_memory_used', 'Memory in use (total minus available).', 'system.mem.used'),
  single('system_memory_free', 'Memory not used for anything.', 'system.mem.free'),
  single('system_memory_available', 'Memory available to new processes without swapping.', 'system.mem.available'),
  single('system_memory_buffered', 'Memory in kernel buffers.', 'system.mem.buffered'),
  single('system_memory_cached', 'Memory in the page cache.', 'system.mem.cached'),
  single('system_memory_shared', 'Shared memory.', 'system.mem.shared'),
  single('system_memory_used', 'Share of memory in use.', 'system.mem.pct_used'),
  single('system_swap_total', 'Swap space.', 'system.swap.total'),
  single('system_swap_used', 'Swap space in use.', 'system.swap.used'),
  single('system_swap_free', 'Swap space free.', 'system.swap.free'),
  single('system_swap_free', 'Share of swap space free (the agent\'s system.swap.pct_free).', 'system.swap.pct_free'),
  single('system_filesystem_size', 'Size of the mounted file systems.', 'system.disk.total', 'mountpoint'),
  single('system_filesystem_used', 'Space in use on the mounted file systems.', 'system.disk.used', 'mountpoint'),
  single('system_filesystem_free', 'Space free on the mounted file systems.', 'system.disk.free', 'mountpoint'),
  single('system_filesystem_used', 'Share of file system space in use.', 'system.disk.in_use', 'mountpoint'),
  single('system_disk_reads_completed', 'Reads completed by block devices.', 'system.io.iops_r', 'device'),
  single('system_disk_writes_completed', 'Writes completed by block devices.', 'system.io.iops_w', 'device'),
  single('system_disk_read', 'Bytes read from block devices.', 'system.io.kbs_r', 'device'),
  single('system_disk_written', 'Bytes written to block devices.', 'system.io.kbs_w', 'device'),
  single('system_disk_read_wait', 'Mean time a read took over the last minute.', 'system.io.wait_r', 'device'),
  single('system_disk_write_wait', 'Mean time a write took over the last minute.', 'system.io.wait_w', 'device'),
  single('system_network_receive', 'Bytes received by network interfaces.', 'system.net.bytes_rcvd', 'interface'),
  single('system_network_transmit', 'Bytes sent by network interfaces.', 'system.net.bytes_sent', 'interface'),
  single('system_network_receive_packets', 'Packets received.', 'system.net.packets_in.count', 'interface'),
  single('system_network_transmit_packets', 'Packets sent.', 'system.net.packets_out.count', 'interface'),
  single('system_network_receive_drop', 'Received packets dropped.', 'system.net.drops_in.count', 'interface'),
  single('system_network_transmit_drop', 'Outgoing packets dropped.', 'system.net.drops_out.count', 'interface'),
  single('system_network_receive_errs', 'Receive errors.', 'system.net.packets_in.error', 'interface'),
  single('system_network_transmit_errs', 'Transmit errors.', 'system.net.packets_out.error', 'interface'),
  single('system_network_listen_overflows', 'Times the listen queue of a socket overflowed.', 'system.net.listen_overflows'),

  // the agent itself: process_* style
  single('agent_up', 'Whether the agent reports (1) or not (0).', 'amplify.agent.status'),
  family('agent_cpu_time', "Share of one CPU's time the agent used, by mode.", labelled('mode', 'amplify.agent.cpu.', same('user', 'system'))),
  single('agent_resident_memory', 'Resident memory of the agent.', 'amplify.agent.mem.rss'),
  single('agent_virtual_memory', 'Virtual memory of the agent.', 'amplify.agent.mem.vms'),

  // nginx: nginx-prometheus-exporter's names where they overlap
  single('nginx_up', 'Whether nginx is running (1) or not (0).', 'nginx.status'),
  single('nginx_connections_accepted', 'Client connections accepted.', 'nginx.http.conn.accepted'),
  single('nginx_connections_dropped', 'Client connections accepted but not handled (accepts minus handled).', 'nginx.http.conn.dropped'),
  // The agent's conn.current is stub_status' Active, its conn.active is Active minus Waiting.
  single('nginx_connections_active', 'Open client connections, idle ones included (stub_status Active).', 'nginx.http.conn.current'),
  single('nginx_connections_busy', 'Open client connections that are not idle (Active minus Waiting).', 'nginx.http.conn.active'),
  single('nginx_connections_waiting', 'Idle client connections waiting for a request (stub_status Waiting).', 'nginx.http.conn.idle'),
  single('nginx_connections_reading', 'Connections where nginx is reading the request header (stub_status Reading).', 'nginx.http.request.reading'),
  single('nginx_connections_writing', 'Connections where nginx is writing the response (stub_status Writing).', 'nginx.http.request.writing'),
  single('nginx_http_requests_current', 'Requests being processed (Reading plus Writing).', 'nginx.http.request.current'),
  single('nginx_http_requests', 'Client requests.', 'nginx.http.request.count'),
  family(
    'nginx_http_responses',
    'Responses by status class, from the access log; discarded are requests closed with 499, 444 or 408, which the agent counts instead of 4xx, so the classes add up to every logged request.',
    labelled('status_class', 'nginx.http.status.', same('1xx', '2xx', '3xx', '4xx', '5xx', 'discarded')),
  ),
  family(
    'nginx_http_responses_by_code',
    'Responses with selected status codes, from the access log (also counted in their class in monapi_nginx_http_responses_total).',
    labelled('code', 'nginx.http.status.', same('403', '404', '500', '502', '503', '504')),
  ),
  family(
    'nginx_http_requests_by_method',
    'Requests by method, from the access log.',
    labelled('method', 'nginx.http.method.', { get: 'GET', head: 'HEAD', post: 'POST', put: 'PUT', delete: 'DELETE', options: 'OPTIONS' }),
  ),
  family(
    'nginx_http_requests_by_protocol',
    'Requests by HTTP protocol version, from the access log.',
    labelled('protocol', 'nginx.http.', { v1_0: 'HTTP/1.0', v1_1: 'HTTP/1.1', v2: 'HTTP/2' }),
  ),
  single('nginx_http_sent', 'Bytes sent to clients, headers included.', 'nginx.http.request.bytes_sent'),
  single('nginx_http_body_sent', 'Response body bytes sent to clients.', 'nginx.http.request.body_bytes_sent'),
  single('nginx_http_malformed_requests', 'Malformed requests.', 'nginx.http.request.malformed'),
  single('nginx_upstream_requests', 'Requests passed to upstream servers.', 'nginx.upstream.request.count'),
  single('nginx_upstream_retries', 'Requests passed on to the next upstream server.', 'nginx.upstream.next.count'),
  family('nginx_upstream_responses', 'Upstream responses by status class.', labelled('status_class', 'nginx.upstream.status.', same('2xx', '4xx', '5xx'))),
  family(
    'nginx_cache_requests',
    'Requests to the nginx cache by result ($upstream_cache_status).',
    labelled('result', 'nginx.cache.', same('hit', 'miss', 'bypass', 'expired', 'stale', 'updating', 'revalidated')),
  ),
  single('nginx_workers', 'Worker processes.', 'nginx.workers.count'),
  single('nginx_workers_open_fds', 'File descriptors open in the worker processes.', 'nginx.workers.fds_count'),
  family('nginx_workers_cpu_time', "Share of one CPU's time the workers used, by mode.", labelled('mode', 'nginx.workers.cpu.', same('user', 'system'))),
  single('nginx_workers_cpu_usage', "Share of one CPU's time the workers used, user and system together.", 'nginx.workers.cpu.total'),
  single('nginx_workers_resident_memory', 'Resident memory of the worker processes.', 'nginx.workers.mem.rss'),
  single('nginx_workers_virtual_memory', 'Virtual memory of the worker processes.', 'nginx.workers.mem.vms'),
  single('nginx_workers_read', 'Bytes the worker processes read from storage.', 'nginx.workers.io.kbs_r'),
  single('nginx_workers_written', 'Bytes the worker processes wrote to storage.', 'nginx.workers.io.kbs_w'),

  // php-fpm: php-fpm_exporter's names
  single('phpfpm_up', 'Whether php-fpm is running (1) or not (0).', 'php.fpm.status'),
  single('phpfpm_accepted_connections', 'Connections accepted by the pool.', 'php.fpm.conn.accepted'),
  single('phpfpm_slow_requests', 'Requests slower than request_slowlog_timeout.', 'php.fpm.slow_req'),
  single('phpfpm_listen_queue', 'Requests waiting in the listen queue.', 'php.fpm.queue.current'),
  single('phpfpm_max_listen_queue', 'Most requests ever waiting in the listen queue.', 'php.fpm.queue.max'),
  single('phpfpm_listen_queue_length', 'Size of the listen queue.', 'php.fpm.queue.len'),
  single('phpfpm_idle_processes', 'Idle processes.', 'php.fpm.proc.idle'),
  single('phpfpm_active_processes', 'Active processes.', 'php.fpm.proc.active'),
  single('phpfpm_total_processes', 'Processes, idle and active.', 'php.fpm.proc.total'),
  single('phpfpm_max_active_processes', 'Most processes ever active at once.', 'php.fpm.proc.max_active'),
  single('phpfpm_max_children_reached', 'Times the process limit (pm.max_children) was reached.', 'php.fpm.proc.max_child'),

  // mysql: mysqld_exporter's names for SHOW GLOBAL STATUS variables
  single('mysql_global_status_connections', 'Connection attempts (Connections).', 'mysql.global.connections'),
  single('mysql_global_status_questions', 'Statements sent by clients (Questions).', 'mysql.global.questions'),
  family('mysql_global_status_commands', 'Statements by command (Com_*).', labelled('command', 'mysql.global.', same('select', 'insert', 'update', 'delete', 'commit'))),
  single('mysql_writes', 'Write statements: insert, update and delete together, as the agent sums them.', 'mysql.global.writes'),
  single('mysql_global_status_slow_queries', 'Queries slower than long_query_time (Slow_queries).', 'mysql.global.slow_queries'),
  single('mysql_global_status_aborted_connects', 'Failed connection attempts (Aborted_connects).', 'mysql.global.aborted_connects'),
  single(
    'mysql_global_status_innodb_buffer_pool_read_requests',
    'Logical reads from the InnoDB buffer pool (Innodb_buffer_pool_read_requests).',
    'mysql.global.innodb_buffer_pool_read_requests',
  ),
  single('mysql_global_status_innodb_buffer_pool_reads', 'Reads the buffer pool could not serve, from disk (Innodb_buffer_pool_reads).', 'mysql.global.innodb_buffer_pool_reads'),
  single('mysql_global_status_threads_connected', 'Open connections (Threads_connected).', 'mysql.global.threads_connected'),
  single('mysql_global_status_threads_running', 'Threads not sleeping (Threads_running).', 'mysql.global.threads_running'),
  single('mysql_innodb_buffer_pool_total_pages', 'Pages in the InnoDB buffer pool (Innodb_buffer_pool_pages_total).', 'mysql.global.innodb_buffer_pool_pages_total'),
  family(
    'mysql_global_status_buffer_pool_pages',
    'InnoDB buffer pool pages by state (Innodb_buffer_pool_pages_*); the agent reports the free ones.',
    { 'mysql.global.innodb_buffer_pool_pages_free': { state: 'free' } },
  ),
  single('mysql_innodb_buffer_pool_hit', 'Share of buffer pool reads served from memory.', 'mysql.global.innodb_buffer_pool.hit_ratio'),
  single('mysql_innodb_buffer_pool_used', 'Share of buffer pool pages in use.', 'mysql.global.innodb_buffer_pool_util'),

  // varnish: varnish_exporter's counters, results as a label
  family('varnish_cache_requests', 'Cache lookups by result.', labelled('result', 'varnish.cache.', same('hit', 'miss', 'hitpass'))),
  single('varnish_client_requests', 'Client requests.', 'varnish.client.req'),
  single('varnish_client_connections', 'Client connections.', 'varnish.client.conn'),
  family('varnish_backend_connections', 'Backend connection attempts by result.', { 'varnish.backend.conn': { result: 'success' }, 'varnish.backend.fail': { result: 'failure' } }),
  single('varnish_backend_requests', 'Backend requests.', 'varnish.backend.req'),
  single('varnish_fetches', 'Fetches from backends.', 'varnish.fetch.total'),
  single('varnish_threads', 'Worker threads.', 'varnish.threads'),
  single('varnish_objects', 'Objects in the cache.', 'varnish.n_object'),
  single('varnish_expired_objects', 'Objects expired.', 'varnish.n_expired'),
  single('varnish_lru_nuked_objects', 'Objects evicted to make room (LRU nuked).', 'varnish.n_lru_nuked'),
  single('varnish_cache_hit', 'Share of cache lookups that hit.', 'varnish.cache.hit_ratio'),
  single('varnish_backend_success', 'Share of backend connection attempts that succeeded.', 'varnish.backend.success_ratio'),
];

export const TIMER_TABLE: readonly TimerDefinition[] = [
  { stem: 'nginx_http_request_duration', description: 'Time nginx took to serve a request ($request_time).', timer: 'nginx.http.request.time' },
  { stem: 'nginx_upstream_response_duration', description: 'Time to receive the response from an upstream server ($upstream_response_time).', timer: 'nginx.upstream.response.time' },
  { stem: 'nginx_upstream_connect_duration', description: 'Time to connect to an upstream server ($upstream_connect_time).', timer: 'nginx.upstream.connect.time' },
  { stem: 'nginx_upstream_header_duration', description: 'Time to receive the response header from an upstream server ($upstream_header_time).', timer: 'nginx.upstream.header.time' },
];
