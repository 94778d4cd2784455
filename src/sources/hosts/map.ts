import type { FamilySamples } from '../../exposition/model.js';
import { HOST_DETAIL_FIELDS, type Host, type HostDetailField } from './decode.js';
import type { InventoryHost } from './topics.js';
import { createNameFilter } from '../../config/patterns.js';
import { FamilyCollector, gaugeSpec, infoSpec } from '../shared/families.js';
import { globMatcher } from '../../lib/glob.js';
import { prefixedLabelName } from '../shared/names.js';
import { boolToNumber, timestampSeconds } from '../shared/units.js';

/**
 * Maps `/hosts` (completed from `/hosts/{uuid}` where the list lacks fields) to host
 * metrics. Pure: no I/O, no clock. A field upstream does not send gives no series (an
 * info label it would fill is empty).
 */

const FROM = 'from /hosts, polled in the background';

export const HOST_FAMILIES = {
  info: infoSpec('monapi_host_info', `Host facts (value 1): hostname, host type and agent version, ${FROM}.`),
  online: gaugeSpec(
    'monapi_host_online',
    `1 when the host's agent reported within the last 3 minutes (upstream "online"), else 0, ${FROM}.`,
  ),
  allowed: gaugeSpec(
    'monapi_host_allowed',
    `1 when the host is within the plan's host limit, 0 when upstream collects no metrics for it (upstream "allowed"), ${FROM}.`,
  ),
  lastSeen: gaugeSpec(
    'monapi_host_last_seen_timestamp_seconds',
    `Unix time of the agent's last report (upstream "last_seen"), ${FROM}.`,
    'seconds',
  ),
  created: gaugeSpec(
    'monapi_host_created_timestamp_seconds',
    `Unix time the host was created upstream (upstream "created_at"), ${FROM}.`,
    'seconds',
  ),
  tags: infoSpec(
    'monapi_host_tags_info',
    `Host tags whose key is in the configured allowlist, one tag_<key> label each (value 1), ${FROM}.`,
  ),
  serverKind: infoSpec(
    'monapi_host_server_kind_info',
    `One series per kind of server software detected on the host (value 1), ${FROM}.`,
  ),
  count: gaugeSpec(
    'monapi_hosts',
    `Number of hosts by state: online, offline (allowed but not reporting), not_allowed (beyond the plan's host limit), or unknown (upstream sends neither online nor last_seen); every state always has a series, ${FROM}.`,
  ),
} as const;

export interface HostMapOptions {
  /** The configured account name, put on every series. */
  readonly account: string;
  /**
   * Tag keys to turn into `tag_<key>` labels on monapi_host_tags_info; globs (`*` allows
   * every key). Empty: the family is not emitted.
   */
  readonly tagLabels: readonly string[];
}

/**
 * A tag as the agent writes it: `key:value` splits at the first colon; a bare tag
 * (`canary`, from the agent's comma list) is a flag and reads as key `canary`, value
 * `true`. A tag with an empty key (`:x`, ``) is ignored.
 */
export function parseTag(tag: string): { key: string; value: string } | undefined {
  const colon = tag.indexOf(':');
  const key = colon === -1 ? tag : tag.slice(0, colon);
  if (key.trim() === '') return undefined;
  return { key, value: colon === -1 ? 'true' : tag.slice(colon + 1) };
}

/**
 * Labels for the allowlisted tags of one host. Several tags with the same label name
 * (the same key twice, or keys that sanitise alike such as `team-a` and `team_a`) give one
 * label whose value is their distinct values sorted and joined with `,`.
 */
export function tagLabels(tags: readonly string[], allowed: (key: string) => boolean): Record<string, string> {
  const values = new Map<string, Set<string>>();
  for (const tag of tags) {
    const parsed = parseTag(tag);
    if (!parsed || !allowed(parsed.key)) continue;
    const label = prefixedLabelName('tag_', parsed.key);
    let set = values.get(label);
    if (!set) values.set(label, (set = new Set()));
    set.add(parsed.value);
  }
  const labels: Record<string, string> = {};
  for (const label of [...values.keys()].sort()) labels[label] = [...(values.get(label) ?? [])].sort().join(',');
  return labels;
}

