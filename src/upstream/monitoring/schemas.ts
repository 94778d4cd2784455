import { z } from 'zod';

/**
 * The simulator's layouts of the Monitoring REST API (`/api/v2`): one legal choice for each
 * body the seed leaves "not shown". The client does not decode with these: it reads any
 * plausible layout (src/upstream/monitoring/resources/, docs/upstream-shapes.md). Kept here
 * only until the simulator owns its own copy.
 */

export const Rfc3339 = z.iso.datetime({ offset: true });

export const ErrorBody = z.object({
  error: z.string(),
  message: z.string(),
  upgrade_url: z.string().optional(),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

export const ErrorCode = z.enum(['bad_request', 'unauthorized', 'plan_required', 'not_found', 'rate_limited']);
export type ErrorCode = z.infer<typeof ErrorCode>;

export const Host = z.object({
  uuid: z.string().min(1),
  hostname: z.string(),
  type: z.string(),
  agent_version: z.string(),
  last_seen: Rfc3339,
  online: z.boolean(),
  allowed: z.boolean(),
  server_kinds: z.array(z.string()),
  tags: z.array(z.string()),
  created_at: Rfc3339,
});
export type Host = z.infer<typeof Host>;

export const HostList = z.object({
  hosts: z.array(Host),
  total: z.number().int().nonnegative(),
});
export type HostList = z.infer<typeof HostList>;

/** `/hosts/{uuid}/metrics`: metric names grouped by component (`system`, `nginx`, ...). */
export const MetricCatalogue = z.object({
  host_uuid: z.string(),
  metrics: z.record(z.string(), z.array(z.string())),
});
export type MetricCatalogue = z.infer<typeof MetricCatalogue>;

export const SeriesPoint = z.object({
  timestamp: Rfc3339,
  value: z.number().nullable(),
});
export type SeriesPoint = z.infer<typeof SeriesPoint>;

export const SeriesResponse = z.object({
  host_uuid: z.string(),
  since: Rfc3339,
  interval: z.number().int().positive(),
  series: z.record(z.string(), z.array(SeriesPoint)),
});
export type SeriesResponse = z.infer<typeof SeriesResponse>;

/** `/hosts/{uuid}/metrics/{name}/latest` */
export const LatestValue = z.object({
  host_uuid: z.string(),
  name: z.string(),
  timestamp: Rfc3339.nullable(),
  value: z.number().nullable(),
});
export type LatestValue = z.infer<typeof LatestValue>;

export const ComponentKind = z.enum(['web-server', 'application-server', 'database', 'cache']);

export const Component = z.object({
  id: z.string(),
  kind: z.string(),
  software: z.string(),
  name: z.string(),
  version: z.string().optional(),
  pid: z.number().int().optional(),
  host_uuid: z.string().optional(),
});
export type Component = z.infer<typeof Component>;

export const ComponentList = z.object({
  host_uuid: z.string(),
  components: z.array(Component),
});
export type ComponentList = z.infer<typeof ComponentList>;

export const AlertRule = z.object({
  id: z.number().int(),
  name: z.string(),
  metric: z.string(),
  operator: z.string(),
  threshold: z.number(),
  duration_seconds: z.number().int().nonnegative().optional(),
  enabled: z.boolean(),
  host_uuid: z.string().nullable().optional(),
  created_at: Rfc3339.optional(),
});
export type AlertRule = z.infer<typeof AlertRule>;

export const AlertRuleList = z.object({
  rules: z.array(AlertRule),
});
export type AlertRuleList = z.infer<typeof AlertRuleList>;

export const AlertEventType = z.enum(['website_down', 'host_alert']);

export const AlertEvent = z.object({
  type: AlertEventType,
  id: z.number().int(),
  source_id: z.number().int(),
  source_name: z.string(),
  host_uuid: z.string().optional(),
  message: z.string(),
  occurred_at: Rfc3339,
});
export type AlertEvent = z.infer<typeof AlertEvent>;

export const RecentAlerts = z.object({
  alerts: z.array(AlertEvent),
});
export type RecentAlerts = z.infer<typeof RecentAlerts>;

export const WebsiteCheck = z.object({
  id: z.number().int(),
  success: z.boolean(),
  status_code: z.number().int(),
  ttfb_ms: z.number().int(),
  http_version: z.string(),
  tls_version: z.string(),
  cert_days_remaining: z.number().int(),
  checked_at: Rfc3339,
  dns_lookup: z.number().int(),
  tls_handshake: z.number().int(),
  security_score: z.number().int(),
  has_hsts: z.boolean(),
  has_x_frame_options: z.boolean(),
  has_x_content_type_options: z.boolean(),
  has_csp: z.boolean(),
  has_referrer_policy: z.boolean(),
  has_permissions_policy: z.boolean(),
  /**
   * The seed calls these the `cdn_` fields and says their literal names carry an
   * abbreviation of the CDN provider's name; `cf_` (Cloudflare) is our reading of that.
   * Optional because a site behind no CDN has nothing to report.
   */
  cf_cache_status: z.string().nullable().optional(),
  cf_datacenter: z.string().nullable().optional(),
});
export type WebsiteCheck = z.infer<typeof WebsiteCheck>;

export const WebsiteCheckList = z.object({
  website_id: z.number().int(),
  total: z.number().int().nonnegative(),
  checks: z.array(WebsiteCheck),
});
export type WebsiteCheckList = z.infer<typeof WebsiteCheckList>;

/** A monitored website with its 24-hour aggregates (`/websites`). */
export const Website = z.object({
  id: z.number().int(),
  name: z.string(),
  url: z.string(),
  enabled: z.boolean().optional(),
  check_interval_seconds: z.number().int().positive().optional(),
  up: z.boolean().optional(),
  last_checked_at: Rfc3339.nullable().optional(),
  last_status_code: z.number().int().nullable().optional(),
  checks_24h: z.number().int().nonnegative().optional(),
  failures_24h: z.number().int().nonnegative().optional(),
  uptime_pct_24h: z.number().nullable().optional(),
  avg_ttfb_ms_24h: z.number().nullable().optional(),
  p95_ttfb_ms_24h: z.number().nullable().optional(),
});
export type Website = z.infer<typeof Website>;

export const WebsiteList = z.object({
  websites: z.array(Website),
  total: z.number().int().nonnegative(),
});
export type WebsiteList = z.infer<typeof WebsiteList>;

/** `/websites/{id}`: uptime, time to first byte, TLS and recent checks of one website. */
export const WebsiteSummary = z.object({
  id: z.number().int(),
  name: z.string(),
  url: z.string(),
  uptime_pct_24h: z.number().nullable().optional(),
  uptime_pct_7d: z.number().nullable().optional(),
  uptime_pct_30d: z.number().nullable().optional(),
  avg_ttfb_ms_24h: z.number().nullable().optional(),
  tls: z
    .object({
      version: z.string().nullable().optional(),
      cert_days_remaining: z.number().int().nullable().optional(),
      cert_expires_at: Rfc3339.nullable().optional(),
      issuer: z.string().nullable().optional(),
    })
    .optional(),
  recent_checks: z.array(WebsiteCheck).optional(),
});
export type WebsiteSummary = z.infer<typeof WebsiteSummary>;

export const PlanTier = z.string();

/** `/account`: plan, limits, usage and rate limit. */
export const Account = z.object({
  id: z.string().optional(),
  name: z.string().optional(),
  plan: PlanTier,
  limits: z
    .object({
      hosts: z.number().int().nonnegative().optional(),
      websites: z.number().int().nonnegative().optional(),
      retention_days: z.number().int().positive().optional(),
    })
    .optional(),
  usage: z
    .object({
      hosts: z.number().int().nonnegative().optional(),
      websites: z.number().int().nonnegative().optional(),
      api_requests_today: z.number().int().nonnegative().optional(),
    })
    .optional(),
  rate_limit: z
    .object({
      requests_per_minute: z.number().int().positive().optional(),
      burst: z.number().int().positive().optional(),
      remaining: z.number().nonnegative().optional(),
    })
    .optional(),
});
export type Account = z.infer<typeof Account>;
