import { METRIC_CATALOGUE } from '../../../upstream/monitoring/metric-catalogue.js';
import type { HostProfile } from './hosts.js';
import { activity, burst, daily, noise } from './minutes.js';

/**
 * The value every catalogue metric has on one host in one minute, as a pure function of
 * (host, minute). Gauges are the minute's value; deltas the count for that minute.
 *
 * Shapes: a daily cycle with a per-host phase, per-minute noise, and occasional bursts
 * (10-minute stretches at 1.5-3x). Related metrics derive from shared quantities so they
 * stay consistent: the cpu parts add up to 100, mem used + free = total, the nginx status
 * classes add up to the request count, timer max >= pctl95 >= mean >= median >= 0.
 */

export type Signal = (p: HostProfile, minute: number) => number;

/** Small counts that are usually zero: a rare event per minute. */
function rare(p: HostProfile, minute: number, salt: number, probability: number, max: number): number {
  const n = noise(p, minute, salt);
  return n < probability ? 1 + Math.floor((n / probability) * max) : 0;
}

const round2 = (x: number): number => Math.round(x * 100) / 100;
const pct = (part: number, whole: number): number => (whole > 0 ? round2((part / whole) * 100) : 0);

// ---- system ------------------------------------------------------------------------

function cpuParts(p: HostProfile, m: number): { user: number; system: number; iowait: number; stolen: number; idle: number } {
  const a = Math.min(activity(p, m), 1.2) / 1.2;
  let user = 2 + 78 * a * (0.9 + 0.2 * noise(p, m, 0xc1));
  let system = user * (0.2 + 0.1 * noise(p, m, 0xc2));
  let iowait = (p.components.has('mysql') ? 0.5 : 0.1) + 4 * noise(p, m, 0xc3) ** 3;
  let stolen = p.type === 'virtual' ? 0.05 + 1.5 * noise(p, m, 0xc4) ** 4 : 0;
  const busy = user + system + iowait + stolen;
  if (busy > 98) {
    const scale = 98 / busy;
    user *= scale;
    system *= scale;
    iowait *= scale;
    stolen *= scale;
  }
  user = round2(user);
  system = round2(system);
  iowait = round2(iowait);
  stolen = round2(stolen);
  return { user, system, iowait, stolen, idle: round2(100 - user - system - iowait - stolen) };
}

function load(p: HostProfile, m: number, smoothing: number): number {
  const base = p.cpus * p.busy * daily(p, m) * 0.9;
  const jitter = smoothing === 1 ? burst(p, m) * (0.8 + 0.4 * noise(p, m, 0x10ad)) : 1 + 0.05 / smoothing;
  return round2(base * jitter);
}

function memUsed(p: HostProfile, m: number): number {
  const a = Math.min(activity(p, m), 1.3) / 1.3;
  return Math.round(p.memTotal * (0.25 + 0.45 * a + 0.05 * noise(p, m, 0x3e3)));
}
const memFree = (p: HostProfile, m: number): number => p.memTotal - memUsed(p, m);

function swapUsed(p: HostProfile, m: number): number {
  return Math.round(p.swapTotal * (0.02 + 0.1 * daily(p, m) * p.busy));
}

function diskUsed(p: HostProfile, m: number): number {
  // Fills up over 60 days, then log rotation and cleanup bring it back down.
  const saw = (m / (60 * 1440) + p.diskPhase) % 1;
  return Math.round(p.diskTotal * (0.3 + 0.45 * saw + 0.002 * noise(p, m, 0xd15c)));
}

function iops(p: HostProfile, m: number, salt: number, share: number): number {
  const dbFactor = p.components.has('mysql') ? 4 : 1;
  return Math.round(60 * (2 + 150 * share * dbFactor * activity(p, m)) * (0.8 + 0.4 * noise(p, m, salt)));
}

