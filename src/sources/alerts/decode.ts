import { readFieldList } from '../../upstream/fields/body.js';
import { declareFields } from '../../upstream/fields/declare.js';
import { findersOf } from '../../upstream/fields/resolve.js';
import type { JsonDecoder } from '../../upstream/tolerant/body.js';

/**
 * `/alerts/recent`: alert events (`{alerts: [...]}` in the document; other keys, a bare list,
 * or lists grouped by type are accepted). An event is identified by its type and id together:
 * the two kinds may number their events independently. Both are required; the website or rule
 * that fired and the time are found wherever they sit (`source.id`, `rule: {id, name}`,
 * `triggered_at`). The host and the message are in the document too, but nothing reads them
 * (the counters are by website or rule), so they are not declared: a page of website events
 * has no host, and that is no missing field.
 */
export const ALERT_EVENT_FIELDS = declareFields({
  type: {
    kind: 'string',
    about: 'the kind of event (website_down, host_alert)',
    words: [['type'], ['kind'], ['event', 'type'], ['category'], ['group']],
    not: ['source', 'rule', 'websites', 'hosts', 'metric', 'checks', 'message'],
    essential: true,
  },
  id: { kind: 'integer', about: 'the event id', words: [['id']], not: ['source', 'rule', 'websites', 'hosts', 'checks', 'account', 'metric', 'monitor'], essential: true },
  source_id: {
    kind: 'id',
    about: 'the website or alert rule that fired',
    words: [['source', 'id'], ['rule', 'id'], ['websites', 'id'], ['monitor', 'id']],
    not: ['hosts', 'name', 'account'],
  },
  source_name: {
    kind: 'string',
    about: 'the name of the website or alert rule that fired',
    words: [['source', 'name'], ['rule', 'name'], ['websites', 'name'], ['monitor', 'name'], ['name']],
    not: ['hosts', 'metric', 'account', 'type'],
  },
  occurred_at: {
    kind: 'timestamp',
    about: 'when the event occurred',
    words: [['occurred'], ['triggered'], ['fired'], ['created'], ['timestamp'], ['time'], ['at'], ['date']],
    not: ['resolved', 'updated', 'acknowledged', 'cleared', 'seen', 'ended'],
  },
});

export interface AlertEvent {
  /** `website_down` or `host_alert` in the document; another type is kept as sent. */
  readonly type: string;
  readonly id: number;
  /** The website or alert rule that fired, as text (ids may be numbers or strings). */
  readonly source_id?: string;
  readonly source_name?: string;
  /** ISO 8601. */
  readonly occurred_at?: string;
}

const eventFinder = findersOf(ALERT_EVENT_FIELDS);

export const decodeRecentAlerts: JsonDecoder<readonly AlertEvent[]> = (raw, context, options) => {
  const body = readFieldList(raw, context, {
    what: 'recent alerts',
    keys: ['alerts', 'events', 'recent', 'alert_events'],
    finder: eventFinder(options?.fieldPaths),
    unusable: (r) => (r.type === undefined || r.type.trim() === '' ? { field: 'type', issue: 'is empty' } : undefined),
  });
  const events = body.records.map((r): AlertEvent => {
    const event: { -readonly [K in keyof AlertEvent]: AlertEvent[K] } = { type: r.type ?? '', id: r.id ?? 0 };
    if (r.source_id !== undefined) event.source_id = r.source_id;
    if (r.source_name !== undefined) event.source_name = r.source_name;
    if (r.occurred_at !== undefined) event.occurred_at = r.occurred_at;
    return event;
  });
  return { value: events, dropped: body.dropped, notes: body.notes, fields: body.report };
};
