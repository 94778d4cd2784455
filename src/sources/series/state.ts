import { z } from 'zod';
import { count, finiteOrNull, orMinusInfinity, parse, time } from '../shared/state-codec.js';
import type { DeltaState } from './deltas.js';
import type { SeriesHostState } from './map.js';

/** What the series source keeps across a restart: delta counters with their cursors and open late-data holes. */

const HOLES = /^[0-9a-f]{1,64}$/;

const deltaSchema = z.object({
  total: count,
  sum: count,
  coveredUntilMs: time,
  /** Where the counter began counting; absent (files written before it was kept) or null: not known. */
  countingSinceMs: time.nullable().optional(),
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
    counters: [...state.counters].map(([name, d]) => [name, { ...d, countingSinceMs: finiteOrNull(d.countingSinceMs), holes: d.holes.toString(16) }]),
    missing: { ...state.missing },
  };
}

export function decodeSeriesHost(json: unknown): SeriesHostState {
  const parsed = parse(seriesHostSchema, json, 'series host state');
  return {
    counters: new Map(parsed.counters.map(([name, d]): [string, DeltaState] => [name, { ...d, countingSinceMs: orMinusInfinity(d.countingSinceMs ?? null), holes: BigInt(`0x${d.holes}`) }])),
    missing: parsed.missing,
  };
}

