import { InvalidResponseError } from '../../upstream/http/errors.js';
import { findObject, refuseWhenNothingUsable, type DroppedItem, type JsonDecoder } from '../../upstream/tolerant/body.js';
import { Fields, type FieldNote } from '../../upstream/tolerant/fields.js';
import { describe, integer, isRecord, number, PLAIN_RFC3339, string, timestamp } from '../../upstream/tolerant/values.js';

/**
 * `/hosts/{uuid}/metrics/series` (shown in the document): `{host_uuid, since, interval,
 * series: {<name>: [{timestamp, value}]}}`. `interval` is required (it says how long each
 * point covers, which counting deltas depends on); `host_uuid` and `since` are optional.
 * A point needs a timestamp; its value may be null (a gap) or a numeric string. A bad
 * point is dropped, the rest of the metric kept.
 */
export interface SeriesPoint {
  readonly timestamp: string;
  readonly value: number | null;
}

export interface SeriesResponse {
  readonly host_uuid: string | undefined;
  /** ISO 8601, or undefined when upstream does not say: then the first point's time. */
  readonly since: string | undefined;
  readonly interval: number;
  readonly series: Readonly<Record<string, readonly SeriesPoint[]>>;
}


export const decodeSeries: JsonDecoder<SeriesResponse> = (raw, context) => {
  const object = findObject(raw, ['data', 'result'], ['series', 'interval']);
  if (object === undefined) throw new InvalidResponseError(context, `series response: expected an object, got ${describe(raw)}`, ['(root): not an object']);
  const notes: FieldNote[] = [];
  const f = new Fields(object, notes);
  const interval = f.optional(['interval', 'interval_seconds', 'step'], integer);
  if (interval === undefined || interval <= 0) {
    throw new InvalidResponseError(context, 'series response: interval is missing or not a positive whole number of seconds', ['interval: missing or invalid']);
  }
  const seriesField = f.find(['series', 'metrics', 'data']);
  if (seriesField === undefined || !isRecord(seriesField.value)) {
    throw new InvalidResponseError(context, 'series response: no series object (metric name to points) found', ['series: missing']);
  }
  const series: Record<string, SeriesPoint[]> = {};
  const dropped: DroppedItem[] = [];
  const times = new PlainTimes();
  let kept = 0;
  const all = seriesField.value;
  for (const name in all) {
    if (!Object.hasOwn(all, name)) continue;
    const points = all[name];
    if (!Array.isArray(points)) {
      dropped.push({ path: `series[${JSON.stringify(name)}]`, reason: 'wrong_type', field: 'series', issue: `expected a list of points, got ${describe(points)}` });
      continue;
    }
    // The parsed list itself while every point is plain; a copy from the first one that is not.
    let good: SeriesPoint[] | undefined;
    for (let index = 0; index < points.length; index++) {
      const point: unknown = points[index];
      if (times.isPlain(point, index)) {
        good?.push(point as SeriesPoint);
        continue;
      }
      good ??= (points as SeriesPoint[]).slice(0, index);
      const read = readPoint(point);
      if ('problem' in read) dropped.push({ path: `series[${JSON.stringify(name)}][${index}]`, ...read.problem });
      else good.push(read);
    }
    good ??= points as SeriesPoint[];
    series[name] = good;
    kept += good.length;
  }
  refuseWhenNothingUsable(context, 'series response', kept, dropped);
  return {
    value: {
      host_uuid: f.optional(['host_uuid', 'host'], string),
      since: f.optional(['since', 'from', 'start'], timestamp),
      interval,
      series,
    },
    dropped,
    notes,
  };
};

/**
 * Points already in the documented form (`{"timestamp": <RFC 3339 as the document writes it>,
 * "value": <finite number or null>}`) are kept as parsed, not copied: a series body is mostly
 * points, and each metric of a response repeats the same timestamps (fields a point carries
 * beside these two ride along unread). `isPlain` remembers the timestamp text seen at each
 * position, so the pattern runs once per position, not per point, and points of a position
 * share that one string.
 */
class PlainTimes {
  private readonly seen: string[] = [];

  isPlain(point: unknown, index: number): boolean {
    if (typeof point !== 'object' || point === null) return false;
    const { timestamp, value } = point as { timestamp?: unknown; value?: unknown };
    if (typeof timestamp !== 'string') return false;
    if (value !== null && (typeof value !== 'number' || !Number.isFinite(value))) return false;
    const seen = this.seen[index];
    if (seen === timestamp) {
      // One string object per position from here on: the mapper compares and looks up each
      // point's time, and equal texts that are one object compare at once and hash once.
      if (seen !== undefined) (point as { timestamp: string }).timestamp = seen;
      return true;
    }
    if (!PLAIN_RFC3339.test(timestamp)) return false;
    if (index <= this.seen.length) this.seen[index] = timestamp;
    return true;
  }
}

function readPoint(point: unknown): SeriesPoint | { problem: Omit<DroppedItem, 'path'> } {
  if (!isRecord(point)) return { problem: { reason: 'not_an_object', field: '(point)', issue: `expected a point, got ${describe(point)}` } };
  const rawTime = point.timestamp ?? point.time ?? point.ts;
  let time: string;
  if (typeof rawTime === 'string' && PLAIN_RFC3339.test(rawTime)) {
    time = rawTime;
  } else if (rawTime === undefined || rawTime === null) {
    return { problem: { reason: 'missing_field', field: 'timestamp', issue: 'timestamp: is missing' } };
  } else {
    const read = timestamp(rawTime);
    if (!read.ok) return { problem: { reason: read.reason, field: 'timestamp', issue: `timestamp: ${read.detail}` } };
    time = read.value;
  }
  const rawValue = point.value;
  if (rawValue === null || rawValue === undefined) return { timestamp: time, value: null };
  if (typeof rawValue === 'number' && Number.isFinite(rawValue)) return { timestamp: time, value: rawValue };
  const read = number(rawValue);
  if (!read.ok) return { problem: { reason: read.reason, field: 'value', issue: `value: ${read.detail}` } };
  return { timestamp: time, value: read.value };
}
