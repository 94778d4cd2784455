import { readFieldList } from '../../upstream/fields/body.js';
import { declareFields, type FieldRecord } from '../../upstream/fields/declare.js';
import { findersOf } from '../../upstream/fields/resolve.js';
import type { JsonDecoder } from '../../upstream/tolerant/body.js';

/**
 * A website check (`/websites/{id}/checks` items). The document lists every field, but a
 * failed check has nothing to report for most of them: no status, no TTFB, no TLS. So only
 * what identifies a check in time is required (`id` and `checked_at`); every other field is
 * optional and nullable, and found wherever it sits (`tls.version`, `cf.cache_status`,
 * `security_headers.hsts`). Whether a check without `success` succeeded is decided by the
 * mapper (see sources/checks/map.ts). Durations are in seconds, the score 0-1.
 *
 * The two CDN fields carry the provider's abbreviation in their names (the document calls
 * them `cdn_cache_status` and `cdn_datacenter`): any `<abbr>_cache_status` and
 * `<abbr>_datacenter` (also `_data_center`, `_colo`, `_pop`) is read, or the same under an
 * object named after the provider.
 */
export const CHECK_FIELDS = declareFields({
  id: { kind: 'integer', about: 'the check id', words: [['id']], not: ['website', 'host', 'requests'], essential: true },
  checked_at: {
    kind: 'timestamp',
    about: 'when the check ran',
    words: [['checks', 'at'], ['created', 'at'], ['timestamp'], ['at'], ['time']],
    not: ['ttfb', 'dns', 'tls', 'handshake', 'response', 'lookup', 'cert', 'expires', 'next', 'days'],
    essential: true,
  },
  success: {
    kind: 'state',
    about: 'whether the check succeeded',
    words: [['success'], ['ok'], ['up'], ['passed'], ['result'], ['status'], ['state']],
    not: ['code', 'http', 'cache', 'cdn'],
    trueWords: ['up', 'ok', 'success', 'succeeded', 'passed', 'pass', 'true', 'yes', 'healthy'],
    falseWords: ['down', 'failed', 'failure', 'fail', 'error', 'timeout', 'false', 'no', 'unhealthy'],
    useful: true,
  },
  status_code: { kind: 'integer', about: 'the HTTP status code (0: no answer)', words: [['status', 'code'], ['http', 'status'], ['response', 'code'], ['code'], ['status']], not: ['cache', 'cdn', 'tls', 'dns'], useful: true },
  ttfb: { kind: 'duration', about: 'time to first byte', words: [['ttfb'], ['first', 'byte'], ['response', 'time']], unit: 'ms', useful: true },
  http_version: { kind: 'string', about: 'the HTTP version', words: [['http', 'version'], ['protocol']], not: ['tls'] },
  tls_version: { kind: 'string', about: 'the TLS version (empty: plain HTTP)', words: [['tls', 'version']], not: ['http'] },
  cert_remaining: {
    kind: 'duration',
    about: 'time until the certificate expires, as upstream counts it (whole days)',
    words: [['cert', 'days'], ['days', 'remaining'], ['cert', 'remaining'], ['days', 'left'], ['tls', 'days']],
    unit: 'days',
  },
  dns_lookup: { kind: 'duration', about: 'DNS lookup time', words: [['dns']], unit: 'ms' },
  tls_handshake: { kind: 'duration', about: 'TLS handshake time', words: [['handshake']], not: ['version', 'days', 'cert'], unit: 'ms' },
  security_score: { kind: 'ratio', about: 'the security score (upstream: out of 100)', words: [['security', 'score'], ['score']], percent: true },
  has_hsts: { kind: 'state', about: 'whether the HSTS header was sent', words: [['hsts'], ['strict', 'transport']] },
  has_x_frame_options: { kind: 'state', about: 'whether X-Frame-Options was sent', words: [['frame', 'options']] },
  has_x_content_type_options: { kind: 'state', about: 'whether X-Content-Type-Options was sent', words: [['content', 'type', 'options']] },
  has_csp: { kind: 'state', about: 'whether a Content-Security-Policy was sent', words: [['csp'], ['content', 'security', 'policy']] },
  has_referrer_policy: { kind: 'state', about: 'whether a Referrer-Policy was sent', words: [['referrer', 'policy']] },
  has_permissions_policy: { kind: 'state', about: 'whether a Permissions-Policy was sent', words: [['permissions', 'policy']] },
  cdn_cache_status: { kind: 'string', about: "the CDN's cache status (HIT, MISS, ...)", words: [['cache', 'status']] },
  cdn_datacenter: { kind: 'string', about: 'the CDN data centre that answered', words: [['datacenter'], ['center'], ['datacentre'], ['colo'], ['pop']] },
});

export type WebsiteCheck = { readonly id: number; readonly checked_at: string } & Partial<Omit<FieldRecord<typeof CHECK_FIELDS>, 'id' | 'checked_at'>>;

export const SECURITY_HEADER_FIELDS = [
  'has_hsts',
  'has_x_frame_options',
  'has_x_content_type_options',
  'has_csp',
  'has_referrer_policy',
  'has_permissions_policy',
] as const;

export interface WebsiteCheckList {
  readonly website_id: number | undefined;
  /** Checks inside the window upstream, when it says. */
  readonly total: number | undefined;
  readonly checks: readonly WebsiteCheck[];
}

const checkFinder = findersOf(CHECK_FIELDS);
const wholeNumber = (value: unknown) => (typeof value === 'number' && Number.isSafeInteger(value) ? value : typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : undefined);

export const decodeChecks: JsonDecoder<WebsiteCheckList> = (raw, context, options) => {
  const body = readFieldList(raw, context, { what: 'website check list', keys: ['checks', 'results'], finder: checkFinder(options?.fieldPaths) });
  const checks = body.records.map((r): WebsiteCheck => {
    const check: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(r)) if (value !== undefined && value !== '') check[key] = value;
    // id and checked_at are essential: the finder kept only the checks that have both.
    return check as WebsiteCheck;
  });
  const meta = body.envelope.meta;
  return {
    value: {
      website_id: wholeNumber(body.envelope.website_id) ?? wholeNumber(body.envelope.id),
      total: wholeNumber(body.envelope.total) ?? wholeNumber(body.envelope.count) ?? (typeof meta === 'object' && meta !== null ? wholeNumber((meta as Record<string, unknown>).total) : undefined),
      checks,
    },
    dropped: body.dropped,
    notes: body.notes,
    fields: body.report,
  };
};
