import { z } from 'zod';

/**
 * The bodies the simulated Monitoring API sends in its standard shape set, as zod schemas.
 * Written from the seed: where it lists a resource's fields (Host, metric series, alert
 * event, website check, the `/hosts`, `/alerts/recent` and checks envelopes, errors) those
 * fields are required with the seed's types. Where it says "not shown" (account, metric
 * catalogue, latest value, components, alert rules, websites, website summary) the schema
 * states what the simulator chose, with the less essential fields optional.
 *
 * The exporter decodes with schemas of its own. These are the simulator's: they type its
 * answers, feed its OpenAPI document and the drift fault, and let its tests check it.
 * The other legal shapes it can send are in `shapes/alt-schemas.ts`.
 */

/** RFC 3339 in UTC: `Z` or `+00:00`, optional fractional seconds. */
export const UtcTimestamp = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|\+00:00)$/);

/** Error codes of the seed's table (§7). */
export const SEED_ERROR_CODES = ['bad_request', 'unauthorized', 'plan_required', 'not_found', 'rate_limited'] as const;
export type SeedErrorCode = (typeof SEED_ERROR_CODES)[number];

export const SimErrorBody = z.object({
  error: z.string().min(1),
  message: z.string().min(1),
  /** Only with `plan_required`. */
  upgrade_url: z.url().optional(),
});
export type SimErrorBody = z.infer<typeof SimErrorBody>;

/** Host uuid: 32 hex characters without dashes (upstream facts). */
export const HostUuid = z.string().regex(/^[0-9a-f]{32}$/);

export const SimHost = z.object({
  uuid: HostUuid,
  hostname: z.string().min(1),
  type: z.string().min(1),
  agent_version: z.string().min(1),
  last_seen: UtcTimestamp,
  online: z.boolean(),
  allowed: z.boolean(),
  server_kinds: z.array(z.string()),
  tags: z.array(z.string()),
  created_at: UtcTimestamp,
});
export type SimHost = z.infer<typeof SimHost>;

export const SimHostList = z.object({ hosts: z.array(SimHost), total: z.number().int().nonnegative() });
export type SimHostList = z.infer<typeof SimHostList>;

/** Dotted lowercase `<component>.<path>`, optionally `|<device>` (a disk, interface or mount point). */
export const MetricName = z.string().regex(/^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+(\|[^|,\s]+)?$/);

export const SimSeriesPoint = z.object({ timestamp: UtcTimestamp, value: z.number().nullable() });
export type SimSeriesPoint = z.infer<typeof SimSeriesPoint>;

export const SimSeriesResponse = z.object({
  host_uuid: HostUuid,
  since: UtcTimestamp,
  interval: z.number().int().positive(),
  series: z.record(MetricName, z.array(SimSeriesPoint)),
});
export type SimSeriesResponse = z.infer<typeof SimSeriesResponse>;

const alertEventFields = {
  id: z.number().int(),
  source_id: z.number().int(),
  source_name: z.string(),
  message: z.string(),
  occurred_at: UtcTimestamp,
};

/** `host_uuid` is present only when the type is `host_alert` (§2). */
export const SimAlertEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('host_alert'), ...alertEventFields, host_uuid: HostUuid }),
  z.object({ type: z.literal('website_down'), ...alertEventFields }),
]);
export type SimAlertEvent = z.infer<typeof SimAlertEvent>;

export const SimRecentAlerts = z.object({ alerts: z.array(SimAlertEvent) });
export type SimRecentAlerts = z.infer<typeof SimRecentAlerts>;

/**
 * A website check with the seed's fields. The seed names the two CDN fields `cdn_...` and
 * says their literal names carry an abbreviation of the provider: `cf_` (Cloudflare) here.
 * A site behind no CDN sends them null.
 */
export const SimWebsiteCheck = z.object({
  id: z.number().int(),
  success: z.boolean(),
  status_code: z.number().int(),
  ttfb_ms: z.number().int(),
  http_version: z.string(),
  tls_version: z.string(),
  cert_days_remaining: z.number().int(),
  checked_at: UtcTimestamp,
  dns_lookup: z.number().int(),
  tls_handshake: z.number().int(),
  security_score: z.number().int(),
  has_hsts: z.boolean(),
  has_x_frame_options: z.boolean(),
  has_x_content_type_options: z.boolean(),
  has_csp: z.boolean(),
  has_referrer_policy: z.boolean(),
  has_permissions_policy: z.boolean(),
  cf_cache_status: z.string().nullable().optional(),
  cf_datacenter: z.string().nullable().optional(),
});
export type SimWebsiteCheck = z.infer<typeof SimWebsiteCheck>;

