import { AGENT_METRICS, splitDeviceName } from '../catalogue.js';
import { deviceKindOf, deviceSignal } from './devices.js';
import type { HostProfile } from './hosts.js';
import { activity, type Block, blockFor, burst, daily, noise } from './minutes.js';

/**
 * The value every catalogue metric has on one host in one minute, as a pure function of
 * (host, minute). Gauges are the minute's value; deltas the count for that minute. A signal
 * gets the minute as (block, index in block) so it reads the host's shared per-minute state
 * (minutes.ts) without looking the block up again for every quantity it draws on.
 *
 * Shapes: a daily cycle with a per-host phase, per-minute noise, and occasional bursts
 * (10-minute stretches at 1.5-3x). Related metrics derive from shared quantities so they
 * stay consistent: the cpu parts add up to 100, mem used + free = total, the nginx status
 * classes add up to the request count, timer max >= pctl95 >= mean >= median >= 0.
 */

export type Signal = (p: HostProfile, b: Block, i: number) => number;

/** The value of `signal` on host `p` in minute `minute`. */
export function valueAt(signal: Signal, p: HostProfile, minute: number): number {
  const b = blockFor(p, minute);
  return signal(p, b, minute - b.first);
}

// The helpers that split one quantity into parts (cpu, status classes, ...) run several
// times per (name, minute); a fresh object per call showed up as garbage-collector time in
// long series requests. So each fills one scratch object in place; callers read the parts
// at once and never keep the object.

/** Small counts that are usually zero: a rare event per minute. */
function rare(p: HostProfile, b: Block, i: number, salt: number, probability: number, max: number): number {
  const n = noise(b, i, salt);
  return n < probability ? 1 + Math.floor((n / probability) * max) : 0;
}

/** 1, or 0 in the rare minute the service is down (about one minute in a thousand). */
const serviceUp = (p: HostProfile, b: Block, i: number, salt: number): number => (noise(b, i, salt) < 0.001 ? 0 : 1);

const round2 = (x: number): number => Math.round(x * 100) / 100;
const pct = (part: number, whole: number): number => (whole > 0 ? round2((part / whole) * 100) : 0);

// ---- system ------------------------------------------------------------------------

const cpuScratch = { user: 0, system: 0, iowait: 0, stolen: 0, idle: 0 };

function cpuParts(p: HostProfile, b: Block, i: number): Readonly<typeof cpuScratch> {
  const a = Math.min(activity(b, i), 1.2) / 1.2;
  let user = 2 + 78 * a * (0.9 + 0.2 * noise(b, i, 0xc1));
  let system = user * (0.2 + 0.1 * noise(b, i, 0xc2));
  let iowait = (p.components.has('mysql') ? 0.5 : 0.1) + 4 * noise(b, i, 0xc3) ** 3;
  let stolen = p.type === 'virtual' ? 0.05 + 1.5 * noise(b, i, 0xc4) ** 4 : 0;
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
  cpuScratch.user = user;
  cpuScratch.system = system;
  cpuScratch.iowait = iowait;
  cpuScratch.stolen = stolen;
  cpuScratch.idle = round2(100 - user - system - iowait - stolen);
  return cpuScratch;
}

function load(p: HostProfile, b: Block, i: number, smoothing: number): number {
  const base = p.cpus * p.busy * daily(b, i) * 0.9;
  const jitter = smoothing === 1 ? burst(b, i) * (0.8 + 0.4 * noise(b, i, 0x10ad)) : 1 + 0.05 / smoothing;
  return round2(base * jitter);
}

function memUsed(p: HostProfile, b: Block, i: number): number {
  const a = Math.min(activity(b, i), 1.3) / 1.3;
  return Math.round(p.memTotal * (0.25 + 0.45 * a + 0.05 * noise(b, i, 0x3e3)));
}
const memFree = (p: HostProfile, b: Block, i: number): number => p.memTotal - memUsed(p, b, i);

