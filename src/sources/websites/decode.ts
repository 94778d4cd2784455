import { readList, readItem, readObject, type DroppedItem, type JsonDecoder } from '../../upstream/tolerant/body.js';
import type { Fields } from '../../upstream/tolerant/fields.js';
import { boolean, describe, integer, number, string, timestamp, type ValueReader } from '../../upstream/tolerant/values.js';
import { durationSeconds } from '../alert-rules/decode.js';
import { readCheck, type WebsiteCheck } from '../checks/decode.js';

/**
 * `/websites` ("monitored websites with 24-hour aggregates") and `/websites/{id}` ("website
 * summary: uptime, time to first byte, TLS, recent checks"). Neither body is shown in the
 * document. Only `id` is required: it is the path of the per-website endpoints. A website
 * with no name is called by its URL, or else by its id. Aggregates are read flat
 * (`uptime_pct_24h`) or nested (`stats_24h.uptime_pct`, `uptime: {"24h": 99.9}`);
 * percentages are 0-100 as sent, and a field named as a ratio (`uptime_ratio_24h`) is
 * turned into a percentage so the mapper converts one unit.
 */

export interface WebsiteAggregates24h {
  readonly up?: boolean;
  readonly last_checked_at?: string;
  readonly last_status_code?: number;
  readonly checks_24h?: number;
  readonly failures_24h?: number;
  /** 0-100. */
  readonly uptime_pct_24h?: number;
  readonly avg_ttfb_ms_24h?: number;
  readonly p95_ttfb_ms_24h?: number;
}

export interface Website extends WebsiteAggregates24h {
  readonly id: number;
  /** As sent, or the URL, or `website <id>` when upstream gives no name. */
  readonly name: string;
  readonly url?: string;
  readonly enabled?: boolean;
  readonly check_interval_seconds?: number;
}

export interface WebsiteList {
  readonly websites: readonly Website[];
  readonly total: number | undefined;
}

export type UptimeWindow = '24h' | '7d' | '30d';
export const UPTIME_WINDOWS: readonly UptimeWindow[] = ['24h', '7d', '30d'];

export interface WebsiteTls {
  readonly version?: string;
  readonly cert_days_remaining?: number;
  /** ISO 8601: the certificate's exact expiry (not-after), when upstream gives it. */
  readonly cert_expires_at?: string;
  readonly issuer?: string;
}

export interface WebsiteSummary extends WebsiteAggregates24h {
  readonly id?: number;
  readonly name?: string;
  readonly url?: string;
  /** Uptime over each window upstream reports, 0-100. */
  readonly uptime_pct: Readonly<Partial<Record<UptimeWindow, number>>>;
  readonly tls?: WebsiteTls;
  readonly recent_checks: readonly WebsiteCheck[];
}

/** Nested objects that commonly hold the 24-hour aggregates. */
const NESTED_24H = ['stats_24h', 'aggregates_24h', 'last_24h', 'stats.24h', '24h', 'day', 'aggregates', 'stats'];

function in24h(flat: readonly string[], nested: readonly string[]): string[] {
  return [...flat, ...NESTED_24H.flatMap((prefix) => nested.map((name) => `${prefix}.${name}`))];
}

/** A ratio 0-1 field read as a percentage. */
const ratioAsPercent: ValueReader<number> = (raw) => {
  const read = number(raw);
  return read.ok ? { ok: true, value: read.value * 100 } : read;
};

/** `up`/`down` and the like, or a boolean. */
const upState: ValueReader<boolean> = (raw) => {
  if (typeof raw === 'string') {
    const word = raw.trim().toLowerCase();
    if (['up', 'online', 'ok', 'healthy'].includes(word)) return { ok: true, value: true };
    if (['down', 'offline', 'failing', 'error'].includes(word)) return { ok: true, value: false };
  }
  return boolean(raw);
};

