import type { FamilySamples } from '../../exposition/model.js';
import type { AlertEvent, RecentAlerts } from '../../upstream/monitoring/schemas.js';
import { counterSamples, CounterTableUpdate, EMPTY_COUNTER_TABLE, type CounterTable } from '../checks/counter-table.js';
import { counterSpec, FamilyCollector, gaugeSpec } from '../shared/families.js';
import { parseTimestampMs } from '../shared/units.js';

/**
 * Maps `/alerts/recent` (RecentAlerts, newest first) to event counters, counting each event
 * once across polls. Pure: no I/O, no clock.
 *
 * - Seen events: ids grow with time, so the state keeps a floor (ids at or below it count
 *   as seen) and the newest RECENT_IDS_KEPT ids seen. An event that arrives late with an
 *   id below the newest seen is still counted once, as long as its id is above the floor.
 *   The set holds more ids than the largest page, so every event a page repeats is in it.
 * - First poll: the returned history is not counted (as with website checks: rate() would
 *   not see it, and after a restart it would count events twice); its sources appear at 0.
 * - Gap: a later poll whose page is full and holds nothing seen before may have missed
 *   events between the two; the next poll asks for twice as many (up to 500).
 * - Labels: `source_id` and `source_name` (the website or the alert rule), not the host
 *   of a `host_alert`: a rule that may fire on any host would multiply its series by the
 *   hosts; the host is in the event upstream.
 */

const FROM = 'from /alerts/recent, polled in the background';

export const ALERT_FAMILIES = {
  events: counterSpec(
    'monapi_alert_events_total',
    `Alert events seen since the exporter started (website_down or host_alert), by the website or alert rule that fired, each event counted once, ${FROM}.`,
  ),
  lastEvent: gaugeSpec(
    'monapi_alert_last_event_timestamp_seconds',
    `Unix time of the newest alert event of each type (upstream "occurred_at"), ${FROM}.`,
    'seconds',
  ),
  gaps: counterSpec(
    'monapi_alert_event_gaps_total',
    `Polls whose page of recent alert events was full and held no event seen before, so events in between may have been missed; the next poll asks for more, ${FROM}.`,
  ),
} as const;

/** More than the largest page (500), so a repeated event is always recognised. */
export const RECENT_IDS_KEPT = 512;
export const DEFAULT_ALERTS_LIMIT = 100;
export const MAX_ALERTS_LIMIT = 500;

export interface AlertsState {
  readonly started: boolean;
  /** Events with an id at or below this count as seen. */
  readonly floor: number;
  /** The newest ids seen above the floor, ascending, at most RECENT_IDS_KEPT. */
  readonly recentIds: readonly number[];
  readonly events: CounterTable;
  /** Newest `occurred_at` (ms) per event type. */
  readonly lastEventMs: ReadonlyMap<string, number>;
  readonly gaps: number;
  /** The `limit` the next poll asks for. */
  readonly limit: number;
}

export const EMPTY_ALERTS_STATE: AlertsState = {
  started: false,
  floor: -Infinity,
  recentIds: [],
  events: EMPTY_COUNTER_TABLE,
  lastEventMs: new Map(),
  gaps: 0,
  limit: DEFAULT_ALERTS_LIMIT,
};

export interface AlertsMapOptions {
  readonly account: string;
  /** The `limit` the poll asked for: a page this full may have cut events off. */
  readonly requestedLimit: number;
}

export interface AlertsMapResult {
  readonly state: AlertsState;
  readonly families: FamilySamples[];
  readonly counted: number;
  /** This poll may have missed events (see the module comment). */
  readonly gap: boolean;
}

export function mapRecentAlerts(body: RecentAlerts, previous: AlertsState, opts: AlertsMapOptions): AlertsMapResult {
  const firstPoll = !previous.started;
  const seen = new Set(previous.recentIds);
  const events = new CounterTableUpdate(previous.events, !firstPoll);
  const lastEventMs = new Map(previous.lastEventMs);
  const newIds: number[] = [];
  const labelsOf = (e: AlertEvent) => ({
    account: opts.account,
    event_type: e.type,
    source_id: String(e.source_id),
    source_name: e.source_name,
  });

  // Oldest first, so a repeated id within one page is counted once and in order.
  const ordered = [...body.alerts].sort((a, b) => a.id - b.id);
  for (const event of ordered) {
    const occurredMs = parseTimestampMs(event.occurred_at, `alert event ${event.id} occurred_at`);
    if (occurredMs > (lastEventMs.get(event.type) ?? -Infinity)) lastEventMs.set(event.type, occurredMs);
    if (event.id <= previous.floor || seen.has(event.id)) continue;
    seen.add(event.id);
    newIds.push(event.id);
    events.add(labelsOf(event), firstPoll ? 0 : 1);
  }

  const oldest = ordered[0]?.id;
  const newestBefore = previous.recentIds.at(-1) ?? previous.floor;
  const full = body.alerts.length >= opts.requestedLimit;
  const gap = !firstPoll && full && oldest !== undefined && oldest > newestBefore;

  const ids = [...previous.recentIds, ...newIds].sort((a, b) => a - b);
  const dropped = ids.length > RECENT_IDS_KEPT ? ids.splice(0, ids.length - RECENT_IDS_KEPT) : [];
  let floor = Math.max(previous.floor, dropped.at(-1) ?? -Infinity);
  // After the first poll, ids older than its page are history: never counted.
  if (firstPoll && oldest !== undefined) floor = Math.max(floor, oldest - 1);

  const counted = firstPoll ? 0 : newIds.length;
  const state: AlertsState = {
    started: true,
    floor,
    recentIds: ids,
    events: events.finish(),
    lastEventMs,
    gaps: previous.gaps + (gap ? 1 : 0),
    limit: nextLimit(opts.requestedLimit, gap, counted),
  };
  return { state, families: alertFamilies(state, opts.account), counted, gap };
}

/**
 * Twice the last limit after a gap (up to 500); back to the default once a poll's new
 * events would fit in half of it.
 */
function nextLimit(requested: number, gap: boolean, counted: number): number {
  if (gap) return Math.min(MAX_ALERTS_LIMIT, Math.max(DEFAULT_ALERTS_LIMIT, requested * 2));
  if (counted * 2 <= DEFAULT_ALERTS_LIMIT) return DEFAULT_ALERTS_LIMIT;
  return Math.min(MAX_ALERTS_LIMIT, Math.max(DEFAULT_ALERTS_LIMIT, requested));
}

function alertFamilies(state: AlertsState, account: string): FamilySamples[] {
  const c = new FamilyCollector();
  for (const sample of counterSamples(state.events)) c.add(ALERT_FAMILIES.events, sample.labels, sample.value);
  for (const type of [...state.lastEventMs.keys()].sort()) {
    c.add(ALERT_FAMILIES.lastEvent, { account, event_type: type }, (state.lastEventMs.get(type) ?? 0) / 1000);
  }
  c.add(ALERT_FAMILIES.gaps, { account }, state.gaps);
  return c.toFamilies();
}
