import { z } from 'zod';
import { count, counterTableSchema, decodeCounterTable, encodeCounterTable, finiteOrNull, orMinusInfinity, parse, time } from '../shared/state-codec.js';
import type { AlertsState, SeenIds } from './map.js';

/** What the alerts source keeps across a restart: seen alert events and their counters. */

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
