import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { FamilySamples } from '../../exposition/model.js';
import { renderText } from '../../exposition/render-text.js';
import { runSuccessivePolls } from '../../../test/support/family-lines.js';
import type { WebsiteCheck, WebsiteCheckList } from './decode.js';
import {
  bucketsProblem,
  CHECK_FAMILIES,
  DEFAULT_CHECK_BUCKETS,
  checksCadenceMs,
  CHECKS_MAX_WINDOW_MINUTES,
  EMPTY_CHECKS_STATE,
  mapChecks,
  nextChecksQuery,
  type ChecksMapResult,
  type ChecksState,
} from './map.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const ID = 'account="prod",website_id="40001",website="shop.example.com"';
const OPTS = { account: 'prod', websiteId: 40001, websiteName: 'shop.example.com', buckets: { ttfb: [0.1, 1], dnsLookup: [0.1, 1], tlsHandshake: [0.1, 1] } };

/** Check number n, taken n minutes after T0, with id 100 + n. */
function check(n: number, overrides: Partial<WebsiteCheck> = {}): WebsiteCheck {
  return {
    id: 100 + n,
    success: true,
    status_code: 200,
    ttfb: 0.05,
    http_version: 'HTTP/2',
    tls_version: 'TLSv1.3',
    cert_remaining: 30 * 86_400,
    checked_at: new Date(T0 + n * 60_000).toISOString(),
    dns_lookup: 0.005,
    tls_handshake: 0.02,
    security_score: 0.75,
    has_hsts: true,
    has_x_frame_options: false,
    has_x_content_type_options: true,
    has_csp: false,
    has_referrer_policy: true,
    has_permissions_policy: false,
    ...overrides,
  };
}

function page(checks: WebsiteCheck[], total = checks.length): WebsiteCheckList {
  return { website_id: 40001, total, checks };
}

/** The sample lines of the rendered exposition text. */
function lines(families: readonly FamilySamples[]): string[] {
  return renderText(families)
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'));
}

function runPolls(pages: readonly WebsiteCheckList[], state: ChecksState = EMPTY_CHECKS_STATE): ChecksMapResult[] {
  return runSuccessivePolls(pages, state, (p, s) => mapChecks(p, s, OPTS));
}

