import { declareFields } from '../../upstream/fields/declare.js';
import { findersOf, matchFields, type FieldReport, type FoundField } from '../../upstream/fields/resolve.js';
import { leavesOf, signatureOf, valueAt } from '../../upstream/fields/shape.js';
import { keyWords } from '../../upstream/fields/words.js';
import { FieldsMissingError, InvalidResponseError, type RequestContext } from '../../upstream/http/errors.js';
import { refuseWhenNothingUsable, type DroppedItem, type JsonDecoder } from '../../upstream/tolerant/body.js';
import { describe, isRecord, number, PLAIN_RFC3339, timestamp } from '../../upstream/tolerant/values.js';
import { GAP, pointsByName, SeriesPoints, type SeriesPoint } from './points.js';
import { scanSeriesBody } from './scan.js';

/**
 * `/hosts/{uuid}/metrics/series` (shown in the document): `{host_uuid, since, interval,
 * series: {<name>: [{timestamp, value}]}}`. The envelope's fields are declared and found
 * wherever they sit (`window.since`, `step: "1m"`, `interval_ms`); `interval` is required (it
 * says how long each point covers, which counting deltas depends on), `host_uuid` and `since`
 * are optional. The series map is found by its name or by what it is (an object of lists), or
 * as a list of `{name, points}`.
 *
 * Points are the hot path: a series body is mostly points, decoded into columns (points.ts).
 * A documented body comes from the scanner as columns already, its times checked once per
 * shared list; points of the documented form in a parsed body are taken without a lookup (see
 * PlainTimes). Only a point in another form is read through the declared point fields, with
 * the paths found once per point shape (`{t, v}`, `{time, value: "1.5"}`, `[time, value]`). A
 * point needs a timestamp; its value may be null (a gap) or a numeric string. A bad point is
 * dropped, the rest of the metric kept.
 */
export type { SeriesPoint } from './points.js';

export interface SeriesResponse {
  readonly host_uuid: string | undefined;
  /** ISO 8601, or undefined when upstream does not say: then the first point's time. */
  readonly since: string | undefined;
  /** Seconds each point covers. */
  readonly interval: number;
  readonly series: Readonly<Record<string, SeriesPoints>>;
}

/** The fields of the envelope around the series. */
const ENVELOPE_FIELDS = declareFields({
  interval: {
    kind: 'duration',
    about: 'seconds each point covers (counting deltas depends on it)',
    words: [['interval'], ['step'], ['resolution'], ['granularity'], ['period']],
    not: ['since', 'from', 'start', 'until', 'end'],
    unit: 'seconds',
    essential: true,
  },
  since: { kind: 'timestamp', about: 'the start of the effective window, after clamping to retention', words: [['since'], ['from'], ['start'], ['begin']], not: ['interval', 'step'] },
  host_uuid: { kind: 'id', about: 'the host the series belong to', words: [['hosts', 'uuid'], ['hosts', 'id'], ['uuid'], ['hosts']], not: ['name'] },
});

/** The fields of one point, paths relative to the point. */
const POINT_FIELDS = declareFields({
  timestamp: { kind: 'timestamp', about: "a point's time", words: [['timestamp'], ['time'], ['ts'], ['at'], ['date'], ['t']], essential: true },
  value: {
    kind: 'number',
    about: "a point's value (null: a gap in the data)",
    words: [['value'], ['v'], ['val'], ['y']],
    not: ['unit', 'at', 'time', 'timestamp', 'ts', 'date'],
    nullIsValue: true,
  },
});

/** What the series source reads of a series answer (the latest answer reads a point too: `timestamp`, `value`). */
export const SERIES_FIELDS = declareFields({ ...ENVELOPE_FIELDS, ...POINT_FIELDS });

const envelopeFinder = findersOf(ENVELOPE_FIELDS);

const NAMED_SERIES_KEYS = ['series', 'metrics', 'data', 'values', 'results'];
const WRAPPERS = ['data', 'result', 'response', 'payload'];

interface Located {
  /** Metric name to points (or whatever upstream put there). */
  readonly map: Readonly<Record<string, unknown>>;
  /** Where it was, dotted, for messages. */
  readonly path: string;
  /** Every other key of the body and of the object that held the map: the envelope. */
  readonly head: Record<string, unknown>;
}

