import { z } from 'zod';
import type { CounterEntry, CounterTable } from '../sources/checks/counter-table.js';
import type { ChecksState, HistogramState } from '../sources/checks/map.js';
import type { AlertsState, SeenIds } from '../sources/alerts/map.js';
import type { DeltaState } from '../sources/series/deltas.js';
import type { SeriesHostState } from '../sources/series/map.js';

/**
 * The per-source state worth keeping across a restart, to and from plain JSON: delta
 * counters with their cursors and open late-data holes (series), check cursors, counters
 * and histograms (checks), seen alert events and their counters (alerts). Decoding checks
 * every field: a state file is input like any other, and a bad one must be refused whole
 * rather than half-restored.
 */

/** JSON has no infinities; cursors use -Infinity for "before anything". */
const finiteOrNull = (n: number): number | null => (Number.isFinite(n) ? n : null);
const orMinusInfinity = (n: number | null): number => n ?? -Infinity;

/** Parses or throws a one-line TypeError naming the first wrong field. */
function parse<S extends z.ZodType>(schema: S, json: unknown, what: string): z.output<S> {
  const result = schema.safeParse(json);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const at = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
  throw new TypeError(`${what}${at}: ${issue?.message ?? 'unreadable'}`);
}

const count = z.number().finite().min(0);
const time = z.number().finite();
const labels = z.record(z.string(), z.string());

// ---- counter tables (checks by result and cache status, alert events) ----

const counterTableSchema = z.array(z.object({ key: z.string(), labels, value: count, held: z.boolean() }));

function encodeCounterTable(table: CounterTable): z.input<typeof counterTableSchema> {
  return [...table].map(([key, entry]) => ({ key, labels: { ...entry.labels }, value: entry.value, held: entry.held }));
}

function decodeCounterTable(rows: z.output<typeof counterTableSchema>): CounterTable {
  return new Map(rows.map((row): [string, CounterEntry] => [row.key, { labels: row.labels, value: row.value, held: row.held }]));
}

// ---- series ----

const HOLES = /^[0-9a-f]{1,64}$/;

const deltaSchema = z.object({
  total: count,
  sum: count,
  coveredUntilMs: time,
  intervalMs: z.number().finite().positive(),
  /** The hole bitmap as hex: JSON has no bigint. */
  holes: z.string().regex(HOLES),
  lastSeenMs: time,
});

export const seriesHostSchema = z.object({
  counters: z.array(z.tuple([z.string(), deltaSchema])),
  missing: z.object({ null: count, window_gap: count, partial_overlap: count, invalid: count }),
});
export type SeriesHostJson = z.input<typeof seriesHostSchema>;

export function encodeSeriesHost(state: SeriesHostState): SeriesHostJson {
  return {
    counters: [...state.counters].map(([name, d]) => [name, { ...d, holes: d.holes.toString(16) }]),
    missing: { ...state.missing },
  };
}

export function decodeSeriesHost(json: unknown): SeriesHostState {
  const parsed = parse(seriesHostSchema, json, 'series host state');
  return {
    counters: new Map(parsed.counters.map(([name, d]): [string, DeltaState] => [name, { ...d, holes: BigInt(`0x${d.holes}`) }])),
    missing: parsed.missing,
  };
}

// ---- checks ----

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

// ---- alerts ----

export const alertsSchema = z.object({
  started: z.boolean(),
  seen: z.array(z.tuple([z.string(), z.object({ floor: z.number().finite().nullable(), recentIds: z.array(z.number().finite()) })])),
  historyBeforeMs: time.nullable(),
  events: counterTableSchema,
  lastEventMs: z.array(z.tuple([z.string(), time])),
  gaps: count,
  limit: z.number().int().min(1).max(500),
});
export type AlertsJson = z.input<typeof alertsSchema>;

export function encodeAlerts(state: AlertsState): AlertsJson {
  return {
    started: state.started,
    seen: [...state.seen].map(([type, ids]) => [type, { floor: finiteOrNull(ids.floor), recentIds: [...ids.recentIds] }]),
    historyBeforeMs: finiteOrNull(state.historyBeforeMs),
    events: encodeCounterTable(state.events),
    lastEventMs: [...state.lastEventMs],
    gaps: state.gaps,
    limit: state.limit,
  };
}

export function decodeAlerts(json: unknown): AlertsState {
  const parsed = parse(alertsSchema, json, 'alerts state');
  return {
    started: parsed.started,
    seen: new Map(parsed.seen.map(([type, ids]): [string, SeenIds] => [type, { floor: orMinusInfinity(ids.floor), recentIds: ids.recentIds }])),
    historyBeforeMs: orMinusInfinity(parsed.historyBeforeMs),
    events: decodeCounterTable(parsed.events),
    lastEventMs: new Map(parsed.lastEventMs),
    gaps: parsed.gaps,
    limit: parsed.limit,
  };
}
