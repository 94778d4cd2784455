import { MINUTE } from '../../config/schema.js';
import { catalogueEntry } from '../../upstream/monitoring/metric-catalogue.js';
import { POLLED_HOSTS } from '../hosts/topics.js';
import { METRIC_NAMES } from '../metric-catalogue/topics.js';
import { SELF_METRIC_PREFIXES } from '../reserved-names.js';
import { GraceMap } from '../shared/grace.js';
import { every, groupName, type MonitoringSource, type SourceContext } from '../source.js';
import type { MonitoringApi } from '../../upstream/monitoring/client.js';
import { DEFAULT_MAX_URL_LENGTH, fetchLatest, fetchSeriesAnswers, LATEST_ENDPOINT, planSeriesBatches, SERIES_ENDPOINT } from './fetch.js';
import {
  counterKeysOf,
  EMPTY_SERIES_STATE,
  HostLabels,
  MissingPointTotals,
  POINTS_MISSING,
  latestValueUsable,
  mapLatestValue,
  mapSeries,
  requiredWindow,
  type SeriesHostState,
} from './map.js';
import { SERIES_FIELDS } from './decode.js';
import { SeriesNaming, type MetricDefinition, type MetricOverrides } from './naming.js';
import { SERIES_KEYS, seriesSettings, seriesSummary, type SeriesSettings } from './settings.js';
import { decodeSeriesHost, encodeSeriesHost } from './state.js';
import { SeriesPoints } from './points.js';

/** Longest query string besides the names: `?since=240m&names=` and the host path. */
const SERIES_URL_OVERHEAD = '/hosts//metrics/series?since=240m&names='.length;

interface HostEntry {
  readonly state: SeriesHostState;
  readonly labels: HostLabels;
}

/**
 * `/hosts/{uuid}/metrics/series`: the heart of the exporter. Asks each host for exactly
 * the window its counters need (so no delta point is skipped, open holes are read again
 * until the late-data horizon, and none is fetched twice more than necessary), in as few
 * batched requests as the URL length allows; the window never changes how many. A host
 * with a single gauge to fetch is asked `/hosts/{uuid}/metrics/{name}/latest` instead.
 *
 * A host that leaves the list loses its series at once; its counter state is kept for
 * `counter_grace`, so a host that comes back continues its counters.
 */
export const seriesSource: MonitoringSource<SeriesSettings> = {
  name: 'series',
  section: 'account',
  toggle: { default: true },
  cadences: {
    // Series points are 60 s apart, so polling faster re-reads the same points.
    series: { default: '60s', minMs: MINUTE },
    series_offline: { default: '10m', minMs: MINUTE },
  },
  needs: { hosts: 'the host list says which hosts to fetch series for' },
  keys: SERIES_KEYS,
  settings: seriesSettings,
  summary: ({ settings, cadenceMs }) => ({ inline: seriesSummary(settings, cadenceMs) }),
  endpoints: [SERIES_ENDPOINT, LATEST_ENDPOINT],
  fields: SERIES_FIELDS,
  priority: 'bulk',
  families: [POINTS_MISSING.name],
  reads: [POLLED_HOSTS, METRIC_NAMES],
  create: (ctx) => createSeriesPoller(ctx),
};

