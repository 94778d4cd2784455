/**
 * The agent's metric catalogue as the simulator knows it, written from the upstream facts
 * (the agent is a fork of the NGINX Amplify agent, so its names are Amplify's). The
 * simulator keeps its own copy on purpose: the exporter has another, and a test can only
 * catch a mistake in one of them if they were not written as one.
 *
 * Kinds: a `delta` is what the agent calls a counter, the count for one reporting minute;
 * a `gauge` is a level. A timer `X` is sent as `X` (mean), `X.count` (a delta) and `X.max`,
 * `X.median`, `X.pctl95` (gauges). Units as sent: `percent` is 0-100, `status` 1 up / 0 down.
 *
 * Per-device names: the agent also sends some system metrics once per disk, network
 * interface or mount point, named `<metric>|<device>` (`system.io.iops_r|sda`,
 * `system.net.bytes_sent|eth0`, `system.disk.in_use|/var`); the unsuffixed name is the
 * host's total over them.
 */

export type AgentComponent = 'system' | 'agent' | 'nginx' | 'php-fpm' | 'mysql' | 'varnish';
export type AgentMetricKind = 'gauge' | 'delta';
export type AgentUnit = 'percent' | 'bytes' | 'kilobytes' | 'milliseconds' | 'seconds' | 'count' | 'status' | 'none';

export interface AgentMetric {
  readonly name: string;
  readonly component: AgentComponent;
  readonly kind: AgentMetricKind;
  readonly unit: AgentUnit;
}

/** `a.{b,c}.d` stands for `a.b.d` and `a.c.d` (one brace group per pattern). */
function names(pattern: string): string[] {
  const open = pattern.indexOf('{');
  if (open < 0) return [pattern];
  const close = pattern.indexOf('}', open);
  const head = pattern.slice(0, open);
  const tail = pattern.slice(close + 1);
  return pattern
    .slice(open + 1, close)
    .split(',')
    .map((part) => head + part + tail);
}

type Row = readonly [AgentComponent, AgentMetricKind, AgentUnit, ...string[]];

function row([component, kind, unit, ...patterns]: Row): AgentMetric[] {
  return patterns.flatMap(names).map((name) => ({ name, component, kind, unit }));
}

function timer(component: AgentComponent, unit: AgentUnit, pattern: string): AgentMetric[] {
  return names(pattern).flatMap((base) => [
    { name: base, component, kind: 'gauge' as const, unit },
    { name: `${base}.count`, component, kind: 'delta' as const, unit: 'count' as const },
    { name: `${base}.max`, component, kind: 'gauge' as const, unit },
    { name: `${base}.median`, component, kind: 'gauge' as const, unit },
    { name: `${base}.pctl95`, component, kind: 'gauge' as const, unit },
  ]);
}

