/**
 * The agent's metric catalogue (the NGINX Amplify agent's names). The simulator generates
 * values from it; the exporter maps series by it (overridable in config).
 *
 * A "delta" is what the catalogue calls a counter: the count for one reporting window,
 * not a running total. A timer `X` is reported as `X` (mean), `X.count` (a delta) and
 * `X.max`, `X.median`, `X.pctl95` (gauges).
 *
 * The agent also sends `system.io.*`, `system.net.*` and `system.disk.*` per device,
 * interface or mount point as `<name>|<device>` (`system.io.iops_r|sda`, `system.disk.used|/`)
 * beside the all-device total under the plain name. Only the plain names are listed here.
 */

export type MetricKind = 'gauge' | 'delta';

/** Units as the agent sends them. `percent` is 0-100; `status` is 1 up / 0 down. */
export type SourceUnit = 'percent' | 'bytes' | 'kilobytes' | 'milliseconds' | 'seconds' | 'count' | 'status' | 'none';

export type TimerStat = 'mean' | 'count' | 'max' | 'median' | 'pctl95';

export type Component = 'system' | 'agent' | 'nginx' | 'php-fpm' | 'mysql' | 'varnish';

export interface CatalogueEntry {
  readonly name: string;
  readonly component: Component;
  readonly kind: MetricKind;
  readonly unit: SourceUnit;
  /** Set on the five names a timer expands to. */
  readonly timer?: { readonly base: string; readonly stat: TimerStat };
}

/** `expand('a.{b,c}.d')` gives `['a.b.d', 'a.c.d']`; one brace group at most. */
function expand(pattern: string): string[] {
  const match = /^(.*)\{([^}]*)\}(.*)$/.exec(pattern);
  if (!match) return [pattern];
  const [, head = '', alternatives = '', tail = ''] = match;
  return alternatives.split(',').map((alt) => `${head}${alt}${tail}`);
}

function entries(component: Component, kind: MetricKind, unit: SourceUnit, ...patterns: string[]): CatalogueEntry[] {
  return patterns.flatMap(expand).map((name) => ({ name, component, kind, unit }));
}

function timers(component: Component, unit: SourceUnit, ...patterns: string[]): CatalogueEntry[] {
  return patterns.flatMap(expand).flatMap((base) => [
    { name: base, component, kind: 'gauge' as const, unit, timer: { base, stat: 'mean' as const } },
    { name: `${base}.count`, component, kind: 'delta' as const, unit: 'count' as const, timer: { base, stat: 'count' as const } },
    { name: `${base}.max`, component, kind: 'gauge' as const, unit, timer: { base, stat: 'max' as const } },
    { name: `${base}.median`, component, kind: 'gauge' as const, unit, timer: { base, stat: 'median' as const } },
    { name: `${base}.pctl95`, component, kind: 'gauge' as const, unit, timer: { base, stat: 'pctl95' as const } },
  ]);
}