function netReceived(p: HostProfile, m: number): number {
  const perRequest = p.components.has('nginx') ? p.requestsPerMinute * 1_200 : 2_000_000;
  return Math.round(perRequest * activity(p, m) * (0.9 + 0.2 * noise(p, m, 0x4e7)));
}
function netSent(p: HostProfile, m: number): number {
  const ratio = p.components.has('nginx') ? p.responseBytes / 1_200 : 1.5;
  return Math.round(netReceived(p, m) * ratio * (0.95 + 0.1 * noise(p, m, 0x4e8)));
}

// ---- nginx ---------------------------------------------------------------------------

function requests(p: HostProfile, m: number): number {
  return Math.round(p.requestsPerMinute * activity(p, m) * (0.95 + 0.1 * noise(p, m, 0x8e9)));
}

function statusClasses(p: HostProfile, m: number): { s1: number; s2: number; s3: number; s4: number; s5: number; total: number } {
  const total = requests(p, m);
  const failing = burst(p, m) > 1 && noise(p, m, 0x5c5) < 0.5;
  const s3 = Math.floor(total * (0.04 + 0.06 * noise(p, m, 0x5c3)));
  const s4 = Math.floor(total * (0.02 + 0.04 * noise(p, m, 0x5c4)));
  const s5 = Math.floor(total * (failing ? 0.05 + 0.1 * noise(p, m, 0x5c6) : 0.002 * noise(p, m, 0x5c7)));
  const s1 = rare(p, m, 0x5c1, 0.01, 3);
  return { s1, s2: Math.max(0, total - s1 - s3 - s4 - s5), s3, s4, s5, total };
}

function share(p: HostProfile, m: number, part: number, salt: number): number {
  return Math.floor(requests(p, m) * part * (0.8 + 0.4 * noise(p, m, salt)));
}

const METHODS = { head: 0.02, post: 0.12, put: 0.01, delete: 0.004, options: 0.01 } as const;

function method(p: HostProfile, m: number, name: keyof typeof METHODS | 'get'): number {
  const split = (k: keyof typeof METHODS, salt: number): number => share(p, m, METHODS[k], salt);
  if (name !== 'get') return split(name, 0x3e0 + Object.keys(METHODS).indexOf(name));
  const others = (Object.keys(METHODS) as (keyof typeof METHODS)[]).reduce(
    (sum, k, i) => sum + split(k, 0x3e0 + i),
    0,
  );
  return Math.max(0, requests(p, m) - others);
}

function httpVersions(p: HostProfile, m: number): { v1_0: number; v1_1: number; v2: number } {
  const total = requests(p, m);
  const v1_0 = Math.floor(total * 0.01 * noise(p, m, 0x410));
  const v2 = Math.floor(total * p.http2Share);
  return { v1_0, v2, v1_1: total - v1_0 - v2 };
}

const upstreamRequests = (p: HostProfile, m: number): number => Math.floor(requests(p, m) * p.upstreamShare);

function upstreamStatus(p: HostProfile, m: number): { s2: number; s4: number; s5: number } {
  const total = upstreamRequests(p, m);
  const failing = burst(p, m) > 1 && noise(p, m, 0x5c5) < 0.5;
  const s4 = Math.floor(total * 0.02 * noise(p, m, 0x0a4));
  const s5 = Math.floor(total * (failing ? 0.08 : 0.001) * noise(p, m, 0x0a5));
  return { s2: total - s4 - s5, s4, s5 };
}

function cacheable(p: HostProfile, m: number): number {
  return requests(p, m) - upstreamRequests(p, m);
}

const CACHE_SHARES = { hit: 0.7, miss: 0.18, expired: 0.03, stale: 0.002, updating: 0.001, revalidated: 0.01 } as const;

function cacheCount(p: HostProfile, m: number, name: keyof typeof CACHE_SHARES | 'bypass'): number {
  const base = cacheable(p, m);
  if (name !== 'bypass') return Math.floor(base * CACHE_SHARES[name]);
  const used = (Object.keys(CACHE_SHARES) as (keyof typeof CACHE_SHARES)[]).reduce(
    (sum, k) => sum + Math.floor(base * CACHE_SHARES[k]),
    0,
  );
  return base - used;
}