export function mapHosts(list: readonly Host[], opts: HostMapOptions): FamilySamples[] {
  const { account } = opts;
  const c = new FamilyCollector();
  const tagAllowed = globMatcher(opts.tagLabels);
  const states = { online: 0, offline: 0, not_allowed: 0, unknown: 0 };

  const seen = new Set<string>();
  for (const host of list) {
    // A uuid listed twice (paging overlap) is one host: the first entry wins.
    if (seen.has(host.uuid)) continue;
    seen.add(host.uuid);
    const id = { account, host_uuid: host.uuid };
    c.add(
      HOST_FAMILIES.info,
      { ...id, hostname: host.hostname ?? '', host_type: host.type ?? '', agent_version: host.agent_version ?? '' },
      1,
    );
    if (host.online !== undefined) c.add(HOST_FAMILIES.online, id, boolToNumber(host.online));
    if (host.allowed !== undefined) c.add(HOST_FAMILIES.allowed, id, boolToNumber(host.allowed));
    if (host.last_seen !== undefined) c.add(HOST_FAMILIES.lastSeen, id, timestampSeconds(host.last_seen, `host ${host.uuid} last_seen`));
    if (host.created_at !== undefined) c.add(HOST_FAMILIES.created, id, timestampSeconds(host.created_at, `host ${host.uuid} created_at`));
    if (opts.tagLabels.length > 0) c.add(HOST_FAMILIES.tags, { ...tagLabels(host.tags ?? [], tagAllowed), ...id }, 1);
    for (const kind of host.server_kinds ?? []) c.add(HOST_FAMILIES.serverKind, { ...id, server_kind: kind }, 1);

    if (host.allowed === false) states.not_allowed += 1;
    else if (host.online === true) states.online += 1;
    else if (host.online === false) states.offline += 1;
    else states.unknown += 1;
  }

  // Every state, 0 or not: a host changing state changes values, never the set of series.
  for (const [state, n] of Object.entries(states)) c.add(HOST_FAMILIES.count, { account, state }, n);
  return c.toFamilies();
}

/** The document's definition of online: the agent reported within the last 3 minutes. */
export const ONLINE_WITHIN_MS = 3 * 60_000;

/**
 * A host's list item completed by its `/hosts/{uuid}` answer: the list's fields win (it is
 * polled more often); the details fill what the list lacks; `online`, when neither sends
 * it, follows the document's definition from `last_seen` and `nowMs`.
 */
export function completeHost(listed: Host, details: Host | undefined, nowMs: number): Host {
  const merged: { -readonly [K in keyof Host]: Host[K] } = { ...details, ...definedFields(listed), uuid: listed.uuid };
  if (merged.online === undefined && merged.last_seen !== undefined) merged.online = nowMs - Date.parse(merged.last_seen) <= ONLINE_WITHIN_MS;
  return merged;
}

/** What the per-host sources need, with unknowns resolved: no name is '', unknown online-ness polls as online. */
export function inventoryHost(host: Host): InventoryHost {
  return { ...host, hostname: host.hostname ?? '', online: host.online ?? true, tags: host.tags ?? [] };
}

/** The fields a `/hosts` item lacks that `/hosts/{uuid}` could supply. */
export function missingHostFields(listed: Host): HostDetailField[] {
  return HOST_DETAIL_FIELDS.filter((field) => listed[field] === undefined);
}

function definedFields(host: Host): Partial<Host> {
  return Object.fromEntries(Object.entries(host).filter(([, value]) => value !== undefined));
}

export interface HostFilters {
  /** Globs over whole tags as written (`env:prod`, `env:*`, `canary`); empty: every host. */
  readonly includeTags: readonly string[];
  readonly excludeTags: readonly string[];
  /** Globs over hostnames (`web-*`); empty: every host. */
  readonly includeNames: readonly string[];
  readonly excludeNames: readonly string[];
}

/**
 * Which hosts per-host data is fetched for: a host is kept when one of its tags matches an
 * include tag glob (or there are none) and its name matches an include glob (or there are
 * none), and neither its name nor any tag matches an exclude glob. Exclusion wins.
 * Host-level metrics (mapHosts) still cover every host.
 */
export function createHostFilter(filters: HostFilters): (host: { readonly hostname: string; readonly tags: readonly string[] }) => boolean {
  const includeTag = globMatcher(filters.includeTags);
  const excludeTag = globMatcher(filters.excludeTags);
  const name = createNameFilter({ include: filters.includeNames, exclude: filters.excludeNames });
  return (host) => (filters.includeTags.length === 0 || host.tags.some(includeTag)) && !host.tags.some(excludeTag) && name(host.hostname);
}
