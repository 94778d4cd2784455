import type { FamilySamples, FamilySpec, HistogramSample, Labels } from '../../exposition/model.js';
import { SECURITY_HEADER_FIELDS, type WebsiteCheck, type WebsiteCheckList } from './decode.js';
import { counterSpec, FamilyCollector, gaugeSpec, infoSpec } from '../shared/families.js';
import { boolToNumber, parseTimestampMs } from '../shared/units.js';
import { counterSamples, CounterTableUpdate, EMPTY_COUNTER_TABLE, type CounterTable } from '../shared/counter-table.js';

/** Upper bounds (seconds, finite, strictly ascending) of the website check histograms. */
export interface CheckBuckets {
  readonly ttfb: readonly number[];
  readonly dnsLookup: readonly number[];
  readonly tlsHandshake: readonly number[];
}

/** The query of one checks request. */
export interface ChecksQuery {
  /** Relative window such as `15m` or `1d`: checks inside it, oldest first. */
  readonly since?: string;
  /** At most 500. */
  readonly limit?: number;
}

/**
 * Maps `/websites/{id}/checks` (WebsiteCheckList) to per-website metrics, counting each
 * check once across polls. Pure: no I/O, no clock (time comes in as `nowMs`).
 *
 * - Cursor: the newest check counted, by (checked_at, id). A check at or before it is not
 *   counted again, so overlapping windows are harmless.
 * - First poll: nothing is counted; the newest check becomes the cursor and every counter
 *   and histogram starts at 0. Counting the returned history would not show in rate() or
 *   increase() anyway (Prometheus sees no increase in a series' first sample), and after a
 *   restart it would count checks a second time. What is lost: the checks between the last
 *   scrape before a restart and the first poll after it.
 * - Success: a check succeeded only when upstream says `success: true`, or, when it sends no
 *   `success` at all, when its status code is 2xx or 3xx. A check with null status, TTFB or
 *   TLS fields is a failed check like any other: counted as a failure, never dropped, so
 *   uptime is not overstated.
 * - Durations (TTFB, DNS lookup, TLS handshake: milliseconds upstream) are observed for
 *   successful checks that report them; failed checks count in
 *   `checks_total{result="failure"}`. A negative duration is not observed.
 */

const FROM = 'from /websites/{id}/checks, polled in the background';



/**
 * Defaults chosen for web latency (docs/website-checks.md compares them with
 * blackbox_exporter). TTFB: 50 ms to 30 s, with bounds at 0.8 s and 1.8 s, the "good" and
 * "poor" TTFB thresholds web performance guidance uses, and at 10 s and 30 s where probe
 * timeouts sit. DNS lookup and TLS handshake are secondary phases: fewer bounds (each
 * bound is a series per website), from a cached answer (2 ms) or one nearby round trip
 * (25 ms) to resolver retries and overloaded servers (2.5 s).
 */
export const DEFAULT_CHECK_BUCKETS: CheckBuckets = {
  ttfb: [0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1, 1.8, 2.5, 5, 10, 30],
  dnsLookup: [0.002, 0.01, 0.05, 0.25, 1, 2.5],
  tlsHandshake: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
};

/** Why a bucket list cannot be used, or undefined: finite, positive, strictly ascending, at least one. */
export function bucketsProblem(bounds: readonly number[]): string | undefined {
  if (bounds.length === 0) return 'must list at least one bucket bound';
  for (let i = 0; i < bounds.length; i++) {
    const bound = bounds[i] ?? NaN;
    if (!Number.isFinite(bound) || bound <= 0) return `bound ${String(bound)} must be a finite number of seconds above 0`;
    if (i > 0 && bound <= (bounds[i - 1] ?? -Infinity)) return `bounds must be strictly ascending, but ${bound} follows ${bounds[i - 1]}`;
  }
  return undefined;
}

type HistogramSpec = FamilySpec & { readonly type: 'histogram' };

function histogramSpec(name: string, help: string): HistogramSpec {
  return { name, type: 'histogram', help, unit: 'seconds' };
}