/** The envelope as read: its values, where the series map was, and what was found. */
interface Envelope {
  readonly interval: number;
  readonly since: string | undefined;
  readonly host_uuid: string | undefined;
  readonly located: Located;
  /** The report's parts, this body's own: the point fields are added to them. */
  readonly found: Record<string, FoundField>;
  readonly missing: string[];
  readonly report: Omit<FieldReport, 'found' | 'missing'>;
  readonly notes: readonly { readonly field: string; readonly issue: string }[];
}

/**
 * `Object.hasOwn`, in the form V8 folds away in a `for...in` over the same object: `Object.hasOwn`
 * there costs a property lookup a name, which was 8x the rest of the loop over a series map.
 */
// eslint-disable-next-line @typescript-eslint/unbound-method
const hasOwn = Object.prototype.hasOwnProperty;

const decodeSeriesValue: JsonDecoder<SeriesResponse> = (raw, context, options) => {
  if (!isRecord(raw)) throw new InvalidResponseError(context, `series response: expected an object, got ${describe(raw)}`, ['(root): not an object']);
  const fieldPaths = options?.fieldPaths ?? {};
  // The engine sees the body as JSON.parse gives it: a scanned body's columns written back as points.
  const envelope = documentedEnvelope(raw, fieldPaths) ?? foundEnvelope(asParsed(raw), context, fieldPaths);
  const { located } = envelope;

  const points = new PointReader(fieldPaths);
  const all = located.map;
  const entries: [string, SeriesPoints][] = [];
  // The scanner's map itself while each of its lists is kept as it came (nearly every body).
  let unchanged = true;
  const dropped: DroppedItem[] = [];
  let kept = 0;
  for (const name in all) {
    if (!hasOwn.call(all, name)) continue;
    const list = all[name];
    let good: SeriesPoints;
    if (list instanceof SeriesPoints) good = points.readScanned(list, dropped, located.path, name);
    else if (Array.isArray(list)) good = points.readAll(list, dropped, located.path, name);
    else {
      unchanged = false;
      dropped.push({ path: `${located.path}[${JSON.stringify(name)}]`, reason: 'wrong_type', field: 'series', issue: `expected a list of points, got ${describe(list)}` });
      continue;
    }
    if (good !== list) unchanged = false;
    entries.push([name, good]);
    kept += good.length;
  }
  // Made at once (an object given its keys one by one turns into a dictionary past a few dozen);
  // `fromEntries` defines a `__proto__` name as its own key, as JSON.parse does.
  const series = unchanged ? (all as Record<string, SeriesPoints>) : Object.fromEntries(entries);
  const fields = withPoints(envelope, points.report());
  // Points, none with a time: the point's time is the missing field, said as one.
  if (kept === 0 && fields.missing.includes('timestamp')) throw new FieldsMissingError(context, 'series response', { ...fields, essentialMissing: ['timestamp'] });
  refuseWhenNothingUsable(context, 'series response', kept, dropped);
  return {
    value: { host_uuid: envelope.host_uuid, since: envelope.since, interval: envelope.interval, series },
    dropped,
    notes: envelope.notes,
    fields,
  };
};

/** A documented body is read from its bytes (see scan.ts): most of a poll's bytes are series points. */
export const decodeSeries: JsonDecoder<SeriesResponse> = Object.assign(decodeSeriesValue, { fromBytes: scanSeriesBody });