describe('mapChecks over successive polls', () => {
  it.each([
    {
      name: 'first poll counts nothing, starts every counter and histogram at 0 and shows the newest check',
      pages: [page([check(3), check(2), check(1)])],
      counted: [0],
      want: [
        `monapi_website_checks_total{${ID},result="success"} 0`,
        `monapi_website_checks_total{${ID},result="failure"} 0`,
        `monapi_website_check_ttfb_seconds_bucket{${ID},le="0.1"} 0`,
        `monapi_website_check_ttfb_seconds_bucket{${ID},le="+Inf"} 0`,
        `monapi_website_check_ttfb_seconds_count{${ID}} 0`,
        `monapi_website_check_timestamp_seconds{${ID}} ${(T0 + 3 * 60_000) / 1000}`,
        `monapi_website_check_success{${ID}} 1`,
        `monapi_website_check_status_code{${ID}} 200`,
      ],
      absent: ['monapi_website_cdn_cache_checks_total{', 'monapi_website_cdn_info{'],
    },
    {
      name: 'overlapping windows count each check once (newest first, then oldest first)',
      pages: [page([check(2), check(1)]), page([check(1), check(2), check(3), check(4)]), page([check(3), check(4), check(5)])],
      counted: [0, 2, 1],
      want: [
        `monapi_website_checks_total{${ID},result="success"} 3`,
        `monapi_website_check_ttfb_seconds_bucket{${ID},le="0.1"} 3`,
        `monapi_website_check_ttfb_seconds_sum{${ID}} 0.15000000000000002`,
        `monapi_website_check_ttfb_seconds_count{${ID}} 3`,
        `monapi_website_check_dns_lookup_seconds_count{${ID}} 3`,
        `monapi_website_check_tls_handshake_seconds_count{${ID}} 3`,
        `monapi_website_check_timestamp_seconds{${ID}} ${(T0 + 5 * 60_000) / 1000}`,
      ],
      absent: [],
    },
    {
      name: 'checks at the same time are told apart by id',
      pages: [page([check(1, { id: 10 })]), page([check(1, { id: 9 }), check(1, { id: 10 }), check(1, { id: 11 })])],
      counted: [0, 1],
      want: [`monapi_website_checks_total{${ID},result="success"} 1`],
      absent: [],
    },
    {
      name: 'a failed check counts as failure, is not observed in the histograms and drives the gauges',
      pages: [page([check(1)]), page([check(2, { success: false, status_code: 0, ttfb: 30 })])],
      counted: [0, 1],
      want: [
        `monapi_website_checks_total{${ID},result="success"} 0`,
        `monapi_website_checks_total{${ID},result="failure"} 1`,
        `monapi_website_check_ttfb_seconds_count{${ID}} 0`,
        `monapi_website_check_success{${ID}} 0`,
        `monapi_website_check_status_code{${ID}} 0`,
      ],
      absent: [],
    },
    {
      name: 'a check with null status, TTFB and TLS fields is a failure, not dropped: uptime is not overstated',
      pages: [page([check(1)]), page([{ id: 102, checked_at: new Date(T0 + 2 * 60_000).toISOString() }, check(3)])],
      counted: [0, 2],
      want: [
        `monapi_website_checks_total{${ID},result="success"} 1`,
        `monapi_website_checks_total{${ID},result="failure"} 1`,
        `monapi_website_check_ttfb_seconds_count{${ID}} 1`,
      ],
      absent: [],
    },
    {
      name: 'without a success field, a 2xx or 3xx status is a success and anything else a failure',
      pages: [
        page([check(1)]),
        page([
          { id: 102, checked_at: new Date(T0 + 2 * 60_000).toISOString(), status_code: 301, ttfb: 0.08 },
          { id: 103, checked_at: new Date(T0 + 3 * 60_000).toISOString(), status_code: 503, ttfb: 0.08 },
          { id: 104, checked_at: new Date(T0 + 4 * 60_000).toISOString(), status_code: 200 },
        ]),
      ],
      counted: [0, 3],
      want: [
        `monapi_website_checks_total{${ID},result="success"} 2`,
        `monapi_website_checks_total{${ID},result="failure"} 1`,
        `monapi_website_check_ttfb_seconds_count{${ID}} 1`,
        `monapi_website_check_success{${ID}} 1`,
        `monapi_website_tls_info{${ID},tls_version="",http_version=""} 1`,
      ],
      absent: ['monapi_website_security_header{', 'monapi_website_cert_expiry_timestamp_seconds{'],
    },
    {
      name: 'a poll without new checks keeps the counts and the gauges of the newest check',
      pages: [page([check(1)]), page([check(2, { ttfb: 0.5 })]), page([check(2, { ttfb: 0.5 })]), page([])],
      counted: [0, 1, 0, 0],
      want: [
        `monapi_website_checks_total{${ID},result="success"} 1`,
        `monapi_website_check_ttfb_seconds_bucket{${ID},le="0.1"} 0`,
        `monapi_website_check_ttfb_seconds_bucket{${ID},le="1"} 1`,
        `monapi_website_check_ttfb_seconds_bucket{${ID},le="+Inf"} 1`,
        `monapi_website_check_ttfb_seconds_sum{${ID}} 0.5`,
        `monapi_website_check_timestamp_seconds{${ID}} ${(T0 + 2 * 60_000) / 1000}`,
      ],
      absent: [],
    },
    {
      name: 'a first poll without any check: every later check counts',
      pages: [page([]), page([check(1), check(2)])],
      counted: [0, 2],
      want: [`monapi_website_checks_total{${ID},result="success"} 2`],
      absent: [],
    },
    {
      name: 'odd values: negative and huge durations, score out of range, no TLS, empty CDN fields',
      pages: [
        page([check(1)]),
        page([
          check(2, {
            ttfb: -0.005,
            dns_lookup: 2 ** 31 / 1000,
            tls_handshake: 0,
            security_score: 1.01,
            tls_version: '',
            cdn_cache_status: '',
            cdn_datacenter: '',
          }),
        ]),
      ],
      counted: [0, 1],
      want: [
        `monapi_website_checks_total{${ID},result="success"} 1`,
        `monapi_website_check_ttfb_seconds_count{${ID}} 0`,
        `monapi_website_check_dns_lookup_seconds_bucket{${ID},le="1"} 0`,
        `monapi_website_check_dns_lookup_seconds_bucket{${ID},le="+Inf"} 1`,
        `monapi_website_check_dns_lookup_seconds_sum{${ID}} 2147483.648`,
        `monapi_website_check_tls_handshake_seconds_bucket{${ID},le="0.1"} 1`,
        `monapi_website_tls_info{${ID},tls_version="",http_version="HTTP/2"} 1`,
      ],
      absent: ['monapi_website_security_score_ratio{', 'monapi_website_cert_expiry_timestamp_seconds{', 'monapi_website_cdn'],
    },
  ])('$name', ({ pages, counted, want, absent }) => {
    const results = runPolls(pages);
    expect(results.map((r) => r.counted)).toEqual(counted);
    const last = results.at(-1);
    if (!last) throw new Error('no polls');
    const got = lines(last.families);
    for (const line of want) expect(got).toContain(line);
    const text = got.join('\n');
    for (const prefix of absent) expect(text).not.toContain(prefix);
  });
});

