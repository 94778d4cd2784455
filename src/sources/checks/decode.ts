import { readList, type JsonDecoder } from '../../upstream/tolerant/body.js';
import type { Fields } from '../../upstream/tolerant/fields.js';
import { boolean, integer, number, string, timestamp } from '../../upstream/tolerant/values.js';

/**
 * A website check (`/websites/{id}/checks` items, `/websites/{id}` recent checks). The
 * document lists every field, but a failed check has nothing to report for most of them:
 * no status, no TTFB, no TLS. So only what identifies a check in time is required (`id`
 * and `checked_at`); every other field is optional and nullable. Whether a check without
 * `success` succeeded is decided by the mapper (see sources/checks/map.ts).
 *
 * The two CDN fields carry the provider's abbreviation in their names (the document calls
 * them `cdn_cache_status` and `cdn_datacenter`): any `<abbr>_cache_status` and
 * `<abbr>_datacenter` (also `_data_center`, `_datacentre`, `_colo`, `_pop`) is read.
 */
export interface WebsiteCheck {
  readonly id: number;
  /** ISO 8601. */
  readonly checked_at: string;
  readonly success?: boolean;
  readonly status_code?: number;
  readonly ttfb_ms?: number;
  readonly http_version?: string;
  readonly tls_version?: string;
  readonly cert_days_remaining?: number;
  /** Milliseconds. */
  readonly dns_lookup?: number;
  /** Milliseconds. */
  readonly tls_handshake?: number;
  /** 0-100. */
  readonly security_score?: number;
  readonly has_hsts?: boolean;
  readonly has_x_frame_options?: boolean;
  readonly has_x_content_type_options?: boolean;
  readonly has_csp?: boolean;
  readonly has_referrer_policy?: boolean;
  readonly has_permissions_policy?: boolean;
  readonly cdn_cache_status?: string;
  readonly cdn_datacenter?: string;
}

export const SECURITY_HEADER_FIELDS = [
  'has_hsts',
  'has_x_frame_options',
  'has_x_content_type_options',
  'has_csp',
  'has_referrer_policy',
  'has_permissions_policy',
] as const;

const CDN_CACHE_STATUS = /^[a-z0-9]+_cache_status$/i;
const CDN_DATACENTER = /^[a-z0-9]+_(datacenter|data_center|datacentre|colo|pop)$/i;

export function readCheck(f: Fields): WebsiteCheck {
  const check: { -readonly [K in keyof WebsiteCheck]: WebsiteCheck[K] } = {
    id: f.required(['id', 'check_id'], integer),
    checked_at: f.required(['checked_at', 'created_at', 'timestamp', 'time'], timestamp),
  };
  const put = <K extends keyof WebsiteCheck>(key: K, value: WebsiteCheck[K] | undefined) => {
    if (value !== undefined) check[key] = value;
  };
  put('success', f.optional(['success', 'ok', 'up'], boolean));
  put('status_code', f.optional(['status_code', 'http_status', 'status', 'code'], integer));
  put('ttfb_ms', f.optional(['ttfb_ms', 'ttfb', 'time_to_first_byte_ms'], number));
  put('http_version', f.optional(['http_version', 'protocol'], string));
  put('tls_version', f.optional(['tls_version', 'tls.version', 'ssl_version'], string));
  put('cert_days_remaining', f.optional(['cert_days_remaining', 'tls.cert_days_remaining', 'ssl_days_remaining', 'cert_days_left'], number));
  put('dns_lookup', f.optional(['dns_lookup', 'dns_lookup_ms', 'dns_ms'], number));
  put('tls_handshake', f.optional(['tls_handshake', 'tls_handshake_ms', 'tls_ms'], number));
  put('security_score', f.optional(['security_score', 'score'], number));
  for (const header of SECURITY_HEADER_FIELDS) put(header, f.optional([header, `security_headers.${header.slice(4)}`], boolean));
  put('cdn_cache_status', firstMatching(f, CDN_CACHE_STATUS));
  put('cdn_datacenter', firstMatching(f, CDN_DATACENTER));
  return check;
}

function firstMatching(f: Fields, pattern: RegExp): string | undefined {
  for (const { name } of f.matching(pattern)) {
    const value = f.optional(name, string);
    if (value !== undefined && value.trim() !== '') return value;
  }
  return undefined;
}

export interface WebsiteCheckList {
  readonly website_id: number | undefined;
  /** Checks inside the window upstream, when it says. */
  readonly total: number | undefined;
  readonly checks: readonly WebsiteCheck[];
}

export const decodeChecks: JsonDecoder<WebsiteCheckList> = (raw, context) => {
  const body = readList(raw, context, { what: 'website check list', keys: ['checks', 'results'], read: readCheck });
  return {
    value: {
      website_id: body.envelope.optional(['website_id', 'id'], integer),
      total: body.envelope.optional(['total', 'count', 'meta.total'], integer),
      checks: body.items,
    },
    dropped: body.dropped,
    notes: body.notes,
  };
};
