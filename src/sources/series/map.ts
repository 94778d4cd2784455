import type { FamilySamples, Labels } from '../../exposition/model.js';
import type { LatestValue } from './decode-latest.js';
import type { SeriesResponse } from './decode.js';
import type { SeriesPoints } from './points.js';
import { counterSpec, FamilyCollector, labelKey } from '../shared/families.js';
import { globMatcher } from '../../lib/glob.js';
import { carryAbsent } from '../shared/grace.js';
import { parseTimestampMs, toBaseUnit } from '../shared/units.js';
import { advanceDelta, MISSING_REASONS, oldestOpenMs, type DeltaPoint, type DeltaState, type DeltaTally, type MissingReason } from './deltas.js';
import type { ResolvedNames, SeriesCollision, SeriesMetric, SeriesNaming } from './naming.js';
import { DeltaTable, DeltaTableBuilder } from './delta-table.js';

export { MISSING_REASONS, type MissingReason } from './deltas.js';

/**
 * Maps the metric series of one host to gauges, counters and summaries. Pure: the previous
 * state and `nowMs` come in, the next state and the families go out.
 *
 * Gauges: the newest non-null point, converted to base units; nothing when that point is
 * older than the staleness limit (an old value is never shown as current).
 *
 * Deltas (per-window counts) become counters, each minute added exactly once when it is
 * due or, when it was still null then, when it arrives within the late-data horizon
 * (deltas.ts). Timers become a summary: quantiles from the newest median and pctl95,
 * `_count` and `_sum` from each minute's count and mean x count under the same rule, and
 * a gauge of the newest max.
 *
 * The counter state of a name absent from the input is kept for the grace period, so a
 * name that comes back continues its counter; its series is not emitted meanwhile.
 */

export interface SeriesBatch {
  readonly intervalSeconds: number;
  readonly points: Readonly<Record<string, SeriesPoints>>;
}

export function batchFromResponse(response: SeriesResponse): SeriesBatch {
  return { intervalSeconds: response.interval, points: response.series };
}

export interface SeriesHostState {
  /** By dotted name for deltas, by timer name for timers. Names absent from the input stay for the grace period. */
  readonly counters: ReadonlyMap<string, DeltaState>;
  /** Cumulative count of delta points not added, by reason. */
  readonly missing: Readonly<Record<MissingReason, number>>;
}

export const EMPTY_SERIES_STATE: SeriesHostState = {
  counters: new Map(),
  missing: { null: 0, window_gap: 0, partial_overlap: 0, invalid: 0 },
};

export const DEFAULT_STALENESS_MS = 10 * 60_000;
export const DEFAULT_LATE_DATA_HORIZON_MS = 2 * 3_600_000;
export const DEFAULT_COUNTER_GRACE_MS = 3_600_000;

/**
 * The labels of one host's series, each label set built once and reused across polls (the
 * store keys series by label object identity). Hostname and tags are not among them: they
 * live on monapi_host_info, joined on (account, host_uuid).
 */
/**
 * A host's label objects, one per distinct set of metric labels (`{device: "sda"}` serves every
 * per-device metric of sda): at a million series the memo keyed per series held a third of
 * the heap's maps, and a label object per series.
 */
export class HostLabels {
  readonly host: Labels;
  private readonly memo = new Map<string, Labels>();
  /**
   * The same, by the metric's (shared, immutable) labels object: one lookup a series and poll.
   * A Map, not a WeakMap: a million weak entries (one per series) made every full garbage
   * collection trace them as ephemerons in its final pause. Keys of a replaced naming (after a
   * reload) are dropped when it outgrows the distinct label sets.
   */
  private readonly byObject = new Map<Labels, Labels>();
  private plan: MappingPlan | undefined;

  constructor(account: string, hostUuid: string) {
    this.host = { account, host_uuid: hostUuid };
  }

  /** Metrics' label objects remembered: bounded whatever the number of namings seen. */
  get remembered(): number {
    return this.byObject.size;
  }

  of(metric: SeriesMetric): Labels {
    const known = this.byObject.get(metric.labels);
    if (known) return known;
    const labels = this.build(metric);
    if (this.byObject.size >= 4 * this.memo.size + 1024) this.byObject.clear();
    this.byObject.set(metric.labels, labels);
    return labels;
  }

