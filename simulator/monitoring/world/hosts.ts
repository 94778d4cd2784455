import type { LateDataSettings } from '../late-data.js';
import { AGENT_METRICS, SERVER_KIND_COMPONENTS, type AgentComponent as CatalogueComponent } from '../catalogue.js';
import type { SimHost as Host } from '../schemas.js';
import { componentRecords, type ComponentRecord } from './components.js';
import { deviceMetricNames, hostDevices, type HostDevices } from './devices.js';
import { type AgentBehaviour, type AgentSchedule, lastSeenMs, MINUTE_MS, ONLINE_WINDOW_MS } from './agents.js';
import { hash3, hash4, hex32, pick, unit, weighted } from './hash.js';

/** What a host is, fixed at creation; every value the host reports derives from this. */
export interface HostProfile extends AgentSchedule {
  readonly index: number;
  readonly uuid: string;
  readonly hostname: string;
  readonly type: 'physical' | 'virtual' | 'container';
  readonly agentVersion: string;
  readonly serverKinds: readonly string[];
  readonly tags: readonly string[];
  readonly createdAtMs: number;
  readonly components: ReadonlySet<CatalogueComponent>;
  /** Disks, network interfaces and mount points: per-device metrics are reported for each. */
  readonly devices: HostDevices;
  readonly database: 'mysql' | 'mariadb';
  /** Fraction of a day by which this host's daily peak is shifted. */
  readonly peakPhase: number;
  /** How busy the host is at its daily peak, 0.15-0.9. */
  readonly busy: number;
  readonly cpus: number;
  readonly memTotal: number;
  readonly swapTotal: number;
  readonly diskTotal: number;
  readonly diskPhase: number;
  /** Requests per minute at the daily peak (nginx; php-fpm and varnish scale from it). */
  readonly requestsPerMinute: number;
  /** Mean request time in seconds. */
  readonly requestTime: number;
  readonly upstreamShare: number;
  readonly http2Share: number;
  readonly responseBytes: number;
  readonly fpmMaxChildren: number;
  readonly queriesPerMinute: number;
  readonly bufferPoolPages: number;
  readonly varnishHitRatio: number;
}

export interface HostRecord {
  readonly profile: HostProfile;
  readonly allowed: boolean;
  readonly components: readonly ComponentRecord[];
  readonly catalogue: Readonly<Record<string, string[]>>;
  readonly metricNames: ReadonlySet<string>;
}

interface Role {
  readonly prefix: string;
  readonly kinds: readonly (readonly string[])[];
}

const ROLES: readonly (readonly [Role, number])[] = [
  [{ prefix: 'web', kinds: [['web-server'], ['web-server', 'application-server']] }, 5],
  [{ prefix: 'app', kinds: [['application-server'], ['web-server', 'application-server']] }, 3],
  [{ prefix: 'db', kinds: [['database']] }, 2],
  [{ prefix: 'cache', kinds: [['cache'], ['cache', 'web-server']] }, 1],
  [{ prefix: 'lb', kinds: [['web-server']] }, 1],
  [{ prefix: 'worker', kinds: [[]] }, 1],
];

const DATACENTRES = ['fra1', 'ams3', 'lhr1', 'nyc3'] as const;
const BARE_TAGS = ['foo', 'legacy', 'canary', 'backup'] as const;
const GIB = 1024 ** 3;

/** Initial hosts were created during 2025, so they have data across any retention. */
const INITIAL_CREATION_START_MS = Date.UTC(2025, 0, 1);
const INITIAL_CREATION_SPAN_MS = 300 * 86_400_000;

export interface HostSeed {
  readonly seed: number;
  readonly accountSlot: number;
  readonly index: number;
  /** Undefined for initial hosts (they get a creation time in 2025). */
  readonly createdAtMs?: number;
  /** Per-prefix counters of the account, so hostnames stay unique. */
  readonly hostnameCounters: Map<string, number>;
  /** The late-data mode's settings, when it is on. */
  readonly late?: LateDataSettings;
}