/** Every host-level name, in the order of the facts table (the order hosts list them in). */
export const AGENT_METRICS: readonly AgentMetric[] = [
  ...row(['system', 'gauge', 'percent', 'system.cpu.{user,system,iowait,idle,stolen}']),
  ...row(['system', 'gauge', 'none', 'system.load.{1,5,15}']),
  ...row(['system', 'gauge', 'bytes', 'system.mem.{total,used,free,available,buffered,cached,shared}']),
  ...row(['system', 'gauge', 'percent', 'system.mem.pct_used', 'system.swap.pct_free', 'system.disk.in_use']),
  ...row(['system', 'gauge', 'bytes', 'system.swap.{total,used,free}', 'system.disk.{total,used,free}']),
  ...row(['system', 'delta', 'count', 'system.io.{iops_r,iops_w}']),
  ...row(['system', 'delta', 'kilobytes', 'system.io.{kbs_r,kbs_w}']),
  ...row(['system', 'gauge', 'milliseconds', 'system.io.{wait_r,wait_w}']),
  ...row(['system', 'delta', 'bytes', 'system.net.{bytes_rcvd,bytes_sent}']),
  ...row([
    'system',
    'delta',
    'count',
    'system.net.{packets_in.count,packets_out.count,drops_in.count,drops_out.count,packets_in.error,packets_out.error,listen_overflows}',
  ]),
  ...row(['agent', 'gauge', 'status', 'amplify.agent.status']),
  ...row(['agent', 'gauge', 'percent', 'amplify.agent.cpu.{user,system}']),
  ...row(['agent', 'gauge', 'bytes', 'amplify.agent.mem.{rss,vms}']),
  ...row(['nginx', 'delta', 'count', 'nginx.http.conn.{accepted,dropped}', 'nginx.http.request.count']),
  ...row(['nginx', 'gauge', 'count', 'nginx.http.conn.{active,current,idle}', 'nginx.http.request.{current,reading,writing}']),
  ...row(['nginx', 'delta', 'count', 'nginx.http.status.{1xx,2xx,3xx,4xx,5xx,403,404,500,502,503,504,discarded}']),
  ...row(['nginx', 'delta', 'count', 'nginx.http.method.{get,head,post,put,delete,options}', 'nginx.http.{v1_0,v1_1,v2}']),
  ...row(['nginx', 'delta', 'bytes', 'nginx.http.request.{bytes_sent,body_bytes_sent}']),
  ...row(['nginx', 'delta', 'count', 'nginx.http.request.malformed']),
  ...timer('nginx', 'seconds', 'nginx.http.request.time'),
  ...timer('nginx', 'seconds', 'nginx.upstream.{response,connect,header}.time'),
  ...row(['nginx', 'delta', 'count', 'nginx.upstream.{request.count,next.count}', 'nginx.upstream.status.{2xx,4xx,5xx}']),
  ...row(['nginx', 'delta', 'count', 'nginx.cache.{hit,miss,bypass,expired,stale,updating,revalidated}']),
  ...row(['nginx', 'gauge', 'count', 'nginx.workers.count', 'nginx.workers.fds_count']),
  ...row(['nginx', 'gauge', 'percent', 'nginx.workers.cpu.{user,system,total}']),
  ...row(['nginx', 'gauge', 'bytes', 'nginx.workers.mem.{rss,vms}']),
  ...row(['nginx', 'delta', 'kilobytes', 'nginx.workers.io.{kbs_r,kbs_w}']),
  ...row(['nginx', 'gauge', 'status', 'nginx.status']),
  ...row(['php-fpm', 'delta', 'count', 'php.fpm.conn.accepted', 'php.fpm.slow_req']),
  ...row(['php-fpm', 'gauge', 'count', 'php.fpm.queue.{current,max,len}', 'php.fpm.proc.{idle,active,total,max_active,max_child}']),
  ...row(['php-fpm', 'gauge', 'status', 'php.fpm.status']),
  ...row([
    'mysql',
    'delta',
    'count',
    'mysql.global.{connections,questions,select,insert,update,delete,writes,commit,slow_queries,aborted_connects,innodb_buffer_pool_read_requests,innodb_buffer_pool_reads}',
  ]),
  ...row(['mysql', 'gauge', 'count', 'mysql.global.{threads_connected,threads_running,innodb_buffer_pool_pages_total,innodb_buffer_pool_pages_free}']),
  ...row(['mysql', 'gauge', 'percent', 'mysql.global.innodb_buffer_pool.hit_ratio', 'mysql.global.innodb_buffer_pool_util']),
  ...row([
    'varnish',
    'delta',
    'count',
    'varnish.cache.{hit,miss,hitpass}',
    'varnish.client.{req,conn}',
    'varnish.backend.{conn,req,fail}',
    'varnish.fetch.total',
  ]),
  ...row(['varnish', 'gauge', 'count', 'varnish.threads', 'varnish.n_object', 'varnish.n_expired', 'varnish.n_lru_nuked']),
  ...row(['varnish', 'gauge', 'percent', 'varnish.cache.hit_ratio', 'varnish.backend.success_ratio']),
];

/** What a per-device name is split by. */
export type DeviceKind = 'disk' | 'interface' | 'mount';

/** Host-level names the agent also sends once per device, and the device kind. */
export const PER_DEVICE_METRICS: Readonly<Record<DeviceKind, readonly string[]>> = {
  disk: names('system.io.{iops_r,iops_w,kbs_r,kbs_w,wait_r,wait_w}'),
  interface: names(
    'system.net.{bytes_rcvd,bytes_sent,packets_in.count,packets_out.count,drops_in.count,drops_out.count,packets_in.error,packets_out.error}',
  ),
  mount: names('system.disk.{total,used,free,in_use}'),
};

/** `system.io.iops_r|sda` from `system.io.iops_r` and `sda`. */
export const deviceMetricName = (base: string, device: string): string => `${base}|${device}`;

/** The host-level name and device of a per-device name, or undefined for a plain name. */
export function splitDeviceName(name: string): { base: string; device: string } | undefined {
  const bar = name.indexOf('|');
  return bar < 0 ? undefined : { base: name.slice(0, bar), device: name.slice(bar + 1) };
}

const BY_NAME = new Map(AGENT_METRICS.map((metric) => [metric.name, metric]));

/** The catalogue entry of a name; a per-device name has its host-level metric's entry. */
export function agentMetric(name: string): AgentMetric | undefined {
  const split = splitDeviceName(name);
  return BY_NAME.get(split ? split.base : name);
}

/**
 * Server kinds as `/hosts` reports them, and the agent component each brings. A MariaDB
 * server is watched by the agent's mysql collector, so `database` brings `mysql` either way.
 */
export const SERVER_KIND_COMPONENTS: Readonly<Record<string, readonly AgentComponent[]>> = {
  'web-server': ['nginx'],
  'application-server': ['php-fpm'],
  database: ['mysql'],
  cache: ['varnish'],
};
