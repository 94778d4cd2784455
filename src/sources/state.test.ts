import { describe, expect, it } from 'vitest';
import { EMPTY_ALERTS_STATE, mapRecentAlerts } from './alerts/map.js';
import { DEFAULT_CHECK_BUCKETS, EMPTY_CHECKS_STATE, mapChecks } from './checks/map.js';
import type { SeriesHostState } from './series/map.js';
import { decodeAlerts, encodeAlerts } from './alerts/state.js';
import { decodeChecks, encodeChecks } from './checks/state.js';
import { decodeSeriesHost, encodeSeriesHost } from './series/state.js';

/** What a source saves comes back equal, through JSON text as the state file stores it. */
const viaJson = <T>(value: T): unknown => JSON.parse(JSON.stringify(value));
const BOUNDS = { ttfb: DEFAULT_CHECK_BUCKETS.ttfb.length, dns: DEFAULT_CHECK_BUCKETS.dnsLookup.length, tls: DEFAULT_CHECK_BUCKETS.tlsHandshake.length };

describe('state codecs', () => {
  it('series: totals, cursors and a 120-bit hole bitmap survive', () => {
    const state: SeriesHostState = {
      counters: new Map([
        ['nginx.http.request.count', { total: 12345, sum: 0, coveredUntilMs: 1_795_348_800_000, countingSinceMs: 1_795_340_000_000, intervalMs: 60_000, holes: (1n << 119n) | 5n, lastSeenMs: 1_795_348_900_000 }],
        ['system.disk.io', { total: 7, sum: 0, coveredUntilMs: 1_795_348_800_000, countingSinceMs: -Infinity, intervalMs: 60_000, holes: 0n, lastSeenMs: 1_795_348_900_000 }],
      ]),
      missing: { null: 3, window_gap: 1, partial_overlap: 0, invalid: 2 },
    };
    expect(decodeSeriesHost(viaJson(encodeSeriesHost(state)))).toEqual(state);
  });

  it('series: a state file written before counters kept where they began counting still loads, that start not known', () => {
    const older = {
      counters: [['nginx.http.request.count', { total: 5, sum: 0, coveredUntilMs: 1_795_348_800_000, intervalMs: 60_000, holes: '0', lastSeenMs: 1_795_348_900_000 }]],
      missing: { null: 0, window_gap: 0, partial_overlap: 0, invalid: 0 },
    };
    expect(decodeSeriesHost(older).counters.get('nginx.http.request.count')).toMatchObject({ total: 5, coveredUntilMs: 1_795_348_800_000, countingSinceMs: -Infinity });
  });

  it('checks: a first poll that found nothing (cursor at -Infinity) and a counting one survive', () => {
    const empty = mapChecks({ website_id: 1, checks: [], total: 0 }, EMPTY_CHECKS_STATE, { account: 'a', websiteId: 1, websiteName: 'w' }).state;
    expect(empty.cursor?.checkedAtMs).toBe(-Infinity);
    expect(decodeChecks(viaJson(encodeChecks(empty)), BOUNDS)).toEqual(empty);
    const check = (id: number, at: string) => ({ id, checked_at: at, success: true, status_code: 200, ttfb_ms: 120, cdn_cache_status: 'HIT' });
    const counted = mapChecks({ website_id: 1, checks: [check(2, '2026-11-22T12:01:00Z'), check(3, '2026-11-22T12:02:00Z')], total: 2 }, empty, { account: 'a', websiteId: 1, websiteName: 'w' }).state;
    expect(decodeChecks(viaJson(encodeChecks(counted)), BOUNDS)).toEqual(counted);
  });

  it('checks: a histogram saved with other bucket bounds starts afresh, the counters and cursor continue', () => {
    const check = { id: 2, checked_at: '2026-11-22T12:01:00Z', success: true, ttfb_ms: 100 };
    const first = mapChecks({ website_id: 1, checks: [], total: 0 }, EMPTY_CHECKS_STATE, { account: 'a', websiteId: 1, websiteName: 'w' }).state;
    const state = mapChecks({ website_id: 1, checks: [check], total: 1 }, first, { account: 'a', websiteId: 1, websiteName: 'w' }).state;
    const decoded = decodeChecks(viaJson(encodeChecks(state)), { ...BOUNDS, ttfb: 3 });
    expect(decoded.ttfb).toBeUndefined();
    expect(decoded.cursor).toEqual(state.cursor);
    expect(decoded.results).toEqual(state.results);
  });

  it('alerts: floors at -Infinity, recent ids, counters and the page size survive', () => {
    const events = [
      { type: 'website_down', id: 7, source_id: '1', source_name: 'shop', occurred_at: '2026-11-22T12:00:00Z' },
      { type: 'host_alert', id: 7, source_id: '9', source_name: 'cpu', occurred_at: '2026-11-22T12:00:30Z' },
    ];
    const first = mapRecentAlerts([], EMPTY_ALERTS_STATE, { account: 'a', requestedLimit: 100 }).state;
    const state = mapRecentAlerts(events, first, { account: 'a', requestedLimit: 100 }).state;
    expect(decodeAlerts(viaJson(encodeAlerts(first)))).toEqual(first);
    expect(decodeAlerts(viaJson(encodeAlerts(state)))).toEqual(state);
  });

  it.each([
    ['series with a negative total', () => decodeSeriesHost({ counters: [['x', { total: -1, sum: 0, coveredUntilMs: 0, intervalMs: 60000, holes: '0', lastSeenMs: 0 }]], missing: { null: 0, window_gap: 0, partial_overlap: 0, invalid: 0 } }), /^series host state at counters\.0\.1\.total: /],
    ['series holes that are not hex', () => decodeSeriesHost({ counters: [['x', { total: 1, sum: 0, coveredUntilMs: 0, intervalMs: 60000, holes: 'zz', lastSeenMs: 0 }]], missing: { null: 0, window_gap: 0, partial_overlap: 0, invalid: 0 } }), /holes/],
    ['checks that are a string', () => decodeChecks('nope', BOUNDS), /^checks state: /],
    ['alerts with a page size of 0', () => decodeAlerts({ ...viaJson(encodeAlerts(EMPTY_ALERTS_STATE)) as object, limit: 0 }), /^alerts state at limit: /],
  ])('refuses %s with a one-line reason', (_label, decode, message) => {
    expect(decode).toThrow(message);
  });
});