  /**
   * How this host's answers map: worked out when the names its answers carry change (or the
   * naming's resolution of them), not on every poll, where finding each metric's series and
   * labels by name cost more than the rest of the mapping.
   */
  planFor(keys: readonly string[], naming: SeriesNaming): MappingPlan {
    const last = this.plan;
    // The naming is asked every poll all the same: its answer is what the plan holds to.
    if (last !== undefined && last.naming === naming && sameList(last.keys, keys) && naming.resolve(last.names) === last.resolved) return last;
    // Where each name is; a later batch wins a name two carry. Map keys keep where a name first came.
    const placeOf = new Map<string, number>();
    for (let i = 0; i < keys.length; i++) placeOf.set(keys[i] as string, i);
    const names = placeOf.size === keys.length ? keys : [...placeOf.keys()];
    const resolved = naming.resolve(names);
    const plan: MappingPlan = {
      naming,
      keys,
      names,
      resolved,
      places: Int32Array.from(resolved.metrics, (metric) => placeOf.get(metric.dotted) ?? -1),
      labels: resolved.metrics.map((metric) => this.build(metric)),
    };
    this.plan = plan;
    return plan;
  }

  private build(metric: SeriesMetric): Labels {
    const key = labelKey(metric.labels);
    if (key === NO_LABELS) return this.host;
    let labels = this.memo.get(key);
    if (!labels) {
      // Not `{ ...this.host, ...metric.labels }`: V8 gives each object built by two spreads a
      // hidden class of its own (about 300 bytes a series); entries give them shared ones.
      labels = Object.fromEntries([...Object.entries(this.host), ...Object.entries(metric.labels)]);
      this.memo.set(key, labels);
    }
    return labels;
  }
}

const NO_LABELS = labelKey({});

/** How the answers of one host map, for as long as they carry the same names (`HostLabels.planFor`). */
interface MappingPlan {
  readonly naming: SeriesNaming;
  /** The names of the answers, batch after batch, as they came. */
  readonly keys: readonly string[];
  /** Each name once, in the order it first came: what the naming resolves. */
  readonly names: readonly string[];
  readonly resolved: ResolvedNames;
  /** Per resolved metric, the place in `keys` of its series (-1: none). */
  readonly places: Int32Array;
  /** Per resolved metric, its series' labels. */
  readonly labels: readonly Labels[];
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export interface SeriesHostIdentity {
  readonly account: string;
  readonly hostUuid: string;
  /** Reused across polls of the host; a new one is made when absent. */
  readonly labels?: HostLabels;
}

export interface SeriesMapOptions extends SeriesHostIdentity {
  readonly nowMs: number;
  readonly ingestDelayMs: number;
  /** Null points are waited for this long after they end (default 2 h), then given up. */
  readonly lateDataHorizonMs?: number;
  /** Counter state of a name absent from the input is kept this long (default 1 h). */
  readonly counterGraceMs?: number;
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
  /** Points of this poll added after arriving late. */
  readonly latePoints: number;
}

export const POINTS_MISSING = counterSpec(
  'monapi_series_points_missing_total',
  'Delta points from /hosts/{uuid}/metrics/series that were not added to their counter, summed over the account\'s hosts, by reason: null (no data within the late-data horizon), window_gap (never fetched), partial_overlap (coarser interval overlapping counted time), invalid (negative or non-finite). Polled in the background.',
);

/**
 * The account-wide missing-point counter. Per host it would cost four series a host for a
 * figure operators read per account (which host lacks data shows in its own series); a host
 * adds what its polls newly missed, so the sum never decreases when a host leaves.
 */
export class MissingPointTotals {
  private readonly totals: Record<MissingReason, number> = { null: 0, window_gap: 0, partial_overlap: 0, invalid: 0 };

  /** Adds what a host's poll missed beyond what its previous state had counted. */
  add(previous: Readonly<Record<MissingReason, number>>, next: Readonly<Record<MissingReason, number>>): void {
    for (const reason of MISSING_REASONS) this.totals[reason] += Math.max(0, next[reason] - previous[reason]);
  }