/** Uptime of one window: percent names first, then ratio names converted. */
function uptimePercent(f: Fields, window: UptimeWindow): number | undefined {
  const percent = f.optional(
    [
      `uptime_pct_${window}`,
      `uptime_${window}_pct`,
      `uptime_percent_${window}`,
      `uptime_${window}`,
      `uptime.${window}`,
      `uptime_pct.${window}`,
      `${window}.uptime_pct`,
      `${window}.uptime`,
      `stats_${window}.uptime_pct`,
      `stats_${window}.uptime`,
      `aggregates_${window}.uptime_pct`,
      `last_${window}.uptime_pct`,
      ...(window === '24h' ? ['uptime_pct', 'uptime', 'uptime_percent', 'stats.uptime_pct', 'aggregates.uptime_pct', 'day.uptime_pct'] : []),
    ],
    number,
  );
  return percent ?? f.optional([`uptime_ratio_${window}`, `uptime_${window}_ratio`, ...(window === '24h' ? ['uptime_ratio'] : [])], ratioAsPercent);
}

function readAggregates(f: Fields): WebsiteAggregates24h {
  const out: { -readonly [K in keyof WebsiteAggregates24h]: WebsiteAggregates24h[K] } = {};
  const put = <K extends keyof WebsiteAggregates24h>(key: K, value: WebsiteAggregates24h[K] | undefined) => {
    if (value !== undefined) out[key] = value;
  };
  put('up', f.optional(['up', 'is_up', 'status', 'state', 'last_check.success'], upState));
  put('last_checked_at', f.optional(['last_checked_at', 'last_check_at', 'last_check.checked_at', 'last_checked'], timestamp));
  put('last_status_code', f.optional(['last_status_code', 'last_check.status_code', 'status_code'], integer));
  put('checks_24h', f.optional(in24h(['checks_24h', 'checks_count_24h', 'total_checks_24h'], ['checks', 'total_checks', 'checks_count']), integer));
  put('failures_24h', f.optional(in24h(['failures_24h', 'failed_checks_24h'], ['failures', 'failed_checks', 'failed']), integer));
  put('uptime_pct_24h', uptimePercent(f, '24h'));
  put('avg_ttfb_ms_24h', f.optional(in24h(['avg_ttfb_ms_24h', 'ttfb_avg_ms_24h', 'avg_ttfb_24h_ms', 'ttfb_ms_24h', 'avg_ttfb_ms'], ['avg_ttfb_ms', 'ttfb_avg_ms', 'ttfb_ms', 'ttfb.avg_ms']), number));
  put('p95_ttfb_ms_24h', f.optional(in24h(['p95_ttfb_ms_24h', 'ttfb_p95_ms_24h', 'p95_ttfb_24h_ms', 'p95_ttfb_ms'], ['p95_ttfb_ms', 'ttfb_p95_ms', 'ttfb.p95_ms']), number));
  return out;
}

export function readWebsite(f: Fields): Website {
  const id = f.required(['id', 'website_id'], integer);
  const url = f.optional(['url', 'address', 'target'], string);
  const name = f.optional(['name', 'display_name', 'title', 'label'], string);
  const website: { -readonly [K in keyof Website]: Website[K] } = {
    id,
    name: name !== undefined && name.trim() !== '' ? name : (url ?? `website ${id}`),
    ...readAggregates(f),
  };
  if (url !== undefined) website.url = url;
  const paused = f.optional(['paused', 'disabled'], boolean);
  const enabled = f.optional(['enabled', 'is_enabled', 'active', 'monitoring_enabled'], boolean) ?? (paused === undefined ? undefined : !paused);
  if (enabled !== undefined) website.enabled = enabled;
  const interval = f.optional(['check_interval_seconds', 'interval_seconds', 'check_interval', 'interval', 'frequency'], durationSeconds);
  if (interval !== undefined && interval > 0) website.check_interval_seconds = interval;
  return website;
}

