import { declareFields } from '../../upstream/fields/declare.js';
import { findersOf, type FieldReport } from '../../upstream/fields/resolve.js';
import { FieldsMissingError, InvalidResponseError } from '../../upstream/http/errors.js';
import { wrappedObjects, type JsonDecoder } from '../../upstream/tolerant/body.js';
import { describe, isRecord, number } from '../../upstream/tolerant/values.js';
import { SERIES_FIELDS } from './decode.js';

/**
 * `/hosts/{uuid}/metrics/{name}/latest`: one point, body not shown. The point's value and
 * time are declared (as a series point's) and found wherever they sit: `{value, timestamp}`,
 * nested (`point`, `latest`, `data`: `{host: {uuid}, latest: {at, value: "1.5"}}`), a list of
 * points (bare or under `points`: the newest is taken), or a bare number (no time). `value` may
 * be null (a gap); a body without any value is refused. The client fills in the host and name
 * it asked for.
 */
export interface LatestPoint {
  /** ISO 8601, or null when the body gives no time. */
  readonly timestamp: string | null;
  readonly value: number | null;
}

export interface LatestValue extends LatestPoint {
  readonly host_uuid: string;
  readonly name: string;
}

const LATEST_FIELDS = declareFields({
  timestamp: { ...SERIES_FIELDS.timestamp, essential: false },
  value: { ...SERIES_FIELDS.value, useful: true },
});

const NESTED = ['point', 'latest', 'data', 'result', 'last', 'points', 'values'];
const latestFinder = findersOf(LATEST_FIELDS);
const WHAT = 'latest value';

export const decodeLatest: JsonDecoder<LatestPoint> = (raw, context, options) => {
  const finder = latestFinder(options?.fieldPaths);
  if (typeof raw === 'number' || typeof raw === 'string') {
    const read = number(raw);
    if (!read.ok) throw new InvalidResponseError(context, `${WHAT}: value: ${read.detail}`, [`value: ${read.detail}`]);
    const report: FieldReport = { found: { value: { path: '(the body)', sample: String(raw), configured: false } }, missing: ['timestamp'], essentialMissing: [], items: 1, paths: [] };
    return { value: { timestamp: null, value: read.value }, dropped: [], fields: report };
  }
  const points = pointList(raw);
  if (points !== undefined) {
    const read = finder.read(points);
    if (read.report.found.value === undefined) throw new FieldsMissingError(context, WHAT, { ...read.report, essentialMissing: ['value'] });
    let newest: LatestPoint | undefined;
    for (const record of read.records) {
      if (record === undefined) continue;
      const point = { timestamp: record.timestamp ?? null, value: record.value ?? null };
      if (newest === undefined || Date.parse(point.timestamp ?? '') > Date.parse(newest.timestamp ?? '')) newest = point;
    }
    if (newest === undefined) throw new InvalidResponseError(context, `${WHAT}: no point in ${describe(raw)}`, ['value: no point']);
    return { value: newest, dropped: [], notes: read.notes, fields: read.report };
  }
  if (!isRecord(raw)) throw new InvalidResponseError(context, `${WHAT}: expected a point, got ${describe(raw)}`, ['(root): not a point']);
  // The object the point is in: the body, or the one under a key a point goes by; on a tie the inner one.
  let best = finder.read([raw]);
  for (const candidate of wrappedObjects(raw, NESTED).slice(1)) {
    const read = finder.read([candidate]);
    if (Object.keys(read.report.found).length >= Object.keys(best.report.found).length) best = read;
  }
  const [record] = best.records;
  if (record === undefined || best.report.found.value === undefined) {
    // A value present as null is a gap; one that is there but unreadable is no latest value.
    const unreadable = best.notes.find((note) => note.field === 'value');
    if (unreadable !== undefined) throw new InvalidResponseError(context, `${WHAT}: ${unreadable.issue}`, [unreadable.issue]);
    throw new FieldsMissingError(context, WHAT, { ...best.report, essentialMissing: ['value'] });
  }
  return { value: { timestamp: record.timestamp ?? null, value: record.value ?? null }, dropped: [], notes: best.notes, fields: best.report };
};

/** The points of a body that is a list of them, bare or under one of the keys a point goes by. */
function pointList(raw: unknown): Readonly<Record<string, unknown>>[] | undefined {
  if (Array.isArray(raw)) return raw.filter(isRecord);
  if (!isRecord(raw)) return undefined;
  for (const key of NESTED) {
    const inner = raw[key];
    if (Array.isArray(inner)) return inner.filter(isRecord);
  }
  return undefined;
}