  families(account: string): FamilySamples[] {
    const c = new FamilyCollector();
    for (const reason of MISSING_REASONS) c.add(POINTS_MISSING, { account, reason }, this.totals[reason]);
    return c.toFamilies();
  }
}

interface NamedSeries {
  readonly intervalMs: number;
  /** The values, oldest first (`GAP` for a null point), and their times in ms (shared by every series with the same timestamps). */
  readonly values: readonly number[];
  readonly times: readonly number[];
}

/** Whether a value is a gap (a null point: see points.ts). */
function isGap(value: number): boolean {
  return value !== value;
}

/**
 * Every series of a response has the same sample times: each timestamp text is parsed once,
 * and a series whose timestamps equal the previous one's shares its list of times.
 */
class TimeAxis {
  private readonly parsed = new Map<string, number>();
  private lastTexts: readonly string[] = [];
  private lastTimes: readonly number[] = [];

  series(name: string, points: SeriesPoints, intervalMs: number): NamedSeries {
    const texts = points.times;
    const values = points.values;
    if (points.timesShared) {
      const times = sharedTimes(texts, (text) => this.timeOf(text, name));
      if (times !== undefined) return { intervalMs, values, times };
    }
    if (this.sameTimes(texts)) return { intervalMs, values, times: this.lastTimes };
    const times = new Array<number>(texts.length);
    let ascending = true;
    for (let i = 0; i < texts.length; i++) {
      const t = this.timeOf(texts[i] as string, name);
      times[i] = t;
      if (i > 0 && t < (times[i - 1] as number)) ascending = false;
    }
    if (!ascending) {
      // Array sort is stable: points of equal time keep their order.
      const order = times.map((_, i) => i).sort((a, b) => (times[a] as number) - (times[b] as number));
      return { intervalMs, values: order.map((i) => values[i] as number), times: order.map((i) => times[i] as number) };
    }
    this.lastTexts = texts;
    this.lastTimes = times;
    return { intervalMs, values, times };
  }

  private timeOf(text: string, name: string): number {
    let t = this.parsed.get(text);
    if (t === undefined) this.parsed.set(text, (t = parseTimestampMs(text, `series ${name} point timestamp`)));
    return t;
  }

  private sameTimes(texts: readonly string[]): boolean {
    const last = this.lastTexts;
    if (texts === last) return texts.length > 0;
    if (texts.length !== last.length || texts.length === 0) return false;
    for (let i = 0; i < texts.length; i++) if (texts[i] !== last[i]) return false;
    return true;
  }
}

/**
 * Parsed times of the scanner's shared time lists (`SeriesPoints.timesShared`), by the list,
 * for every metric and host that has it: ascending ones only (the others are sorted per
 * series). A cache, so the mapper stays a function of its input.
 */
const sharedListTimes = new Map<readonly string[], readonly number[] | null>();

function sharedTimes(texts: readonly string[], timeOf: (text: string) => number): readonly number[] | undefined {
  let times = sharedListTimes.get(texts);
  if (times === undefined) {
    const parsed = new Array<number>(texts.length);
    let ascending = true;
    for (let i = 0; i < texts.length; i++) {
      parsed[i] = timeOf(texts[i] as string);
      if (i > 0 && (parsed[i] as number) < (parsed[i - 1] as number)) ascending = false;
    }
    times = ascending ? parsed : null;
    if (sharedListTimes.size >= 1_024) sharedListTimes.clear();
    sharedListTimes.set(texts, times);
  }
  return times ?? undefined;
}

/** `Object.hasOwn`, in the form V8 folds away in a `for...in` over the same object (see decode.ts). */
// eslint-disable-next-line @typescript-eslint/unbound-method
const hasOwn = Object.prototype.hasOwnProperty;

/** Every series of the batches, in order, with its name (a name two batches carry comes twice: the later wins, see `planFor`). */
function indexBatches(input: SeriesBatch | SeriesResponse | readonly (SeriesBatch | SeriesResponse)[]): { keys: string[]; series: NamedSeries[] } {
  const list = Array.isArray(input) ? input : [input];
  const keys: string[] = [];
  const series: NamedSeries[] = [];
  const axis = new TimeAxis();
  for (const item of list as readonly (SeriesBatch | SeriesResponse)[]) {
    const batch = 'series' in item ? batchFromResponse(item) : item;
    if (!Number.isFinite(batch.intervalSeconds) || batch.intervalSeconds <= 0) {
      throw new Error(`series batch: interval must be a positive number of seconds, got ${batch.intervalSeconds}`);
    }
    const intervalMs = batch.intervalSeconds * 1000;
    for (const name in batch.points) {
      if (!hasOwn.call(batch.points, name)) continue;
      keys.push(name);
      series.push(axis.series(name, batch.points[name] as SeriesPoints, intervalMs));
    }
  }
  return { keys, series };
}

function newestGauge(
  series: NamedSeries,
  metric: SeriesMetric,
  nowMs: number,
  stalenessMs: number,
  nanAfterMs: number | undefined,
): { value: number; t: number } | undefined {
  const { values, times } = series;
  for (let i = values.length - 1; i >= 0; i--) {
    const value = values[i] as number;
    const t = times[i] as number;
    if (isGap(value)) {
      // The newest point the agent must have reported by now is a gap: say so with NaN.
      if (nanAfterMs !== undefined && t + series.intervalMs <= nanAfterMs) return { value: NaN, t };
      continue;
    }
    return nowMs - t > stalenessMs ? undefined : { value: toBaseUnit(value, metric.unit), t };
  }
  return undefined;
}

/**
 * The index of the first point `advanceDelta` can still act on: the ones before it end at or
 * before both the cursor and the oldest open hole, so it would pass over them. In the steady
 * state that leaves the newest few points of a window of an hour or more.
 */
function firstActionable(series: NamedSeries, previous: DeltaState | undefined): number {
  if (!previous) return 0;
  const settledUntilMs = oldestOpenMs(previous);
  const { times, intervalMs } = series;
  let low = 0;
  let high = times.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((times[mid] as number) + intervalMs <= settledUntilMs) low = mid + 1;
    else high = mid;
  }
  return low;
}

