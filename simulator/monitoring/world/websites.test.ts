import { describe, expect, it } from 'vitest';

import type { SimWebsiteCheck as WebsiteCheck } from '../schemas.js';
import { createWorld } from '../world.js';
import { SIM_KEYS } from '../world-types.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 30);
const HOUR = 3_600_000;
const DAY = 86_400_000;

const account = createWorld({ seed: 'sites', hosts: 2, websites: 12 }).accountByKey(SIM_KEYS.pro);
if (!account) throw new Error('no pro account');
const a = account;
const all = a.websites(NOW);
/** The sites still checked; the paused one has its own tests below. */
const sites = all.filter((s) => s.enabled);
const paused = all.filter((s) => !s.enabled);

describe('checks', () => {
  it.each(sites.map((s) => [s.name, s.id] as const))('%s: oldest first, evenly spaced, ids increasing', (_name, id) => {
    const checks = a.checks(id, NOW - 6 * HOUR, NOW);
    const interval = a.checkIntervalMs(id);
    expect(checks.length).toBe(a.checkCount(id, NOW - 6 * HOUR, NOW));
    expect(checks.length).toBeGreaterThanOrEqual(Math.floor((6 * HOUR) / interval));
    expect(checks.length).toBeLessThanOrEqual(Math.floor((6 * HOUR) / interval) + 1);
    for (let i = 1; i < checks.length; i++) {
      const [prev, next] = [checks[i - 1], checks[i]] as [WebsiteCheck, WebsiteCheck];
      expect(Date.parse(next.checked_at) - Date.parse(prev.checked_at)).toBe(interval);
      expect(next.id).toBeGreaterThan(prev.id);
    }
    for (const c of checks) {
      const t = Date.parse(c.checked_at);
      expect(t).toBeGreaterThanOrEqual(NOW - 6 * HOUR);
      expect(t).toBeLessThanOrEqual(NOW);
    }
  });

  it('includes both window ends and is empty for an empty window', () => {
    const [site] = sites;
    if (!site) throw new Error('no site');
    const [first] = a.checks(site.id, NOW - HOUR, NOW);
    const t = Date.parse(first?.checked_at ?? '');
    expect(a.checks(site.id, t, t)).toEqual([first]);
    expect(a.checkCount(site.id, t + 1, t + 1)).toBe(0);
    expect(a.checks(site.id, NOW, NOW - 1)).toEqual([]);
  });

  it('check ids are unique across all websites of the account', () => {
    const ids = sites.flatMap((s) => a.checks(s.id, NOW - 2 * HOUR, NOW).map((c) => c.id));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('failures have an error status (or 0 for a timeout) and successes 200', () => {
    const checks = sites.flatMap((s) => a.checks(s.id, NOW - 2 * DAY, NOW));
    const failures = checks.filter((c) => !c.success);
    expect(failures.length).toBeGreaterThan(0);
    expect([...new Set(failures.map((c) => c.status_code))].filter((code) => ![0, 500, 502, 503].includes(code))).toEqual([]);
    expect(checks.filter((c) => c.success).every((c) => c.status_code === 200)).toBe(true);
    expect(failures.filter((c) => c.status_code === 0).every((c) => c.ttfb_ms === 30_000 && c.cf_cache_status === null)).toBe(true);
  });

  it('ttfb is spread around a per-site median, and dns and tls times are small', () => {
    for (const site of sites) {
      const ok = a.checks(site.id, NOW - DAY, NOW).filter((c) => c.success);
      const ttfb = ok.map((c) => c.ttfb_ms).sort((x, y) => x - y);
      const median = ttfb[Math.floor(ttfb.length / 2)] ?? 0;
      expect(median).toBeGreaterThanOrEqual(40);
      expect(median).toBeLessThanOrEqual(900);
      expect(new Set(ttfb).size).toBeGreaterThan(10);
      expect(ok.every((c) => c.dns_lookup >= 0 && c.dns_lookup < 100 && c.tls_handshake > 0 && c.tls_handshake < 200)).toBe(true);
    }
  });

  it('security score follows the security headers; CDN fields are both set or both null', () => {
    const weights = { has_hsts: 25, has_x_frame_options: 15, has_x_content_type_options: 15, has_csp: 25, has_referrer_policy: 10, has_permissions_policy: 10 };
    for (const site of sites) {
      const c = a.checks(site.id, NOW - HOUR, NOW).find((x) => x.success);
      if (!c) continue;
      const expected = Object.entries(weights).reduce((sum, [flag, w]) => sum + (c[flag as keyof typeof weights] ? w : 0), 0);
      expect(c.security_score).toBe(expected);
      expect(c.cf_cache_status === null).toBe(c.cf_datacenter === null);
    }
    const cdnStates = new Set(sites.map((s) => a.checks(s.id, NOW - HOUR, NOW)[0]?.cf_datacenter === null));
    expect(cdnStates).toEqual(new Set([true, false]));
  });

  it('certificate days remaining count down and jump back up on renewal', () => {
    const [site] = sites;
    if (!site) throw new Error('no site');
    const days = Array.from({ length: 400 }, (_, d) => a.checks(site.id, NOW + d * DAY, NOW + d * DAY + 5 * 60_000)[0]?.cert_days_remaining);
    const steps = days.slice(1).map((d, i) => (d ?? NaN) - (days[i] ?? NaN));
    expect(steps.filter((s) => s > 0).length).toBeGreaterThan(0);
    expect(steps.filter((s) => s <= 0 && s !== -1)).toEqual([]);
    expect(days.every((d) => d !== undefined && d > 0)).toBe(true);
  });
});

describe('24-hour aggregates and summary', () => {
  it.each(sites.map((s) => [s.name, s] as const))('%s: aggregates match the last 24 h of checks', (_name, site) => {
    const checks = a.checks(site.id, NOW - DAY + 1, NOW);
    const failures = checks.filter((c) => !c.success).length;
    const last = checks[checks.length - 1];
    expect(site.checks_24h).toBe(checks.length);
    expect(site.failures_24h).toBe(failures);
    expect(site.uptime_pct_24h).toBeCloseTo(((checks.length - failures) / checks.length) * 100, 2);
    expect(site.up).toBe(last?.success);
    expect(site.last_checked_at).toBe(last?.checked_at);
    expect(site.last_status_code).toBe(last?.status_code);
    const ok = checks.filter((c) => c.success).map((c) => c.ttfb_ms);
    expect(site.avg_ttfb_ms_24h).toBeCloseTo(ok.reduce((s, v) => s + v, 0) / ok.length, 0);
    expect(site.p95_ttfb_ms_24h).toBeGreaterThanOrEqual(site.avg_ttfb_ms_24h ?? Infinity);
  });

  it('summary: uptime over three windows, TLS block and the newest 10 checks newest first', () => {
    for (const site of sites) {
      const summary = a.websiteSummary(site.id, NOW);
      expect(summary?.uptime_pct_24h).toBe(site.uptime_pct_24h);
      for (const pct of [summary?.uptime_pct_7d, summary?.uptime_pct_30d]) {
        expect(pct).toBeGreaterThan(50);
        expect(pct).toBeLessThanOrEqual(100);
      }
      const recent = summary?.recent_checks ?? [];
      expect(recent).toHaveLength(10);
      expect(recent).toEqual(a.checks(site.id, NOW - 10 * a.checkIntervalMs(site.id) + 1, NOW).reverse());
      expect(summary?.tls?.cert_days_remaining).toBe(recent[0]?.cert_days_remaining);
    }
    expect(a.websiteSummary(1, NOW)).toBeUndefined();
  });
});

describe('a paused website', () => {
  const site = paused[0]!;
  const pausedAt = Date.UTC(2026, 10, 5);

  it('is the last website of the account, and the only one', () => {
    expect(paused).toHaveLength(1);
    expect(all.at(-1)).toBe(site);
    expect(site).toMatchObject({ enabled: false, checks_24h: 0, failures_24h: 0, uptime_pct_24h: null, avg_ttfb_ms_24h: null, p95_ttfb_ms_24h: null });
  });

  it('ran checks until its pause in early November 2026 and none after it', () => {
    const last = Date.parse(site.last_checked_at ?? '');
    expect(last).toBeGreaterThanOrEqual(pausedAt);
    expect(last).toBeLessThan(pausedAt + 3 * DAY);
    const before = a.checks(site.id, last - HOUR, NOW + 30 * DAY);
    expect(before.at(-1)?.checked_at).toBe(site.last_checked_at);
    expect(before.length).toBe(Math.floor(HOUR / a.checkIntervalMs(site.id)) + 1);
    expect(a.checkCount(site.id, last + 1, NOW + 365 * DAY)).toBe(0);
    expect(site.up).toBe(before.at(-1)?.success);
    expect(site.last_status_code).toBe(before.at(-1)?.status_code);
  });

  it('was an ordinary site before its pause', () => {
    const before = a.websites(pausedAt - DAY).find((s) => s.id === site.id)!;
    expect(before.enabled).toBe(true);
    expect(before.checks_24h).toBe(a.checkCount(site.id, pausedAt - 2 * DAY + 1, pausedAt - DAY));
    expect(before.uptime_pct_24h).not.toBeNull();
  });

  it('summary: no recent checks, null uptime over the empty windows, the 30-day one from before the pause, TLS from its last check', () => {
    const summary = a.websiteSummary(site.id, NOW)!;
    expect(summary.recent_checks).toEqual([]);
    expect([summary.uptime_pct_24h, summary.uptime_pct_7d, summary.avg_ttfb_ms_24h]).toEqual([null, null, null]);
    expect(summary.uptime_pct_30d).toBeGreaterThan(50);
    const last = a.checks(site.id, Date.parse(site.last_checked_at!), NOW)[0]!;
    expect(summary.tls?.cert_days_remaining).toBe(last.cert_days_remaining);
  });

  it('a world of one website has none paused', () => {
    const one = createWorld({ seed: 'sites', hosts: 2, websites: 1 }).accountByKey(SIM_KEYS.pro)!;
    expect(one.websites(NOW).map((s) => s.enabled)).toEqual([true]);
  });
});