describe('mapChecks gauges of the newest check', () => {
  it('shows TLS, certificate expiry, security score and headers, and the CDN data centre', () => {
    const newest = check(1, { cert_remaining: 10 * 86_400, cdn_cache_status: 'HIT', cdn_datacenter: 'FRA' });
    const { families } = mapChecks(page([newest]), EMPTY_CHECKS_STATE, OPTS);
    const got = lines(families);
    const checkedAt = (T0 + 60_000) / 1000;
    expect(got).toEqual(
      expect.arrayContaining([
        `monapi_website_tls_info{${ID},tls_version="TLSv1.3",http_version="HTTP/2"} 1`,
        `monapi_website_cert_expiry_timestamp_seconds{${ID},basis="estimate"} ${checkedAt + 10 * 86_400}`,
        `monapi_website_security_score_ratio{${ID}} 0.75`,
        `monapi_website_security_header{${ID},header="hsts"} 1`,
        `monapi_website_security_header{${ID},header="x_frame_options"} 0`,
        `monapi_website_security_header{${ID},header="x_content_type_options"} 1`,
        `monapi_website_security_header{${ID},header="csp"} 0`,
        `monapi_website_security_header{${ID},header="referrer_policy"} 1`,
        `monapi_website_security_header{${ID},header="permissions_policy"} 0`,
        `monapi_website_cdn_info{${ID},datacenter="FRA"} 1`,
        // Seeded by the first poll, at 0.
        `monapi_website_cdn_cache_checks_total{${ID},cache_status="HIT"} 0`,
      ]),
    );
  });

  it('takes the exact certificate expiry from the website summary when there is one', () => {
    const exact = Date.UTC(2027, 0, 15, 8, 30, 12);
    const { families } = mapChecks(page([check(1, { cert_remaining: 10 * 86_400 })]), EMPTY_CHECKS_STATE, { ...OPTS, certExpiresAtMs: exact });
    expect(lines(families)).toContain(`monapi_website_cert_expiry_timestamp_seconds{${ID},basis="upstream"} ${exact / 1000}`);
    // ...even before any check has been seen.
    const none = mapChecks(page([]), EMPTY_CHECKS_STATE, { ...OPTS, certExpiresAtMs: exact });
    expect(lines(none.families)).toContain(`monapi_website_cert_expiry_timestamp_seconds{${ID},basis="upstream"} ${exact / 1000}`);
  });

  it('an expired certificate gives an expiry in the past', () => {
    const { families } = mapChecks(page([check(0, { cert_remaining: -2 * 86_400 })]), EMPTY_CHECKS_STATE, OPTS);
    expect(lines(families)).toContain(`monapi_website_cert_expiry_timestamp_seconds{${ID},basis="estimate"} ${T0 / 1000 - 2 * 86_400}`);
  });
});

describe('mapChecks CDN cache statuses', () => {
  it('holds a status first seen after the first poll at 0 for one poll, so rate() sees its first checks', () => {
    const results = runPolls([
      page([check(1, { cdn_cache_status: 'HIT' })]),
      page([check(2, { cdn_cache_status: 'HIT' }), check(3, { cdn_cache_status: 'MISS' }), check(4, { cdn_cache_status: undefined })]),
      page([check(5, { cdn_cache_status: 'MISS' })]),
    ]);
    const cache = (r: ChecksMapResult) => lines(r.families).filter((l) => l.startsWith('monapi_website_cdn_cache_checks_total'));
    expect(results.map(cache)).toEqual([
      [`monapi_website_cdn_cache_checks_total{${ID},cache_status="HIT"} 0`],
      [`monapi_website_cdn_cache_checks_total{${ID},cache_status="HIT"} 1`, `monapi_website_cdn_cache_checks_total{${ID},cache_status="MISS"} 0`],
      [`monapi_website_cdn_cache_checks_total{${ID},cache_status="HIT"} 1`, `monapi_website_cdn_cache_checks_total{${ID},cache_status="MISS"} 2`],
    ]);
  });
});

