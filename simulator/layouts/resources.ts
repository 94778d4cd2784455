import type {
  SimAccountBody,
  SimAlertRule,
  SimComponent,
  SimHost,
  SimWebsite,
  SimWebsiteCheck,
  SimWebsiteSummary,
} from '../monitoring/schemas.js';
import type { ComponentRecord } from '../monitoring/world/components.js';
import { altAccountObject, altAlertRuleItems, altComponent, altWebsite, altWebsiteSummaryObject } from '../shapes/monitoring-alt.js';
import {
  componentGroup,
  nestedAccount,
  nestedAlertRule,
  nestedComponent,
  nestedMetricGroup,
  nestedWebsite,
  nestedWebsiteSummary,
  percentToRatio,
} from '../shapes/monitoring-nested.js';
import type { ShapeSet } from '../shapes/shapes.js';
import { jsonApiResource, type JsonApiResource, type Resource, type ResourceKind } from './bodies.js';
import type { PagedList } from './layout.js';

/**
 * What each list and single resource of the Monitoring API is, for the layouts: every item
 * in the selected shape set's encoding, with its id, its path, its links and its relations
 * (an alert rule's hosts, a component's host, the account's plan), and the shape set's own
 * envelope around a page when no envelope layout is selected. Items are encoded from the
 * whole list before it is cut into pages, so an item reads the same on any page.
 */

export const KINDS = {
  hosts: { type: 'hosts', singular: 'host' },
  websites: { type: 'websites', singular: 'website' },
  'alert-rules': { type: 'alert_rules', singular: 'alert_rule' },
  components: { type: 'components', singular: 'component' },
  metrics: { type: 'metric_groups', singular: 'metric_group' },
  account: { type: 'accounts', singular: 'account' },
  plan: { type: 'plans', singular: 'plan' },
} as const satisfies Record<string, ResourceKind>;

/** The paging fields a plain (no envelope layout) page carries in its body. */
export interface PlainPaging {
  /** Whether the body announces the next page itself (`next_cursor` + `has_more`, or the alt `next` URL). */
  readonly inBody: boolean;
  readonly nextCursor: string | null;
  /** Absolute URLs, for the alt websites' own `next` and `previous`. */
  readonly nextUrl: string | null;
  readonly prevUrl: string | null;
}

export interface ListResources {
  readonly list: PagedList;
  readonly kind: ResourceKind;
  readonly resources: readonly Resource[];
  /** The shape set's own body for the items [from, to), with the paging fields it has room for. */
  plain(from: number, to: number, paging: PlainPaging): unknown;
  /** JSON:API resource objects of related resources, for `included`. */
  readonly related?: (type: string, id: string) => JsonApiResource | undefined;
}

const cursorFields = (paging: PlainPaging): Record<string, unknown> =>
  paging.inBody ? { next_cursor: paging.nextCursor, has_more: paging.nextCursor !== null } : {};

function hostResource(prefix: string, host: SimHost): Resource {
  const self = `${prefix}/hosts/${host.uuid}`;
  return { id: host.uuid, value: host, idField: 'uuid', self, links: { metrics: `${self}/metrics`, components: `${self}/components` } };
}

export function hostList(prefix: string, hosts: readonly SimHost[]): ListResources {
  return {
    list: 'hosts',
    kind: KINDS.hosts,
    resources: hosts.map((host) => hostResource(prefix, host)),
    plain: (from, to) => ({ hosts: hosts.slice(from, to), total: hosts.length }),
  };
}

export function websiteList(prefix: string, websites: readonly SimWebsite[], set: ShapeSet): ListResources {
  const values = websites.map((site) => (set === 'alt' ? altWebsite(site) : set === 'nested' ? nestedWebsite(site) : site));
  const resources = websites.map((site, k): Resource => {
    const self = `${prefix}/websites/${site.id}`;
    return { id: String(site.id), value: values[k]!, idField: 'id', self, links: { checks: `${self}/checks` } };
  });
  return {
    list: 'websites',
    kind: KINDS.websites,
    resources,
    plain: (from, to, paging) => {
      const slice = values.slice(from, to);
      // The alt set's list already has next/previous links of its own (paged-list style).
      if (set === 'alt') return { results: slice, count: websites.length, next: paging.nextUrl, previous: paging.prevUrl };
      if (set === 'nested') return { data: { websites: slice, ...cursorFields(paging) }, meta: { total: websites.length } };
      return { websites: slice, total: websites.length, ...cursorFields(paging) };
    },
  };
}

