import type { FamilySamples } from '../../exposition/model.js';
import type { LatestValue, SeriesPoint, SeriesResponse } from '../../upstream/monitoring/schemas.js';
import { counterSpec, FamilyCollector } from '../shared/families.js';
import { globMatcher } from '../shared/glob.js';
import { parseTimestampMs, toBaseUnit } from '../shared/units.js';
import type { SeriesCollision, SeriesMetric, SeriesNaming } from './naming.js';

/**
 * Maps the metric series of one host to gauges and true counters. Pure: the previous
 * state and `nowMs` come in, the next state and the families go out.
 *
 * Gauges: the newest non-null point, converted to base units; nothing when that point is
 * older than the staleness limit (an old value is never shown as current).
 *
 * Deltas (per-window counts) become counters. Each point covers [t, t + interval) and is
 * added once, in order, when it is eligible: t + interval + ingestDelay <= now. The state
 * keeps, per metric, the running total and `coveredUntilMs`, the end of the last point
 * accounted for; a point ending at or before it is never added again, so overlapping polls
 * are harmless. Because the cursor is a time and not a point index, a change of interval
 * cannot count a minute twice: a coarser point that starts before the cursor and ends after
 * it (after an outage the window grew beyond 4 h and points are 120 s) is not added
 * (adding it would count the overlap twice, splitting it would invent data) and is counted
 * as missing with reason `partial_overlap`. Eligible null points are skipped and counted
 * (`null`); intervals between the cursor and the first point of the response (the window
 * did not reach back far enough) are counted (`window_gap`). Negative or non-finite
 * deltas are skipped and counted (`invalid`): a counter never decreases.
 *
 * First sight of a delta: the counter starts at 0 with the cursor at the end of the newest
 * eligible interval, instead of adding the whole window. Adding the window would make the
 * start value depend on the window length and, after an exporter restart, count the window
 * a second time in increase(); starting at 0 is what a freshly started Prometheus counter
 * does. Every point after the start is counted, so nothing is under-counted after start-up.
 */

export interface SeriesBatch {
  readonly intervalSeconds: number;
  readonly points: Readonly<Record<string, readonly SeriesPoint[]>>;
}

export function batchFromResponse(response: SeriesResponse): SeriesBatch {
  return { intervalSeconds: response.interval, points: response.series };
}

export type MissingReason = 'null' | 'window_gap' | 'partial_overlap' | 'invalid';
export const MISSING_REASONS: readonly MissingReason[] = ['null', 'window_gap', 'partial_overlap', 'invalid'];

export interface CounterState {
  readonly total: number;
  readonly coveredUntilMs: number;
}

export interface SeriesHostState {
  /** By dotted name. Only deltas present in the latest input are kept. */
  readonly counters: ReadonlyMap<string, CounterState>;
  /** Cumulative count of delta points not added, by reason. */
  readonly missing: Readonly<Record<MissingReason, number>>;
}

export const EMPTY_SERIES_STATE: SeriesHostState = {
  counters: new Map(),
  missing: { null: 0, window_gap: 0, partial_overlap: 0, invalid: 0 },
};

export const DEFAULT_STALENESS_MS = 10 * 60_000;

export interface SeriesHostIdentity {
  readonly account: string;
  readonly hostUuid: string;
  readonly hostname: string;
}

export interface SeriesMapOptions extends SeriesHostIdentity {
  readonly nowMs: number;
  readonly ingestDelayMs: number;
  /** Gauges whose newest non-null point is older than this are not emitted. Default 10 min. */
  readonly stalenessMs?: number;
  readonly naming: SeriesNaming;
  /**
   * `skip` (default): a gauge shows its newest non-null point. `nan`: a gauge whose newest
   * point past the ingest delay is null, with nothing newer reported, is exposed as NaN.
   */
  readonly nullHandling?: 'skip' | 'nan';
  /**
   * Opt-in: stamp gauges with their point's time and counters with the end of the data
   * they hold. Off by default: timestamps defeat Prometheus' staleness handling.
   */
  readonly sampleTimestamps?: boolean;
}

export interface SeriesMapResult {
  readonly state: SeriesHostState;
  readonly families: FamilySamples[];
  /** Name collisions in this input, for `monapi_series_name_collisions_total`. */
  readonly collisions: readonly SeriesCollision[];
}

export const POINTS_MISSING = counterSpec(
  'monapi_series_points_missing_total',
  'Delta points from /hosts/{uuid}/metrics/series that were not added to their counter, by reason: null (no data after the ingest delay), window_gap (never fetched), partial_overlap (coarser interval overlapping counted time), invalid (negative or non-finite). Polled in the background.',
);

