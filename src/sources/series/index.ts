import { planSeriesBatches, DEFAULT_MAX_URL_LENGTH, type SeriesResult } from '../../upstream/monitoring/client.js';
import { catalogueEntry } from '../../upstream/monitoring/metric-catalogue.js';
import { GraceMap } from '../shared/grace.js';
import { groupName, type HostSource, type MonitoringSourceFactory, type SourceContext } from '../types.js';
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
  type SeriesBatch,
  type SeriesHostState,
} from './map.js';
import { SeriesNaming, type MetricDefinition, type MetricOverrides } from './naming.js';
import { RELEASE_FAMILY_NAMES, SELF_METRIC_PREFIXES } from '../reserved-names.js';
import { decodeSeriesHost, encodeSeriesHost } from '../../state/codecs.js';

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
 * batched requests as the URL length allows; the window never changes how many.
 *
 * A host that leaves the list loses its series at once; its counter state is kept for
 * `counter_grace`, so a host that comes back continues its counters.
 */
export const createSeriesSource: MonitoringSourceFactory = (ctx): HostSource => {
  let naming: SeriesNaming | undefined;
  // Built on first use: the other sources' family names are known only once all exist.
  const namingOf = (): SeriesNaming =>
    (naming ??= new SeriesNaming({
      overrides: effectiveOverrides(ctx),
      reservedFamilyNames: [...ctx.reservedFamilyNames(), ...RELEASE_FAMILY_NAMES],
      reservedPrefixes: SELF_METRIC_PREFIXES,
    }));
  let hosts: GraceMap<string, HostEntry> | undefined;
  const hostsOf = () => (hosts ??= new GraceMap(ctx.account.counterGraceMs));
  const reported = new Set<string>();
  const missing = new MissingPointTotals();
  // Restored hosts whose counters went on /metrics at restore; the ones the host list no longer names leave at the first poll.
  let shownFromState: Set<string> | undefined;
  const group = (uuid: string) => groupName('series', ctx.account.name, uuid);
  const namesOf = (uuid: string) => namingOf().fetchable(ctx.inventory.metricNames.get(uuid) ?? []);
  // The planner asks for every host on every turn; hosts of one kind share their list of names.
  const batchCounts = new WeakMap<readonly string[], Map<number, number>>();
  const batchCount = (urlOverhead: number, names: readonly string[]): number => {
    let byOverhead = batchCounts.get(names);
    if (!byOverhead) batchCounts.set(names, (byOverhead = new Map<number, number>()));
    let count = byOverhead.get(urlOverhead);
    if (count === undefined) byOverhead.set(urlOverhead, (count = planSeriesBatches(urlOverhead, names, DEFAULT_MAX_URL_LENGTH).length));
    return count;
  };

  /** The counters of a restored host as its polls publish them (gauges come with the first poll). */
  const restoredCounters = (entry: HostEntry, uuid: string, nowMs: number) => {
    const keys = [...entry.state.counters.keys()];
    const timers = namingOf()
      .resolve(keys)
      .metrics.filter((m) => m.role.kind === 'timer')
      .map((m) => `${m.dotted}.count`);
    const points = Object.fromEntries([...keys, ...timers].map((name) => [name, []]));
    return mapSeries({ intervalSeconds: 60, points }, entry.state, {
      account: ctx.account.name,
      hostUuid: uuid,
      labels: entry.labels,
      nowMs,
      ingestDelayMs: ctx.account.ingestDelayMs,
      lateDataHorizonMs: ctx.account.lateDataHorizonMs,
      counterGraceMs: ctx.account.counterGraceMs,
      naming: namingOf(),
      nullHandling: ctx.exporter.nullHandling,
      sampleTimestamps: ctx.exporter.sampleTimestamps,
    }).families;
  };

  return {
    name: 'series',
    toggle: 'series',
    families: [POINTS_MISSING.name],
    scope: 'host',
    priority: 'bulk',
    cadenceMs: (host) => (host.online ? ctx.account.cadenceMs.series : ctx.account.cadenceMs.seriesOffline),
    requestsPerRun: (host) => batchCount(ctx.account.baseUrl.length + host.uuid.length + SERIES_URL_OVERHEAD, namesOf(host.uuid)),
    ready: (host) => namesOf(host.uuid).length > 0,
    async poll(host, signal) {
      if (shownFromState) {
        for (const uuid of shownFromState) if (!ctx.inventory.hosts.has(uuid)) ctx.sink.retract(group(uuid));
        shownFromState = undefined;
      }
      const names = namesOf(host.uuid);
      if (names.length === 0) return;
      const now = ctx.clock.now();
      hostsOf().sweep(now);
      const entry = hostsOf().get(host.uuid) ?? { state: EMPTY_SERIES_STATE, labels: new HostLabels(ctx.account.name, host.uuid) };
      const identity = { account: ctx.account.name, hostUuid: host.uuid, labels: entry.labels };
      const [only] = names;

      if (names.length === 1 && only !== undefined && latestValueUsable(only, namingOf())) {
        const { value } = await ctx.client.latest(host.uuid, only, 'bulk');
        if (signal.aborted) return;
        const { families, collisions } = mapLatestValue(value, { ...identity, nowMs: ctx.clock.now(), naming: namingOf() });
        report(collisions);
        hostsOf().set(host.uuid, entry);
        ctx.sink.publish(group(host.uuid), families);
        return;
      }

      const since = requiredWindow(entry.state, now, ctx.account.ingestDelayMs, undefined, counterKeysOf(names, namingOf()));
      const { value } = await ctx.client.series(host.uuid, names, since);
      // Removed while the request was out (the host left the list): publish nothing, or its
      // series would come back after they were retracted and stay for good.
      if (signal.aborted) return;
      const result = mapSeries(batchesOf(value), entry.state, {
        ...identity,
        nowMs: ctx.clock.now(),
        ingestDelayMs: ctx.account.ingestDelayMs,
        lateDataHorizonMs: ctx.account.lateDataHorizonMs,
        counterGraceMs: ctx.account.counterGraceMs,
        naming: namingOf(),
        nullHandling: ctx.exporter.nullHandling,
        sampleTimestamps: ctx.exporter.sampleTimestamps,
      });
      hostsOf().set(host.uuid, { state: result.state, labels: entry.labels });
      report(result.collisions);
      ctx.sink.publish(group(host.uuid), result.families);
      missing.add(entry.state.missing, result.state.missing);
      ctx.sink.publish(groupName('series', ctx.account.name), missing.families(ctx.account.name));

      function report(collisions: readonly { familyKey: string; kept: string | undefined; dropped: readonly string[] }[]) {
        for (const c of collisions) {
          const key = `${host.uuid}\u0000${c.familyKey}`;
          if (reported.has(key)) continue;
          reported.add(key);
          ctx.events.nameCollision(host.uuid, c.familyKey, c.kept, c.dropped);
        }
      }
    },
    forget(uuid) {
      shownFromState?.delete(uuid);
      const now = ctx.clock.now();
      hostsOf().release(uuid, now);
      hostsOf().sweep(now);
      for (const key of reported) if (key.startsWith(`${uuid}\u0000`)) reported.delete(key);
      ctx.sink.retract(group(uuid));
    },
    persist: {
      save: () => [...hostsOf().entries()].map(([uuid, entry, releasedAtMs]) => ({ uuid, state: encodeSeriesHost(entry.state), releasedAtMs: releasedAtMs ?? null })),
      restore(data) {
        if (!Array.isArray(data)) throw new TypeError('series state must be a list of hosts');
        const now = ctx.clock.now();
        // Decode everything before taking any of it, so a bad entry leaves the source as it was.
        const restored = (data as { uuid?: unknown; state?: unknown; releasedAtMs?: unknown }[]).map((item) => {
          if (typeof item.uuid !== 'string') throw new TypeError('series state: a host without a uuid');
          return { uuid: item.uuid, state: decodeSeriesHost(item.state), releasedAtMs: typeof item.releasedAtMs === 'number' ? Math.min(item.releasedAtMs, now) : now };
        });
        // Every restored host waits in its grace period until the host list names it again.
        for (const { uuid, state, releasedAtMs } of restored) hostsOf().restoreReleased(uuid, { state, labels: new HostLabels(ctx.account.name, uuid) }, releasedAtMs);
        // Its counters are on /metrics now, not one host at a time as the first polls come in.
        shownFromState = new Set();
        for (const { uuid } of restored) {
          const entry = hostsOf().get(uuid);
          if (!entry || entry.state.counters.size === 0) continue;
          try {
            ctx.sink.publish(group(uuid), restoredCounters(entry, uuid, now));
            shownFromState.add(uuid);
          } catch {
            // Shown early or not at all: the state is taken either way, and the first poll publishes it.
          }
        }
      },
    },
  };
};

/** The client merges batches by metric; the mapper wants them grouped by interval. */
function batchesOf(result: SeriesResult): SeriesBatch[] {
  const byInterval = new Map<number, Record<string, SeriesBatch['points'][string]>>();
  for (const [name, series] of Object.entries(result.series)) {
    let points = byInterval.get(series.intervalSeconds);
    if (!points) byInterval.set(series.intervalSeconds, (points = {}));
    points[name] = series.points;
  }
  return [...byInterval].map(([intervalSeconds, points]) => ({ intervalSeconds, points }));
}

/** Config overrides may set only some keys; kind and unit default to the catalogue's. */
function effectiveOverrides(ctx: SourceContext): MetricOverrides {
  const result: Record<string, MetricDefinition> = {};
  for (const [name, override] of Object.entries(ctx.account.metricOverrides)) {
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
