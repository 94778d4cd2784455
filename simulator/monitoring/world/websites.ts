import type { SimWebsite as Website, SimWebsiteCheck as WebsiteCheck, SimWebsiteSummary as WebsiteSummary } from '../schemas.js';
import { hash2, hash3, hash4, normal, pick, unit, weighted } from './hash.js';

/**
 * Simulated website checks. Site i checks at CHECK_EPOCH + phase + c·interval for c = 0, 1, ...;
 * check c is a pure function of (site, c), so any window is computed without history.
 *
 * Failures come in outages on a 6-hour grid: in some slots the site is down for a stretch
 * at least one check interval long (so at least one check sees it). That makes failure
 * counts over any window countable from the grid without building checks, and gives each
 * outage exactly one `website_down` event (at its first failing check).
 */

export const CHECK_EPOCH_MS = Date.UTC(2024, 0, 1);
const DAY_MS = 86_400_000;
const OUTAGE_SLOT_MS = 6 * 3_600_000;
const MAX_OUTAGE_EXTRA_MS = 30 * 60_000;
const TIMEOUT_MS = 30_000;

export interface SiteProfile {
  readonly id: number;
  readonly index: number;
  readonly key: number;
  readonly name: string;
  readonly url: string;
  readonly intervalMs: number;
  readonly phaseMs: number;
  readonly medianTtfbMs: number;
  readonly httpVersion: string;
  readonly tlsVersion: string;
  readonly headers: Readonly<Record<HeaderFlag, boolean>>;
  readonly securityScore: number;
  readonly cdn: { readonly datacenter: string; readonly fallback: string } | null;
  /** Certificates are renewed every `certRenewDays`, each valid `certValidDays`. */
  readonly certRenewDays: number;
  readonly certValidDays: number;
  readonly certPhaseMs: number;
  readonly issuer: string;
  readonly outageProbability: number;
  readonly accountSlot: number;
  readonly accountCount: number;
  readonly siteCount: number;
  /** When monitoring of the site was paused: no check runs from then on. Null: never paused. */
  readonly pausedAtMs: number | null;
}

type HeaderFlag =
  | 'has_hsts'
  | 'has_x_frame_options'
  | 'has_x_content_type_options'
  | 'has_csp'
  | 'has_referrer_policy'
  | 'has_permissions_policy';

/** Score weights of the security headers; they add up to 100. */
const HEADER_WEIGHTS: Readonly<Record<HeaderFlag, number>> = {
  has_hsts: 25,
  has_x_frame_options: 15,
  has_x_content_type_options: 15,
  has_csp: 25,
  has_referrer_policy: 10,
  has_permissions_policy: 10,
};

const SUBDOMAINS = ['shop', 'www', 'api', 'blog', 'status', 'docs', 'app', 'auth', 'cdn', 'mail'] as const;
const DATACENTRES = ['FRA', 'AMS', 'LHR', 'CDG', 'WAW', 'ARN'] as const;

export interface SiteSeed {
  readonly seed: number;
  readonly accountSlot: number;
  readonly accountCount: number;
  readonly index: number;
  readonly siteCount: number;
  readonly domain: string;
}

/**
 * The last website of an account with two or more was paused early in November 2026 (a
 * per-seed moment over three days), so at the times tests use it has 30 days of history
 * but nothing in the last week, and long after that nothing within any retention.
 */
const PAUSES_FROM_MS = Date.UTC(2026, 10, 5);
const PAUSE_SPREAD_S = 3 * 86_400;

function pausedAtMs(s: SiteSeed, h: (salt: number) => number): number | null {
  if (s.siteCount < 2 || s.index !== s.siteCount - 1) return null;
  return PAUSES_FROM_MS + Math.floor(unit(h(18)) * PAUSE_SPREAD_S) * 1000;
}

/** Website ids: 40001 + slot + index·accounts, so accounts never share one. */
export function websiteId(accountSlot: number, accountCount: number, index: number): number {
  return 40_001 + accountSlot + index * accountCount;
}