interface ParsedPoint {
  readonly t: number;
  readonly value: number | null;
}

interface NamedSeries {
  readonly intervalMs: number;
  readonly points: readonly ParsedPoint[];
}

/** Every series of a response has the same sample times: parse each timestamp text once. */
type TimestampCache = Map<string, number>;

function parsePoints(name: string, points: readonly SeriesPoint[], cache: TimestampCache): ParsedPoint[] {
  const parsed = points.map((p) => {
    let t = cache.get(p.timestamp);
    if (t === undefined) cache.set(p.timestamp, (t = parseTimestampMs(p.timestamp, `series ${name} point timestamp`)));
    return { t, value: p.value };
  });
  for (let i = 1; i < parsed.length; i++) {
    if ((parsed[i]?.t ?? 0) < (parsed[i - 1]?.t ?? 0)) return parsed.sort((a, b) => a.t - b.t);
  }
  return parsed;
}

/** Later batches win when a name appears in two. */
function indexBatches(input: SeriesBatch | SeriesResponse | readonly (SeriesBatch | SeriesResponse)[]): Map<string, NamedSeries> {
  const list = Array.isArray(input) ? input : [input];
  const byName = new Map<string, NamedSeries>();
  const cache: TimestampCache = new Map();
  for (const item of list as readonly (SeriesBatch | SeriesResponse)[]) {
    const batch = 'series' in item ? batchFromResponse(item) : item;
    if (!Number.isFinite(batch.intervalSeconds) || batch.intervalSeconds <= 0) {
      throw new Error(`series batch: interval must be a positive number of seconds, got ${batch.intervalSeconds}`);
    }
    for (const [name, points] of Object.entries(batch.points)) {
      byName.set(name, { intervalMs: batch.intervalSeconds * 1000, points: parsePoints(name, points, cache) });
    }
  }
  return byName;
}

function newestGauge(
  series: NamedSeries,
  metric: SeriesMetric,
  nowMs: number,
  stalenessMs: number,
  nanAfterMs: number | undefined,
): { value: number; t: number } | undefined {
  for (let i = series.points.length - 1; i >= 0; i--) {
    const p = series.points[i];
    if (p === undefined) continue;
    if (p.value === null) {
      // The newest point the agent must have reported by now is a gap: say so with NaN.
      if (nanAfterMs !== undefined && p.t + series.intervalMs <= nanAfterMs) return { value: NaN, t: p.t };
      continue;
    }
    return nowMs - p.t > stalenessMs ? undefined : { value: toBaseUnit(p.value, metric.unit), t: p.t };
  }
  return undefined;
}

function advanceCounter(
  series: NamedSeries,
  metric: SeriesMetric,
  previous: CounterState | undefined,
  eligibleEndMs: number,
  missing: Record<MissingReason, number>,
): CounterState | undefined {
  const { intervalMs, points } = series;
  const anchor = points[0];
  let total = previous?.total ?? 0;
  let covered: number;
  if (previous) covered = previous.coveredUntilMs;
  else if (anchor) covered = anchor.t + Math.floor((eligibleEndMs - anchor.t) / intervalMs) * intervalMs;
  else return undefined; // no grid to start on yet: start at the next input that has points

  for (const p of points) {
    const end = p.t + intervalMs;
    if (end <= covered) continue;
    if (end > eligibleEndMs) break;
    if (p.t < covered) {
      missing.partial_overlap += 1;
    } else {
      if (p.t > covered) missing.window_gap += Math.ceil((p.t - covered) / intervalMs);
      if (p.value === null) missing.null += 1;
      else {
        const next = total + toBaseUnit(p.value, metric.unit);
        if (p.value < 0 || !Number.isFinite(next)) missing.invalid += 1;
        else total = next;
      }
    }
    covered = end;
  }
  return { total, coveredUntilMs: covered };
}