export const METRIC_CATALOGUE: readonly CatalogueEntry[] = [
  ...entries('system', 'gauge', 'percent', 'system.cpu.{user,system,iowait,idle,stolen}'),
  ...entries('system', 'gauge', 'none', 'system.load.{1,5,15}'),
  ...entries('system', 'gauge', 'bytes', 'system.mem.{total,used,free,available,buffered,cached,shared}'),
  ...entries('system', 'gauge', 'percent', 'system.mem.pct_used', 'system.swap.pct_free', 'system.disk.in_use'),
  ...entries('system', 'gauge', 'bytes', 'system.swap.{total,used,free}', 'system.disk.{total,used,free}'),
  ...entries('system', 'delta', 'count', 'system.io.{iops_r,iops_w}'),
  ...entries('system', 'delta', 'kilobytes', 'system.io.{kbs_r,kbs_w}'),
  ...entries('system', 'gauge', 'milliseconds', 'system.io.{wait_r,wait_w}'),
  ...entries('system', 'delta', 'bytes', 'system.net.{bytes_rcvd,bytes_sent}'),
  ...entries(
    'system',
    'delta',
    'count',
    'system.net.{packets_in.count,packets_out.count,drops_in.count,drops_out.count,packets_in.error,packets_out.error,listen_overflows}',
  ),
  ...entries('agent', 'gauge', 'status', 'amplify.agent.status'),
  ...entries('agent', 'gauge', 'percent', 'amplify.agent.cpu.{user,system}'),
  ...entries('agent', 'gauge', 'bytes', 'amplify.agent.mem.{rss,vms}'),
  ...entries('nginx', 'delta', 'count', 'nginx.http.conn.{accepted,dropped}', 'nginx.http.request.count'),
  ...entries('nginx', 'gauge', 'count', 'nginx.http.conn.{active,current,idle}', 'nginx.http.request.{current,reading,writing}'),
  ...entries('nginx', 'delta', 'count', 'nginx.http.status.{1xx,2xx,3xx,4xx,5xx,403,404,500,502,503,504,discarded}'),
  ...entries('nginx', 'delta', 'count', 'nginx.http.method.{get,head,post,put,delete,options}', 'nginx.http.{v1_0,v1_1,v2}'),
  ...entries('nginx', 'delta', 'bytes', 'nginx.http.request.{bytes_sent,body_bytes_sent}'),
  ...entries('nginx', 'delta', 'count', 'nginx.http.request.malformed'),
  ...timers('nginx', 'seconds', 'nginx.http.request.time', 'nginx.upstream.{response,connect,header}.time'),
  ...entries('nginx', 'delta', 'count', 'nginx.upstream.{request.count,next.count}', 'nginx.upstream.status.{2xx,4xx,5xx}'),
  ...entries('nginx', 'delta', 'count', 'nginx.cache.{hit,miss,bypass,expired,stale,updating,revalidated}'),
  ...entries('nginx', 'gauge', 'count', 'nginx.workers.count', 'nginx.workers.fds_count'),
  ...entries('nginx', 'gauge', 'percent', 'nginx.workers.cpu.{user,system,total}'),
  ...entries('nginx', 'gauge', 'bytes', 'nginx.workers.mem.{rss,vms}'),
  ...entries('nginx', 'delta', 'kilobytes', 'nginx.workers.io.{kbs_r,kbs_w}'),
  ...entries('nginx', 'gauge', 'status', 'nginx.status'),
  ...entries('php-fpm', 'delta', 'count', 'php.fpm.conn.accepted', 'php.fpm.slow_req'),
  ...entries('php-fpm', 'gauge', 'count', 'php.fpm.queue.{current,max,len}', 'php.fpm.proc.{idle,active,total,max_active,max_child}'),
  ...entries('php-fpm', 'gauge', 'status', 'php.fpm.status'),
  ...entries(
    'mysql',
    'delta',
    'count',
    'mysql.global.{connections,questions,select,insert,update,delete,writes,commit,slow_queries,aborted_connects,innodb_buffer_pool_read_requests,innodb_buffer_pool_reads}',
  ),
  ...entries(
    'mysql',
    'gauge',
    'count',
    'mysql.global.{threads_connected,threads_running,innodb_buffer_pool_pages_total,innodb_buffer_pool_pages_free}',
  ),
  ...entries('mysql', 'gauge', 'percent', 'mysql.global.innodb_buffer_pool.hit_ratio', 'mysql.global.innodb_buffer_pool_util'),
  ...entries(
    'varnish',
    'delta',
    'count',
    'varnish.cache.{hit,miss,hitpass}',
    'varnish.client.{req,conn}',
    'varnish.backend.{conn,req,fail}',
    'varnish.fetch.total',
  ),
  ...entries('varnish', 'gauge', 'count', 'varnish.threads', 'varnish.n_object', 'varnish.n_expired', 'varnish.n_lru_nuked'),
  ...entries('varnish', 'gauge', 'percent', 'varnish.cache.hit_ratio', 'varnish.backend.success_ratio'),
];

const byName = new Map(METRIC_CATALOGUE.map((entry) => [entry.name, entry]));

export function catalogueEntry(name: string): CatalogueEntry | undefined {
  return byName.get(name);
}

/** Server kinds as the host list reports them, and the component each one brings. */
export const SERVER_KIND_COMPONENTS: Readonly<Record<string, readonly Component[]>> = {
  'web-server': ['nginx'],
  'application-server': ['php-fpm'],
  database: ['mysql'],
  cache: ['varnish'],
};