function deltaPoints(series: NamedSeries, metric: SeriesMetric, from: number): DeltaPoint[] {
  const { values, times } = series;
  const out = new Array<DeltaPoint>(values.length - from);
  for (let i = from; i < values.length; i++) {
    const value = values[i] as number;
    out[i - from] = { t: times[i] as number, value: isGap(value) ? null : toBaseUnit(value, metric.unit), sum: 0 };
  }
  return out;
}

/**
 * A timer minute counts when its count is there and, unless the count is 0, its mean too
 * (they arrive together; a count without its mean waits like a null point).
 */
function timerPoints(count: NamedSeries, mean: NamedSeries, meanMetric: SeriesMetric, from: number): DeltaPoint[] {
  const fromMs = count.times[from] ?? Infinity;
  const means = new Map<number, number | null>();
  for (let i = mean.times.length - 1; i >= 0 && (mean.times[i] as number) >= fromMs; i--) {
    const value = mean.values[i] as number;
    means.set(mean.times[i] as number, isGap(value) ? null : value);
  }
  const out = new Array<DeltaPoint>(count.values.length - from);
  for (let i = from; i < count.values.length; i++) {
    const raw = count.values[i] as number;
    const value = isGap(raw) ? null : raw;
    const t = count.times[i] as number;
    const m = means.get(t) ?? null;
    if (value === null || (value !== 0 && m === null)) out[i - from] = { t, value: null, sum: 0 };
    else out[i - from] = { t, value, sum: value === 0 ? 0 : value * toBaseUnit(m ?? 0, meanMetric.unit) };
  }
  return out;
}

type TimerParts = Partial<Record<'mean' | 'count' | 'max' | 'median' | 'pctl95', { metric: SeriesMetric; series: NamedSeries; labels: Labels }>>;

