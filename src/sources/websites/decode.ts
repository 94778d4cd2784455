import { fieldListDecoder, readFieldList, readFieldObject } from '../../upstream/fields/body.js';
import { declareFields, marked, type FieldRecord } from '../../upstream/fields/declare.js';
import { findersOf } from '../../upstream/fields/resolve.js';
import type { JsonDecoder } from '../../upstream/tolerant/body.js';

/**
 * `/websites` ("monitored websites with 24-hour aggregates") and `/websites/{id}` ("website
 * summary: uptime, time to first byte, TLS, recent checks"; the recent checks are the
 * checks source's, read from /websites/{id}/checks). Neither body is shown in the
 * API document, so every field is declared with the words that identify it and found
 * wherever it sits (upstream/fields/): flat (`uptime_pct_24h`), nested under a period
 * (`last_24h.uptime`) or a category (`stats.day.uptime`), camelCase, numbers as strings;
 * percentages and ratios told apart by their names or values, milliseconds by their names.
 * Only `id` is required: it is the path of the per-website endpoints.
 */

/** What the list says of every website, and the summary of one. Ratios 0-1, durations in seconds. */
const AGGREGATES = {
  up: {
    kind: 'state',
    about: 'whether the latest check succeeded',
    words: [['up'], ['status'], ['state'], ['checks', 'success'], ['healthy']],
    not: ['code', 'at', 'interval', 'monitoring', 'paused', 'enabled'],
    trueWords: ['up', 'online', 'ok', 'healthy', 'success', 'succeeded', 'passing', 'true', 'yes'],
    falseWords: ['down', 'offline', 'failing', 'failed', 'error', 'critical', 'false', 'no'],
  },
  last_checked_at: { kind: 'timestamp', about: 'when the latest check ran', words: [['checks', 'at'], ['checks', 'time']], not: ['status', 'code', 'interval', 'next'] },
  last_status_code: { kind: 'integer', about: 'the HTTP status code of the latest check', words: [['status', 'code'], ['http', 'code'], ['response', 'code']] },
  checks_24h: {
    kind: 'count',
    about: 'checks run over 24 hours',
    words: [['checks']],
    not: ['failures', 'success', 'ok', 'passed', 'at', 'time', 'code', 'interval', 'id', 'url', 'status', 'ttfb', 'uptime'],
    period: '24h',
    periodOptional: true,
  },
  failures_24h: { kind: 'count', about: 'failed checks over 24 hours', words: [['failures']], not: ['at', 'time', 'uptime', 'ratio', 'pct'], period: '24h', periodOptional: true },
  uptime_24h: { kind: 'ratio', about: 'share of successful checks over 24 hours', words: [['uptime'], ['availability']], period: '24h', periodOptional: true },
  ttfb_avg_24h: {
    kind: 'duration',
    about: 'mean time to first byte over 24 hours',
    words: [['ttfb'], ['first', 'byte'], ['response', 'time']],
    stat: 'avg',
    statOptional: true,
    period: '24h',
    periodOptional: true,
    unit: 'ms',
  },
  ttfb_p95_24h: { kind: 'duration', about: '95th percentile of the time to first byte over 24 hours', words: [['ttfb'], ['first', 'byte'], ['response', 'time']], stat: 'p95', period: '24h', periodOptional: true, unit: 'ms' },
} as const;

/** The fields of a `/websites` item. */
export const WEBSITE_FIELDS = declareFields({
  id: { kind: 'integer', about: 'the website id, the path of its checks and summary', words: [['id']], not: ['checks', 'host', 'account'], essential: true },
  name: { kind: 'string', about: 'the website name', words: [['name'], ['title'], ['label']], not: ['host', 'issuer', 'checks', 'cert', 'tls', 'group'] },
  url: { kind: 'string', about: 'the monitored URL', words: [['url'], ['address'], ['target']], not: ['checks', 'upgrade'] },
  enabled: {
    kind: 'state',
    about: 'whether upstream checks the website (paused or disabled websites get no checks requests)',
    words: [['enabled'], ['active'], ['paused'], ['disabled'], ['monitoring'], ['status'], ['state']],
    not: ['code', 'at', 'checks'],
    // A website whose status says how its latest check went (`up`, `down`) is being checked.
    trueWords: ['active', 'enabled', 'running', 'monitoring', 'monitored', 'on', 'yes', 'true', 'resumed', 'up', 'down', 'online', 'offline', 'ok', 'failing', 'healthy', 'unhealthy', 'degraded'],
    falseWords: ['paused', 'disabled', 'inactive', 'suspended', 'stopped', 'off', 'no', 'false', 'archived'],
  },
  check_interval: { kind: 'duration', about: 'time between two checks', words: [['interval'], ['frequency'], ['every']], not: ['next'], unit: 'seconds' },
  ...AGGREGATES,
});