export const CHECK_FAMILIES = {
  ttfb: histogramSpec(
    'monapi_website_check_ttfb_seconds',
    `Time to first byte of successful website checks, each check counted once, ${FROM}.`,
  ),
  dns: histogramSpec(
    'monapi_website_check_dns_lookup_seconds',
    `DNS lookup time of successful website checks, each check counted once, ${FROM}.`,
  ),
  tls: histogramSpec(
    'monapi_website_check_tls_handshake_seconds',
    `TLS handshake time of successful website checks, each check counted once, ${FROM}.`,
  ),
  checks: counterSpec(
    'monapi_website_checks_total',
    `Website checks seen since the exporter started, by result (success or failure; a check without a response, with null status or TTFB, is a failure), each check counted once, ${FROM}.`,
  ),
  cdnCache: counterSpec(
    'monapi_website_cdn_cache_checks_total',
    `Website checks by the CDN cache status they reported (upstream "<cdn>_cache_status"; checks without one are not counted), ${FROM}.`,
  ),
  success: gaugeSpec('monapi_website_check_success', `1 when the newest website check succeeded, else 0, ${FROM}.`),
  statusCode: gaugeSpec(
    'monapi_website_check_status_code',
    `HTTP status code of the newest website check; 0 when it got no response, ${FROM}.`,
  ),
  timestamp: gaugeSpec(
    'monapi_website_check_timestamp_seconds',
    `Unix time of the newest website check, the one the other monapi_website_check_* gauges describe (upstream "checked_at"), ${FROM}.`,
    'seconds',
  ),
  tlsInfo: infoSpec('monapi_website_tls_info', `TLS and HTTP version of the newest website check (value 1), ${FROM}.`),
  certExpiry: gaugeSpec(
    'monapi_website_cert_expiry_timestamp_seconds',
    `Unix time the website's TLS certificate expires: basis="upstream" when /websites/{id} gives the expiry time, basis="estimate" when it is reckoned to the day from the newest check (checked_at + cert_days_remaining days), ${FROM}.`,
    'seconds',
  ),
  securityScore: gaugeSpec(
    'monapi_website_security_score_ratio',
    `Upstream security score of the newest website check, 0-1 (upstream's score out of 100, divided by 100), ${FROM}.`,
    'ratio',
  ),
  securityHeader: gaugeSpec(
    'monapi_website_security_header',
    `1 when the newest website check found the security header, else 0, ${FROM}.`,
  ),
  cdnInfo: infoSpec(
    'monapi_website_cdn_info',
    `CDN data centre that answered the newest website check (upstream "<cdn>_datacenter", value 1), ${FROM}.`,
  ),
} as const;


/** A check's place in time order; ties on checked_at are broken by id. */
export interface CheckCursor {
  readonly checkedAtMs: number;
  readonly id: number;
}

/** Cumulative counts per bucket bound (the renderer adds +Inf = count). */
export interface HistogramState {
  readonly buckets: readonly number[];
  readonly sum: number;
  readonly count: number;
}

export interface ChecksState {
  /**
   * The newest check counted (or taken as the starting point). Undefined before the first
   * poll; `-Infinity` after a first poll that found no checks at all, so every later check
   * counts.
   */
  readonly cursor: CheckCursor | undefined;
  /** The newest check seen, for the gauges: kept so a poll without new checks still shows them. */
  readonly newest: WebsiteCheck | undefined;
  readonly ttfb: HistogramState | undefined;
  readonly dns: HistogramState | undefined;
  readonly tls: HistogramState | undefined;
  readonly results: CounterTable;
  readonly cacheStatus: CounterTable;
}

export const EMPTY_CHECKS_STATE: ChecksState = {
  cursor: undefined,
  newest: undefined,
  ttfb: undefined,
  dns: undefined,
  tls: undefined,
  results: EMPTY_COUNTER_TABLE,
  cacheStatus: EMPTY_COUNTER_TABLE,
};

export interface ChecksMapOptions {
  readonly account: string;
  readonly websiteId: number;
  readonly websiteName: string;
  /** Ascending upper bounds in seconds; default DEFAULT_CHECK_BUCKETS. */
  readonly buckets?: CheckBuckets;
  /** The certificate's exact expiry (ms) from the website's summary, when known. */
  readonly certExpiresAtMs?: number;
}

export interface ChecksMapResult {
  readonly state: ChecksState;
  readonly families: FamilySamples[];
  /** Checks counted by this poll (0 on a first poll). */
  readonly counted: number;
  /**
   * The window held more checks than the page returned (`total` > checks returned) on a
   * poll after the first: the rest are counted by the next polls, which ask from the cursor.
   */
  readonly behind: boolean;
}

function sortKey(check: WebsiteCheck): CheckCursor {
  return { checkedAtMs: parseTimestampMs(check.checked_at, `check ${check.id} checked_at`), id: check.id };
}

function after(a: CheckCursor, b: CheckCursor): boolean {
  return a.checkedAtMs > b.checkedAtMs || (a.checkedAtMs === b.checkedAtMs && a.id > b.id);
}

function emptyHistogram(bounds: readonly number[]): HistogramState {
  return { buckets: bounds.map(() => 0), sum: 0, count: 0 };
}

