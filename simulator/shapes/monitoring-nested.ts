import type {
  SimAccountBody,
  SimAlertRule,
  SimComponent,
  SimLatestValue,
  SimWebsite,
  SimWebsiteCheck,
  SimWebsiteSummary,
} from '../monitoring/schemas.js';

/**
 * The nested shape set of the Monitoring API: the same data as the standard bodies, one or
 * two levels deeper. Values sit under period or category keys (`stats.last_24h.uptime`,
 * `windows.7d.uptime_ratio`, `quotas.hosts.max`), lists are grouped in an object keyed by
 * kind, states are words (`status: "paused"`), the rate limit is a count and a period, and
 * several numbers are numeric strings. Ratios carry `ratio` in their name; a percentage
 * whose name does not say so is always above 1 here (an uptime). Timestamps stay RFC 3339
 * UTC strings, as the seed says of every timestamp, written with or without fractional
 * seconds. docs/simulator.md has the table.
 */

/** A number as a JSON string (`"99.52"`, `"120"`); null stays null. */
const text = (value: number | null | undefined): string | null => (value === null || value === undefined ? null : String(value));

/** RFC 3339 with milliseconds (`2026-11-22T11:58:00.000Z`): the same instant. */
const withMillis = (timestamp: string): string => new Date(Date.parse(timestamp)).toISOString();
/** RFC 3339 without fractional seconds when they are zero (`2025-03-04T00:00:00Z`). */
const wholeSeconds = (timestamp: string): string => withMillis(timestamp).replace(/\.000Z$/, 'Z');

/** A percentage (0-100, three decimals) as a ratio, without a float tail (99.523 → 0.99523). */
export function percentToRatio(pct: number | null | undefined): number | null {
  return pct === null || pct === undefined ? null : Math.round(pct * 1000) / 100_000;
}

/**
 * The rate limit as a count per period: per second when the minute's figure divides into
 * seconds (120 a minute: `{requests: 2, per: "second"}`), otherwise per minute
 * (`{requests: 90, period: "1m"}`); the burst and what is left beside it.
 */
function nestedRateLimit(limit: NonNullable<SimAccountBody['rate_limit']>): Record<string, unknown> {
  const remaining = limit.remaining === undefined ? {} : { remaining: text(limit.remaining) };
  if (limit.requests_per_minute % 60 === 0) return { requests: limit.requests_per_minute / 60, per: 'second', burst: limit.burst, ...remaining };
  return { requests: limit.requests_per_minute, period: '1m', burst: limit.burst, ...remaining };
}

/**
 * `{account: {id, name, plan: {name, retention: {days}}}, quotas: {hosts: {max, used},
 * websites: {max, used}}, rate_limit: {requests, per|period, burst, remaining}}`.
 */
export function nestedAccount(body: SimAccountBody): Record<string, unknown> {
  const { limits, usage, rate_limit: rateLimit } = body;
  return {
    account: {
      id: body.id,
      name: body.name,
      plan: { name: body.plan, ...(limits ? { retention: { days: text(limits.retention_days) } } : {}) },
    },
    ...(limits || usage
      ? {
          quotas: {
            hosts: { max: limits?.hosts ?? null, used: usage?.hosts ?? null },
            websites: { max: text(limits?.websites), used: usage?.websites ?? null },
          },
        }
      : {}),
    ...(rateLimit ? { rate_limit: nestedRateLimit(rateLimit) } : {}),
  };
}

/** `{host: {uuid}, metrics: {"<component>": {count, names}}}`, the count a numeric string. */
export function nestedMetricCatalogue(hostUuid: string, metrics: Readonly<Record<string, readonly string[]>>): unknown {
  return {
    host: { uuid: hostUuid },
    metrics: Object.fromEntries(Object.entries(metrics).map(([component, names]) => [component, nestedMetricGroup(names)])),
  };
}

/** One component's group of `nestedMetricCatalogue`: `{count, names}`. */
export function nestedMetricGroup(names: readonly string[]): { count: string | null; names: string[] } {
  return { count: text(names.length), names: [...names] };
}

/** `{host: {uuid}, metric: {name}, latest: {at, value}}`: the value a numeric string, the time with milliseconds. */
export function nestedLatest(body: SimLatestValue): unknown {
  return {
    host: { uuid: body.host_uuid },
    metric: { name: body.name },
    latest: { at: body.timestamp === null ? null : withMillis(body.timestamp), value: text(body.value) },
  };
}

/** The group key of a component: its software, snake_case (`php-fpm` → `php_fpm`). */
export const componentGroup = (software: string): string => software.replace(/-/g, '_');

/**
 * `{host: {uuid}, components: {"<software>": [{id, name, version, process: {pid}}]}}`: the
 * key is the software (`nginx`, `php_fpm`, `mysql`, `mariadb`, `varnish`), which also says
 * the kind of server, so the items have neither; the pid is a numeric string.
 */
export function nestedComponents(hostUuid: string, components: readonly SimComponent[]): unknown {
  const groups: Record<string, unknown[]> = {};
  for (const c of components) (groups[componentGroup(c.software)] ??= []).push(nestedComponent(c));
  return { host: { uuid: hostUuid }, components: groups };
}

/** One item of `nestedComponents`, without its group key. */
export function nestedComponent(c: SimComponent): Record<string, unknown> {
  return { id: c.id, name: c.name, version: c.version, ...(c.pid === undefined ? {} : { process: { pid: text(c.pid) } }) };
}