export function createSiteProfile(s: SiteSeed): SiteProfile {
  const h = (salt: number): number => hash4(s.seed, s.accountSlot, 0x5173 + s.index, salt);
  const sub = SUBDOMAINS[s.index % SUBDOMAINS.length] ?? 'www';
  const round = Math.floor(s.index / SUBDOMAINS.length);
  const name = `${sub}${round > 0 ? round + 1 : ''}.${s.domain}`;
  const intervalMs = unit(h(1)) < 0.8 ? 60_000 : 300_000;
  const headers = {} as Record<HeaderFlag, boolean>;
  let securityScore = 0;
  (Object.keys(HEADER_WEIGHTS) as HeaderFlag[]).forEach((flag, i) => {
    headers[flag] = unit(h(10 + i)) < 0.65;
    if (headers[flag]) securityScore += HEADER_WEIGHTS[flag];
  });
  const letsEncrypt = unit(h(3)) < 0.7;
  const datacenter = pick(h(5), DATACENTRES);
  return {
    id: websiteId(s.accountSlot, s.accountCount, s.index),
    index: s.index,
    key: hash3(s.seed, s.accountSlot, 0x5173 + s.index),
    name,
    url: `https://${name}/`,
    intervalMs,
    phaseMs: Math.floor(unit(h(2)) * (intervalMs / 1000)) * 1000,
    medianTtfbMs: 80 + Math.floor(320 * unit(h(4)) ** 2),
    httpVersion: weighted(h(6), [
      ['HTTP/2', 6],
      ['HTTP/1.1', 2],
      ['HTTP/3', 2],
    ] as const),
    tlsVersion: unit(h(7)) < 0.75 ? 'TLSv1.3' : 'TLSv1.2',
    headers,
    securityScore,
    cdn: unit(h(8)) < 0.6 ? { datacenter, fallback: pick(hash2(h(5), 1), DATACENTRES) } : null,
    certRenewDays: letsEncrypt ? 60 : 335,
    certValidDays: letsEncrypt ? 90 : 365,
    certPhaseMs: Math.floor(unit(h(9)) * (letsEncrypt ? 60 : 335) * DAY_MS),
    issuer: letsEncrypt ? "Let's Encrypt R11" : pick(h(17), ['Sectigo RSA DV', 'DigiCert TLS RSA SHA256 2020 CA1']),
    outageProbability: 0.04 + 0.16 * unit(h(16)),
    accountSlot: s.accountSlot,
    accountCount: s.accountCount,
    siteCount: s.siteCount,
    pausedAtMs: pausedAtMs(s, h),
  };
}

/** Whether the site is paused at `nowMs`. */
export const isPaused = (site: SiteProfile, nowMs: number): boolean => site.pausedAtMs !== null && nowMs >= site.pausedAtMs;

export interface SiteOutage {
  readonly startMs: number;
  readonly endMs: number;
  /** 0 for a timeout. */
  readonly status: number;
}

export function outageInSlot(site: SiteProfile, slot: number): SiteOutage | undefined {
  const h = hash3(site.key, 0x0d0e, slot);
  if (unit(h) >= site.outageProbability) return undefined;
  const length = site.intervalMs + Math.floor(unit(hash2(h, 1)) * (MAX_OUTAGE_EXTRA_MS / 1000)) * 1000;
  const room = OUTAGE_SLOT_MS - site.intervalMs - MAX_OUTAGE_EXTRA_MS;
  const startMs = slot * OUTAGE_SLOT_MS + Math.floor(unit(hash2(h, 2)) * (room / 1000)) * 1000;
  const status = weighted(hash2(h, 3), [
    [503, 4],
    [502, 2.5],
    [500, 1.5],
    [0, 2],
  ] as const);
  return { startMs, endMs: startMs + length, status };
}

function outageAt(site: SiteProfile, timeMs: number): SiteOutage | undefined {
  const outage = outageInSlot(site, Math.floor(timeMs / OUTAGE_SLOT_MS));
  return outage && timeMs >= outage.startMs && timeMs < outage.endMs ? outage : undefined;
}

const checkBase = (site: SiteProfile): number => CHECK_EPOCH_MS + site.phaseMs;
export const checkTimeMs = (site: SiteProfile, c: number): number => checkBase(site) + c * site.intervalMs;

/**
 * Index range [first, last] of the checks with checked_at in [fromMs, toMs]; empty if first > last.
 * A paused site ran no check from its pause on.
 */
export function checkRange(site: SiteProfile, fromMs: number, toMs: number): { first: number; last: number } {
  const base = checkBase(site);
  const until = site.pausedAtMs === null ? toMs : Math.min(toMs, site.pausedAtMs - 1);
  const first = Math.max(0, Math.ceil((fromMs - base) / site.intervalMs));
  const last = Math.floor((until - base) / site.intervalMs);
  return { first, last };
}

export function countChecks(site: SiteProfile, fromMs: number, toMs: number): number {
  const { first, last } = checkRange(site, fromMs, toMs);
  return Math.max(0, last - first + 1);
}