function observe(h: HistogramState, bounds: readonly number[], seconds: number): HistogramState {
  return {
    buckets: h.buckets.map((n, i) => (seconds <= (bounds[i] ?? Infinity) ? n + 1 : n)),
    sum: h.sum + seconds,
    count: h.count + 1,
  };
}

function checkBounds(buckets: CheckBuckets): void {
  for (const [name, bounds] of Object.entries(buckets) as [string, readonly number[]][]) {
    const problem = bucketsProblem(bounds);
    if (problem !== undefined) throw new RangeError(`check histogram buckets (${name}) ${problem}: [${bounds.join(', ')}]`);
  }
}

/** The success rule of the module comment. */
export function checkSucceeded(check: WebsiteCheck): boolean {
  if (check.success !== undefined) return check.success;
  return check.status_code !== undefined && check.status_code >= 200 && check.status_code < 400;
}

function histogramOf(state: HistogramState | undefined, bounds: readonly number[]): HistogramState {
  if (state === undefined) return emptyHistogram(bounds);
  if (state.buckets.length !== bounds.length) {
    throw new RangeError(`check histogram state has ${state.buckets.length} buckets but ${bounds.length} bounds were given`);
  }
  return state;
}

/**
 * One poll of `/websites/{id}/checks`: the checks in any order (newest first without
 * `since`, oldest first with it), the state after the last poll, and the website.
 */
export function mapChecks(list: WebsiteCheckList, previous: ChecksState, opts: ChecksMapOptions): ChecksMapResult {
  const buckets = opts.buckets ?? DEFAULT_CHECK_BUCKETS;
  checkBounds(buckets);
  const firstPoll = previous.cursor === undefined;

  const ordered = list.checks.map((check) => ({ check, key: sortKey(check) }));
  ordered.sort((a, b) => a.key.checkedAtMs - b.key.checkedAtMs || a.key.id - b.key.id);

  let cursor: CheckCursor = previous.cursor ?? { checkedAtMs: -Infinity, id: -Infinity };
  let newest = previous.newest;
  let ttfb = histogramOf(previous.ttfb, buckets.ttfb);
  let dns = histogramOf(previous.dns, buckets.dnsLookup);
  let tls = histogramOf(previous.tls, buckets.tlsHandshake);
  const results = new CounterTableUpdate(previous.results, !firstPoll);
  const cacheStatus = new CounterTableUpdate(previous.cacheStatus, !firstPoll);
  results.add({ result: 'success' }, 0);
  results.add({ result: 'failure' }, 0);
  let counted = 0;

  for (const { check, key } of ordered) {
    if (!after(key, cursor)) continue;
    cursor = key;
    newest = check;
    if (firstPoll) continue;
    counted++;
    const succeeded = checkSucceeded(check);
    results.add({ result: succeeded ? 'success' : 'failure' }, 1);
    if (succeeded) {
      if (check.ttfb !== undefined && check.ttfb >= 0) ttfb = observe(ttfb, buckets.ttfb, check.ttfb);
      if (check.dns_lookup !== undefined && check.dns_lookup >= 0) dns = observe(dns, buckets.dnsLookup, check.dns_lookup);
      if (check.tls_handshake !== undefined && check.tls_handshake >= 0) tls = observe(tls, buckets.tlsHandshake, check.tls_handshake);
    }
    if (check.cdn_cache_status) cacheStatus.add({ cache_status: check.cdn_cache_status }, 1);
  }
  // A first poll that saw checks seeds the cache statuses it saw, at 0.
  if (firstPoll) {
    for (const { check } of ordered) {
      if (check.cdn_cache_status) cacheStatus.add({ cache_status: check.cdn_cache_status }, 0);
    }
  }

  const state: ChecksState = {
    cursor,
    newest,
    ttfb,
    dns,
    tls,
    results: results.finish(),
    cacheStatus: cacheStatus.finish(),
  };
  return {
    state,
    families: checkFamilies(state, buckets, opts),
    counted,
    behind: !firstPoll && list.total !== undefined && list.total > list.checks.length,
  };
}

