import { fieldListDecoder, readFieldList, readFieldObject } from '../../upstream/fields/body.js';
import { declareFields, marked, type FieldRecord } from '../../upstream/fields/declare.js';
import { findersOf } from '../../upstream/fields/resolve.js';
import type { JsonDecoder } from '../../upstream/tolerant/body.js';

/**
 * A monitored host (`/hosts` items and `/hosts/{uuid}`). The document lists every field;
 * each is declared with the words that identify it and found wherever it sits (`agent.version`,
 * `status.online`, `host.name`), states as booleans or words (`status: "offline"`), tags as a
 * list, the agent's comma string or an object of key to value. Only `uuid` is required,
 * because without it nothing can be polled or labelled. The rest is optional: a list that
 * leaves fields out is completed from `/hosts/{uuid}` (see the host_details source), and a
 * field nobody sends gives no series.
 */

/** What `/hosts/{uuid}` can give beside the uuid, and a `/hosts` item may lack. */
const DETAILS = {
  hostname: { kind: 'string', about: 'the host name', words: [['hostname'], ['hosts', 'name'], ['name']], not: ['agent', 'tags', 'kinds', 'type', 'os'] },
  type: { kind: 'string', about: 'the host type', words: [['hosts', 'type'], ['type'], ['os']], not: ['agent', 'tags', 'kinds', 'version', 'name'] },
  agent_version: { kind: 'string', about: 'the version of the reporting agent', words: [['agent', 'version'], ['agent']], not: ['tags', 'name', 'type'] },
  last_seen: {
    kind: 'timestamp',
    about: "the time of the agent's last report",
    words: [['seen'], ['reported'], ['report'], ['heartbeat'], ['contact']],
    not: ['created', 'updated', 'tags'],
  },
  online: {
    kind: 'state',
    about: 'whether the agent reported within the last 3 minutes',
    words: [['online'], ['offline'], ['connected'], ['disconnected'], ['status'], ['state']],
    not: ['allowed', 'limit', 'agent', 'tags', 'at', 'since', 'code'],
    trueWords: ['online', 'up', 'connected', 'reporting', 'active', 'true', 'yes'],
    falseWords: ['offline', 'down', 'disconnected', 'stale', 'inactive', 'false', 'no'],
  },
  allowed: {
    kind: 'state',
    about: "whether the host is within the plan's host limit (false: no metrics are collected for it)",
    words: [['allowed'], ['disallowed'], ['limit']],
    not: ['online', 'offline', 'tags', 'at', 'count'],
    trueWords: ['allowed', 'within', 'true', 'yes'],
    falseWords: ['not', 'disallowed', 'not_allowed', 'over', 'beyond', 'exceeded', 'over_limit', 'blocked', 'false', 'no'],
  },
  server_kinds: { kind: 'strings', about: 'kinds of server software detected on the host', words: [['kinds'], ['software'], ['roles']], not: ['tags'] },
  tags: { kind: 'strings', about: 'the tags, each `<key>:<value>` or bare', words: [['tags'], ['labels']], pairs: true },
  created_at: { kind: 'timestamp', about: 'when the host was created', words: [['created'], ['registered'], ['added']], not: ['seen', 'tags'] },
} as const;

const UUID = {
  // A uuid is text (32 hex characters in the document): a number there is no uuid.
  uuid: { kind: 'id', about: 'the host identifier, the path of every per-host endpoint', words: [['uuid'], ['id']], not: ['agent', 'account', 'tags', 'rule'], essential: true, textOnly: true },
} as const;

/** The fields of a `/hosts` item. */
export const HOST_FIELDS = declareFields({ ...UUID, ...DETAILS });

/** The fields of a `/hosts/{uuid}` answer, polled for its details: one that carries none of them is polled for nothing. */
export const HOST_DETAIL_DECLS = declareFields({ ...UUID, ...marked(DETAILS, { useful: true }) });

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
export const HOST_DETAIL_FIELDS = Object.keys(DETAILS) as (keyof typeof DETAILS)[];
export type HostDetailField = keyof typeof DETAILS;

export interface HostList {
  readonly hosts: readonly Host[];
  readonly total: number | undefined;
}

/** The host's fields that have a value, so a field the answer lacks is absent, not undefined. */
function hostOf(record: FieldRecord<typeof HOST_FIELDS>): Host {
  const host: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) if (value !== undefined) host[key] = value;
  // uuid is essential: the finder kept only the hosts that have one.
  return host as unknown as Host;
}

const wholeNumber = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isSafeInteger(value) ? value : typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : undefined;

const hostFinder = findersOf(HOST_FIELDS);
const detailFinder = findersOf(HOST_DETAIL_DECLS);

const HOST_LIST_KEYS = ['hosts', 'servers', 'machines', 'nodes'];

export const decodeHosts: JsonDecoder<HostList> = fieldListDecoder({ keys: HOST_LIST_KEYS, finders: hostFinder }, (raw, context, options) => {
  const body = readFieldList(raw, context, { what: 'host list', keys: HOST_LIST_KEYS, finder: hostFinder(options?.fieldPaths) });
  const meta = body.envelope.meta;
  const total = wholeNumber(body.envelope.total) ?? wholeNumber(body.envelope.count) ?? (typeof meta === 'object' && meta !== null ? wholeNumber((meta as Record<string, unknown>).total) : undefined);
  return { value: { hosts: body.records.map(hostOf), total }, dropped: body.dropped, notes: body.notes, fields: body.report };
});

export const decodeHost: JsonDecoder<Host> = (raw, context, options) => {
  const { record, report, notes } = readFieldObject(raw, context, { what: 'host', keys: ['host', 'server'], finder: detailFinder(options?.fieldPaths) });
  return { value: hostOf(record), dropped: [], notes, fields: report };
};