/** Failed checks in [fromMs, toMs], counted from the outage grid. */
export function countFailures(site: SiteProfile, fromMs: number, toMs: number): number {
  let failures = 0;
  for (let slot = Math.floor(fromMs / OUTAGE_SLOT_MS); slot <= Math.floor(toMs / OUTAGE_SLOT_MS); slot++) {
    const outage = outageInSlot(site, slot);
    if (!outage) continue;
    failures += countChecks(site, Math.max(fromMs, outage.startMs), Math.min(toMs, outage.endMs - 1));
  }
  return failures;
}

/**
 * checked_at of the first failing check of an outage (an outage spans at least one
 * interval); undefined when no check saw it because the site was paused by then.
 */
export function firstFailureMs(site: SiteProfile, outage: SiteOutage): number | undefined {
  const { first, last } = checkRange(site, outage.startMs, outage.endMs - 1);
  return first <= last ? checkTimeMs(site, first) : undefined;
}

/** The newest check at or before `nowMs` (before the pause for a paused site), if any. */
function lastCheck(site: SiteProfile, nowMs: number): WebsiteCheck | undefined {
  const { last } = checkRange(site, checkBase(site), nowMs);
  return last >= 0 ? buildCheck(site, last) : undefined;
}

/**
 * Check ids increase with time across the whole account (one id per second and site) and
 * are interleaved by account, so no two accounts share one.
 */
export function checkId(site: SiteProfile, c: number): number {
  const seconds = (checkTimeMs(site, c) - CHECK_EPOCH_MS) / 1000;
  return (seconds * site.siteCount + site.index) * site.accountCount + site.accountSlot + 1;
}

function dailyLoad(timeMs: number): number {
  return 0.5 + 0.5 * Math.sin((2 * Math.PI * (timeMs % DAY_MS)) / DAY_MS);
}

/** Time to first byte of a successful check: log-normal around the site's median, slower at busy hours. */
export function ttfbMs(site: SiteProfile, c: number): number {
  const t = checkTimeMs(site, c);
  const z = normal(hash3(site.key, 0x77fb, c));
  return Math.round(Math.min(8_000, Math.max(15, site.medianTtfbMs * Math.exp(0.45 * z) * (0.85 + 0.3 * dailyLoad(t)))));
}

export function certDaysRemaining(site: SiteProfile, timeMs: number): number {
  return Math.floor((certExpiresAtMs(site, timeMs) - timeMs) / DAY_MS);
}

export function certExpiresAtMs(site: SiteProfile, timeMs: number): number {
  const renewMs = site.certRenewDays * DAY_MS;
  const issued = Math.floor((timeMs - site.certPhaseMs) / renewMs) * renewMs + site.certPhaseMs;
  return issued + site.certValidDays * DAY_MS;
}

export function buildCheck(site: SiteProfile, c: number): WebsiteCheck {
  const t = checkTimeMs(site, c);
  const outage = outageAt(site, t);
  const h = (salt: number): number => hash3(site.key, salt, c);
  const timedOut = outage?.status === 0;
  const cacheStatus = weighted(h(0xcf), [
    ['HIT', 70],
    ['MISS', 15],
    ['DYNAMIC', 10],
    ['EXPIRED', 5],
  ] as const);
  return {
    id: checkId(site, c),
    success: !outage,
    status_code: outage ? outage.status : 200,
    ttfb_ms: timedOut ? TIMEOUT_MS : ttfbMs(site, c),
    http_version: site.httpVersion,
    tls_version: site.tlsVersion,
    cert_days_remaining: certDaysRemaining(site, t),
    checked_at: new Date(t).toISOString(),
    dns_lookup: Math.round(2 + 40 * unit(h(0xd45)) ** 3),
    tls_handshake: Math.round(15 + 60 * unit(h(0x715)) ** 2),
    security_score: site.securityScore,
    ...site.headers,
    cf_cache_status: site.cdn && !timedOut ? cacheStatus : null,
    cf_datacenter: site.cdn ? (unit(h(0xdc)) < 0.9 ? site.cdn.datacenter : site.cdn.fallback) : null,
  };
}

export function buildChecks(site: SiteProfile, fromMs: number, toMs: number): WebsiteCheck[] {
  const { first, last } = checkRange(site, fromMs, toMs);
  const out: WebsiteCheck[] = [];
  for (let c = first; c <= last; c++) out.push(buildCheck(site, c));
  return out;
}

function uptimePct(site: SiteProfile, fromMs: number, toMs: number): number | null {
  const total = countChecks(site, fromMs, toMs);
  if (total === 0) return null;
  return Math.round(((total - countFailures(site, fromMs, toMs)) / total) * 100_000) / 1000;
}