/** What the summary is polled for ("uptime, time to first byte, TLS"). */
const SUMMARY_FIGURES = {
  uptime_24h: AGGREGATES.uptime_24h,
  ttfb_avg_24h: AGGREGATES.ttfb_avg_24h,
  // The list's own p95 is the usual one; a summary that has it fills the list's gap.
  ttfb_p95_24h: { ...AGGREGATES.ttfb_p95_24h, fillsGap: true },
  uptime_7d: { kind: 'ratio', about: 'share of successful checks over 7 days', words: [['uptime'], ['availability']], period: '7d' },
  uptime_30d: { kind: 'ratio', about: 'share of successful checks over 30 days', words: [['uptime'], ['availability']], period: '30d' },
  tls_version: { kind: 'string', about: 'the TLS version of the latest connection', words: [['tls', 'version'], ['protocol']], not: ['http'] },
  cert_days_remaining: { kind: 'duration', about: 'days until the certificate expires, as upstream counts them', words: [['cert', 'days'], ['tls', 'days'], ['days', 'remaining'], ['days', 'left']], unit: 'days' },
  cert_expires_at: { kind: 'timestamp', about: "the certificate's exact expiry (not-after)", words: [['cert', 'expires'], ['tls', 'expires'], ['expires']], not: ['days', 'domain'] },
  cert_issuer: { kind: 'string', about: "the certificate's issuer", words: [['issuer']] },
} as const;

/** The fields of a `/websites/{id}` summary; one that carries none of its figures is polled for nothing. */
export const WEBSITE_SUMMARY_FIELDS = declareFields({
  id: { kind: 'integer', about: 'the website id', words: [['id']], not: ['checks', 'host', 'account', 'cert', 'tls'] },
  ...marked(SUMMARY_FIGURES, { useful: true }),
});

export type WebsiteAggregates24h = Omit<FieldRecord<typeof AGGREGATES>, never>;
/** The 24-hour aggregates the summary gives too, which fill the list's gaps. */
export const SUMMARY_AGGREGATES = ['uptime_24h', 'ttfb_avg_24h', 'ttfb_p95_24h'] as const satisfies readonly (keyof WebsiteAggregates24h)[];
export type SummaryAggregate = (typeof SUMMARY_AGGREGATES)[number];

export interface Website extends Partial<WebsiteAggregates24h> {
  readonly id: number;
  /** As sent, or the URL, or `website <id>` when upstream gives no name. */
  readonly name: string;
  readonly url?: string;
  readonly enabled?: boolean;
  /** Seconds between two checks. */
  readonly check_interval?: number;
}

export interface WebsiteList {
  readonly websites: readonly Website[];
  readonly total: number | undefined;
}

export type UptimeWindow = '24h' | '7d' | '30d';
export const UPTIME_WINDOWS: readonly UptimeWindow[] = ['24h', '7d', '30d'];

export interface WebsiteTls {
  readonly version?: string;
  /** Seconds until the certificate expires, as upstream counts them (whole days). */
  readonly cert_remaining?: number;
  /** ISO 8601: the certificate's exact expiry (not-after), when upstream gives it. */
  readonly cert_expires_at?: string;
  readonly issuer?: string;
}

export interface WebsiteSummary extends Partial<Pick<WebsiteAggregates24h, SummaryAggregate>> {
  readonly id?: number;
  /** Uptime over each window upstream reports, 0-1. */
  readonly uptime: Readonly<Partial<Record<UptimeWindow, number>>>;
  readonly tls?: WebsiteTls;
}

/** Copies the defined values of a record, so a field an item lacks is absent, not undefined. */
function defined<T extends object>(record: T): Partial<T> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as Partial<T>;
}

const websiteFinder = findersOf(WEBSITE_FIELDS);
const summaryFinder = findersOf(WEBSITE_SUMMARY_FIELDS);

const WEBSITE_LIST_KEYS = ['websites', 'sites', 'monitors'];

export const decodeWebsites: JsonDecoder<WebsiteList> = fieldListDecoder({ keys: WEBSITE_LIST_KEYS, finders: websiteFinder }, (raw, context, options) => {
  const body = readFieldList(raw, context, { what: 'website list', keys: WEBSITE_LIST_KEYS, finder: websiteFinder(options?.fieldPaths) });
  const websites = body.records.map((r): Website => {
    const id = r.id ?? 0;
    const name = r.name !== undefined && r.name.trim() !== '' ? r.name : (r.url ?? `website ${id}`);
    return { ...defined(r), id, name };
  });
  const total = body.envelope.total;
  return {
    value: { websites, total: typeof total === 'number' && Number.isSafeInteger(total) ? total : undefined },
    dropped: body.dropped,
    notes: body.notes,
    fields: body.report,
  };
});

const SUMMARY_KEYS = ['website', 'summary', 'site'];

export const decodeWebsiteSummary: JsonDecoder<WebsiteSummary> = (raw, context, options) => {
  const { record, report, notes } = readFieldObject(raw, context, { what: 'website summary', keys: SUMMARY_KEYS, finder: summaryFinder(options?.fieldPaths) });
  const { uptime_7d: week, uptime_30d: month, tls_version: version, cert_days_remaining: remaining, cert_expires_at: expires, cert_issuer: issuer, ...rest } = record;
  const uptime = defined({ '24h': rest.uptime_24h, '7d': week, '30d': month });
  const tls = defined({ version, cert_remaining: remaining, cert_expires_at: expires, issuer });
  const summary: WebsiteSummary = {
    ...defined(rest),
    uptime,
    ...(Object.keys(tls).length > 0 && { tls }),
  };
  return { value: summary, dropped: [], notes, fields: report };
};