function swapUsed(p: HostProfile, b: Block, i: number): number {
  return Math.round(p.swapTotal * (0.02 + 0.1 * daily(b, i) * p.busy));
}

function diskUsed(p: HostProfile, b: Block, i: number): number {
  // Fills up over 60 days, then log rotation and cleanup bring it back down.
  const saw = ((b.first + i) / (60 * 1440) + p.diskPhase) % 1;
  return Math.round(p.diskTotal * (0.3 + 0.45 * saw + 0.002 * noise(b, i, 0xd15c)));
}

function iops(p: HostProfile, b: Block, i: number, salt: number, share: number): number {
  const dbFactor = p.components.has('mysql') ? 4 : 1;
  return Math.round(60 * (2 + 150 * share * dbFactor * activity(b, i)) * (0.8 + 0.4 * noise(b, i, salt)));
}

function netReceived(p: HostProfile, b: Block, i: number): number {
  const perRequest = p.components.has('nginx') ? p.requestsPerMinute * 1_200 : 2_000_000;
  return Math.round(perRequest * activity(b, i) * (0.9 + 0.2 * noise(b, i, 0x4e7)));
}
function netSent(p: HostProfile, b: Block, i: number): number {
  const ratio = p.components.has('nginx') ? p.responseBytes / 1_200 : 1.5;
  return Math.round(netReceived(p, b, i) * ratio * (0.95 + 0.1 * noise(b, i, 0x4e8)));
}

// ---- nginx ---------------------------------------------------------------------------

function requests(p: HostProfile, b: Block, i: number): number {
  return Math.round(p.requestsPerMinute * activity(b, i) * (0.95 + 0.1 * noise(b, i, 0x8e9)));
}

const statusScratch = { s1: 0, s2: 0, s3: 0, s4: 0, s5: 0 };

function statusClasses(p: HostProfile, b: Block, i: number): Readonly<typeof statusScratch> {
  const total = requests(p, b, i);
  const failing = burst(b, i) > 1 && noise(b, i, 0x5c5) < 0.5;
  const s3 = Math.floor(total * (0.04 + 0.06 * noise(b, i, 0x5c3)));
  const s4 = Math.floor(total * (0.02 + 0.04 * noise(b, i, 0x5c4)));
  const s5 = Math.floor(total * (failing ? 0.05 + 0.1 * noise(b, i, 0x5c6) : 0.002 * noise(b, i, 0x5c7)));
  const s1 = rare(p, b, i, 0x5c1, 0.01, 3);
  statusScratch.s1 = s1;
  statusScratch.s2 = Math.max(0, total - s1 - s3 - s4 - s5);
  statusScratch.s3 = s3;
  statusScratch.s4 = s4;
  statusScratch.s5 = s5;
  return statusScratch;
}

function share(p: HostProfile, b: Block, i: number, part: number, salt: number): number {
  return Math.floor(requests(p, b, i) * part * (0.8 + 0.4 * noise(b, i, salt)));
}

/** Shares of the non-GET methods; GET gets the rest. Arrays, not objects: this runs per minute. */
const METHOD_NAMES = ['head', 'post', 'put', 'delete', 'options'] as const;
const METHOD_SHARES = [0.02, 0.12, 0.01, 0.004, 0.01] as const;

function method(p: HostProfile, b: Block, i: number, name: (typeof METHOD_NAMES)[number] | 'get'): number {
  if (name !== 'get') {
    const k = METHOD_NAMES.indexOf(name);
    return share(p, b, i, METHOD_SHARES[k] ?? 0, 0x3e0 + k);
  }
  let others = 0;
  for (let k = 0; k < METHOD_SHARES.length; k++) others += share(p, b, i, METHOD_SHARES[k] ?? 0, 0x3e0 + k);
  return Math.max(0, requests(p, b, i) - others);
}

const versionScratch = { v1_0: 0, v1_1: 0, v2: 0 };