interface HourOfChecks {
  readonly first: number;
  /** Time to first byte per check of the hour; NaN for a failed check. */
  readonly ttfb: Float64Array;
}

const HOUR_MS = 3_600_000;
const MAX_CACHED_HOURS_PER_SITE = 800;
// Checks are pure functions of (site, index), so an hour's values never change: the
// 24-hour aggregates of every site are recomputed on each /websites call from cached hours.
const hoursBySite = new WeakMap<SiteProfile, Map<number, HourOfChecks>>();

function hourOfChecks(site: SiteProfile, hour: number): HourOfChecks {
  let hours = hoursBySite.get(site);
  if (!hours) {
    hours = new Map();
    hoursBySite.set(site, hours);
  }
  let cached = hours.get(hour);
  if (!cached) {
    const { first, last } = checkRange(site, hour * HOUR_MS, (hour + 1) * HOUR_MS - 1);
    const ttfb = new Float64Array(Math.max(0, last - first + 1));
    for (let c = first; c <= last; c++) ttfb[c - first] = outageAt(site, checkTimeMs(site, c)) ? NaN : ttfbMs(site, c);
    cached = { first, ttfb };
    if (hours.size >= MAX_CACHED_HOURS_PER_SITE) hours.clear();
    hours.set(hour, cached);
  }
  return cached;
}

/** Average and 95th percentile of the time to first byte of the successful checks in [fromMs, toMs]. */
function ttfbStats(site: SiteProfile, fromMs: number, toMs: number): { avg: number | null; p95: number | null } {
  const { first, last } = checkRange(site, fromMs, toMs);
  if (last < first) return { avg: null, p95: null };
  const values = new Float64Array(last - first + 1);
  let n = 0;
  let sum = 0;
  for (let hour = Math.floor(fromMs / HOUR_MS); hour <= Math.floor(toMs / HOUR_MS); hour++) {
    const h = hourOfChecks(site, hour);
    for (let k = 0; k < h.ttfb.length; k++) {
      const c = h.first + k;
      const v = h.ttfb[k] ?? NaN;
      if (c < first || c > last || Number.isNaN(v)) continue;
      values[n++] = v;
      sum += v;
    }
  }
  if (n === 0) return { avg: null, p95: null };
  const sorted = values.subarray(0, n).sort();
  return { avg: Math.round((sum / n) * 10) / 10, p95: sorted[Math.min(n - 1, Math.ceil(n * 0.95) - 1)] ?? null };
}

const windowStart = (nowMs: number, days: number): number => nowMs - days * DAY_MS + 1;

export function websiteBody(site: SiteProfile, nowMs: number): Website {
  const from = windowStart(nowMs, 1);
  const latest = lastCheck(site, nowMs);
  const stats = ttfbStats(site, from, nowMs);
  return {
    id: site.id,
    name: site.name,
    url: site.url,
    enabled: !isPaused(site, nowMs),
    check_interval_seconds: site.intervalMs / 1000,
    up: latest ? latest.success : true,
    last_checked_at: latest?.checked_at ?? null,
    last_status_code: latest?.status_code ?? null,
    checks_24h: countChecks(site, from, nowMs),
    failures_24h: countFailures(site, from, nowMs),
    uptime_pct_24h: uptimePct(site, from, nowMs),
    avg_ttfb_ms_24h: stats.avg,
    p95_ttfb_ms_24h: stats.p95,
  };
}

/**
 * The summary: uptime over three windows, ttfb, TLS as the newest check saw it, and the
 * checks of the last ten intervals (none for a site paused longer ago than that).
 */
export function websiteSummaryBody(site: SiteProfile, nowMs: number): WebsiteSummary {
  const recent = buildChecks(site, nowMs - 10 * site.intervalMs + 1, nowMs).reverse();
  const newest = lastCheck(site, nowMs);
  return {
    id: site.id,
    name: site.name,
    url: site.url,
    uptime_pct_24h: uptimePct(site, windowStart(nowMs, 1), nowMs),
    uptime_pct_7d: uptimePct(site, windowStart(nowMs, 7), nowMs),
    uptime_pct_30d: uptimePct(site, windowStart(nowMs, 30), nowMs),
    avg_ttfb_ms_24h: ttfbStats(site, windowStart(nowMs, 1), nowMs).avg,
    tls: {
      version: site.tlsVersion,
      cert_days_remaining: newest ? newest.cert_days_remaining : certDaysRemaining(site, nowMs),
      cert_expires_at: new Date(certExpiresAtMs(site, newest ? Date.parse(newest.checked_at) : nowMs)).toISOString(),
      issuer: site.issuer,
    },
    recent_checks: recent,
  };
}