/** Comparison operators as words. */
export const OPERATOR_WORDS: Readonly<Record<SimAlertRule['operator'], string>> = { '>': 'gt', '>=': 'gte', '<': 'lt', '<=': 'lte' };

/**
 * `{alert_rules: [{id, name, state, condition: {metric, op, value, duration: {seconds}},
 * scope?: {hosts: [uuids]}, created: {at}}]}`: the id and threshold numeric strings, the
 * state `enabled`/`disabled`, and a rule with no `scope` covers every host.
 */
export function nestedAlertRules(rules: readonly SimAlertRule[]): unknown {
  return { alert_rules: rules.map(nestedAlertRule) };
}

/** One item of `nestedAlertRules`. */
export function nestedAlertRule(rule: SimAlertRule): Record<string, unknown> {
  const hosts = rule.host_uuids ?? (rule.host_uuid === null ? [] : [rule.host_uuid]);
  return {
    id: String(rule.id),
    name: rule.name,
    state: rule.enabled ? 'enabled' : 'disabled',
    condition: {
      metric: rule.metric,
      op: OPERATOR_WORDS[rule.operator],
      value: text(rule.threshold),
      ...(rule.duration_seconds === undefined ? {} : { duration: { seconds: rule.duration_seconds } }),
    },
    ...(hosts.length > 0 ? { scope: { hosts: [...hosts] } } : {}),
    created: { at: wholeSeconds(rule.created_at) },
  };
}

/** One item of `nestedWebsites`. */
export function nestedWebsite(site: SimWebsite): Record<string, unknown> {
  const lastCheck =
    site.last_checked_at === null || site.last_checked_at === undefined
      ? null
      : { at: site.last_checked_at, status_code: text(site.last_status_code), state: site.up === false ? 'down' : 'up' };
  return {
    id: site.id,
    name: site.name,
    url: site.url,
    status: site.enabled ? 'active' : 'paused',
    ...(site.check_interval_seconds === undefined ? {} : { schedule: { interval_seconds: text(site.check_interval_seconds) } }),
    last_check: lastCheck,
    stats: {
      last_24h: {
        checks: site.checks_24h ?? null,
        failures: text(site.failures_24h),
        // A percentage, 0-100, under a name that does not say so.
        uptime: site.uptime_pct_24h ?? null,
        ttfb: { avg_ms: site.avg_ttfb_ms_24h ?? null, p95_ms: text(site.p95_ttfb_ms_24h) },
      },
    },
  };
}

/**
 * `{data: {websites: [...]}, meta: {total}}`; each website `{id, name, url, status:
 * "active"|"paused", schedule: {interval_seconds}, last_check: {at, status_code, state:
 * "up"|"down"}, stats: {last_24h: {checks, failures, uptime, ttfb: {avg_ms, p95_ms}}}}`.
 */
export function nestedWebsites(websites: readonly SimWebsite[]): unknown {
  return { data: { websites: websites.map(nestedWebsite) }, meta: { total: websites.length } };
}

/**
 * A check with the seed's field names, its TLS details under `tls` (`tls.version`,
 * `tls.handshake`, `tls.cert_days_remaining`) and its CDN fields under the provider's
 * abbreviation (`cf: {cache_status, datacenter}`, null for a site behind no CDN).
 */
export function nestedCheck(check: SimWebsiteCheck): Record<string, unknown> {
  const { tls_version: version, tls_handshake: handshake, cert_days_remaining: certDays, cf_cache_status: cacheStatus, cf_datacenter: datacenter, ...rest } = check;
  const cdn = (cacheStatus ?? null) === null && (datacenter ?? null) === null ? null : { cache_status: cacheStatus ?? null, datacenter: datacenter ?? null };
  return { ...rest, tls: { version, handshake, cert_days_remaining: certDays }, cf: cdn };
}

/**
 * `{website: {id, name, url}, windows: {"24h": {uptime_ratio, ttfb: {avg_ms}}, "7d":
 * {uptime_ratio}, "30d": {uptime_ratio}}, tls: {version, certificate: {issuer, expires_at,
 * days_remaining}}, checks: {recent: [...]}}`: uptimes as ratios 0-1, the recent checks in
 * the shape `checks` selects.
 */
export function nestedWebsiteSummary(summary: SimWebsiteSummary, check: (c: SimWebsiteCheck) => unknown): Record<string, unknown> {
  const { tls } = summary;
  return {
    website: { id: summary.id, name: summary.name, url: summary.url },
    windows: {
      '24h': { uptime_ratio: percentToRatio(summary.uptime_pct_24h), ttfb: { avg_ms: text(summary.avg_ttfb_ms_24h) } },
      '7d': { uptime_ratio: percentToRatio(summary.uptime_pct_7d) },
      '30d': { uptime_ratio: percentToRatio(summary.uptime_pct_30d) },
    },
    ...(tls
      ? {
          tls: {
            version: tls.version,
            certificate: {
              ...(tls.issuer === undefined ? {} : { issuer: tls.issuer }),
              ...(tls.cert_expires_at === undefined ? {} : { expires_at: tls.cert_expires_at }),
              days_remaining: text(tls.cert_days_remaining),
            },
          },
        }
      : {}),
    ...(summary.recent_checks ? { checks: { recent: summary.recent_checks.map(check) } } : {}),
  };
}
