import type {
  SimAccountBody,
  SimAlertRule,
  SimLatestValue,
  SimWebsite,
  SimWebsiteCheck,
  SimWebsiteSummary,
} from '../monitoring/schemas.js';
import type { ComponentRecord } from '../monitoring/world/components.js';

/**
 * The alternative shape set of the Monitoring API: the same data as the standard bodies,
 * in other envelopes and encodings a real service could send where the seed shows none.
 * Each function takes the standard body (or what it is built from) and returns the other
 * shape; docs/simulator.md has the table. Field names the seed lists (host, series, check,
 * alert event fields) are kept, except the CDN fields, whose prefix the seed leaves to the
 * provider.
 */

/** RFC 3339 with an explicit `+00:00` instead of `Z`: the same UTC instant, written otherwise. */
export function offsetTimestamp(timestamp: string): string {
  return timestamp.replace(/Z$/, '+00:00');
}

const offsetOrNull = (timestamp: string | null | undefined): string | null | undefined =>
  typeof timestamp === 'string' ? offsetTimestamp(timestamp) : timestamp;

/** `{data: {...}}`, with `rate_limit.per_minute` for `requests_per_minute` and a few fields the exporter does not know. */
export function altAccount(body: SimAccountBody): unknown {
  return { data: altAccountObject(body) };
}

/** The account object of `altAccount`, without its `data` wrapper (a layout supplies its own). */
export function altAccountObject(body: SimAccountBody): Record<string, unknown> {
  const { rate_limit: rateLimit, ...rest } = body;
  return {
    ...rest,
    ...(rateLimit
      ? { rate_limit: { per_minute: rateLimit.requests_per_minute, burst: rateLimit.burst, ...(rateLimit.remaining === undefined ? {} : { remaining: rateLimit.remaining }) } }
      : {}),
    billing: { currency: 'EUR', interval: 'month' },
    features: ['api', 'websites', 'alerts'],
  };
}

/** `{items: [{component, metrics: [names]}]}`: the groups as a list instead of a map. */
export function altMetricCatalogue(metrics: Readonly<Record<string, readonly string[]>>): unknown {
  return { items: Object.entries(metrics).map(([component, names]) => ({ component, metrics: [...names] })) };
}

/** `{data: {timestamp, value}}`: the host and the name are in the path. */
export function altLatest(body: SimLatestValue): unknown {
  return { data: { timestamp: offsetOrNull(body.timestamp), value: body.value, unit: null } };
}

/**
 * A bare list of the agent's own descriptions: `type`, `local_id`, `display_name`,
 * `version`, `pid` and the per-type details, with no host uuid (the path has it).
 */
export function altComponents(records: readonly ComponentRecord[]): unknown {
  return records.map(altComponent);
}

/** One item of `altComponents`. */
export function altComponent(c: ComponentRecord): Record<string, unknown> {
  const named = c.type === 'nginx' || c.type === 'phpfpm_pool' ? {} : { name: c.name };
  // A pool has no process of its own; its workers belong to the master.
  const pid = c.type === 'phpfpm_pool' ? {} : { pid: c.pid };
  return { type: c.type, local_id: c.localId, display_name: c.displayName, ...named, version: c.reportedVersion, ...pid, ...c.details };
}

/**
 * `{alerts: [...], total}`, ids alternately numbers and numeric strings; every other rule
 * states its condition as one expression (`system.cpu.user > 90`), the others keep
 * metric/operator/threshold with the threshold as a numeric string.
 */
export function altAlertRules(rules: readonly SimAlertRule[]): unknown {
  const alerts = altAlertRuleItems(rules);
  return { alerts, total: alerts.length };
}

/** The items of `altAlertRules`: which encoding a rule gets depends on its place in the whole list. */
export function altAlertRuleItems(rules: readonly SimAlertRule[]): Record<string, unknown>[] {
  return rules.map((rule, k) => {
    const { metric, operator, threshold, host_uuid: hostUuid, created_at: createdAt, id, ...rest } = rule;
    const condition = k % 2 === 0 ? { expression: `${metric} ${operator} ${threshold}` } : { metric, operator, threshold: String(threshold) };
    return {
      id: k % 2 === 0 ? String(id) : id,
      ...rest,
      ...condition,
      ...(hostUuid === null ? {} : { host_uuid: hostUuid }),
      created_at: offsetTimestamp(createdAt),
      notify: { channels: ['email'] },
    };
  });
}

/** One item of `altWebsites`. */
export function altWebsite(site: SimWebsite): Record<string, unknown> {
  return {
    ...site,
    id: String(site.id),
    last_checked_at: offsetOrNull(site.last_checked_at),
    // A check that got no answer has no status code to report.
    last_status_code: site.last_status_code === 0 ? null : site.last_status_code,
    monitor_type: 'http',
    regions: ['eu-central'],
  };
}

/** `{results, count, next, previous}` (paged-list style, no `total`), ids as numeric strings. */
export function altWebsites(websites: readonly SimWebsite[]): unknown {
  return { results: websites.map(altWebsite), count: websites.length, next: null, previous: null };
}

/** The CDN fields under Fastly's abbreviation instead of Cloudflare's. */
export const ALT_CDN_PREFIX = 'fsly_';

/**
 * A check as a service may send it that reports what it saw: a check that got no response
 * (a timeout, status 0 in the standard set) has no status, timings, TLS or headers to
 * report, so those are null; the CDN fields carry another provider's abbreviation.
 */
export function altCheck(check: SimWebsiteCheck): Record<string, unknown> {
  const { cf_cache_status: cacheStatus, cf_datacenter: datacenter, ...rest } = check;
  const cdn = { [`${ALT_CDN_PREFIX}cache_status`]: cacheStatus ?? null, [`${ALT_CDN_PREFIX}datacenter`]: datacenter ?? null };
  if (check.status_code !== 0) return { ...rest, ...cdn };
  return {
    ...rest,
    status_code: null,
    ttfb_ms: null,
    http_version: null,
    tls_version: null,
    cert_days_remaining: null,
    tls_handshake: null,
    security_score: null,
    has_hsts: null,
    has_x_frame_options: null,
    has_x_content_type_options: null,
    has_csp: null,
    has_referrer_policy: null,
    has_permissions_policy: null,
    ...cdn,
    error: 'timeout',
  };
}

/** `{data: {...}}`, id as a numeric string; recent checks in the shape `checks` selects. */
export function altWebsiteSummary(summary: SimWebsiteSummary, check: (c: SimWebsiteCheck) => unknown): unknown {
  return { data: altWebsiteSummaryObject(summary, check) };
}

/** The summary object of `altWebsiteSummary`, without its `data` wrapper. */
export function altWebsiteSummaryObject(summary: SimWebsiteSummary, check: (c: SimWebsiteCheck) => unknown): Record<string, unknown> {
  const { recent_checks: recent, tls, ...rest } = summary;
  return {
    ...rest,
    id: String(summary.id),
    ...(tls ? { tls: { ...tls, cert_expires_at: offsetOrNull(tls.cert_expires_at) } } : {}),
    ...(recent ? { recent_checks: recent.map(check) } : {}),
  };
}