export function createHostProfile({ seed, accountSlot, index, createdAtMs, hostnameCounters, late }: HostSeed): HostProfile {
  const key = hash3(seed, accountSlot, index);
  const h = (salt: number): number => hash4(seed, accountSlot, index, salt);
  const role = weighted(h(1), ROLES);
  const serverKinds = pick(h(2), role.kinds);
  const number = (hostnameCounters.get(role.prefix) ?? 0) + 1;
  hostnameCounters.set(role.prefix, number);
  const hostname = `${role.prefix}-${number}`;
  const type = weighted(h(3), [
    ['virtual', 6],
    ['physical', 2],
    ['container', 2],
  ] as const);
  const env = weighted(h(4), [
    ['prod', 7],
    ['staging', 2],
    ['dev', 1],
  ] as const);
  const tags = [`env:${env}`, `role:${role.prefix}`, `dc:${pick(h(5), DATACENTRES)}`];
  // Real agents take tags from a comma list, so some have no `key:` part.
  if (unit(h(6)) < 0.2) tags.push(pick(h(7), BARE_TAGS));
  const behaviour = weighted<AgentBehaviour>(h(8), [
    ['steady', 87],
    ['flappy', 10],
    ['quiet', 3],
  ]);
  const created =
    createdAtMs ?? INITIAL_CREATION_START_MS + Math.floor(unit(h(9)) * INITIAL_CREATION_SPAN_MS / 1000) * 1000;
  const components = new Set<CatalogueComponent>(['system', 'agent']);
  for (const kind of serverKinds) for (const c of SERVER_KIND_COMPONENTS[kind] ?? []) components.add(c);
  const cpus = pick(h(10), [1, 2, 4, 4, 8, 8, 16]);
  return {
    key,
    behaviour,
    lagMs: 30_000 + Math.floor(unit(h(11)) * 70_000),
    firstMinute: Math.ceil(created / MINUTE_MS),
    ...(late ? { late } : {}),
    index,
    uuid: hex32(seed, accountSlot, index),
    hostname,
    type,
    agentVersion: `1.8.${pick(h(12), [1, 2, 2, 3, 3])}-${pick(h(13), [1, 1, 2])}`,
    serverKinds,
    tags,
    createdAtMs: created,
    components,
    devices: hostDevices(type, h(30)),
    database: unit(h(14)) < 0.6 ? 'mysql' : 'mariadb',
    peakPhase: unit(h(15)),
    busy: 0.15 + 0.75 * unit(h(16)),
    cpus,
    memTotal: cpus * pick(h(17), [2, 4, 8]) * GIB,
    swapTotal: type === 'container' ? 0 : pick(h(18), [1, 2, 4]) * GIB,
    diskTotal: pick(h(19), [40, 80, 160, 320, 640]) * GIB,
    diskPhase: unit(h(20)),
    requestsPerMinute: Math.round(600 + 30_000 * unit(h(21)) ** 2),
    requestTime: 0.02 + 0.25 * unit(h(22)),
    upstreamShare: 0.3 + 0.6 * unit(h(23)),
    http2Share: 0.3 + 0.6 * unit(h(24)),
    responseBytes: 4_000 + Math.floor(60_000 * unit(h(25))),
    fpmMaxChildren: pick(h(26), [10, 20, 32, 50]),
    queriesPerMinute: Math.round(2_000 + 60_000 * unit(h(27))),
    bufferPoolPages: 8192 * pick(h(28), [1, 2, 4, 8, 16]),
    varnishHitRatio: 0.6 + 0.35 * unit(h(29)),
  };
}

/** Metric names of the host grouped by component, in catalogue order; `system` ends with the per-device names. */
export function catalogueFor(profile: HostProfile): Record<string, string[]> {
  const grouped: Record<string, string[]> = {};
  for (const entry of AGENT_METRICS) {
    if (!profile.components.has(entry.component)) continue;
    (grouped[entry.component] ??= []).push(entry.name);
  }
  (grouped.system ??= []).push(...deviceMetricNames(profile.devices));
  return grouped;
}

interface SharedCatalogue {
  readonly catalogue: Readonly<Record<string, string[]>>;
  readonly names: ReadonlySet<string>;
}

// Hosts share a catalogue per combination of components and devices (a few dozen), instead
// of each of thousands of hosts holding its own copy of a couple of hundred names.
const sharedCatalogues = new Map<string, SharedCatalogue>();
const EMPTY_CATALOGUE: SharedCatalogue = { catalogue: {}, names: new Set() };

function sharedCatalogue(profile: HostProfile): SharedCatalogue {
  const devices = Object.values(profile.devices).map((list) => list.map((d) => d.name).join('+'));
  const key = `${[...profile.components].sort().join(',')} ${devices.join(' ')}`;
  let shared = sharedCatalogues.get(key);
  if (!shared) {
    const catalogue = catalogueFor(profile);
    shared = { catalogue, names: new Set(Object.values(catalogue).flat()) };
    sharedCatalogues.set(key, shared);
  }
  return shared;
}

export function hostRecord(profile: HostProfile, allowed: boolean, seed: number): HostRecord {
  const shared = allowed ? sharedCatalogue(profile) : EMPTY_CATALOGUE;
  return {
    profile,
    allowed,
    components: componentRecords(profile, seed),
    catalogue: shared.catalogue,
    metricNames: shared.names,
  };
}

export function hostBody(record: HostRecord, nowMs: number): Host {
  const p = record.profile;
  const lastSeen = lastSeenMs(p, p.createdAtMs, nowMs);
  return {
    uuid: p.uuid,
    hostname: p.hostname,
    type: p.type,
    agent_version: p.agentVersion,
    last_seen: new Date(lastSeen).toISOString(),
    online: nowMs - lastSeen <= ONLINE_WINDOW_MS,
    allowed: record.allowed,
    server_kinds: [...p.serverKinds],
    tags: [...p.tags],
    created_at: new Date(p.createdAtMs).toISOString(),
  };
}
