import { readList, type JsonDecoder } from '../../upstream/tolerant/body.js';
import type { Fields } from '../../upstream/tolerant/fields.js';
import { integer, nonEmptyString, string, timestamp } from '../../upstream/tolerant/values.js';

/**
 * `/alerts/recent`: alert events (`{alerts: [...]}` in the document; other keys and a bare
 * list are accepted). An event is identified by its type and id together: the two kinds
 * may number their events independently. Both are required; everything else is optional,
 * and `host_uuid` is null for events that concern no host (a website, the account).
 */
export interface AlertEvent {
  /** `website_down` or `host_alert` in the document; another type is kept as sent. */
  readonly type: string;
  readonly id: number;
  /** The website or alert rule that fired, as text (ids may be numbers or strings). */
  readonly source_id?: string;
  readonly source_name?: string;
  readonly host_uuid?: string;
  readonly message?: string;
  /** ISO 8601. */
  readonly occurred_at?: string;
}

export function readAlertEvent(f: Fields): AlertEvent {
  const event: { -readonly [K in keyof AlertEvent]: AlertEvent[K] } = {
    type: f.required(['type', 'kind', 'event_type'], nonEmptyString),
    id: f.required(['id', 'event_id'], integer),
  };
  const put = <K extends keyof AlertEvent>(key: K, value: AlertEvent[K] | undefined) => {
    if (value !== undefined) event[key] = value;
  };
  put('source_id', f.optional(['source_id', 'rule_id', 'website_id', 'source.id'], string));
  put('source_name', f.optional(['source_name', 'rule_name', 'website_name', 'source.name', 'name'], string));
  put('host_uuid', f.optional(['host_uuid', 'host', 'host_id'], nonEmptyString));
  put('message', f.optional(['message', 'description', 'text'], string));
  put('occurred_at', f.optional(['occurred_at', 'created_at', 'timestamp', 'time', 'at'], timestamp));
  return event;
}

export const decodeRecentAlerts: JsonDecoder<readonly AlertEvent[]> = (raw, context) => {
  const body = readList(raw, context, { what: 'recent alerts', keys: ['alerts', 'events', 'recent'], read: readAlertEvent });
  return { value: body.items, dropped: body.dropped, notes: body.notes };
};
