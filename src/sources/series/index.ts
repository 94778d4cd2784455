import { planSeriesBatches, DEFAULT_MAX_URL_LENGTH, type SeriesResult } from '../../upstream/monitoring/client.js';
import { catalogueEntry } from '../../upstream/monitoring/metric-catalogue.js';
import { groupName, type HostSource, type MonitoringSourceFactory, type SourceContext } from '../types.js';
import {
  EMPTY_SERIES_STATE,
  POINTS_MISSING,
  latestValueUsable,
  mapLatestValue,
  mapSeries,
  requiredWindow,
  type SeriesBatch,
  type SeriesHostState,
} from './map.js';
import { SeriesNaming, type MetricOverrides } from './naming.js';
import { RELEASE_FAMILY_NAMES, SELF_METRIC_PREFIXES } from '../reserved-names.js';

/** Longest query string besides the names: `?since=240m&names=` and the host path. */
const SERIES_URL_OVERHEAD = '/hosts//metrics/series?since=240m&names='.length;

/**
 * `/hosts/{uuid}/metrics/series`: the heart of the exporter. Asks each host for exactly
 * the window its counters need (so no delta point is skipped and none is fetched twice
 * more than necessary), in as few batched requests as the URL length allows.
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
  const states = new Map<string, SeriesHostState>();
  const reported = new Set<string>();
  const group = (uuid: string) => groupName('series', ctx.account.name, uuid);
  const namesOf = (uuid: string) => ctx.inventory.metricNames.get(uuid) ?? [];

  return {
    name: 'series',
    toggle: 'series',
    families: [POINTS_MISSING.name],
    scope: 'host',
    priority: 'bulk',
    cadenceMs: (host) => (host.online ? ctx.account.cadenceMs.series : ctx.account.cadenceMs.seriesOffline),
    requestsPerRun: (host) =>
      planSeriesBatches(ctx.account.baseUrl.length + host.uuid.length + SERIES_URL_OVERHEAD, namesOf(host.uuid), DEFAULT_MAX_URL_LENGTH).length,
    ready: (host) => namesOf(host.uuid).length > 0,
    async poll(host, signal) {
      const names = namesOf(host.uuid);
      if (names.length === 0) return;
      const identity = { account: ctx.account.name, hostUuid: host.uuid, hostname: host.hostname };
      const [only] = names;

      if (names.length === 1 && only !== undefined && latestValueUsable(only, namingOf())) {
        const { value } = await ctx.client.latest(host.uuid, only, 'bulk');
        if (signal.aborted) return;
        const { families, collisions } = mapLatestValue(value, { ...identity, nowMs: ctx.clock.now(), naming: namingOf() });
        report(collisions);
        ctx.sink.publish(group(host.uuid), families);
        return;
      }

      const previous = states.get(host.uuid) ?? EMPTY_SERIES_STATE;
      const since = requiredWindow(previous, ctx.clock.now(), ctx.account.ingestDelayMs);
      const { value } = await ctx.client.series(host.uuid, names, since);
      // Removed while the request was out (the host left the list): publish nothing, or its
      // series would come back after they were retracted and stay for good.
      if (signal.aborted) return;
      const result = mapSeries(batchesOf(value), previous, {
        ...identity,
        nowMs: ctx.clock.now(),
        ingestDelayMs: ctx.account.ingestDelayMs,
        naming: namingOf(),
        nullHandling: ctx.exporter.nullHandling,
        sampleTimestamps: ctx.exporter.sampleTimestamps,
      });
      states.set(host.uuid, result.state);
      report(result.collisions);
      ctx.sink.publish(group(host.uuid), result.families);

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
      states.delete(uuid);
      for (const key of reported) if (key.startsWith(`${uuid}\u0000`)) reported.delete(key);
      ctx.sink.retract(group(uuid));
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

/** Config overrides may set only kind or only unit; the rest comes from the catalogue. */
function effectiveOverrides(ctx: SourceContext): MetricOverrides {
  const result: Record<string, { kind: 'gauge' | 'delta'; unit: NonNullable<ReturnType<typeof catalogueEntry>>['unit'] }> = {};
  for (const [name, override] of Object.entries(ctx.account.metricOverrides)) {
    const entry = catalogueEntry(name);
    const kind = override.kind ?? entry?.kind;
    const unit = override.unit ?? entry?.unit;
    if (kind !== undefined && unit !== undefined) result[name] = { kind, unit };
  }
  return result;
}
