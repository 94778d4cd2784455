import { readList, readObject, type JsonDecoder } from '../../upstream/tolerant/body.js';
import type { Fields } from '../../upstream/tolerant/fields.js';
import { boolean, integer, string, stringList, text, timestamp } from '../../upstream/tolerant/values.js';

/**
 * A monitored host (`/hosts` items and `/hosts/{uuid}`). The document lists every field;
 * only `uuid` is required here, because without it nothing can be polled or labelled.
 * The rest is optional: a list that leaves fields out is completed from `/hosts/{uuid}`
 * (see the host_details source), and a field nobody sends gives no series.
 */
export interface Host {
  readonly uuid: string;
  readonly hostname?: string;
  readonly type?: string;
  readonly agent_version?: string;
  /** ISO 8601. */
  readonly last_seen?: string;
  readonly online?: boolean;
  readonly allowed?: boolean;
  readonly server_kinds?: readonly string[];
  /** As written, `key:value` or bare. */
  readonly tags?: readonly string[];
  /** ISO 8601. */
  readonly created_at?: string;
}

/** The Host fields a list item may lack that `/hosts/{uuid}` can supply. */
export const HOST_DETAIL_FIELDS = ['hostname', 'type', 'agent_version', 'last_seen', 'online', 'allowed', 'server_kinds', 'tags', 'created_at'] as const;
export type HostDetailField = (typeof HOST_DETAIL_FIELDS)[number];

export interface HostList {
  readonly hosts: readonly Host[];
  readonly total: number | undefined;
}

export function readHost(f: Fields): Host {
  // A uuid is text (32 hex characters): a number there is not one.
  const host: { -readonly [K in keyof Host]: Host[K] } = { uuid: f.required(['uuid', 'host_uuid', 'id'], text) };
  const put = <K extends keyof Host>(key: K, value: Host[K] | undefined) => {
    if (value !== undefined) host[key] = value;
  };
  put('hostname', f.optional(['hostname', 'host_name', 'name', 'display_name'], string));
  put('type', f.optional(['type', 'host_type', 'os'], string));
  put('agent_version', f.optional(['agent_version', 'agent.version', 'agentVersion'], string));
  put('last_seen', f.optional(['last_seen', 'last_seen_at', 'last_report_at', 'last_reported_at'], timestamp));
  put('online', f.optional(['online', 'is_online'], boolean));
  put('allowed', f.optional(['allowed', 'is_allowed'], boolean));
  put('server_kinds', f.optional(['server_kinds', 'kinds'], stringList));
  put('tags', readTags(f));
  put('created_at', f.optional(['created_at', 'created'], timestamp));
  return host;
}

/** Tags as a list, a comma string, or an object of key to value (`{env: "prod"}` gives `env:prod`). */
function readTags(f: Fields): readonly string[] | undefined {
  const asObject = f.find('tags');
  if (asObject && typeof asObject.value === 'object' && !Array.isArray(asObject.value)) {
    const object = f.object('tags');
    if (!object) return undefined;
    return Object.entries(object.record)
      .filter(([, value]) => typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      .map(([key, value]) => `${key}:${String(value)}`);
  }
  return f.optional('tags', stringList);
}

export const decodeHosts: JsonDecoder<HostList> = (raw, context) => {
  const body = readList(raw, context, { what: 'host list', keys: ['hosts'], read: readHost });
  return {
    value: { hosts: body.items, total: body.envelope.optional(['total', 'count', 'meta.total'], integer) },
    dropped: body.dropped,
    notes: body.notes,
  };
};

export const decodeHost: JsonDecoder<Host> = (raw, context) => {
  const { value, notes } = readObject(raw, context, { what: 'host', keys: ['host'], signature: ['uuid', 'hostname'], read: readHost });
  return { value, dropped: [], notes };
};