function checkFamilies(state: ChecksState, buckets: CheckBuckets, opts: ChecksMapOptions): FamilySamples[] {
  const id: Labels = { account: opts.account, website_id: String(opts.websiteId), website: opts.websiteName };
  const c = new FamilyCollector();
  for (const sample of counterSamples(state.results)) c.add(CHECK_FAMILIES.checks, { ...id, ...sample.labels }, sample.value);
  for (const sample of counterSamples(state.cacheStatus)) c.add(CHECK_FAMILIES.cdnCache, { ...id, ...sample.labels }, sample.value);

  const check = state.newest;
  if (check) {
    c.add(CHECK_FAMILIES.success, id, boolToNumber(checkSucceeded(check)));
    c.add(CHECK_FAMILIES.statusCode, id, check.status_code ?? 0);
    const checkedAtMs = parseTimestampMs(check.checked_at, `check ${check.id} checked_at`);
    c.add(CHECK_FAMILIES.timestamp, id, checkedAtMs / 1000);
    c.add(CHECK_FAMILIES.tlsInfo, { ...id, tls_version: check.tls_version ?? '', http_version: check.http_version ?? '' }, 1);
    const expiry = certExpiry(check, checkedAtMs, opts.certExpiresAtMs);
    if (expiry !== undefined) c.add(CHECK_FAMILIES.certExpiry, { ...id, basis: expiry.basis }, expiry.seconds);
    if (check.security_score !== undefined && check.security_score >= 0 && check.security_score <= 1) c.add(CHECK_FAMILIES.securityScore, id, check.security_score);
    for (const field of SECURITY_HEADER_FIELDS) {
      const present = check[field];
      if (present !== undefined) c.add(CHECK_FAMILIES.securityHeader, { ...id, header: field.slice('has_'.length) }, boolToNumber(present));
    }
    if (check.cdn_datacenter) c.add(CHECK_FAMILIES.cdnInfo, { ...id, datacenter: check.cdn_datacenter }, 1);
  } else if (opts.certExpiresAtMs !== undefined) {
    c.add(CHECK_FAMILIES.certExpiry, { ...id, basis: 'upstream' }, opts.certExpiresAtMs / 1000);
  }

  const histograms: FamilySamples[] = [
    { spec: CHECK_FAMILIES.ttfb, samples: [histogramSample(id, histogramOf(state.ttfb, buckets.ttfb), buckets.ttfb)] },
    { spec: CHECK_FAMILIES.dns, samples: [histogramSample(id, histogramOf(state.dns, buckets.dnsLookup), buckets.dnsLookup)] },
    { spec: CHECK_FAMILIES.tls, samples: [histogramSample(id, histogramOf(state.tls, buckets.tlsHandshake), buckets.tlsHandshake)] },
  ];
  return [...histograms, ...c.toFamilies()];
}

/**
 * The expiry upstream gave in the summary; else, for a check over TLS that reports days
 * remaining, its time plus those days, labelled as the estimate it is (whole days may be
 * most of a day off). A plain-http site has no certificate to expire.
 */
function certExpiry(check: WebsiteCheck, checkedAtMs: number, exactMs: number | undefined): { seconds: number; basis: 'upstream' | 'estimate' } | undefined {
  if (exactMs !== undefined) return { seconds: exactMs / 1000, basis: 'upstream' };
  if (!check.tls_version || check.cert_remaining === undefined) return undefined;
  return { seconds: checkedAtMs / 1000 + check.cert_remaining, basis: 'estimate' };
}

function histogramSample(labels: Labels, h: HistogramState, bounds: readonly number[]): HistogramSample {
  return { labels, buckets: bounds.map((bound, i) => [bound, h.buckets[i] ?? 0] as const), sum: h.sum, count: h.count };
}

/** Checks run at most once a second; a page of 500 is the most one request returns. */
export const CHECKS_PAGE_LIMIT = 500;
/** Covers clock skew between the exporter and upstream, and the minute rounding. */
export const CHECKS_WINDOW_MARGIN_MS = 60_000;
/** The furthest back a poll asks: checks further behind the cursor are not fetched (and not counted). */
export const CHECKS_MAX_WINDOW_MINUTES = 7 * 24 * 60;

/**
 * What the next poll asks for. Before the first poll: the newest check only (`limit=1`,
 * newest first), which is all a first poll uses. After it: the checks since the cursor
 * (minus a margin), oldest first, up to 500; when more are waiting, the next polls page
 * forward from the advanced cursor (one request each, so the budget stays predictable).
 */
export function nextChecksQuery(state: ChecksState, nowMs: number): ChecksQuery {
  if (state.cursor === undefined) return { limit: 1 };
  const behindMs = nowMs - state.cursor.checkedAtMs + CHECKS_WINDOW_MARGIN_MS;
  const minutes = Number.isFinite(behindMs) ? Math.min(CHECKS_MAX_WINDOW_MINUTES, Math.max(1, Math.ceil(behindMs / 60_000))) : CHECKS_MAX_WINDOW_MINUTES;
  return { since: `${minutes}m`, limit: CHECKS_PAGE_LIMIT };
}

/**
 * How often to poll a website: the configured cadence, but never more often than the
 * website is checked upstream (no new check can exist sooner).
 */
export function checksCadenceMs(configuredMs: number, checkIntervalSeconds: number | undefined): number {
  return Math.max(configuredMs, (checkIntervalSeconds ?? 0) * 1000);
}