/** Requests in flight, by Little's law, and keep-alive connections. */
function connections(p: HostProfile, m: number): { active: number; idle: number; reading: number } {
  const perSecond = requests(p, m) / 60;
  const active = Math.round(perSecond * timerLevel(p, m, 'request') * 1.2) + 1;
  const idle = Math.round(perSecond * 0.8 * (0.8 + 0.4 * noise(p, m, 0xc0e)));
  return { active, idle, reading: Math.floor(active * 0.1) };
}

type TimerName = 'request' | 'response' | 'connect' | 'header';
const TIMER_SCALE: Record<TimerName, number> = { request: 1, response: 0.85, connect: 0.02, header: 0.7 };
const TIMER_SALT: Record<TimerName, number> = { request: 0x7101, response: 0x7102, connect: 0x7103, header: 0x7104 };

/** Mean time in seconds; slower at busy hours and in bursts. */
function timerLevel(p: HostProfile, m: number, timer: TimerName): number {
  const slowdown = (0.7 + 0.6 * daily(p, m)) * burst(p, m);
  return p.requestTime * TIMER_SCALE[timer] * slowdown * (0.9 + 0.2 * noise(p, m, TIMER_SALT[timer]));
}

function timerSignals(base: string, timer: TimerName, count: Signal): Record<string, Signal> {
  const r6 = (x: number): number => Math.round(x * 1e6) / 1e6;
  return {
    [base]: (p, m) => r6(timerLevel(p, m, timer)),
    [`${base}.count`]: count,
    [`${base}.median`]: (p, m) => r6(timerLevel(p, m, timer) * 0.75),
    [`${base}.pctl95`]: (p, m) => r6(timerLevel(p, m, timer) * 2.6),
    [`${base}.max`]: (p, m) => r6(timerLevel(p, m, timer) * 2.6 * (1.1 + 0.9 * noise(p, m, TIMER_SALT[timer] + 9))),
  };
}

// ---- php-fpm, mysql, varnish -------------------------------------------------------------

const phpRequests = (p: HostProfile, m: number): number =>
  p.components.has('nginx') ? upstreamRequests(p, m) : Math.floor(requests(p, m) * 0.6);

function fpmProcs(p: HostProfile, m: number): { active: number; total: number; queued: number } {
  const wanted = Math.round((phpRequests(p, m) / 60) * p.requestTime * 1.5) + 1;
  const active = Math.min(p.fpmMaxChildren, wanted);
  const total = Math.min(p.fpmMaxChildren, Math.max(2, Math.ceil(active * 1.5) + 1));
  return { active, total, queued: Math.max(0, wanted - active) };
}

function questions(p: HostProfile, m: number): number {
  return Math.round(p.queriesPerMinute * activity(p, m) * (0.9 + 0.2 * noise(p, m, 0x9e5)));
}
const queryShare = (p: HostProfile, m: number, part: number): number => Math.floor(questions(p, m) * part);
const bufferReadRequests = (p: HostProfile, m: number): number => questions(p, m) * 40;
function bufferReads(p: HostProfile, m: number): number {
  return Math.floor(bufferReadRequests(p, m) * (0.0005 + 0.01 * noise(p, m, 0xbf0) ** 3));
}
const pagesFree = (p: HostProfile, m: number): number =>
  Math.round(p.bufferPoolPages * (0.02 + 0.1 * noise(p, m, 0xbf1)));

const varnishRequests = (p: HostProfile, m: number): number =>
  Math.round(p.requestsPerMinute * 1.5 * activity(p, m) * (0.95 + 0.1 * noise(p, m, 0x7a1)));
const varnishHits = (p: HostProfile, m: number): number =>
  Math.floor(varnishRequests(p, m) * p.varnishHitRatio * (0.95 + 0.05 * noise(p, m, 0x7a2)));