function httpVersions(p: HostProfile, b: Block, i: number): Readonly<typeof versionScratch> {
  const total = requests(p, b, i);
  const v1_0 = Math.floor(total * 0.01 * noise(b, i, 0x410));
  const v2 = Math.floor(total * p.http2Share);
  versionScratch.v1_0 = v1_0;
  versionScratch.v1_1 = total - v1_0 - v2;
  versionScratch.v2 = v2;
  return versionScratch;
}

const upstreamRequests = (p: HostProfile, b: Block, i: number): number => Math.floor(requests(p, b, i) * p.upstreamShare);

const upstreamScratch = { s2: 0, s4: 0, s5: 0 };

function upstreamStatus(p: HostProfile, b: Block, i: number): Readonly<typeof upstreamScratch> {
  const total = upstreamRequests(p, b, i);
  const failing = burst(b, i) > 1 && noise(b, i, 0x5c5) < 0.5;
  const s4 = Math.floor(total * 0.02 * noise(b, i, 0x0a4));
  const s5 = Math.floor(total * (failing ? 0.08 : 0.001) * noise(b, i, 0x0a5));
  upstreamScratch.s2 = total - s4 - s5;
  upstreamScratch.s4 = s4;
  upstreamScratch.s5 = s5;
  return upstreamScratch;
}

function cacheable(p: HostProfile, b: Block, i: number): number {
  return requests(p, b, i) - upstreamRequests(p, b, i);
}

const CACHE_NAMES = ['hit', 'miss', 'expired', 'stale', 'updating', 'revalidated'] as const;
const CACHE_SHARES = [0.7, 0.18, 0.03, 0.002, 0.001, 0.01] as const;

/** Cache outcomes of the requests nginx serves itself; bypass gets the rest. */
function cacheCount(p: HostProfile, b: Block, i: number, name: (typeof CACHE_NAMES)[number] | 'bypass'): number {
  const base = cacheable(p, b, i);
  if (name !== 'bypass') return Math.floor(base * (CACHE_SHARES[CACHE_NAMES.indexOf(name)] ?? 0));
  let used = 0;
  for (const part of CACHE_SHARES) used += Math.floor(base * part);
  return base - used;
}

/** Requests in flight, by Little's law, and keep-alive connections. */
const connectionScratch = { active: 0, idle: 0, reading: 0 };

function connections(p: HostProfile, b: Block, i: number): Readonly<typeof connectionScratch> {
  const perSecond = requests(p, b, i) / 60;
  const active = Math.round(perSecond * timerLevel(p, b, i, 'request') * 1.2) + 1;
  const idle = Math.round(perSecond * 0.8 * (0.8 + 0.4 * noise(b, i, 0xc0e)));
  connectionScratch.active = active;
  connectionScratch.idle = idle;
  connectionScratch.reading = Math.floor(active * 0.1);
  return connectionScratch;
}

type TimerName = 'request' | 'response' | 'connect' | 'header';
const TIMER_SCALE: Record<TimerName, number> = { request: 1, response: 0.85, connect: 0.02, header: 0.7 };
const TIMER_SALT: Record<TimerName, number> = { request: 0x7101, response: 0x7102, connect: 0x7103, header: 0x7104 };

/** Mean time in seconds; slower at busy hours and in bursts. */
function timerLevel(p: HostProfile, b: Block, i: number, timer: TimerName): number {
  const slowdown = (0.7 + 0.6 * daily(b, i)) * burst(b, i);
  return p.requestTime * TIMER_SCALE[timer] * slowdown * (0.9 + 0.2 * noise(b, i, TIMER_SALT[timer]));
}

function timerSignals(base: string, timer: TimerName, count: Signal): Record<string, Signal> {
  const r6 = (x: number): number => Math.round(x * 1e6) / 1e6;
  return {
    [base]: (p, b, i) => r6(timerLevel(p, b, i, timer)),
    [`${base}.count`]: count,
    [`${base}.median`]: (p, b, i) => r6(timerLevel(p, b, i, timer) * 0.75),
    [`${base}.pctl95`]: (p, b, i) => r6(timerLevel(p, b, i, timer) * 2.6),
    [`${base}.max`]: (p, b, i) => r6(timerLevel(p, b, i, timer) * 2.6 * (1.1 + 0.9 * noise(b, i, TIMER_SALT[timer] + 9))),
  };
}