function createSeriesPoller(ctx: SourceContext<MonitoringApi, SeriesSettings>) {
  const account = ctx.unit.name;
  let naming: SeriesNaming | undefined;
  // Built on first use: the other sources' family names are known only once all exist.
  const namingOf = (): SeriesNaming => (naming ??= seriesNaming(ctx.settings, ctx.reservedFamilyNames()));
  let hosts: GraceMap<string, HostEntry> | undefined;
  const hostsOf = () => (hosts ??= new GraceMap(ctx.unit.counterGraceMs));
  const reported = new Set<string>();
  const missing = new MissingPointTotals();
  // Restored hosts whose counters went on /metrics at restore; the ones the host list no longer names leave at the first poll.
  let shownFromState: Set<string> | undefined;
  const group = (uuid: string) => groupName('series', account, uuid);
  const namesOf = (uuid: string) => namingOf().fetchable(ctx.read(METRIC_NAMES).get(uuid) ?? []);
  const batchCount = batchCounter();
  const counterKeysFor = counterKeysByList(namingOf);

  return {
    scope: 'target' as const,
    targets: () => ctx.read(POLLED_HOSTS),
    cadence: (host: { readonly online: boolean }) => every(host.online ? ctx.cadenceMs('series') : ctx.cadenceMs('series_offline')),
    requestsPerRun: (host: { readonly uuid: string }) => batchCount(ctx.unit.baseUrl.length + host.uuid.length + SERIES_URL_OVERHEAD, namesOf(host.uuid)),
    ready: (host: { readonly uuid: string }) => namesOf(host.uuid).length > 0,
    async poll(host: { readonly uuid: string }, signal: AbortSignal) {
      if (shownFromState) {
        const polled = ctx.read(POLLED_HOSTS);
        for (const uuid of shownFromState) if (!polled.has(uuid)) ctx.sink.retract(group(uuid));
        shownFromState = undefined;
      }
      const names = namesOf(host.uuid);
      if (names.length === 0) return;
      const now = ctx.clock.now();
      hostsOf().sweep(now);
      const entry = hostsOf().get(host.uuid) ?? { state: EMPTY_SERIES_STATE, labels: new HostLabels(account, host.uuid) };
      const identity = { account, hostUuid: host.uuid, labels: entry.labels };
      const [only] = names;

      if (names.length === 1 && only !== undefined && latestValueUsable(only, namingOf())) {
        const { value } = await fetchLatest(ctx.upstream, host.uuid, only, 'bulk');
        if (signal.aborted) return;
        const { families, collisions } = mapLatestValue(value, { ...identity, nowMs: ctx.clock.now(), naming: namingOf() });
        report(collisions);
        hostsOf().set(host.uuid, entry);
        ctx.sink.publish(group(host.uuid), families);
        return;
      }

      const since = requiredWindow(entry.state, now, ctx.settings.ingestDelayMs, undefined, counterKeysFor(names));
      const answers = await fetchSeriesAnswers(ctx.upstream, host.uuid, names, since);
      // Removed while the request was out (the host left the list): publish nothing, or its
      // series would come back after they were retracted and stay for good.
      if (signal.aborted) return;
      const result = mapSeries(answers.map((answer) => answer.value), entry.state, {
        ...identity,
        nowMs: ctx.clock.now(),
        ingestDelayMs: ctx.settings.ingestDelayMs,
        lateDataHorizonMs: ctx.settings.lateDataHorizonMs,
        counterGraceMs: ctx.unit.counterGraceMs,
        naming: namingOf(),
        nullHandling: ctx.exporter.nullHandling,
        sampleTimestamps: ctx.exporter.sampleTimestamps,
      });
      hostsOf().set(host.uuid, { state: result.state, labels: entry.labels });
      report(result.collisions);
      ctx.sink.publish(group(host.uuid), result.families);
      missing.add(entry.state.missing, result.state.missing);
      ctx.sink.publish(groupName('series', account), missing.families(account));

      function report(collisions: readonly { familyKey: string; kept: string | undefined; dropped: readonly string[] }[]) {
        for (const c of collisions) {
          const key = `${host.uuid}\u0000${c.familyKey}`;
          if (reported.has(key)) continue;
          reported.add(key);
          ctx.events.nameCollision(host.uuid, c.familyKey, c.kept, c.dropped);
        }
      }
    },
    forget(uuid: string) {
      shownFromState?.delete(uuid);
      const now = ctx.clock.now();
      hostsOf().release(uuid, now);
      hostsOf().sweep(now);
      for (const key of reported) if (key.startsWith(`${uuid}\u0000`)) reported.delete(key);
      ctx.sink.retract(group(uuid));
    },
    persist: seriesPersistence(hostsOf, account, () => ctx.clock.now(), (restored) => {
      // Their counters are on /metrics now, not one host at a time as the first polls come in.
      shownFromState = publishRestored(restored, hostsOf(), (uuid, entry) => ctx.sink.publish(group(uuid), countersOf(entry, uuid, ctx.clock.now(), namingOf(), ctx)));
    }),
  };
}

/** The counter keys of a list of names: hosts of one kind share one frozen list, asked for on every poll. */
function counterKeysByList(naming: () => SeriesNaming): (names: readonly string[]) => ReadonlySet<string> {
  const counterKeys = new WeakMap<readonly string[], ReadonlySet<string>>();
  return (names) => {
    let keys = counterKeys.get(names);
    if (!keys) counterKeys.set(names, (keys = counterKeysOf(names, naming())));
    return keys;
  };
}

/** Requests a host's series take, per list of names: the planner asks for every host on every turn, and hosts of one kind share their list. */
function batchCounter(): (urlOverhead: number, names: readonly string[]) => number {
  const batchCounts = new WeakMap<readonly string[], Map<number, number>>();
  return (urlOverhead, names) => {
    let byOverhead = batchCounts.get(names);
    if (!byOverhead) batchCounts.set(names, (byOverhead = new Map<number, number>()));
    let count = byOverhead.get(urlOverhead);
    if (count === undefined) byOverhead.set(urlOverhead, (count = planSeriesBatches(urlOverhead, names, DEFAULT_MAX_URL_LENGTH).length));
    return count;
  };
}