export function mapSeries(
  input: SeriesBatch | SeriesResponse | readonly (SeriesBatch | SeriesResponse)[],
  previous: SeriesHostState,
  opts: SeriesMapOptions,
): SeriesMapResult {
  const batches = indexBatches(input);
  const hostLabels = opts.labels ?? new HostLabels(opts.account, opts.hostUuid);
  const plan = hostLabels.planFor(batches.keys, opts.naming);
  const { metrics, collisions } = plan.resolved;
  const stalenessMs = opts.stalenessMs ?? DEFAULT_STALENESS_MS;
  const clock = {
    nowMs: opts.nowMs,
    dueUntilMs: opts.nowMs - opts.ingestDelayMs,
    giveUpBeforeMs: opts.nowMs - (opts.lateDataHorizonMs ?? DEFAULT_LATE_DATA_HORIZON_MS),
  };
  const nanAfterMs = opts.nullHandling === 'nan' ? clock.dueUntilMs : undefined;
  const tally: DeltaTally = { missing: { ...previous.missing }, late: 0 };
  const counters = new DeltaTableBuilder(previous.counters);
  const timers = new Map<string, TimerParts>();
  const c = new FamilyCollector();
  const gauge = (series: NamedSeries, metric: SeriesMetric) => newestGauge(series, metric, opts.nowMs, stalenessMs, nanAfterMs);

  for (let i = 0; i < metrics.length; i++) {
    const place = plan.places[i] as number;
    if (place < 0) continue;
    const metric = metrics[i] as SeriesMetric;
    const series = batches.series[place] as NamedSeries;
    const labels = plan.labels[i] as Labels;
    const { role } = metric;
    if (role.kind === 'gauge') {
      const newest = gauge(series, metric);
      if (newest !== undefined) c.add(role.spec, labels, newest.value, opts.sampleTimestamps ? newest.t : undefined);
    } else if (role.kind === 'delta') {
      const before = previous.counters.get(metric.dotted);
      const next = advanceDelta(deltaPoints(series, metric, firstActionable(series, before)), series.intervalMs, before, clock, tally);
      if (!next) continue;
      counters.set(metric.dotted, next);
      c.add(role.spec, labels, next.total, opts.sampleTimestamps ? next.coveredUntilMs : undefined);
    } else {
      let parts = timers.get(role.timer);
      if (!parts) timers.set(role.timer, (parts = {}));
      parts[role.stat] = { metric, series, labels };
    }
  }

  for (const [timer, parts] of timers) {
    const { mean, count, max, median, pctl95 } = parts;
    if (max) {
      const newest = gauge(max.series, max.metric);
      const role = max.metric.role;
      if (newest !== undefined && role.kind === 'timer') c.add(role.maxSpec, max.labels, newest.value, opts.sampleTimestamps ? newest.t : undefined);
    }
    if (!mean || !count || mean.metric.role.kind !== 'timer') continue;
    const before = previous.counters.get(timer);
    const next = advanceDelta(timerPoints(count.series, mean.series, mean.metric, firstActionable(count.series, before)), count.series.intervalMs, before, clock, tally);
    if (!next) continue;
    counters.set(timer, next);
    const quantile = (part: TimerParts['median']) => (part ? (gauge(part.series, part.metric)?.value ?? NaN) : NaN);
    c.addSummary(mean.metric.role.spec, mean.labels, [[0.5, quantile(median)], [0.95, quantile(pctl95)]], next.sum, next.total);
  }

  carryAbsent(previous.counters, counters, (s) => s.lastSeenMs, opts.nowMs, opts.counterGraceMs ?? DEFAULT_COUNTER_GRACE_MS);
  return { state: { counters: counters.finish(), missing: tally.missing }, families: c.toFamilies(), collisions, latePoints: tally.late };
}

export const MAX_WINDOW_MINUTES = 240;
const WINDOW_MARGIN_MS = 2 * 60_000;
const MIN_EXTRA_MS = 5 * 60_000;

/**
 * The relative window (`since`) the next series request of this host must ask for so that
 * no due delta point is skipped and every open hole is read again: back to the oldest
 * counter cursor or open hole plus a margin, at least `max(minWindowMs, ingestDelay +
 * 5 min)`, whole minutes, capped at 4 h so the interval stays 60 s. Only the counters in
 * `counterKeys` count (the names being requested), when given. The window changes the
 * size of the answer, never the number of requests.
 */
