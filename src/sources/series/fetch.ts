import type { Priority } from '../../budget/types.js';
import type { Decoded, DroppedItem } from '../../upstream/decode.js';
import { endpoint, type MonitoringApi } from '../../upstream/monitoring/client.js';
import { decodeLatest, type LatestValue } from './decode-latest.js';
import { decodeSeries, type SeriesResponse } from './decode.js';
import type { SeriesPoints } from './points.js';

/** `/hosts/{uuid}/metrics/series`: the series of the names asked for, since a relative window. */
export const SERIES_ENDPOINT = endpoint('/hosts/{uuid}/metrics/series', decodeSeries, { since: { kind: 'window' }, names: { kind: 'names' } });
/** `/hosts/{uuid}/metrics/{name}/latest`: one metric's newest point. */
export const LATEST_ENDPOINT = endpoint('/hosts/{uuid}/metrics/{name}/latest', decodeLatest);

/**
 * 2000 bytes: the longest URL that every HTTP component on the way is known to accept
 * (browsers historically stopped at 2083, and some proxies and WAFs reject or truncate
 * longer request lines), while RFC 9110 only recommends supporting 8000. The real
 * service's limit is not documented, so the series requests stay far below any plausible
 * one.
 */
export const DEFAULT_MAX_URL_LENGTH = 2000;

/** One metric's points with the window and interval of the batch that carried them. */
export interface MetricSeries {
  readonly since: string;
  readonly intervalSeconds: number;
  readonly points: SeriesPoints;
}

/**
 * The merged answer of one or more series batches. Each metric keeps the `since` and
 * interval its own batch reported: batches answered a second apart report a `since` a
 * second apart, and in principle the interval can differ too.
 */
export interface SeriesResult {
  readonly hostUuid: string;
  readonly series: Readonly<Record<string, MetricSeries>>;
  /**
   * Set when every batch reported the same interval; `since` is then the earliest `since`
   * of the batches. Undefined when the intervals differ: use each metric's own.
   */
  readonly window: { readonly since: string; readonly intervalSeconds: number } | undefined;
  /** Requests spent. */
  readonly batches: number;
}

/**
 * `/hosts/{uuid}/metrics/series` for any number of names: as many requests as it takes
 * to keep each URL under `maxUrlLength`, merged into one result. Repeated names are
 * asked once. No names, no request.
 */
export async function fetchSeries(
  client: MonitoringApi,
  uuid: string,
  names: readonly string[],
  since = '1h',
  priority: Priority = 'bulk',
  maxUrlLength = DEFAULT_MAX_URL_LENGTH,
): Promise<Decoded<SeriesResult>> {
  const answers = await fetchSeriesAnswers(client, uuid, names, since, priority, maxUrlLength);
  if (answers.length === 0) return { value: { hostUuid: uuid, series: {}, window: undefined, batches: 0 }, dropped: [] };

  const series: Record<string, MetricSeries> = {};
  const dropped: DroppedItem[] = [];
  const intervals = new Set<number>();
  let earliest: string | undefined;
  let hostUuid = uuid;
  for (const answer of answers) {
    const { value } = answer;
    hostUuid = value.host_uuid ?? hostUuid;
    intervals.add(value.interval);
    const batchSince = value.since ?? firstPointTime(value.series);
    if (batchSince !== undefined && (earliest === undefined || Date.parse(batchSince) < Date.parse(earliest))) earliest = batchSince;
    for (const [name, points] of Object.entries(value.series)) {
      series[name] = { since: batchSince ?? points.times[0] ?? '', intervalSeconds: value.interval, points };
    }
    dropped.push(...answer.dropped);
  }
  const [interval] = intervals;
  const uniform = intervals.size === 1 && interval !== undefined && earliest !== undefined ? { since: earliest, intervalSeconds: interval } : undefined;
  return { value: { hostUuid, series, window: uniform, batches: answers.length }, dropped };
}

/**
 * The decoded answers of the batches `fetchSeries` merges, in request order (a later batch wins
 * a name two carry): what the mapper takes as it is, without a merged copy per poll.
 */
export async function fetchSeriesAnswers(
  client: MonitoringApi,
  uuid: string,
  names: readonly string[],
  since = '1h',
  priority: Priority = 'bulk',
  maxUrlLength = DEFAULT_MAX_URL_LENGTH,
): Promise<Decoded<SeriesResponse>[]> {
  const prefixLength = `${client.url}/hosts/${encodeURIComponent(uuid)}/metrics/series?since=${since}&names=`.length;
  const batches = plannedBatches(names, prefixLength, maxUrlLength);
  return Promise.all(batches.map((batch) => client.get(SERIES_ENDPOINT, { uuid }, { since, names: batch }, priority)));
}

/** Hosts of one kind share one frozen list of names and ask with it on every poll: planned once per list and URL length. */
const plans = new WeakMap<readonly string[], Map<string, string[][]>>();

function plannedBatches(names: readonly string[], prefixLength: number, maxUrlLength: number): string[][] {
  let byLength = plans.get(names);
  if (!byLength) plans.set(names, (byLength = new Map<string, string[][]>()));
  const key = `${prefixLength}/${maxUrlLength}`;
  let batches = byLength.get(key);
  if (!batches) byLength.set(key, (batches = planSeriesBatches(prefixLength, [...new Set(names)], maxUrlLength).map((batch) => Object.freeze(batch) as string[])));
  return batches;
}

/** `/hosts/{uuid}/metrics/{name}/latest`, with the host and name it was asked for. */
export async function fetchLatest(client: MonitoringApi, uuid: string, name: string, priority: Priority = 'normal'): Promise<Decoded<LatestValue>> {
  const decoded = await client.get(LATEST_ENDPOINT, { uuid, name }, {}, priority);
  return { ...decoded, value: { host_uuid: uuid, name, ...decoded.value } };
}

function firstPointTime(series: Readonly<Record<string, SeriesPoints>>): string | undefined {
  let first: string | undefined;
  for (const points of Object.values(series)) {
    const t = points.times[0];
    if (t !== undefined && (first === undefined || Date.parse(t) < Date.parse(first))) first = t;
  }
  return first;
}

/**
 * Splits metric names into batches so that `baseUrlLength` plus each batch's encoded,
 * comma-joined names stays within `maxUrlLength`. Order is kept; batches are filled
 * greedily, which is optimal for items that must stay in order.
 * @throws RangeError naming the metric when one name alone would exceed the limit
 * @example planSeriesBatches(60, ['a.b', 'c.d'], 64) // [['a.b'], ['c.d']]
 */
export function planSeriesBatches(baseUrlLength: number, names: readonly string[], maxUrlLength: number): string[][] {
  const room = maxUrlLength - baseUrlLength;
  const batches: string[][] = [];
  let current: string[] = [];
  let used = 0;
  for (const name of names) {
    const size = encodeURIComponent(name).length;
    if (size > room) {
      const shown = name.length > 60 ? `${name.slice(0, 60)}…` : name;
      throw new RangeError(
        `metric name '${shown}' is too long to request: with it the series URL would be ${baseUrlLength + size} bytes, over maxUrlLength ${maxUrlLength}`,
      );
    }
    const extra = current.length === 0 ? size : size + 1;
    if (used + extra > room) {
      batches.push(current);
      current = [name];
      used = size;
    } else {
      current.push(name);
      used += extra;
    }
  }
  if (current.length > 0) batches.push(current);
  return batches;
}