/** Publishes the counters of each restored host that has some; returns the hosts shown. */
function publishRestored(uuids: readonly string[], hosts: GraceMap<string, HostEntry>, publish: (uuid: string, entry: HostEntry) => void): Set<string> {
  const shown = new Set<string>();
  for (const uuid of uuids) {
    const entry = hosts.get(uuid);
    if (!entry || entry.state.counters.size === 0) continue;
    try {
      publish(uuid, entry);
      shown.add(uuid);
    } catch {
      // Shown early or not at all: the state is taken either way, and the first poll publishes it.
    }
  }
  return shown;
}

/** The counters of a restored host as its polls publish them (gauges come with the first poll). */
function countersOf(entry: HostEntry, uuid: string, nowMs: number, naming: SeriesNaming, ctx: SourceContext<MonitoringApi, SeriesSettings>) {
  const keys = [...entry.state.counters.keys()];
  const timers = naming
    .resolve(keys)
    .metrics.filter((m) => m.role.kind === 'timer')
    .map((m) => `${m.dotted}.count`);
  const none = new SeriesPoints([], []);
  const points = Object.fromEntries([...keys, ...timers].map((name) => [name, none]));
  return mapSeries({ intervalSeconds: 60, points }, entry.state, {
    account: ctx.unit.name,
    hostUuid: uuid,
    labels: entry.labels,
    nowMs,
    ingestDelayMs: ctx.settings.ingestDelayMs,
    lateDataHorizonMs: ctx.settings.lateDataHorizonMs,
    counterGraceMs: ctx.unit.counterGraceMs,
    naming,
    nullHandling: ctx.exporter.nullHandling,
    sampleTimestamps: ctx.exporter.sampleTimestamps,
  }).families;
}

/**
 * The counters and cursors of every host (its grace period included), to and from the state
 * file. Every restored host waits in its grace period until the host list names it again.
 */
function seriesPersistence(hostsOf: () => GraceMap<string, HostEntry>, account: string, now: () => number, restoredHosts: (uuids: readonly string[]) => void) {
  return {
    save: () => [...hostsOf().entries()].map(([uuid, entry, releasedAtMs]) => ({ uuid, state: encodeSeriesHost(entry.state), releasedAtMs: releasedAtMs ?? null })),
    restore(data: unknown) {
      if (!Array.isArray(data)) throw new TypeError('series state must be a list of hosts');
      const at = now();
      // Decode everything before taking any of it, so a bad entry leaves the source as it was.
      const restored = (data as { uuid?: unknown; state?: unknown; releasedAtMs?: unknown }[]).map((item) => {
        if (typeof item.uuid !== 'string') throw new TypeError('series state: a host without a uuid');
        return { uuid: item.uuid, state: decodeSeriesHost(item.state), releasedAtMs: typeof item.releasedAtMs === 'number' ? Math.min(item.releasedAtMs, at) : at };
      });
      for (const { uuid, state, releasedAtMs } of restored) hostsOf().restoreReleased(uuid, { state, labels: new HostLabels(account, uuid) }, releasedAtMs);
      restoredHosts(restored.map((r) => r.uuid));
    },
  };
}

/** How the series of an account are named: the poller's, and the backfill's, which must name history as live. */
export function seriesNaming(settings: SeriesSettings, reservedFamilyNames: Iterable<string>): SeriesNaming {
  return new SeriesNaming({ overrides: effectiveOverrides(settings), reservedFamilyNames, reservedPrefixes: SELF_METRIC_PREFIXES });
}

/** Config overrides may set only some keys; kind and unit default to the catalogue's. */
function effectiveOverrides(settings: SeriesSettings): MetricOverrides {
  const result: Record<string, MetricDefinition> = {};
  for (const [name, override] of Object.entries(settings.metricOverrides)) {
    const entry = catalogueEntry(name);
    const kind = override.kind ?? entry?.kind;
    const unit = override.unit ?? entry?.unit;
    if (kind === undefined || unit === undefined) continue;
    result[name] = {
      kind,
      unit,
      ...(override.family !== undefined && { family: override.family }),
      ...(override.labels !== undefined && { labels: override.labels }),
      ...(override.deviceLabel !== undefined && { deviceLabel: override.deviceLabel }),
    };
  }
  return result;
}