export const decodeWebsites: JsonDecoder<WebsiteList> = (raw, context) => {
  const body = readList(raw, context, { what: 'website list', keys: ['websites', 'sites', 'monitors'], read: readWebsite });
  return {
    value: { websites: body.items, total: body.envelope.optional(['total', 'count', 'meta.total'], integer) },
    dropped: body.dropped,
    notes: body.notes,
  };
};

const TLS_OBJECTS = ['tls', 'ssl', 'certificate', 'cert'];

function readTls(f: Fields): WebsiteTls | undefined {
  const tls: { -readonly [K in keyof WebsiteTls]: WebsiteTls[K] } = {};
  const nested = TLS_OBJECTS.map((key) => f.object(key)).filter((x): x is Fields => x !== undefined);
  const from = [...nested, f];
  const first = <T>(names: readonly string[], read: ValueReader<T>): T | undefined => {
    for (const source of from) {
      const value = source.optional(names, read);
      if (value !== undefined) return value;
    }
    return undefined;
  };
  const version = first(['version', 'tls_version', 'protocol', 'ssl_version'], string);
  if (version !== undefined) tls.version = version;
  const days = first(['cert_days_remaining', 'days_remaining', 'days_left', 'ssl_days_remaining'], number);
  if (days !== undefined) tls.cert_days_remaining = days;
  const expires = first(['cert_expires_at', 'expires_at', 'not_after', 'valid_until', 'valid_to', 'expiry', 'cert_expiry', 'ssl_expires_at'], timestamp);
  if (expires !== undefined) tls.cert_expires_at = expires;
  const issuer = first(['issuer', 'cert_issuer', 'issuer.name', 'issuer.cn', 'issuer_name'], string);
  if (issuer !== undefined) tls.issuer = issuer;
  return Object.keys(tls).length > 0 ? tls : undefined;
}

const SUMMARY_SIGNATURE = ['id', 'url', 'name', 'uptime_pct_24h', 'uptime', 'tls', 'ssl', 'recent_checks', 'checks'];

export const decodeWebsiteSummary: JsonDecoder<WebsiteSummary> = (raw, context) => {
  const dropped: DroppedItem[] = [];
  const { value, notes } = readObject(raw, context, {
    what: 'website summary',
    keys: ['website', 'summary', 'site'],
    signature: SUMMARY_SIGNATURE,
    read: (f) => {
      const uptime: Partial<Record<UptimeWindow, number>> = {};
      for (const window of UPTIME_WINDOWS) {
        const value = uptimePercent(f, window);
        if (value !== undefined) uptime[window] = value;
      }
      const summary: { -readonly [K in keyof WebsiteSummary]: WebsiteSummary[K] } = {
        ...readAggregates(f),
        uptime_pct: uptime,
        recent_checks: readRecentChecks(f, dropped),
      };
      const id = f.optional(['id', 'website_id'], integer);
      if (id !== undefined) summary.id = id;
      const name = f.optional(['name', 'display_name', 'title'], string);
      if (name !== undefined) summary.name = name;
      const url = f.optional(['url', 'address'], string);
      if (url !== undefined) summary.url = url;
      const tls = readTls(f);
      if (tls !== undefined) summary.tls = tls;
      return summary;
    },
  });
  return { value, dropped, notes };
};

function readRecentChecks(f: Fields, dropped: DroppedItem[]): WebsiteCheck[] {
  const found = f.find(['recent_checks', 'checks', 'last_checks']);
  if (found === undefined) return [];
  if (!Array.isArray(found.value)) {
    f.notes.push({ field: 'recent_checks', issue: `expected a list, got ${describe(found.value)}` });
    return [];
  }
  const checks: WebsiteCheck[] = [];
  found.value.forEach((item, index) => {
    const read = readItem(item, f.notes, readCheck);
    if (read.ok) checks.push(read.value);
    else dropped.push({ path: `${found.name}[${index}]`, ...read.problem });
  });
  return checks;
}