describe('mapChecks paging', () => {
  it.each([
    { name: 'first poll: never behind', pages: [page([check(1)], 900)], want: [false] },
    { name: 'a full page with more in the window', pages: [page([check(1)]), page([check(2), check(3)], 600)], want: [false, true] },
    { name: 'everything in the window returned', pages: [page([check(1)]), page([check(2), check(3)], 2)], want: [false, false] },
  ])('$name', ({ pages, want }) => {
    expect(runPolls(pages).map((r) => r.behind)).toEqual(want);
  });

  it('the next poll of a page that was behind continues from the advanced cursor', () => {
    const [, second] = runPolls([page([check(1)]), page([check(2), check(3)], 600)]);
    if (!second) throw new Error('no second poll');
    expect(second.state.cursor).toEqual({ checkedAtMs: T0 + 3 * 60_000, id: 103 });
    expect(nextChecksQuery(second.state, T0 + 3 * 60_000)).toEqual({ since: '1m', limit: 500 });
  });

  it('refuses bucket bounds that are not ascending, naming them', () => {
    expect(() => mapChecks(page([]), EMPTY_CHECKS_STATE, { ...OPTS, buckets: { ...OPTS.buckets, ttfb: [1, 0.5] } })).toThrow(
      /\(ttfb\) bounds must be strictly ascending, but 0.5 follows 1: \[1, 0.5\]/,
    );
  });

  it.each([
    [[], 'must list at least one bucket bound'],
    [[0.1, 0.1], 'strictly ascending'],
    [[0, 1], 'above 0'],
    [[1, Infinity], 'finite'],
    [[Number.NaN], 'finite'],
  ])('bucketsProblem(%j) says %s', (bounds, words) => {
    expect(bucketsProblem(bounds)).toContain(words);
  });

  it('has default buckets that pass its own check, with the TTFB thresholds of web guidance', () => {
    const { ttfb, dnsLookup, tlsHandshake } = DEFAULT_CHECK_BUCKETS;
    for (const bounds of [ttfb, dnsLookup, tlsHandshake]) expect(bucketsProblem(bounds)).toBeUndefined();
    expect(DEFAULT_CHECK_BUCKETS.ttfb).toEqual(expect.arrayContaining([0.8, 1.8]));
  });
});

describe('nextChecksQuery', () => {
  const at = (checkedAtMs: number): ChecksState => ({ ...EMPTY_CHECKS_STATE, cursor: { checkedAtMs, id: 1 } });
  it.each([
    { name: 'before the first poll: the newest check only', state: EMPTY_CHECKS_STATE, now: T0, want: { limit: 1 } },
    { name: 'cursor just now: one minute (margin)', state: at(T0), now: T0, want: { since: '1m', limit: 500 } },
    { name: 'cursor 90 s back: rounds up with margin', state: at(T0 - 90_000), now: T0, want: { since: '3m', limit: 500 } },
    { name: 'cursor 5 min back', state: at(T0 - 300_000), now: T0, want: { since: '6m', limit: 500 } },
    { name: 'cursor in the future (clock skew): still one minute', state: at(T0 + 600_000), now: T0, want: { since: '1m', limit: 500 } },
    { name: 'cursor weeks back: capped', state: at(T0 - 30 * 86_400_000), now: T0, want: { since: `${CHECKS_MAX_WINDOW_MINUTES}m`, limit: 500 } },
    {
      name: 'after a first poll without checks: the widest window',
      state: at(-Infinity),
      now: T0,
      want: { since: `${CHECKS_MAX_WINDOW_MINUTES}m`, limit: 500 },
    },
  ])('$name', ({ state, now, want }) => {
    expect(nextChecksQuery(state, now)).toEqual(want);
  });
});

describe('checksCadenceMs', () => {
  it.each([
    { configured: 60_000, interval: 300, want: 300_000 },
    { configured: 60_000, interval: 60, want: 60_000 },
    { configured: 120_000, interval: 30, want: 120_000 },
    { configured: 60_000, interval: undefined, want: 60_000 },
  ])('configured $configured ms, website checked every $interval s → $want ms', ({ configured, interval, want }) => {
    expect(checksCadenceMs(configured, interval)).toBe(want);
  });
});

describe('src/sources/checks/metrics.md', () => {
  it('has one row per family, with the type and unit the code gives it', () => {
    const doc = readFileSync(new URL('./metrics.md', import.meta.url), 'utf8');
    const rows = doc.split('\n').filter((line) => line.startsWith('| monapi_'));
    const specs = Object.values(CHECK_FAMILIES);
    expect(rows.map((row) => row.split(' | ')[0]?.slice(2)).sort()).toEqual(specs.map((s) => s.name).sort());
    for (const spec of specs) expect(rows).toContainEqual(expect.stringContaining(`| ${spec.name} | ${spec.type} | ${spec.unit ?? ''} |`));
  });
});