export function requiredWindow(
  state: SeriesHostState,
  nowMs: number,
  ingestDelayMs: number,
  minWindowMs: number = DEFAULT_STALENESS_MS,
  counterKeys?: ReadonlySet<string>,
): string {
  let needMs = Math.max(minWindowMs, ingestDelayMs + MIN_EXTRA_MS);
  const counted = (openMs: number, key: string): void => {
    if (counterKeys && !counterKeys.has(key)) return;
    needMs = Math.max(needMs, nowMs - openMs + WINDOW_MARGIN_MS);
  };
  if (state.counters instanceof DeltaTable) state.counters.forEachOldestOpen(counted);
  else for (const [key, counter] of state.counters) counted(oldestOpenMs(counter), key);
  const minutes = Math.min(MAX_WINDOW_MINUTES, Math.max(1, Math.ceil(needMs / 60_000)));
  return `${minutes}m`;
}

/** The counter keys (`SeriesHostState.counters`) the given dotted names feed. */
export function counterKeysOf(dottedNames: readonly string[], naming: SeriesNaming): Set<string> {
  const keys = new Set<string>();
  for (const dotted of dottedNames) {
    const { role } = naming.metric(dotted);
    if (role.kind === 'delta') keys.add(dotted);
    else if (role.kind === 'timer' && role.stat === 'count') keys.add(role.timer);
  }
  return keys;
}

/** True when the latest-value endpoint can stand in for a series request of this one name. */
export function latestValueUsable(name: string, naming: SeriesNaming): boolean {
  const { role } = naming.metric(name);
  return role.kind === 'gauge' || (role.kind === 'timer' && role.stat === 'max');
}

export interface LatestMapOptions extends SeriesHostIdentity {
  readonly nowMs: number;
  readonly stalenessMs?: number;
  readonly naming: SeriesNaming;
}

/**
 * Maps `/hosts/{uuid}/metrics/{name}/latest` to the same gauge family a series gauge
 * would give. A delta or timer part other than max gives nothing (they need the series);
 * null or stale values give nothing, like the series mapping.
 */
export function mapLatestValue(latest: LatestValue, opts: LatestMapOptions): { families: FamilySamples[]; collisions: readonly SeriesCollision[] } {
  const { metrics, collisions } = opts.naming.resolve([latest.name]);
  const metric = metrics[0];
  if (!metric || latest.value === null || latest.timestamp === null) return { families: [], collisions };
  const spec = metric.role.kind === 'gauge' ? metric.role.spec : metric.role.kind === 'timer' && metric.role.stat === 'max' ? metric.role.maxSpec : undefined;
  if (!spec) return { families: [], collisions };
  const t = parseTimestampMs(latest.timestamp, `latest ${latest.name} timestamp`);
  if (opts.nowMs - t > (opts.stalenessMs ?? DEFAULT_STALENESS_MS)) return { families: [], collisions };
  const c = new FamilyCollector();
  c.add(spec, (opts.labels ?? new HostLabels(opts.account, opts.hostUuid)).of(metric), toBaseUnit(latest.value, metric.unit));
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
  return sortedUnique(metricNameSelector(filters)(catalogue));
}

/**
 * The names `selectMetricNames` selects, in catalogue order and possibly repeated, with the
 * filters compiled once and each name's verdict remembered: every host's catalogue is selected
 * on every catalogue poll, and hosts share their names. Unsorted, so a caller can tell an
 * unchanged catalogue without sorting it (sorting is most of the cost).
 */
export function metricNameSelector(filters: MetricNameFilters): (catalogue: Readonly<Record<string, readonly string[]>>) => string[] {
  const include = globMatcher(filters.include);
  const exclude = globMatcher(filters.exclude);
  const verdicts = new Map<string, boolean>();
  const selected = (name: string): boolean => {
    let verdict = verdicts.get(name);
    if (verdict === undefined) {
      verdict = (filters.include.length === 0 || include(name)) && !exclude(name);
      if (verdicts.size >= 100_000) verdicts.clear();
      verdicts.set(name, verdict);
    }
    return verdict;
  };
  return (catalogue) => {
    const names: string[] = [];
    for (const group of Object.values(catalogue)) for (const name of group) if (selected(name)) names.push(name);
    return names;
  };
}

/** Sorted, without repeats; a list already so (one pass to tell) is returned as it is. */
export function sortedUnique(names: string[]): string[] {
  for (let i = 1; i < names.length; i++) if (!((names[i - 1] as string) < (names[i] as string))) return [...new Set(names)].sort();
  return names;
}