// ---- php-fpm, mysql, varnish -------------------------------------------------------------

const phpRequests = (p: HostProfile, b: Block, i: number): number =>
  p.components.has('nginx') ? upstreamRequests(p, b, i) : Math.floor(requests(p, b, i) * 0.6);

const fpmScratch = { active: 0, total: 0, queued: 0 };

function fpmProcs(p: HostProfile, b: Block, i: number): Readonly<typeof fpmScratch> {
  const wanted = Math.round((phpRequests(p, b, i) / 60) * p.requestTime * 1.5) + 1;
  const active = Math.min(p.fpmMaxChildren, wanted);
  const total = Math.min(p.fpmMaxChildren, Math.max(2, Math.ceil(active * 1.5) + 1));
  fpmScratch.active = active;
  fpmScratch.total = total;
  fpmScratch.queued = Math.max(0, wanted - active);
  return fpmScratch;
}

function questions(p: HostProfile, b: Block, i: number): number {
  return Math.round(p.queriesPerMinute * activity(b, i) * (0.9 + 0.2 * noise(b, i, 0x9e5)));
}
const queryShare = (p: HostProfile, b: Block, i: number, part: number): number => Math.floor(questions(p, b, i) * part);
const bufferReadRequests = (p: HostProfile, b: Block, i: number): number => questions(p, b, i) * 40;
function bufferReads(p: HostProfile, b: Block, i: number): number {
  return Math.floor(bufferReadRequests(p, b, i) * (0.0005 + 0.01 * noise(b, i, 0xbf0) ** 3));
}
const pagesFree = (p: HostProfile, b: Block, i: number): number =>
  Math.round(p.bufferPoolPages * (0.02 + 0.1 * noise(b, i, 0xbf1)));

const varnishRequests = (p: HostProfile, b: Block, i: number): number =>
  Math.round(p.requestsPerMinute * 1.5 * activity(b, i) * (0.95 + 0.1 * noise(b, i, 0x7a1)));
const varnishHits = (p: HostProfile, b: Block, i: number): number =>
  Math.floor(varnishRequests(p, b, i) * p.varnishHitRatio * (0.95 + 0.05 * noise(b, i, 0x7a2)));
const varnishMisses = (p: HostProfile, b: Block, i: number): number =>
  Math.floor((varnishRequests(p, b, i) - varnishHits(p, b, i)) * 0.85);
const varnishBackendRequests = (p: HostProfile, b: Block, i: number): number =>
  varnishRequests(p, b, i) - varnishHits(p, b, i);
const varnishBackendFails = (p: HostProfile, b: Block, i: number): number => rare(p, b, i, 0x7a3, 0.03, 4);