export function mapSeries(
  input: SeriesBatch | SeriesResponse | readonly (SeriesBatch | SeriesResponse)[],
  previous: SeriesHostState,
  opts: SeriesMapOptions,
): SeriesMapResult {
  const byName = indexBatches(input);
  const { metrics, collisions } = opts.naming.resolve(byName.keys());
  const labels = { account: opts.account, host_uuid: opts.hostUuid, hostname: opts.hostname };
  const stalenessMs = opts.stalenessMs ?? DEFAULT_STALENESS_MS;
  const eligibleEndMs = opts.nowMs - opts.ingestDelayMs;
  const missing = { ...previous.missing };
  const counters = new Map<string, CounterState>();
  const c = new FamilyCollector();

  for (const metric of metrics) {
    const series = byName.get(metric.dotted);
    if (!series) continue;
    if (metric.kind === 'gauge') {
      const newest = newestGauge(series, metric, opts.nowMs, stalenessMs, opts.nullHandling === 'nan' ? eligibleEndMs : undefined);
      if (newest !== undefined) c.add(metric.spec, labels, newest.value, opts.sampleTimestamps ? newest.t : undefined);
      continue;
    }
    const next = advanceCounter(series, metric, previous.counters.get(metric.dotted), eligibleEndMs, missing);
    if (!next) continue;
    counters.set(metric.dotted, next);
    c.add(metric.spec, labels, next.total, opts.sampleTimestamps ? next.coveredUntilMs : undefined);
  }

  for (const reason of MISSING_REASONS) {
    c.add(POINTS_MISSING, { account: opts.account, host_uuid: opts.hostUuid, reason }, missing[reason]);
  }
  return { state: { counters, missing }, families: c.toFamilies(), collisions };
}

export const MAX_WINDOW_MINUTES = 240;
const WINDOW_MARGIN_MS = 2 * 60_000;
const MIN_EXTRA_MS = 5 * 60_000;

/**
 * The relative window (`since`) the next series request of this host must ask for so that
 * no eligible delta point is skipped: back to the oldest counter cursor plus a margin, at
 * least `max(minWindowMs, ingestDelay + 5 min)`, whole minutes, capped at 4 h so the
 * interval stays 60 s. When the cursor is older than that (a long outage), the interval
 * between it and the window start is lost and counted as `window_gap`.
 */
export function requiredWindow(
  state: SeriesHostState,
  nowMs: number,
  ingestDelayMs: number,
  minWindowMs: number = DEFAULT_STALENESS_MS,
): string {
  let needMs = Math.max(minWindowMs, ingestDelayMs + MIN_EXTRA_MS);
  for (const counter of state.counters.values()) needMs = Math.max(needMs, nowMs - counter.coveredUntilMs + WINDOW_MARGIN_MS);
  const minutes = Math.min(MAX_WINDOW_MINUTES, Math.max(1, Math.ceil(needMs / 60_000)));
  return `${minutes}m`;
}

/** True when the latest-value endpoint can stand in for a series request of this one name. */
export function latestValueUsable(name: string, naming: SeriesNaming): boolean {
  return naming.metric(name).kind === 'gauge';
}

export interface LatestMapOptions extends SeriesHostIdentity {
  readonly nowMs: number;
  readonly stalenessMs?: number;
  readonly naming: SeriesNaming;
}

/**
 * Maps `/hosts/{uuid}/metrics/{name}/latest` to the same gauge family a series gauge
 * would give. A delta name gives nothing (a counter needs the series); null or stale
 * values give nothing, like the series mapping.
 */
export function mapLatestValue(latest: LatestValue, opts: LatestMapOptions): { families: FamilySamples[]; collisions: readonly SeriesCollision[] } {
  const { metrics, collisions } = opts.naming.resolve([latest.name]);
  const metric = metrics[0];
  if (!metric || metric.kind !== 'gauge' || latest.value === null || latest.timestamp === null) return { families: [], collisions };
  const t = parseTimestampMs(latest.timestamp, `latest ${latest.name} timestamp`);
  if (opts.nowMs - t > (opts.stalenessMs ?? DEFAULT_STALENESS_MS)) return { families: [], collisions };
  const c = new FamilyCollector();
  c.add(metric.spec, { account: opts.account, host_uuid: opts.hostUuid, hostname: opts.hostname }, toBaseUnit(latest.value, metric.unit));
  return { families: c.toFamilies(), collisions };
}

export interface MetricNameFilters {
  /** Globs over dotted names (`system.cpu.*`); empty: every name. */
  readonly include: readonly string[];
  readonly exclude: readonly string[];
}

/**
 * The metric names to fetch from a host's catalogue (`/hosts/{uuid}/metrics`), sorted and
 * without duplicates. Exclusion wins over inclusion.
 */
export function selectMetricNames(catalogue: Readonly<Record<string, readonly string[]>>, filters: MetricNameFilters): string[] {
  const include = globMatcher(filters.include);
  const exclude = globMatcher(filters.exclude);
  const names = new Set(Object.values(catalogue).flat());
  return [...names].filter((n) => (filters.include.length === 0 || include(n)) && !exclude(n)).sort();
}
