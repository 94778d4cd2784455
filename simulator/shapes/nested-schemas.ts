import { z } from 'zod';
import { HostUuid, MetricName, SimWebsiteCheck, UtcTimestamp } from '../monitoring/schemas.js';

/**
 * zod schemas of the nested shape set of the Monitoring API (shapes/monitoring-nested.ts).
 * They type the OpenAPI document while the set is selected and let the tests check that
 * every nested body is exactly what it claims to be: unlike the alternative set, the nested
 * bodies add no unknown fields, so the objects are strict and a field left over from another
 * layout is an error.
 */

/** A JSON string holding a decimal number (`"99.52"`, `"120"`, `"1.5e+21"`). */
const NumericString = z.string().regex(/^-?\d+(\.\d+)?(e[-+]?\d+)?$/);
const Count = z.number().int().nonnegative();

export const NestedAccountBody = z.strictObject({
  account: z.strictObject({
    id: z.string(),
    name: z.string(),
    plan: z.strictObject({ name: z.string(), retention: z.strictObject({ days: NumericString }).optional() }),
  }),
  quotas: z
    .strictObject({
      hosts: z.strictObject({ max: Count.nullable(), used: Count.nullable() }),
      websites: z.strictObject({ max: NumericString.nullable(), used: Count.nullable() }),
    })
    .optional(),
  rate_limit: z
    .union([
      z.strictObject({ requests: z.number().positive(), per: z.literal('second'), burst: Count, remaining: NumericString.optional() }),
      z.strictObject({ requests: z.number().int().positive(), period: z.literal('1m'), burst: Count, remaining: NumericString.optional() }),
    ])
    .optional(),
});

export const NestedMetricCatalogue = z.strictObject({
  host: z.strictObject({ uuid: HostUuid }),
  metrics: z.record(z.string(), z.strictObject({ count: NumericString, names: z.array(MetricName) })),
});

export const NestedLatestValue = z.strictObject({
  host: z.strictObject({ uuid: HostUuid }),
  metric: z.strictObject({ name: MetricName }),
  latest: z.strictObject({ at: UtcTimestamp.nullable(), value: NumericString.nullable() }),
});

export const NestedComponent = z.strictObject({
  id: z.string().regex(/^[0-9a-f]{64}$/),
  name: z.string().regex(/ @ /),
  version: z.string(),
  process: z.strictObject({ pid: NumericString }).optional(),
});
export const NestedComponentList = z.strictObject({
  host: z.strictObject({ uuid: HostUuid }),
  components: z.partialRecord(z.enum(['nginx', 'php_fpm', 'mysql', 'mariadb', 'varnish']), z.array(NestedComponent).min(1)),
});

export const NestedAlertRule = z.strictObject({
  id: z.string().regex(/^\d+$/),
  name: z.string(),
  state: z.enum(['enabled', 'disabled']),
  condition: z.strictObject({
    metric: MetricName,
    op: z.enum(['gt', 'gte', 'lt', 'lte']),
    value: NumericString,
    duration: z.strictObject({ seconds: Count }).optional(),
  }),
  scope: z.strictObject({ hosts: z.array(HostUuid).min(1) }).optional(),
  created: z.strictObject({ at: UtcTimestamp }),
});
export const NestedAlertRuleList = z.strictObject({ alert_rules: z.array(NestedAlertRule) });

export const NestedWebsite = z.strictObject({
  id: z.number().int(),
  name: z.string(),
  url: z.url(),
  status: z.enum(['active', 'paused']),
  schedule: z.strictObject({ interval_seconds: NumericString }).optional(),
  last_check: z.strictObject({ at: UtcTimestamp, status_code: NumericString.nullable(), state: z.enum(['up', 'down']) }).nullable(),
  stats: z.strictObject({
    last_24h: z.strictObject({
      checks: Count.nullable(),
      failures: NumericString.nullable(),
      /** A percentage 0-100 whose name does not say so. */
      uptime: z.number().min(0).max(100).nullable(),
      ttfb: z.strictObject({ avg_ms: z.number().nullable(), p95_ms: NumericString.nullable() }),
    }),
  }),
});
export const NestedWebsiteList = z.strictObject({
  data: z.strictObject({ websites: z.array(NestedWebsite) }),
  meta: z.strictObject({ total: Count }),
});

/** A check with the seed's names, TLS details under `tls` and the CDN fields under `cf` (null behind no CDN). */
const { tls_version: _tlsVersion, tls_handshake: _tlsHandshake, cert_days_remaining: _certDays, cf_cache_status: _cache, cf_datacenter: _dc, ...checkFields } =
  SimWebsiteCheck.shape;
export const NestedWebsiteCheck = z.strictObject({
  ...checkFields,
  tls: z.strictObject({ version: z.string(), handshake: z.number().int(), cert_days_remaining: z.number().int() }),
  cf: z.strictObject({ cache_status: z.string().nullable(), datacenter: z.string().nullable() }).nullable(),
});
export const NestedWebsiteCheckList = z.strictObject({ website_id: z.number().int(), total: Count, checks: z.array(NestedWebsiteCheck) });

const Ratio = z.number().min(0).max(1).nullable();
export const NestedWebsiteSummary = z.strictObject({
  website: z.strictObject({ id: z.number().int(), name: z.string(), url: z.url() }),
  windows: z.strictObject({
    '24h': z.strictObject({ uptime_ratio: Ratio, ttfb: z.strictObject({ avg_ms: NumericString.nullable() }) }),
    '7d': z.strictObject({ uptime_ratio: Ratio }),
    '30d': z.strictObject({ uptime_ratio: Ratio }),
  }),
  tls: z
    .strictObject({
      version: z.string(),
      certificate: z.strictObject({ issuer: z.string().optional(), expires_at: UtcTimestamp.optional(), days_remaining: NumericString }),
    })
    .optional(),
  /** Recent checks in whichever shape `checks` selects. */
  checks: z.strictObject({ recent: z.array(z.union([NestedWebsiteCheck, z.looseObject({ id: z.number().int(), checked_at: UtcTimestamp })])) }).optional(),
});