const SIGNALS: Record<string, Signal> = {
  'system.cpu.user': (p, b, i) => cpuParts(p, b, i).user,
  'system.cpu.system': (p, b, i) => cpuParts(p, b, i).system,
  'system.cpu.iowait': (p, b, i) => cpuParts(p, b, i).iowait,
  'system.cpu.idle': (p, b, i) => cpuParts(p, b, i).idle,
  'system.cpu.stolen': (p, b, i) => cpuParts(p, b, i).stolen,
  'system.load.1': (p, b, i) => load(p, b, i, 1),
  'system.load.5': (p, b, i) => load(p, b, i, 5),
  'system.load.15': (p, b, i) => load(p, b, i, 15),
  'system.mem.total': (p) => p.memTotal,
  'system.mem.used': memUsed,
  'system.mem.free': memFree,
  'system.mem.available': (p, b, i) => Math.round(memFree(p, b, i) * 0.92),
  'system.mem.buffered': (p, b, i) => Math.round(memFree(p, b, i) * 0.06),
  'system.mem.cached': (p, b, i) => Math.round(memFree(p, b, i) * 0.55),
  'system.mem.shared': (p) => Math.round(p.memTotal * 0.015),
  'system.mem.pct_used': (p, b, i) => pct(memUsed(p, b, i), p.memTotal),
  'system.swap.pct_free': (p, b, i) => (p.swapTotal > 0 ? pct(p.swapTotal - swapUsed(p, b, i), p.swapTotal) : 100),
  'system.disk.in_use': (p, b, i) => pct(diskUsed(p, b, i), p.diskTotal),
  'system.swap.total': (p) => p.swapTotal,
  'system.swap.used': swapUsed,
  'system.swap.free': (p, b, i) => p.swapTotal - swapUsed(p, b, i),
  'system.disk.total': (p) => p.diskTotal,
  'system.disk.used': diskUsed,
  'system.disk.free': (p, b, i) => p.diskTotal - diskUsed(p, b, i),
  'system.io.iops_r': (p, b, i) => iops(p, b, i, 0x105, 0.6),
  'system.io.iops_w': (p, b, i) => iops(p, b, i, 0x106, 0.4),
  'system.io.kbs_r': (p, b, i) => Math.round(iops(p, b, i, 0x105, 0.6) * (8 + 24 * noise(b, i, 0x107))),
  'system.io.kbs_w': (p, b, i) => Math.round(iops(p, b, i, 0x106, 0.4) * (4 + 12 * noise(b, i, 0x108))),
  'system.io.wait_r': (p, b, i) => round2(0.2 + 4 * activity(b, i) * noise(b, i, 0x109)),
  'system.io.wait_w': (p, b, i) => round2(0.4 + 6 * activity(b, i) * noise(b, i, 0x10a)),
  'system.net.bytes_rcvd': netReceived,
  'system.net.bytes_sent': netSent,
  'system.net.packets_in.count': (p, b, i) => Math.round(netReceived(p, b, i) / 900),
  'system.net.packets_out.count': (p, b, i) => Math.round(netSent(p, b, i) / 1_300),
  'system.net.drops_in.count': (p, b, i) => rare(p, b, i, 0xd01, 0.01, 5),
  'system.net.drops_out.count': (p, b, i) => rare(p, b, i, 0xd02, 0.005, 3),
  'system.net.packets_in.error': (p, b, i) => rare(p, b, i, 0xe01, 0.003, 2),
  'system.net.packets_out.error': (p, b, i) => rare(p, b, i, 0xe02, 0.002, 2),
  'system.net.listen_overflows': (p, b, i) => (burst(b, i) > 1 ? rare(p, b, i, 0x10f, 0.3, 20) : 0),

  'amplify.agent.status': () => 1,
  'amplify.agent.cpu.user': (p, b, i) => round2(0.3 + 2 * noise(b, i, 0xa01)),
  'amplify.agent.cpu.system': (p, b, i) => round2(0.1 + 0.8 * noise(b, i, 0xa02)),
  'amplify.agent.mem.rss': (p, b, i) => Math.round((45 + 40 * noise(b, i, 0xa03) * 0.2 + 30 * p.busy) * 1024 * 1024),
  'amplify.agent.mem.vms': (p) => Math.round((380 + 140 * p.busy) * 1024 * 1024),

  'nginx.http.conn.accepted': (p, b, i) => share(p, b, i, 0.35, 0xacc),
  'nginx.http.conn.dropped': (p, b, i) => (burst(b, i) > 1 ? rare(p, b, i, 0xd0d, 0.2, 10) : 0),
  'nginx.http.request.count': requests,
  'nginx.http.conn.active': (p, b, i) => connections(p, b, i).active,
  'nginx.http.conn.idle': (p, b, i) => connections(p, b, i).idle,
  'nginx.http.conn.current': (p, b, i) => {
    const c = connections(p, b, i);
    return c.active + c.idle;
  },
  'nginx.http.request.current': (p, b, i) => connections(p, b, i).active,
  'nginx.http.request.reading': (p, b, i) => connections(p, b, i).reading,
  'nginx.http.request.writing': (p, b, i) => {
    const c = connections(p, b, i);
    return c.active - c.reading;
  },
  'nginx.http.status.1xx': (p, b, i) => statusClasses(p, b, i).s1,
  'nginx.http.status.2xx': (p, b, i) => statusClasses(p, b, i).s2,
  'nginx.http.status.3xx': (p, b, i) => statusClasses(p, b, i).s3,
  'nginx.http.status.4xx': (p, b, i) => statusClasses(p, b, i).s4,
  'nginx.http.status.5xx': (p, b, i) => statusClasses(p, b, i).s5,
  'nginx.http.status.403': (p, b, i) => Math.floor(statusClasses(p, b, i).s4 * 0.12),
  'nginx.http.status.404': (p, b, i) => Math.floor(statusClasses(p, b, i).s4 * 0.6),
  'nginx.http.status.500': (p, b, i) => Math.floor(statusClasses(p, b, i).s5 * 0.3),
  'nginx.http.status.502': (p, b, i) => Math.floor(statusClasses(p, b, i).s5 * 0.3),
  'nginx.http.status.503': (p, b, i) => Math.floor(statusClasses(p, b, i).s5 * 0.25),
  'nginx.http.status.504': (p, b, i) => {
    const s5 = statusClasses(p, b, i).s5;
    return s5 - 2 * Math.floor(s5 * 0.3) - Math.floor(s5 * 0.25);
  },
  'nginx.http.status.discarded': (p, b, i) => Math.floor(requests(p, b, i) * 0.001 * noise(b, i, 0xd15)),
  'nginx.http.method.get': (p, b, i) => method(p, b, i, 'get'),
  'nginx.http.method.head': (p, b, i) => method(p, b, i, 'head'),
  'nginx.http.method.post': (p, b, i) => method(p, b, i, 'post'),
  'nginx.http.method.put': (p, b, i) => method(p, b, i, 'put'),
  'nginx.http.method.delete': (p, b, i) => method(p, b, i, 'delete'),
  'nginx.http.method.options': (p, b, i) => method(p, b, i, 'options'),
  'nginx.http.v1_0': (p, b, i) => httpVersions(p, b, i).v1_0,
  'nginx.http.v1_1': (p, b, i) => httpVersions(p, b, i).v1_1,
  'nginx.http.v2': (p, b, i) => httpVersions(p, b, i).v2,
  'nginx.http.request.bytes_sent': (p, b, i) => Math.round(requests(p, b, i) * p.responseBytes * (0.9 + 0.2 * noise(b, i, 0xb5))),
  'nginx.http.request.body_bytes_sent': (p, b, i) =>
    Math.round(requests(p, b, i) * p.responseBytes * (0.9 + 0.2 * noise(b, i, 0xb5)) * 0.93),
  'nginx.http.request.malformed': (p, b, i) => rare(p, b, i, 0x3a1, 0.02, 3),
  ...timerSignals('nginx.http.request.time', 'request', requests),
  ...timerSignals('nginx.upstream.response.time', 'response', upstreamRequests),
  ...timerSignals('nginx.upstream.connect.time', 'connect', upstreamRequests),
  ...timerSignals('nginx.upstream.header.time', 'header', upstreamRequests),
  'nginx.upstream.request.count': upstreamRequests,
  'nginx.upstream.next.count': (p, b, i) => Math.floor(upstreamRequests(p, b, i) * 0.001 * noise(b, i, 0x4e1)),
  'nginx.upstream.status.2xx': (p, b, i) => upstreamStatus(p, b, i).s2,
  'nginx.upstream.status.4xx': (p, b, i) => upstreamStatus(p, b, i).s4,
  'nginx.upstream.status.5xx': (p, b, i) => upstreamStatus(p, b, i).s5,
  'nginx.cache.hit': (p, b, i) => cacheCount(p, b, i, 'hit'),
  'nginx.cache.miss': (p, b, i) => cacheCount(p, b, i, 'miss'),
  'nginx.cache.bypass': (p, b, i) => cacheCount(p, b, i, 'bypass'),
  'nginx.cache.expired': (p, b, i) => cacheCount(p, b, i, 'expired'),
  'nginx.cache.stale': (p, b, i) => cacheCount(p, b, i, 'stale'),
  'nginx.cache.updating': (p, b, i) => cacheCount(p, b, i, 'updating'),
  'nginx.cache.revalidated': (p, b, i) => cacheCount(p, b, i, 'revalidated'),
  'nginx.workers.count': (p) => p.cpus,
  'nginx.workers.fds_count': (p, b, i) => {
    const c = connections(p, b, i);
    return p.cpus * 12 + 2 * (c.active + c.idle);
  },
  'nginx.workers.cpu.user': (p, b, i) => round2(cpuParts(p, b, i).user * 0.3),
  'nginx.workers.cpu.system': (p, b, i) => round2(cpuParts(p, b, i).system * 0.4),
  'nginx.workers.cpu.total': (p, b, i) => {
    const c = cpuParts(p, b, i);
    return round2(round2(c.user * 0.3) + round2(c.system * 0.4));
  },
  'nginx.workers.mem.rss': (p, b, i) => Math.round(p.cpus * 8 * 1024 * 1024 * (1 + 0.2 * activity(b, i))),
  'nginx.workers.mem.vms': (p) => p.cpus * 150 * 1024 * 1024,
  'nginx.workers.io.kbs_r': (p, b, i) => Math.round(20 * activity(b, i) * noise(b, i, 0x10c)),
  'nginx.workers.io.kbs_w': (p, b, i) => Math.round((requests(p, b, i) * 200) / 1024),
  'nginx.status': (p, b, i) => serviceUp(p, b, i, 0x57a1),

  'php.fpm.conn.accepted': phpRequests,
  'php.fpm.slow_req': (p, b, i) => (burst(b, i) > 1 ? rare(p, b, i, 0x510, 0.3, 6) : rare(p, b, i, 0x511, 0.01, 2)),
  'php.fpm.queue.current': (p, b, i) => fpmProcs(p, b, i).queued,
  'php.fpm.queue.max': (p, b, i) => fpmProcs(p, b, i).queued + rare(p, b, i, 0x512, 0.05, 3),
  'php.fpm.queue.len': () => 511,
  'php.fpm.proc.idle': (p, b, i) => {
    const f = fpmProcs(p, b, i);
    return f.total - f.active;
  },
  'php.fpm.proc.active': (p, b, i) => fpmProcs(p, b, i).active,
  'php.fpm.proc.total': (p, b, i) => fpmProcs(p, b, i).total,
  'php.fpm.proc.max_active': (p, b, i) => {
    const f = fpmProcs(p, b, i);
    return Math.min(p.fpmMaxChildren, f.active + Math.floor(f.active * 0.3 * noise(b, i, 0x513)));
  },
  'php.fpm.proc.max_child': (p) => p.fpmMaxChildren,
  'php.fpm.status': (p, b, i) => serviceUp(p, b, i, 0x57a2),

  'mysql.global.connections': (p, b, i) => queryShare(p, b, i, 0.02),
  'mysql.global.questions': questions,
  'mysql.global.select': (p, b, i) => queryShare(p, b, i, 0.7),
  'mysql.global.insert': (p, b, i) => queryShare(p, b, i, 0.08),
  'mysql.global.update': (p, b, i) => queryShare(p, b, i, 0.06),
  'mysql.global.delete': (p, b, i) => queryShare(p, b, i, 0.01),
  'mysql.global.writes': (p, b, i) => queryShare(p, b, i, 0.08) + queryShare(p, b, i, 0.06) + queryShare(p, b, i, 0.01),
  'mysql.global.commit': (p, b, i) => queryShare(p, b, i, 0.05),
  'mysql.global.slow_queries': (p, b, i) => (burst(b, i) > 1 ? rare(p, b, i, 0x51a, 0.5, 15) : rare(p, b, i, 0x51b, 0.02, 2)),
  'mysql.global.aborted_connects': (p, b, i) => rare(p, b, i, 0xab0, 0.01, 2),
  'mysql.global.innodb_buffer_pool_read_requests': bufferReadRequests,
  'mysql.global.innodb_buffer_pool_reads': bufferReads,
  'mysql.global.threads_connected': (p, b, i) => 4 + Math.round(30 * activity(b, i)),
  'mysql.global.threads_running': (p, b, i) => 1 + Math.round(3 * activity(b, i) * noise(b, i, 0x7a9)),
  'mysql.global.innodb_buffer_pool_pages_total': (p) => p.bufferPoolPages,
  'mysql.global.innodb_buffer_pool_pages_free': pagesFree,
  'mysql.global.innodb_buffer_pool.hit_ratio': (p, b, i) => {
    const requested = bufferReadRequests(p, b, i);
    return requested > 0 ? pct(requested - bufferReads(p, b, i), requested) : 100;
  },
  'mysql.global.innodb_buffer_pool_util': (p, b, i) => pct(p.bufferPoolPages - pagesFree(p, b, i), p.bufferPoolPages),

  'varnish.cache.hit': varnishHits,
  'varnish.cache.miss': varnishMisses,
  'varnish.cache.hitpass': (p, b, i) => varnishBackendRequests(p, b, i) - varnishMisses(p, b, i),
  'varnish.client.req': varnishRequests,
  'varnish.client.conn': (p, b, i) => Math.floor(varnishRequests(p, b, i) * 0.3),
  'varnish.backend.conn': (p, b, i) => Math.floor(varnishBackendRequests(p, b, i) * 0.1),
  'varnish.backend.req': varnishBackendRequests,
  'varnish.backend.fail': varnishBackendFails,
  'varnish.fetch.total': varnishBackendRequests,
  'varnish.threads': (p, b, i) => 100 + Math.round(50 * activity(b, i)),
  'varnish.n_object': (p, b, i) => Math.round(20_000 * (1 + p.busy) * (0.9 + 0.1 * daily(b, i))),
  'varnish.n_expired': (p, b, i) => Math.round(300 * activity(b, i) * noise(b, i, 0x7aa)),
  'varnish.n_lru_nuked': (p, b, i) => rare(p, b, i, 0x7ab, 0.05, 20),
  'varnish.cache.hit_ratio': (p, b, i) => {
    const hits = varnishHits(p, b, i);
    const misses = varnishMisses(p, b, i);
    return hits + misses > 0 ? pct(hits, hits + misses) : 0;
  },
  'varnish.backend.success_ratio': (p, b, i) => {
    const total = varnishBackendRequests(p, b, i);
    return total > 0 ? pct(Math.max(0, total - varnishBackendFails(p, b, i)), total) : 100;
  },
};

// A Map, so names like `constructor` are not found on the object prototype.
const SIGNAL_BY_NAME = new Map(Object.entries(SIGNALS));

for (const entry of AGENT_METRICS) {
  if (!SIGNAL_BY_NAME.has(entry.name)) throw new Error(`simulator: no signal for catalogue metric ${entry.name}`);
}

export function signalFor(name: string): Signal | undefined {
  return SIGNAL_BY_NAME.get(name);
}

/**
 * The signal of any name a host lists: a catalogue name, or a per-device name
 * (`system.io.iops_r|sda`) of one of the host's devices. Undefined for anything else.
 */
export function hostSignal(p: HostProfile, name: string): Signal | undefined {
  const split = splitDeviceName(name);
  if (!split) return signalFor(name);
  const kind = deviceKindOf(split.base);
  const index = kind === undefined ? -1 : p.devices[kind].findIndex((d) => d.name === split.device);
  if (kind === undefined || index < 0) return undefined;
  return deviceSignal(kind, split.base, index, p.devices, (base) => {
    const signal = signalFor(base);
    if (!signal) throw new Error(`simulator: no signal for ${base}`);
    return signal;
  });
}