export const SimWebsiteCheckList = z.object({
  website_id: z.number().int(),
  total: z.number().int().nonnegative(),
  checks: z.array(SimWebsiteCheck),
});
export type SimWebsiteCheckList = z.infer<typeof SimWebsiteCheckList>;

// ---- bodies the seed does not show: the simulator's standard choices -------------------

export const SimAccountBody = z.object({
  id: z.string(),
  name: z.string(),
  plan: z.string(),
  limits: z
    .object({
      hosts: z.number().int().nonnegative(),
      websites: z.number().int().nonnegative(),
      retention_days: z.number().int().positive(),
    })
    .optional(),
  usage: z.object({ hosts: z.number().int().nonnegative(), websites: z.number().int().nonnegative() }).optional(),
  rate_limit: z
    .object({
      requests_per_minute: z.number().int().positive(),
      burst: z.number().int().positive(),
      remaining: z.number().int().nonnegative().optional(),
    })
    .optional(),
});
export type SimAccountBody = z.infer<typeof SimAccountBody>;

/** Metric names grouped by component (`system`, `nginx`, ...). */
export const SimMetricCatalogue = z.object({ host_uuid: HostUuid, metrics: z.record(z.string(), z.array(MetricName)) });
export type SimMetricCatalogue = z.infer<typeof SimMetricCatalogue>;

export const SimLatestValue = z.object({
  host_uuid: HostUuid,
  name: MetricName,
  timestamp: UtcTimestamp.nullable(),
  value: z.number().nullable(),
});
export type SimLatestValue = z.infer<typeof SimLatestValue>;

export const SimComponent = z.object({
  id: z.string().regex(/^[0-9a-f]{64}$/),
  kind: z.enum(['web-server', 'application-server', 'database', 'cache']),
  software: z.string(),
  name: z.string(),
  version: z.string(),
  pid: z.number().int().positive().optional(),
  host_uuid: HostUuid,
});
export type SimComponent = z.infer<typeof SimComponent>;

export const SimComponentList = z.object({ host_uuid: HostUuid, components: z.array(SimComponent) });
export type SimComponentList = z.infer<typeof SimComponentList>;

export const SimAlertRule = z.object({
  id: z.number().int(),
  name: z.string(),
  metric: MetricName,
  operator: z.enum(['>', '<', '>=', '<=']),
  threshold: z.number(),
  duration_seconds: z.number().int().nonnegative().optional(),
  enabled: z.boolean(),
  /** The one host the rule is bound to; null when it covers every host or several (then see `host_uuids`). */
  host_uuid: HostUuid.nullable(),
  /** Only on a rule bound to several hosts: those hosts. */
  host_uuids: z.array(HostUuid).min(2).optional(),
  created_at: UtcTimestamp,
});
export type SimAlertRule = z.infer<typeof SimAlertRule>;

export const SimAlertRuleList = z.object({ rules: z.array(SimAlertRule) });
export type SimAlertRuleList = z.infer<typeof SimAlertRuleList>;

/** A monitored website with its 24-hour aggregates; a paused one has `enabled: false`. */
export const SimWebsite = z.object({
  id: z.number().int(),
  name: z.string(),
  url: z.url(),
  enabled: z.boolean(),
  check_interval_seconds: z.number().int().positive().optional(),
  up: z.boolean().optional(),
  last_checked_at: UtcTimestamp.nullable().optional(),
  last_status_code: z.number().int().nullable().optional(),
  checks_24h: z.number().int().nonnegative().optional(),
  failures_24h: z.number().int().nonnegative().optional(),
  uptime_pct_24h: z.number().min(0).max(100).nullable().optional(),
  avg_ttfb_ms_24h: z.number().nullable().optional(),
  p95_ttfb_ms_24h: z.number().nullable().optional(),
});
export type SimWebsite = z.infer<typeof SimWebsite>;

export const SimWebsiteList = z.object({ websites: z.array(SimWebsite), total: z.number().int().nonnegative() });
export type SimWebsiteList = z.infer<typeof SimWebsiteList>;

export const SimWebsiteSummary = z.object({
  id: z.number().int(),
  name: z.string(),
  url: z.url(),
  uptime_pct_24h: z.number().nullable().optional(),
  uptime_pct_7d: z.number().nullable().optional(),
  uptime_pct_30d: z.number().nullable().optional(),
  avg_ttfb_ms_24h: z.number().nullable().optional(),
  tls: z
    .object({
      version: z.string(),
      cert_days_remaining: z.number().int(),
      cert_expires_at: UtcTimestamp.optional(),
      issuer: z.string().optional(),
    })
    .optional(),
  recent_checks: z.array(SimWebsiteCheck).optional(),
});
export type SimWebsiteSummary = z.infer<typeof SimWebsiteSummary>;