const varnishMisses = (p: HostProfile, m: number): number =>
  Math.floor((varnishRequests(p, m) - varnishHits(p, m)) * 0.85);
const varnishBackendRequests = (p: HostProfile, m: number): number =>
  varnishRequests(p, m) - varnishHits(p, m);
const varnishBackendFails = (p: HostProfile, m: number): number => rare(p, m, 0x7a3, 0.03, 4);

const SIGNALS: Record<string, Signal> = {
  'system.cpu.user': (p, m) => cpuParts(p, m).user,
  'system.cpu.system': (p, m) => cpuParts(p, m).system,
  'system.cpu.iowait': (p, m) => cpuParts(p, m).iowait,
  'system.cpu.idle': (p, m) => cpuParts(p, m).idle,
  'system.cpu.stolen': (p, m) => cpuParts(p, m).stolen,
  'system.load.1': (p, m) => load(p, m, 1),
  'system.load.5': (p, m) => load(p, m, 5),
  'system.load.15': (p, m) => load(p, m, 15),
  'system.mem.total': (p) => p.memTotal,
  'system.mem.used': memUsed,
  'system.mem.free': memFree,
  'system.mem.available': (p, m) => Math.round(memFree(p, m) * 0.92),
  'system.mem.buffered': (p, m) => Math.round(memFree(p, m) * 0.06),
  'system.mem.cached': (p, m) => Math.round(memFree(p, m) * 0.55),
  'system.mem.shared': (p) => Math.round(p.memTotal * 0.015),
  'system.mem.pct_used': (p, m) => pct(memUsed(p, m), p.memTotal),
  'system.swap.pct_free': (p, m) => (p.swapTotal > 0 ? pct(p.swapTotal - swapUsed(p, m), p.swapTotal) : 100),
  'system.disk.in_use': (p, m) => pct(diskUsed(p, m), p.diskTotal),
  'system.swap.total': (p) => p.swapTotal,
  'system.swap.used': swapUsed,
  'system.swap.free': (p, m) => p.swapTotal - swapUsed(p, m),
  'system.disk.total': (p) => p.diskTotal,
  'system.disk.used': diskUsed,
  'system.disk.free': (p, m) => p.diskTotal - diskUsed(p, m),
  'system.io.iops_r': (p, m) => iops(p, m, 0x105, 0.6),
  'system.io.iops_w': (p, m) => iops(p, m, 0x106, 0.4),
  'system.io.kbs_r': (p, m) => Math.round(iops(p, m, 0x105, 0.6) * (8 + 24 * noise(p, m, 0x107))),
  'system.io.kbs_w': (p, m) => Math.round(iops(p, m, 0x106, 0.4) * (4 + 12 * noise(p, m, 0x108))),
  'system.io.wait_r': (p, m) => round2(0.2 + 4 * activity(p, m) * noise(p, m, 0x109)),
  'system.io.wait_w': (p, m) => round2(0.4 + 6 * activity(p, m) * noise(p, m, 0x10a)),
  'system.net.bytes_rcvd': netReceived,
  'system.net.bytes_sent': netSent,
  'system.net.packets_in.count': (p, m) => Math.round(netReceived(p, m) / 900),
  'system.net.packets_out.count': (p, m) => Math.round(netSent(p, m) / 1_300),
  'system.net.drops_in.count': (p, m) => rare(p, m, 0xd01, 0.01, 5),
  'system.net.drops_out.count': (p, m) => rare(p, m, 0xd02, 0.005, 3),
  'system.net.packets_in.error': (p, m) => rare(p, m, 0xe01, 0.003, 2),
  'system.net.packets_out.error': (p, m) => rare(p, m, 0xe02, 0.002, 2),
  'system.net.listen_overflows': (p, m) => (burst(p, m) > 1 ? rare(p, m, 0x10f, 0.3, 20) : 0),

  'amplify.agent.status': () => 1,
  'amplify.agent.cpu.user': (p, m) => round2(0.3 + 2 * noise(p, m, 0xa01)),
  'amplify.agent.cpu.system': (p, m) => round2(0.1 + 0.8 * noise(p, m, 0xa02)),
  'amplify.agent.mem.rss': (p, m) => Math.round((45 + 40 * noise(p, m, 0xa03) * 0.2 + 30 * p.busy) * 1024 * 1024),
  'amplify.agent.mem.vms': (p) => Math.round((380 + 140 * p.busy) * 1024 * 1024),

  'nginx.http.conn.accepted': (p, m) => share(p, m, 0.35, 0xacc),
  'nginx.http.conn.dropped': (p, m) => (burst(p, m) > 1 ? rare(p, m, 0xd0d, 0.2, 10) : 0),
  'nginx.http.request.count': requests,
  'nginx.http.conn.active': (p, m) => connections(p, m).active,
  'nginx.http.conn.idle': (p, m) => connections(p, m).idle,
  'nginx.http.conn.current': (p, m) => {
    const c = connections(p, m);
    return c.active + c.idle;
  },
  'nginx.http.request.current': (p, m) => connections(p, m).active,
  'nginx.http.request.reading': (p, m) => connections(p, m).reading,
  'nginx.http.request.writing': (p, m) => {
    const c = connections(p, m);
    return c.active - c.reading;
  },
  'nginx.http.status.1xx': (p, m) => statusClasses(p, m).s1,
  'nginx.http.status.2xx': (p, m) => statusClasses(p, m).s2,
  'nginx.http.status.3xx': (p, m) => statusClasses(p, m).s3,
  'nginx.http.status.4xx': (p, m) => statusClasses(p, m).s4,
  'nginx.http.status.5xx': (p, m) => statusClasses(p, m).s5,
  'nginx.http.status.403': (p, m) => Math.floor(statusClasses(p, m).s4 * 0.12),
  'nginx.http.status.404': (p, m) => Math.floor(statusClasses(p, m).s4 * 0.6),
  'nginx.http.status.500': (p, m) => Math.floor(statusClasses(p, m).s5 * 0.3),
  'nginx.http.status.502': (p, m) => Math.floor(statusClasses(p, m).s5 * 0.3),
  'nginx.http.status.503': (p, m) => Math.floor(statusClasses(p, m).s5 * 0.25),
  'nginx.http.status.504': (p, m) => {
    const s5 = statusClasses(p, m).s5;
    return s5 - 2 * Math.floor(s5 * 0.3) - Math.floor(s5 * 0.25);
  },
  'nginx.http.status.discarded': (p, m) => Math.floor(requests(p, m) * 0.001 * noise(p, m, 0xd15)),
  'nginx.http.method.get': (p, m) => method(p, m, 'get'),
  'nginx.http.method.head': (p, m) => method(p, m, 'head'),
  'nginx.http.method.post': (p, m) => method(p, m, 'post'),
  'nginx.http.method.put': (p, m) => method(p, m, 'put'),
  'nginx.http.method.delete': (p, m) => method(p, m, 'delete'),
  'nginx.http.method.options': (p, m) => method(p, m, 'options'),
  'nginx.http.v1_0': (p, m) => httpVersions(p, m).v1_0,
  'nginx.http.v1_1': (p, m) => httpVersions(p, m).v1_1,
  'nginx.http.v2': (p, m) => httpVersions(p, m).v2,
  'nginx.http.request.bytes_sent': (p, m) => Math.round(requests(p, m) * p.responseBytes * (0.9 + 0.2 * noise(p, m, 0xb5))),
  'nginx.http.request.body_bytes_sent': (p, m) =>
    Math.round(requests(p, m) * p.responseBytes * (0.9 + 0.2 * noise(p, m, 0xb5)) * 0.93),
  'nginx.http.request.malformed': (p, m) => rare(p, m, 0x3a1, 0.02, 3),
  ...timerSignals('nginx.http.request.time', 'request', requests),
  ...timerSignals('nginx.upstream.response.time', 'response', upstreamRequests),
  ...timerSignals('nginx.upstream.connect.time', 'connect', upstreamRequests),
  ...timerSignals('nginx.upstream.header.time', 'header', upstreamRequests),
  'nginx.upstream.request.count': upstreamRequests,
  'nginx.upstream.next.count': (p, m) => Math.floor(upstreamRequests(p, m) * 0.001 * noise(p, m, 0x4e1)),
  'nginx.upstream.status.2xx': (p, m) => upstreamStatus(p, m).s2,
  'nginx.upstream.status.4xx': (p, m) => upstreamStatus(p, m).s4,
  'nginx.upstream.status.5xx': (p, m) => upstreamStatus(p, m).s5,
  'nginx.cache.hit': (p, m) => cacheCount(p, m, 'hit'),
  'nginx.cache.miss': (p, m) => cacheCount(p, m, 'miss'),
  'nginx.cache.bypass': (p, m) => cacheCount(p, m, 'bypass'),
  'nginx.cache.expired': (p, m) => cacheCount(p, m, 'expired'),
  'nginx.cache.stale': (p, m) => cacheCount(p, m, 'stale'),
  'nginx.cache.updating': (p, m) => cacheCount(p, m, 'updating'),
  'nginx.cache.revalidated': (p, m) => cacheCount(p, m, 'revalidated'),
  'nginx.workers.count': (p) => p.cpus,
  'nginx.workers.fds_count': (p, m) => {
    const c = connections(p, m);
    return p.cpus * 12 + 2 * (c.active + c.idle);
  },
  'nginx.workers.cpu.user': (p, m) => round2(cpuParts(p, m).user * 0.3),
  'nginx.workers.cpu.system': (p, m) => round2(cpuParts(p, m).system * 0.4),
  'nginx.workers.cpu.total': (p, m) => {
    const c = cpuParts(p, m);
    return round2(round2(c.user * 0.3) + round2(c.system * 0.4));
  },
  'nginx.workers.mem.rss': (p, m) => Math.round(p.cpus * 8 * 1024 * 1024 * (1 + 0.2 * activity(p, m))),
  'nginx.workers.mem.vms': (p) => p.cpus * 150 * 1024 * 1024,
  'nginx.workers.io.kbs_r': (p, m) => Math.round(20 * activity(p, m) * noise(p, m, 0x10c)),
  'nginx.workers.io.kbs_w': (p, m) => Math.round((requests(p, m) * 200) / 1024),
  'nginx.status': () => 1,

  'php.fpm.conn.accepted': phpRequests,
  'php.fpm.slow_req': (p, m) => (burst(p, m) > 1 ? rare(p, m, 0x510, 0.3, 6) : rare(p, m, 0x511, 0.01, 2)),
  'php.fpm.queue.current': (p, m) => fpmProcs(p, m).queued,
  'php.fpm.queue.max': (p, m) => fpmProcs(p, m).queued + rare(p, m, 0x512, 0.05, 3),
  'php.fpm.queue.len': () => 511,
  'php.fpm.proc.idle': (p, m) => {
    const f = fpmProcs(p, m);
    return f.total - f.active;
  },
  'php.fpm.proc.active': (p, m) => fpmProcs(p, m).active,
  'php.fpm.proc.total': (p, m) => fpmProcs(p, m).total,
  'php.fpm.proc.max_active': (p, m) => {
    const f = fpmProcs(p, m);
    return Math.min(p.fpmMaxChildren, f.active + Math.floor(f.active * 0.3 * noise(p, m, 0x513)));
  },
  'php.fpm.proc.max_child': (p) => p.fpmMaxChildren,
  'php.fpm.status': () => 1,

  'mysql.global.connections': (p, m) => queryShare(p, m, 0.02),
  'mysql.global.questions': questions,
  'mysql.global.select': (p, m) => queryShare(p, m, 0.7),
  'mysql.global.insert': (p, m) => queryShare(p, m, 0.08),
  'mysql.global.update': (p, m) => queryShare(p, m, 0.06),
  'mysql.global.delete': (p, m) => queryShare(p, m, 0.01),
  'mysql.global.writes': (p, m) => queryShare(p, m, 0.08) + queryShare(p, m, 0.06) + queryShare(p, m, 0.01),
  'mysql.global.commit': (p, m) => queryShare(p, m, 0.05),
  'mysql.global.slow_queries': (p, m) => (burst(p, m) > 1 ? rare(p, m, 0x51a, 0.5, 15) : rare(p, m, 0x51b, 0.02, 2)),
  'mysql.global.aborted_connects': (p, m) => rare(p, m, 0xab0, 0.01, 2),
  'mysql.global.innodb_buffer_pool_read_requests': bufferReadRequests,
  'mysql.global.innodb_buffer_pool_reads': bufferReads,
  'mysql.global.threads_connected': (p, m) => 4 + Math.round(30 * activity(p, m)),
  'mysql.global.threads_running': (p, m) => 1 + Math.round(3 * activity(p, m) * noise(p, m, 0x7a9)),
  'mysql.global.innodb_buffer_pool_pages_total': (p) => p.bufferPoolPages,
  'mysql.global.innodb_buffer_pool_pages_free': pagesFree,
  'mysql.global.innodb_buffer_pool.hit_ratio': (p, m) => {
    const requested = bufferReadRequests(p, m);
    return requested > 0 ? pct(requested - bufferReads(p, m), requested) : 100;
  },
  'mysql.global.innodb_buffer_pool_util': (p, m) => pct(p.bufferPoolPages - pagesFree(p, m), p.bufferPoolPages),

  'varnish.cache.hit': varnishHits,
  'varnish.cache.miss': varnishMisses,
  'varnish.cache.hitpass': (p, m) => varnishBackendRequests(p, m) - varnishMisses(p, m),
  'varnish.client.req': varnishRequests,
  'varnish.client.conn': (p, m) => Math.floor(varnishRequests(p, m) * 0.3),
  'varnish.backend.conn': (p, m) => Math.floor(varnishBackendRequests(p, m) * 0.1),
  'varnish.backend.req': varnishBackendRequests,
  'varnish.backend.fail': varnishBackendFails,
  'varnish.fetch.total': varnishBackendRequests,
  'varnish.threads': (p, m) => 100 + Math.round(50 * activity(p, m)),
  'varnish.n_object': (p, m) => Math.round(20_000 * (1 + p.busy) * (0.9 + 0.1 * daily(p, m))),
  'varnish.n_expired': (p, m) => Math.round(300 * activity(p, m) * noise(p, m, 0x7aa)),
  'varnish.n_lru_nuked': (p, m) => rare(p, m, 0x7ab, 0.05, 20),
  'varnish.cache.hit_ratio': (p, m) => {
    const hits = varnishHits(p, m);
    const misses = varnishMisses(p, m);
    return hits + misses > 0 ? pct(hits, hits + misses) : 0;
  },
  'varnish.backend.success_ratio': (p, m) => {
    const total = varnishBackendRequests(p, m);
    return total > 0 ? pct(Math.max(0, total - varnishBackendFails(p, m)), total) : 100;
  },
};

// A Map, so names like `constructor` are not found on the object prototype.
const SIGNAL_BY_NAME = new Map(Object.entries(SIGNALS));

for (const entry of METRIC_CATALOGUE) {
  if (!SIGNAL_BY_NAME.has(entry.name)) throw new Error(`simulator: no signal for catalogue metric ${entry.name}`);
}

export function signalFor(name: string): Signal | undefined {
  return SIGNAL_BY_NAME.get(name);
}
