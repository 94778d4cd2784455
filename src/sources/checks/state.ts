import { z } from 'zod';
import { count, counterTableSchema, decodeCounterTable, encodeCounterTable, finiteOrNull, orMinusInfinity, parse, time } from '../shared/state-codec.js';
import type { ChecksState, HistogramState } from './map.js';

/** What the checks source keeps across a restart: check cursors, counters and histograms. */

const histogramSchema = z.object({ buckets: z.array(count), sum: count, count });
const checkSchema = z.looseObject({ id: z.number().int(), checked_at: z.string() });

export const checksSchema = z.object({
  /** `null` checkedAtMs/id: a first poll that found no checks (every later one counts). */
  cursor: z.object({ checkedAtMs: time.nullable(), id: z.number().nullable() }).nullable(),
  newest: checkSchema.nullable(),
  ttfb: histogramSchema.nullable(),
  dns: histogramSchema.nullable(),
  tls: histogramSchema.nullable(),
  results: counterTableSchema,
  cacheStatus: counterTableSchema,
});
export type ChecksJson = z.input<typeof checksSchema>;

export function encodeChecks(state: ChecksState): ChecksJson {
  const histogram = (h: HistogramState | undefined) => (h === undefined ? null : { buckets: [...h.buckets], sum: h.sum, count: h.count });
  return {
    cursor: state.cursor === undefined ? null : { checkedAtMs: finiteOrNull(state.cursor.checkedAtMs), id: finiteOrNull(state.cursor.id) },
    newest: state.newest === undefined ? null : { ...state.newest },
    ttfb: histogram(state.ttfb),
    dns: histogram(state.dns),
    tls: histogram(state.tls),
    results: encodeCounterTable(state.results),
    cacheStatus: encodeCounterTable(state.cacheStatus),
  };
}

/**
 * A histogram whose bucket count no longer matches the configured bounds (check_buckets
 * changed) cannot be continued: it starts afresh, which Prometheus reads as a reset.
 */
export function decodeChecks(json: unknown, bounds: { ttfb: number; dns: number; tls: number }): ChecksState {
  const parsed = parse(checksSchema, json, 'checks state');
  const histogram = (h: z.output<typeof histogramSchema> | null, n: number): HistogramState | undefined =>
    h === null || h.buckets.length !== n ? undefined : h;
  return {
    cursor: parsed.cursor === null ? undefined : { checkedAtMs: orMinusInfinity(parsed.cursor.checkedAtMs), id: orMinusInfinity(parsed.cursor.id) },
    // Only id and checked_at are checked here; the other fields are read as optional by the mapper.
    newest: parsed.newest === null ? undefined : (parsed.newest),
    ttfb: histogram(parsed.ttfb, bounds.ttfb),
    dns: histogram(parsed.dns, bounds.dns),
    tls: histogram(parsed.tls, bounds.tls),
    results: decodeCounterTable(parsed.results),
    cacheStatus: decodeCounterTable(parsed.cacheStatus),
  };
}

