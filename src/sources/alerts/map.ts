import type { FamilySamples } from '../../exposition/model.js';
import type { AlertEvent } from './decode.js';
import { counterSamples, CounterTableUpdate, EMPTY_COUNTER_TABLE, type CounterTable } from '../shared/counter-table.js';
import { counterSpec, FamilyCollector, gaugeSpec } from '../shared/families.js';
import { parseTimestampMs } from '../shared/units.js';

/**
 * Maps `/alerts/recent` (events, newest first) to event counters, counting each event once
 * across polls. Pure: no I/O, no clock.
 *
 * - Identity: an event is its type and id together. The two kinds may number their events
 *   independently, so a `website_down` 7 and a `host_alert` 7 are two events.
 * - Seen events, per type: ids grow with time, so the state keeps a floor (ids at or below
 *   it count as seen) and the newest RECENT_IDS_KEPT ids seen. An event that arrives late
 *   with an id below the newest seen is still counted once, as long as its id is above the
 *   floor. The set holds more ids than the largest page, so every event a page repeats is in it.
 * - First poll: the returned history is not counted (as with website checks: rate() would
 *   not see it, and after a restart it would count events twice); its sources appear at 0.
 *   When that page was full, an event of a type it did not hold that occurred before its
 *   oldest event is history too.
 * - Gap: a later poll whose page is full and holds nothing seen before may have missed
 *   events between the two; the next poll asks for twice as many (up to 500).
 * - Events without a host (account-wide, or a website's) are counted like the others.
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

/** The events of one type seen so far. */
export interface SeenIds {
  /** Events with an id at or below this count as seen. */
  readonly floor: number;
  /** The newest ids seen above the floor, ascending, at most RECENT_IDS_KEPT. */
  readonly recentIds: readonly number[];
}

export interface AlertsState {
  readonly started: boolean;
  /** By event type. */
  readonly seen: ReadonlyMap<string, SeenIds>;
  /** When the first page was full: the time of its oldest event (ms); earlier events of a type it lacked are history. */
  readonly historyBeforeMs: number;
  readonly events: CounterTable;
  /** Newest `occurred_at` (ms) per event type. */
  readonly lastEventMs: ReadonlyMap<string, number>;
  readonly gaps: number;
  /** The `limit` the next poll asks for. */
  readonly limit: number;
}

export const EMPTY_ALERTS_STATE: AlertsState = {
  started: false,
  seen: new Map(),
  historyBeforeMs: -Infinity,
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

const NO_IDS: SeenIds = { floor: -Infinity, recentIds: [] };

export function mapRecentAlerts(alerts: readonly AlertEvent[], previous: AlertsState, opts: AlertsMapOptions): AlertsMapResult {
  const firstPoll = !previous.started;
  const full = alerts.length >= opts.requestedLimit;
  const events = new CounterTableUpdate(previous.events, !firstPoll);
  const lastEventMs = new Map(previous.lastEventMs);
  const labelsOf = (e: AlertEvent) => ({
    account: opts.account,
    event_type: e.type,
    source_id: e.source_id ?? '',
    source_name: e.source_name ?? '',
  });

  // Per type, oldest first, so a repeated id within one page is counted once and in order.
  const byType = new Map<string, AlertEvent[]>();
  for (const event of alerts) {
    let list = byType.get(event.type);
    if (!list) byType.set(event.type, (list = []));
    list.push(event);
  }
  const occurredMs = (e: AlertEvent) => (e.occurred_at === undefined ? undefined : parseTimestampMs(e.occurred_at, `alert event ${e.type} ${e.id} occurred_at`));
  const historyBeforeMs = firstPoll && full ? Math.min(...alerts.map((e) => occurredMs(e) ?? Infinity)) : previous.historyBeforeMs;

  const seen = new Map(previous.seen);
  let counted = 0;
  let anySeenBefore = false;
  for (const type of [...byType.keys()].sort()) {
    const ordered = (byType.get(type) ?? []).sort((a, b) => a.id - b.id);
    const before = previous.seen.get(type);
    const known = before ?? NO_IDS;
    const ids = new Set(known.recentIds);
    const newIds: number[] = [];
    for (const event of ordered) {
      const at = occurredMs(event);
      if (at !== undefined && at > (lastEventMs.get(type) ?? -Infinity)) lastEventMs.set(type, at);
      if (event.id <= known.floor || ids.has(event.id)) {
        anySeenBefore = true;
        continue;
      }
      ids.add(event.id);
      newIds.push(event.id);
      const history = firstPoll || (before === undefined && at !== undefined && at < historyBeforeMs);
      events.add(labelsOf(event), history ? 0 : 1);
      if (!history) counted++;
    }
    const recent = [...known.recentIds, ...newIds].sort((a, b) => a - b);
    const forgotten = recent.length > RECENT_IDS_KEPT ? recent.splice(0, recent.length - RECENT_IDS_KEPT) : [];
    let floor = Math.max(known.floor, forgotten.at(-1) ?? -Infinity);
    // After the first poll, ids older than its page are history: never counted.
    const oldest = ordered[0]?.id;
    if (firstPoll && oldest !== undefined) floor = Math.max(floor, oldest - 1);
    seen.set(type, { floor, recentIds: recent });
  }

  const gap = !firstPoll && full && alerts.length > 0 && !anySeenBefore;
  const state: AlertsState = {
    started: true,
    seen,
    historyBeforeMs,
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
