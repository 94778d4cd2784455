import { z } from 'zod';
import { HostUuid, MetricName, SimWebsite, SimWebsiteCheck, SimWebsiteSummary, UtcTimestamp } from '../monitoring/schemas.js';
import { NestedWebsiteCheck } from './nested-schemas.js';

/**
 * zod schemas of the alternative shape set of the Monitoring API (shapes/monitoring-alt.ts).
 * They type the OpenAPI document while the set is selected and let the tests check that
 * every alternative body is what it claims to be. Unknown fields are allowed, as a real
 * service adds them.
 */

/** An id as a JSON number or as a string of decimal digits. */
const FlexibleId = z.union([z.number().int(), z.string().regex(/^-?\d+$/)]);
/** A number or a string holding one (`"90"`, `"0.5"`). */
const FlexibleNumber = z.union([z.number(), z.string().regex(/^-?\d+(\.\d+)?$/)]);

export const AltAccountBody = z.object({
  data: z.looseObject({
    id: z.string(),
    name: z.string(),
    plan: z.string(),
    limits: z.looseObject({ hosts: z.number().int(), websites: z.number().int(), retention_days: z.number().int() }).optional(),
    usage: z.looseObject({ hosts: z.number().int(), websites: z.number().int() }).optional(),
    rate_limit: z
      .looseObject({ per_minute: z.number().int().positive(), burst: z.number().int().positive(), remaining: z.number().int().nonnegative().optional() })
      .optional(),
  }),
});

export const AltMetricCatalogue = z.object({
  items: z.array(z.looseObject({ component: z.string(), metrics: z.array(MetricName) })),
});

export const AltLatestValue = z.object({
  data: z.looseObject({ timestamp: UtcTimestamp.nullable(), value: z.number().nullable() }),
});

export const AltComponent = z.looseObject({
  type: z.enum(['nginx', 'phpfpm', 'phpfpm_pool', 'mysql', 'varnish']),
  local_id: z.string().regex(/^[0-9a-f]{64}$/),
  display_name: z.string().regex(/ @ /),
  name: z.string().optional(),
  version: z.string(),
  pid: z.number().int().positive().optional(),
});
export const AltComponentList = z.array(AltComponent);

const AltRuleCommon = {
  id: FlexibleId,
  name: z.string(),
  duration_seconds: z.number().int().nonnegative().optional(),
  enabled: z.boolean(),
  host_uuid: HostUuid.optional(),
  created_at: UtcTimestamp,
};
export const AltAlertRule = z.union([
  z.looseObject({ ...AltRuleCommon, expression: z.string().regex(/^\S+ (>|<|>=|<=) -?\d+(\.\d+)?$/) }),
  z.looseObject({ ...AltRuleCommon, metric: MetricName, operator: z.enum(['>', '<', '>=', '<=']), threshold: FlexibleNumber }),
]);
export const AltAlertRuleList = z.object({ alerts: z.array(AltAlertRule), total: z.number().int().nonnegative() });

export const AltWebsite = z.looseObject({ ...SimWebsite.shape, id: FlexibleId, last_checked_at: UtcTimestamp.nullable().optional() });
export const AltWebsiteList = z.object({
  results: z.array(AltWebsite),
  count: z.number().int().nonnegative(),
  next: z.string().nullable(),
  previous: z.string().nullable(),
});

/** A check whose fields are null when it got no response, with the CDN fields under `fsly_`. */
const nullable = <T extends z.ZodType>(schema: T) => schema.nullable();
const { cf_cache_status: _cacheStatus, cf_datacenter: _datacenter, ...checkFields } = SimWebsiteCheck.shape;
export const AltWebsiteCheck = z.looseObject({
  ...checkFields,
  status_code: nullable(checkFields.status_code),
  ttfb_ms: nullable(checkFields.ttfb_ms),
  http_version: nullable(checkFields.http_version),
  tls_version: nullable(checkFields.tls_version),
  cert_days_remaining: nullable(checkFields.cert_days_remaining),
  tls_handshake: nullable(checkFields.tls_handshake),
  security_score: nullable(checkFields.security_score),
  has_hsts: nullable(checkFields.has_hsts),
  has_x_frame_options: nullable(checkFields.has_x_frame_options),
  has_x_content_type_options: nullable(checkFields.has_x_content_type_options),
  has_csp: nullable(checkFields.has_csp),
  has_referrer_policy: nullable(checkFields.has_referrer_policy),
  has_permissions_policy: nullable(checkFields.has_permissions_policy),
  fsly_cache_status: z.string().nullable(),
  fsly_datacenter: z.string().nullable(),
});

export const AltWebsiteCheckList = z.object({ website_id: z.number().int(), total: z.number().int().nonnegative(), checks: z.array(AltWebsiteCheck) });

export const AltWebsiteSummary = z.object({
  data: z.looseObject({
    ...SimWebsiteSummary.shape,
    id: FlexibleId,
    recent_checks: z.array(z.union([SimWebsiteCheck, AltWebsiteCheck, NestedWebsiteCheck])).optional(),
  }),
});