export function alertRuleList(prefix: string, rules: readonly SimAlertRule[], set: ShapeSet, hosts: readonly SimHost[]): ListResources {
  const values = set === 'alt' ? altAlertRuleItems(rules) : rules.map((rule) => (set === 'nested' ? nestedAlertRule(rule) : rule));
  const resources = rules.map((rule, k): Resource => {
    const bound = rule.host_uuids ?? (rule.host_uuid === null ? [] : [rule.host_uuid]);
    return {
      id: String(rule.id),
      value: values[k]!,
      idField: 'id',
      self: `${prefix}/alerts/${rule.id}`,
      relations: {
        hosts: {
          type: 'hosts',
          ids: bound,
          many: true,
          replaces: set === 'nested' ? ['scope'] : ['host_uuid', 'host_uuids'],
          halHrefs: bound.map((uuid) => `${prefix}/hosts/${uuid}`),
        },
      },
    };
  });
  const byUuid = new Map(hosts.map((host) => [host.uuid, host]));
  return {
    list: 'alert-rules',
    kind: KINDS['alert-rules'],
    resources,
    plain: (from, to, paging) => {
      const slice = values.slice(from, to);
      const more = cursorFields(paging);
      if (set === 'alt') return { alerts: slice, total: rules.length, ...more };
      if (set === 'nested') return { alert_rules: slice, ...more };
      return { rules: slice, ...more };
    },
    related: (type, id) => {
      const host = type === 'hosts' ? byUuid.get(id) : undefined;
      return host ? jsonApiResource(KINDS.hosts, hostResource(prefix, host)) : undefined;
    },
  };
}

export function componentList(prefix: string, uuid: string, components: readonly SimComponent[], records: readonly ComponentRecord[], set: ShapeSet): ListResources {
  const hostPath = `${prefix}/hosts/${uuid}`;
  // Out of its group, a nested item carries the group key itself.
  const values = components.map((c, k) =>
    set === 'alt' ? altComponent(records[k]!) : set === 'nested' ? { ...nestedComponent(c), software: componentGroup(c.software) } : c,
  );
  const resources = components.map(
    (c, k): Resource => ({
      id: c.id,
      value: values[k]!,
      idField: set === 'alt' ? 'local_id' : 'id',
      self: `${hostPath}/components/${c.id}`,
      relations: { host: { type: 'hosts', ids: [uuid], many: false, replaces: set === 'standard' ? ['host_uuid'] : [], halHrefs: [hostPath] } },
    }),
  );
  return {
    list: 'components',
    kind: KINDS.components,
    resources,
    plain: (from, to) => {
      const slice = values.slice(from, to);
      if (set === 'alt') return slice;
      if (set === 'nested') {
        const groups: Record<string, unknown[]> = {};
        for (const { software, ...item } of slice) (groups[String(software)] ??= []).push(item);
        return { host: { uuid }, components: groups };
      }
      return { host_uuid: uuid, components: slice };
    },
  };
}

/** The metric catalogue as a list of component groups: a page holds whole groups. */
export function metricGroupList(prefix: string, uuid: string, catalogue: Readonly<Record<string, readonly string[]>>, set: ShapeSet): ListResources {
  const hostPath = `${prefix}/hosts/${uuid}`;
  const groups = Object.entries(catalogue);
  const resources = groups.map(
    ([component, names]): Resource => ({
      id: component,
      value: set === 'nested' ? { component, ...nestedMetricGroup(names) } : { component, metrics: [...names] },
      idField: 'component',
      self: `${hostPath}/metrics/${component}`,
      relations: { host: { type: 'hosts', ids: [uuid], many: false, replaces: [], halHrefs: [hostPath] } },
    }),
  );
  return {
    list: 'metrics',
    kind: KINDS.metrics,
    resources,
    plain: (from, to) => {
      const slice = groups.slice(from, to);
      if (set === 'alt') return { items: slice.map(([component, names]) => ({ component, metrics: [...names] })) };
      if (set === 'nested') return { host: { uuid }, metrics: Object.fromEntries(slice.map(([component, names]) => [component, nestedMetricGroup(names)])) };
      return { host_uuid: uuid, metrics: Object.fromEntries(slice.map(([component, names]) => [component, [...names]])) };
    },
  };
}