/** The body with a scanned series map's columns written back as the document's points, for the engine to look through. */
function asParsed(raw: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> {
  const { series } = raw;
  if (!isRecord(series) || !Object.values(series).some((list) => list instanceof SeriesPoints)) return raw;
  return { ...raw, series: pointsByName(series as Record<string, SeriesPoints>) };
}

/** The envelope through the declared fields, wherever it sits; refuses a body without a usable interval or series map. */
function foundEnvelope(raw: Readonly<Record<string, unknown>>, context: RequestContext, fieldPaths: Readonly<Record<string, string>>): Envelope {
  const located = locateSeries(raw);
  const envelope = envelopeFinder(fieldPaths).read([located?.head ?? raw]);
  const [record] = envelope.records;
  if (envelope.report.essentialMissing.length > 0) {
    throw new FieldsMissingError(context, 'series response', { ...envelope.report, paths: located ? [...envelope.report.paths, located.path] : envelope.report.paths });
  }
  const interval = record?.interval;
  if (interval === undefined || !Number.isSafeInteger(interval) || interval <= 0) {
    const detail = envelope.problems[0]?.issue ?? `${String(interval)} s`;
    throw new InvalidResponseError(context, `series response: interval is not a positive whole number of seconds (${detail})`, ['interval: invalid']);
  }
  if (located === undefined) {
    throw new InvalidResponseError(context, 'series response: no series object (metric name to points) found', ['series: missing']);
  }
  const { found, missing, ...report } = envelope.report;
  return { interval, since: record?.since, host_uuid: record?.host_uuid, located, found: { ...found }, missing: [...missing], report, notes: envelope.notes };
}

/** The unit the engine gives the documented `interval`: found once. */
const DOCUMENTED_INTERVAL_UNIT = envelopeFinder({}).read([{ interval: 60 }]).report.found.interval?.unit;

/**
 * The envelope as the document shows it (`{host_uuid, since, interval, series}`, no other key,
 * plain values, no path configured for it), read without the engine: one comes per host and
 * poll, and the engine's lookup would cost more than the rest of the envelope's decoding. It
 * gives what the engine gives for such a body (a test holds them equal); anything else is
 * left to the engine.
 */
function documentedEnvelope(raw: Readonly<Record<string, unknown>>, fieldPaths: Readonly<Record<string, string>>): Envelope | undefined {
  if (fieldPaths.interval !== undefined || fieldPaths.since !== undefined || fieldPaths.host_uuid !== undefined) return undefined;
  const { interval, since, host_uuid, series } = raw;
  if (typeof interval !== 'number' || !Number.isSafeInteger(interval) || interval <= 0 || !isRecord(series)) return undefined;
  if (since !== undefined && !(typeof since === 'string' && PLAIN_RFC3339.test(since) && Number.isFinite(Date.parse(since)))) return undefined;
  if (host_uuid !== undefined && !(typeof host_uuid === 'string' && host_uuid.trim() !== '' && host_uuid.length <= 60)) return undefined;
  const paths: string[] = [];
  for (const key in raw) {
    if (key === 'series') continue;
    if ((key === 'interval' || key === 'since' || key === 'host_uuid') && raw[key] !== undefined) paths.push(key);
    else return undefined;
  }
  const found: Record<string, FoundField> = { interval: { path: 'interval', unit: DOCUMENTED_INTERVAL_UNIT, sample: String(interval), configured: false } };
  const missing: string[] = [];
  if (since === undefined) missing.push('since');
  else found.since = { path: 'since', sample: since, configured: false };
  if (host_uuid === undefined) missing.push('host_uuid');
  else found.host_uuid = { path: 'host_uuid', sample: host_uuid, configured: false };
  return { interval, since, host_uuid, located: { map: series, path: 'series', head: {} }, found, missing, report: { essentialMissing: [], items: 1, paths }, notes: [] };
}

/**
 * The series map: under one of the names it goes by (an object of lists, or a list of
 * `{name, points}`), else the one key of the body that holds an object of lists; in the body
 * or under a wrapper.
 */
function locateSeries(raw: Readonly<Record<string, unknown>>): Located | undefined {
  const holders: [string, Readonly<Record<string, unknown>>][] = [['', raw]];
  for (const wrapper of WRAPPERS) {
    const inner = raw[wrapper];
    if (isRecord(inner)) holders.push([wrapper, inner]);
  }
  for (const [prefix, holder] of holders) {
    const found = seriesIn(holder);
    if (found === undefined) continue;
    const head: Record<string, unknown> = {};
    if (prefix !== '') for (const key in raw) if (key !== prefix) head[key] = raw[key];
    for (const key in holder) if (key !== found.key) head[key] = holder[key];
    return { map: found.map, path: prefix === '' ? found.key : `${prefix}.${found.key}`, head };
  }
  return undefined;
}

function seriesIn(holder: Readonly<Record<string, unknown>>): { key: string; map: Readonly<Record<string, unknown>> } | undefined {
  for (const key of NAMED_SERIES_KEYS) {
    const value = holder[key];
    if (isRecord(value) && (Object.keys(value).length === 0 || Object.values(value).some(Array.isArray))) return { key, map: value };
    const listed = Array.isArray(value) ? namedLists(value) : undefined;
    if (listed !== undefined) return { key, map: listed };
  }
  for (const key in holder) {
    const value = holder[key];
    if (isRecord(value) && Object.keys(value).length > 0 && Object.values(value).every(Array.isArray)) return { key, map: value };
  }
  return undefined;
}

/** `[{name: "system.cpu.user", points: [...]}, ...]` as a map; undefined unless every item names a metric and holds one list. */
function namedLists(items: readonly unknown[]): Record<string, unknown> | undefined {
  if (items.length === 0) return undefined;
  const map: Record<string, unknown> = {};
  for (const item of items) {
    if (!isRecord(item)) return undefined;
    let name: string | undefined;
    let list: unknown[] | undefined;
    for (const key in item) {
      const value = item[key];
      if (Array.isArray(value)) {
        if (list !== undefined) return undefined;
        list = value;
      } else if (name === undefined && typeof value === 'string' && keyWords(key).some((w) => w === 'name' || w === 'metric' || w === 'id')) {
        name = value;
      }
    }
    if (name === undefined || list === undefined) return undefined;
    map[name] = list;
  }
  return map;
}

/** Where a point's time and value sit, for one point shape. */
interface PointPaths {
  readonly time: readonly string[] | undefined;
  readonly value: readonly string[] | undefined;
}

const pointShapes = new Map<string, PointPaths>();

/** What the points of one body said of the point fields. */
interface PointFacts {
  points: number;
  time: FoundField | undefined;
  value: FoundField | undefined;
}

type PointProblem = Omit<DroppedItem, 'path'>;

/**
 * The scanner's time lists whose every text is a plain RFC 3339 time: a list is shared by the
 * metrics of a body (often of many bodies), so it is checked once.
 */
const PLAIN_TIME_LISTS = new WeakSet<readonly string[]>();

/** Reads the points of one body: the documented ones as they are, the others through the declared point fields. */
class PointReader {
  private readonly times = PLAIN_TIMES;
  private readonly facts: PointFacts = { points: 0, time: undefined, value: undefined };
  /** A path the operator named for a point field turns the documented-form shortcut off. */
  private readonly plainAllowed: boolean;
  /** Point shapes are kept per set of operator paths. */
  private readonly shapePrefix: string;

  constructor(private readonly fieldPaths: Readonly<Record<string, string>>) {
    this.plainAllowed = fieldPaths.timestamp === undefined && fieldPaths.value === undefined;
    this.shapePrefix = this.plainAllowed ? '' : `${fieldPaths.timestamp ?? ''}|${fieldPaths.value ?? ''}|`;
  }

  /**
   * A metric's points as the scanner read them from a documented body: kept as they are when
   * every time is a plain RFC 3339 time, else read point by point like a parsed body's.
   */
  readScanned(points: SeriesPoints, dropped: DroppedItem[], seriesPath: string, name: string): SeriesPoints {
    const { times } = points;
    // Paths the operator named for the point fields are followed even for a documented body.
    if (!this.plainAllowed) return this.readAll(points.toPoints(), dropped, seriesPath, name);
    if (!PLAIN_TIME_LISTS.has(times)) {
      if (!times.every((time) => PLAIN_RFC3339.test(time))) return this.readAll(points.toPoints(), dropped, seriesPath, name);
      PLAIN_TIME_LISTS.add(times);
    }
    this.facts.points += points.length;
    if (points.length > 0) this.documentedFacts(times[0] as string, points.valueAt(0));
    return points;
  }

  /** The usable points of one metric, as columns; a bad one is put in `dropped` under its path. */
  readAll(points: readonly unknown[], dropped: DroppedItem[], seriesPath: string, name: string): SeriesPoints {
    this.facts.points += points.length;
    const times: string[] = [];
    const values: number[] = [];
    for (let index = 0; index < points.length; index++) {
      const point: unknown = points[index];
      const plain = this.plainAllowed ? this.times.plainTime(point, index) : undefined;
      if (plain !== undefined) {
        const value = (point as { value: number | null }).value;
        if (this.facts.time === undefined) this.documentedFacts(plain, value);
        times.push(plain);
        values.push(value ?? GAP);
        continue;
      }
      const read = this.readPoint(point);
      if ('problem' in read) dropped.push({ path: `${seriesPath}[${JSON.stringify(name)}][${index}]`, ...read.problem });
      else {
        times.push(read.timestamp);
        values.push(read.value ?? GAP);
      }
    }
    return new SeriesPoints(times, values);
  }

  /** The point fields found where the document has them, told by a documented point. */
  private documentedFacts(time: string, value: number | null): void {
    if (this.facts.time !== undefined) return;
    this.facts.time = { path: 'timestamp', sample: time, configured: false };
    this.facts.value = { path: 'value', sample: String(value), configured: false };
  }

  report(): PointFacts {
    return this.facts;
  }

  private pathsOf(point: Readonly<Record<string, unknown>>): PointPaths {
    const signature = this.shapePrefix + signatureOf(point);
    let paths = pointShapes.get(signature);
    if (paths === undefined) {
      // Matched by the words of the keys alone: one point's bad value must not decide where every point's value is.
      const matches = matchFields(POINT_FIELDS, leavesOf(point), this.fieldPaths);
      paths = { time: matches.get('timestamp')?.path, value: matches.get('value')?.path };
      if (pointShapes.size >= 256) pointShapes.clear();
      pointShapes.set(signature, paths);
    }
    return paths;
  }

  private readPoint(point: unknown): SeriesPoint | { problem: PointProblem } {
    let rawTime: unknown;
    let rawValue: unknown;
    let timePath = '0';
    let valuePath: string | undefined = '1';
    if (Array.isArray(point) && point.length === 2) {
      // `[time, value]`, as Prometheus writes its range answers.
      [rawTime, rawValue] = point as [unknown, unknown];
    } else if (isRecord(point)) {
      const paths = this.pathsOf(point);
      rawTime = paths.time === undefined ? undefined : valueAt(point, paths.time);
      rawValue = paths.value === undefined ? undefined : valueAt(point, paths.value);
      timePath = paths.time?.join('.') ?? '';
      valuePath = paths.value?.join('.');
    } else {
      return { problem: { reason: 'not_an_object', field: '(point)', issue: `expected a point, got ${describe(point)}` } };
    }
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
    this.facts.time ??= { path: timePath, sample: time, configured: this.fieldPaths.timestamp !== undefined };
    if (valuePath !== undefined) this.facts.value ??= { path: valuePath, sample: sampleOf(rawValue), configured: this.fieldPaths.value !== undefined };
    if (rawValue === null || rawValue === undefined) return { timestamp: time, value: null };
    if (typeof rawValue === 'number' && Number.isFinite(rawValue)) return { timestamp: time, value: rawValue };
    const read = number(rawValue);
    if (!read.ok) return { problem: { reason: read.reason, field: 'value', issue: `value: ${read.detail}` } };
    return { timestamp: time, value: read.value };
  }
}

/** A value as sent, for the report, clipped as the engine clips its samples. */
function sampleOf(raw: unknown): string {
  const text = typeof raw === 'string' ? raw : JSON.stringify(raw ?? null);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** The envelope's report with the point fields: missing only when the body had points and none carried the field. */
function withPoints({ found, missing, report }: Envelope, points: PointFacts): FieldReport {
  if (points.time !== undefined) found.timestamp = points.time;
  else if (points.points > 0) missing.push('timestamp');
  if (points.value !== undefined) found.value = points.value;
  else if (points.points > 0) missing.push('value');
  return { found, missing, essentialMissing: report.essentialMissing, items: report.items, paths: report.paths };
}

/**
 * Points of a parsed body already in the documented form (`{"timestamp": <RFC 3339 as the
 * document writes it>, "value": <finite number or null>}`) are taken without the field lookup
 * (fields a point carries beside these two are left unread). `plainTime` remembers the
 * timestamp text seen at each position, so the pattern runs once per position, not per point,
 * and points of a position share that one string: the mapper compares and looks up each
 * point's time, and equal texts that are one object compare at once and hash once (only text
 * that passed is remembered).
 */
class PlainTimes {
  private readonly seen: string[] = [];

  /** The point's time when the point is in the documented form; else undefined. */
  plainTime(point: unknown, index: number): string | undefined {
    if (typeof point !== 'object' || point === null) return undefined;
    const { timestamp, value } = point as { timestamp?: unknown; value?: unknown };
    if (typeof timestamp !== 'string') return undefined;
    if (value !== null && (typeof value !== 'number' || !Number.isFinite(value))) return undefined;
    const seen = this.seen[index];
    if (seen === timestamp) return seen;
    if (!PLAIN_RFC3339.test(timestamp)) return undefined;
    if (index <= this.seen.length) this.seen[index] = timestamp;
    return timestamp;
  }
}

const PLAIN_TIMES = new PlainTimes();
