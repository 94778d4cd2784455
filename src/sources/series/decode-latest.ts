import { InvalidResponseError } from '../../upstream/http/errors.js';
import type { JsonDecoder } from '../../upstream/tolerant/body.js';
import { Fields, ItemProblem } from '../../upstream/tolerant/fields.js';
import { describe, isRecord, number, timestamp } from '../../upstream/tolerant/values.js';

/**
 * `/hosts/{uuid}/metrics/{name}/latest`: one point. Accepted: `{value, timestamp}` (also
 * `time`, `ts`), the same nested under `point`, `latest`, `data` or `result`, a list of points
 * (bare or under `points`; the newest is taken), or a bare number (no time). `value` may be null (a gap); a body
 * without any value is refused. The client fills in the host and name it asked for.
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

const NESTED = ['point', 'latest', 'data', 'result', 'last', 'points', 'values'];
const VALUE_KEYS = ['value', 'v', 'latest_value'];
const TIME_KEYS = ['timestamp', 'time', 'ts', 'at', 'measured_at'];

export const decodeLatest: JsonDecoder<LatestPoint> = (raw, context) => {
  try {
    return { value: readPoint(raw), dropped: [] };
  } catch (error) {
    if (error instanceof ItemProblem) throw new InvalidResponseError(context, `latest value: ${error.message}`, [error.message]);
    throw error;
  }
};

function readPoint(raw: unknown): LatestPoint {
  if (typeof raw === 'number' || typeof raw === 'string') {
    const read = number(raw);
    if (!read.ok) throw new ItemProblem(read.reason, 'value', read.detail);
    return { timestamp: null, value: read.value };
  }
  if (Array.isArray(raw)) {
    const points = raw.filter(isRecord).map((item) => readPoint(item));
    const newest = points.reduce<LatestPoint | undefined>(
      (best, p) => (best === undefined || Date.parse(p.timestamp ?? '') > Date.parse(best.timestamp ?? '') ? p : best),
      undefined,
    );
    if (newest === undefined) throw new ItemProblem('missing_field', 'value', `no point in ${describe(raw)}`);
    return newest;
  }
  if (!isRecord(raw)) throw new ItemProblem('not_an_object', 'value', `expected a point, got ${describe(raw)}`);
  const fields = new Fields(raw);
  if (!fields.present(VALUE_KEYS)) {
    for (const key of NESTED) {
      const inner = raw[key];
      if (isRecord(inner) || Array.isArray(inner)) return readPoint(inner);
    }
  }
  if (!fields.present(VALUE_KEYS)) throw new ItemProblem('missing_field', 'value', 'is missing');
  return {
    value: fields.find(VALUE_KEYS) === undefined ? null : fields.required(VALUE_KEYS, number),
    timestamp: fields.optional(TIME_KEYS, timestamp) ?? null,
  };
}