// ---- single resources ----------------------------------------------------------------

export interface SingleResource {
  readonly kind: ResourceKind;
  readonly resource: Resource;
  /** The body's `result` in the envelope layout. */
  readonly envelopeValue: unknown;
  readonly related?: (type: string, id: string) => JsonApiResource | undefined;
}

/** `{key, value}` pairs, as several vendors list limits and quotas. */
const pairs = (object: Readonly<Record<string, unknown>>): { key: string; value: unknown }[] => Object.entries(object).map(([key, value]) => ({ key, value }));

function envelopeAccount(value: Readonly<Record<string, unknown>>, set: ShapeSet): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    const object = inner !== null && typeof inner === 'object' && !Array.isArray(inner) ? (inner as Record<string, unknown>) : undefined;
    if (object && set === 'nested' && key === 'quotas') {
      out[key] = Object.entries(object).map(([name, quota]) => ({ key: name, ...(quota as Record<string, unknown>) }));
    } else if (object && set !== 'nested' && (key === 'limits' || key === 'usage')) {
      out[key] = pairs(object);
    } else {
      out[key] = inner;
    }
  }
  return out;
}

/** ISO 8601 durations of the summary's windows. */
const WINDOWS = [
  ['uptime_pct_24h', '24h', 'P1D'],
  ['uptime_pct_7d', '7d', 'P7D'],
  ['uptime_pct_30d', '30d', 'P30D'],
] as const;

/** The uptimes as a list of windows: `uptime: [{window: "P1D", ratio}, ...]`; nested: `windows: [{window: "P1D", uptime_ratio, ...}]`. */
function envelopeWebsite(value: Readonly<Record<string, unknown>>, set: ShapeSet): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (set === 'nested' && key === 'windows' && inner !== null && typeof inner === 'object') {
      const windows = inner as Record<string, Record<string, unknown>>;
      out.windows = WINDOWS.filter(([, period]) => windows[period] !== undefined).map(([, period, window]) => ({ window, ...windows[period] }));
    } else if (set !== 'nested' && WINDOWS.some(([field]) => field === key)) {
      out.uptime ??= WINDOWS.filter(([field]) => field in value).map(([field, , window]) => ({ window, ratio: percentToRatio(value[field] as number | null) }));
    } else {
      out[key] = inner;
    }
  }
  return out;
}

export function accountResource(prefix: string, body: SimAccountBody, set: ShapeSet): SingleResource {
  const value = set === 'alt' ? altAccountObject(body) : set === 'nested' ? nestedAccount(body) : body;
  return {
    kind: KINDS.account,
    resource: {
      id: body.id,
      value,
      ...(set === 'nested' ? {} : { idField: 'id' }),
      self: `${prefix}/account`,
      relations: { plan: { type: KINDS.plan.type, ids: [body.plan], many: false, replaces: set === 'nested' ? [] : ['plan'] } },
    },
    envelopeValue: envelopeAccount(value, set),
    related: (type, id) => (type === KINDS.plan.type ? { id, type, attributes: { name: id } } : undefined),
  };
}

export function websiteResource(
  prefix: string,
  summary: SimWebsiteSummary,
  set: ShapeSet,
  checksSet: ShapeSet,
  check: (c: SimWebsiteCheck) => unknown,
): SingleResource {
  const value =
    set === 'alt' ? altWebsiteSummaryObject(summary, check)
    : set === 'nested' ? nestedWebsiteSummary(summary, check)
    : checksSet !== 'standard' && summary.recent_checks ? { ...summary, recent_checks: summary.recent_checks.map(check) }
    : summary;
  const self = `${prefix}/websites/${summary.id}`;
  return {
    kind: KINDS.websites,
    resource: { id: String(summary.id), value, ...(set === 'nested' ? {} : { idField: 'id' }), self, links: { checks: `${self}/checks` } },
    envelopeValue: envelopeWebsite(value, set),
  };
}

export function hostSingle(prefix: string, host: SimHost): SingleResource {
  return { kind: KINDS.hosts, resource: hostResource(prefix, host), envelopeValue: host };
}
