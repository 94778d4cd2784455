import { describe, expect, it } from 'vitest';
import { statusPage, type StatusPageInfo } from './status-page.js';
import { readStatus } from './status-view.js';

/**
 * The status page drawn from a /status value shaped as the exporter's (an account with every
 * kind of trouble, one without, the release lookups), with hostile upstream text in every
 * place an upstream can put text. The browser-level checks (DOM, CSP, a phone's width) are in
 * test/server/status-page.test.ts against a running exporter.
 */

const NOW = Date.UTC(2026, 10, 22, 12, 30, 0);
const EVIL = `<img src=x onerror="alert(1)">'"&`;

function payload(evil = EVIL): unknown {
  return {
    version: '1.2.3',
    ready: true,
    accounts: [
      {
        account: 'shop',
        up: true,
        subscription: { plan: `business ${evil}`, host_limit: 50, website_limit: 20, hosts_used: 12, websites_used: 6 },
        hosts_polled: 12,
        websites_polled: 6,
        series_exposed: 1122,
        sources: [
          { source: 'hosts', up: true, targets: 1, failing_targets: 0, fields: { missing: [], found: { uuid: { path: 'uuid' } } }, list: { path: 'hosts', lists: 1, pages: 1, incomplete: 0 } },
          {
            source: 'websites',
            up: true,
            targets: 1,
            failing_targets: 0,
            fields: { missing: ['up'], found: {} },
            list: { path: 'items', lists: 1, pages: 2, via: 'Link header', incomplete: 1, example: { target: 'websites', read: 3, announced: 9, reason: `page 2 failed: ${evil}` } },
          },
          { source: 'alerts', up: false, reason: 'http_5xx', targets: 1, failing_targets: 1, last_error: { at_ms: NOW - 90_000, message: `monitoring /alerts: server error (HTTP 500): ${evil}` } },
          { source: 'checks', up: false, reason: 'pending', targets: 6, failing_targets: 0 },
        ],
        plan: {
          requestsPerCycle: 49,
          demandPerSecond: 0.366,
          supplyPerSecond: 1.96,
          fullCycleSeconds: 25,
          pressure: 0.187,
          sources: [
            { source: 'hosts', effectiveCadenceSeconds: 60, configuredCadenceSeconds: 60 },
            { source: 'websites', effectiveCadenceSeconds: 120, configuredCadenceSeconds: 60 },
            { source: 'alerts', effectiveCadenceSeconds: 60, configuredCadenceSeconds: 60 },
          ],
        },
        budget: {
          effectiveRatePerSecond: 1.96,
          configuredRatePerSecond: 1.96,
          burst: 29,
          pausedUntilMs: null,
          authFailed: null,
          queued: { high: 0, normal: 1, bulk: 2 },
          inFlight: 1,
          totals: { requests: 70, attempts: 74, succeeded: 66, failed: 4, rateLimited: 3, pauses: 1, pausedSeconds: 2, retries: { rate_limited: 3, server_error: 1, timeout: 0, network: 0 } },
        },
        staleness_seconds: { hosts: 18.6, websites: 400, alerts: 95 },
        lag_seconds: 0,
        last_errors: [{ source: 'alerts', atMs: NOW - 90_000, kind: 'server_error', message: `server error ${evil}` }],
      },
      { account: 'cheap', up: false, reason: 'plan_required', upgrade_url: 'javascript:alert(document.domain)', sources: [{ source: 'hosts', up: false, reason: 'plan_required', targets: 1, failing_targets: 1 }] },
    ],
    releases: {
      account: '(releases)',
      mode: 'marketplace',
      schedule: '*/5 * * * *',
      sources: [{ source: 'releases', up: true, targets: 2, failing_targets: 0 }],
      projects: [
        { project: 'nginx', version: `1.27.3${evil}`, last_success_ms: NOW - 60_000, answer_freshness: 'fetch_time' },
        { project: 'php/php-src', major: '8', last_error: { atMs: NOW - 5_000, kind: 'timeout', message: `timed out ${evil}` } },
      ],
      outdated: {
        lines: [{ project: 'nginx/nginx', line: '1.26', software: ['nginx'], installs: 7, latest_version: '1.26.2' }],
        checks: { shop: { outdated: 15, up_to_date: 10, pending: 0, no_answer: 0, unknown_version: 1 } },
        unknown_versions: [{ account: 'shop', host_uuid: 'h1', component: `web ${evil}`, software: 'nginx', version: `dev${evil}` }],
      },
      budget: { effectiveRatePerSecond: 1, configuredRatePerSecond: 1, burst: 5, queued: {}, inFlight: 0, totals: { attempts: 12, succeeded: 12, failed: 0, rateLimited: 0, pauses: 0, pausedSeconds: 0, retries: {} } },
      staleness_seconds: { releases: 70 },
      last_errors: [],
    },
    shard: { ordinal: 0, total: 1, accounts: ['shop', 'cheap'], accounts_on_other_shards: 0, releases: true },
    config: { last_reload_successful: false, last_reload_at: new Date(NOW - 120_000).toISOString(), last_reload_error: `accounts[0].name: ${evil}` },
    exposition: { generation: 61, series: 3200, families: 166, render_seconds: 0.01 },
  };
}

function info(overrides: Partial<StatusPageInfo> = {}): StatusPageInfo {
  return {
    status: readStatus(payload()),
    ready: true,
    notReadyReason: undefined,
    missing: [{ account: 'shop', source: 'websites', field: 'up', about: 'whether the <latest> check succeeded' }],
    version: '1.2.3',
    telemetryPath: '/metrics',
    nowMs: NOW,
    startedMs: NOW - 3_725_000,
    selfSeries: 1377,
    ...overrides,
  };
}

/** The page as text, tags removed and the escapes read back: what a reader sees. */
const visible = (html: string) =>
  html
    .replace(/<style>[\s\S]*?<\/style>/, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#(\d+);/g, (_m, code: string) => String.fromCharCode(Number(code)))
    .replace(/\s+/g, ' ')
    .replace(/ ([,.:;)])/g, '$1')
    .replace(/\( /g, '(');

describe('the status page', () => {
  const html = statusPage(info());
  const text = visible(html);

  it('has a header with version, uptime, readiness, the last reload and every series served', () => {
    expect(text).toContain('monapi-exporter 1.2.3');
    expect(text).toContain('Up 1 h 2 min');
    expect(text).toContain('Ready, 1 of 2 accounts down, 2 of 6 sources failing');
    expect(text).toContain(`Configuration last reload failed 2026-11-22 12:28:00 UTC (2 min ago): accounts[0].name: ${EVIL}; the previous configuration stays in force`);
    expect(text).toContain('4,577 series on /metrics: 3,200 from the upstream APIs and 1,377 about the exporter itself');
  });

  it('shows each account with its plan, budget and sources', () => {
    expect(text).toContain(`Plan business ${EVIL} (12 of 50 hosts, 6 of 20 websites)`);
    expect(text).toContain('Allowed 118/min, burst 29');
    expect(text).toContain('Planned 22.0/min (19 % of the budget); a full cycle (49 requests) takes 25 s at this rate');
    expect(text).toContain('Used since start 74 requests sent (4 retries), 3 × 429; 66 answered, 4 failed; paused 1 time (2 s)');
    expect(text).toContain('Now 1 in flight, 3 queued');
    // Per source: state, targets, data age (late past two cadences and a minute), cadence, lists, last error.
    expect(text).toContain('hosts up 1 19 s 1 min 1 list, 1 page');
    expect(text).toContain('websites up 1 6 min 40 s stale 2 min (configured 1 min) 1 list, 2 pages 1 incomplete');
    expect(text).toContain(`alerts http_5xx 1 of 1 failing 1 min 35 s 1 min – monitoring /alerts: server error (HTTP 500): ${EVIL} 2026-11-22 12:28:30 UTC (1 min 30 s ago)`);
    expect(text).toContain('checks pending 6');
  });

  it('says which lists were read short and why, and which fields are missing with the lines that would place them', () => {
    expect(text).toContain(`websites: 1 of 1 lists read short at items, next page by Link header. Read 3 items of 9 announced (target websites): page 2 failed: ${EVIL}.`);
    expect(text).toContain('websites.up: whether the <latest> check succeeded');
    expect(html).toContain(['accounts:', '  - name: shop', '    fields:', '      websites:', '        up: &#60;dotted path&#62;   # whether the &#60;latest&#62; check succeeded'].join('\n'));
  });

  it('gives the upgrade address of an account without API access as text unless it is http(s)', () => {
    expect(text).toContain('Account cheap plan_required');
    expect(text).toContain('Upgrade: javascript:alert(document.domain)');
    expect(html).not.toMatch(/href="javascript/i);
    const linked = statusPage(info({ status: readStatus({ accounts: [{ account: 'a', up: false, reason: 'plan_required', upgrade_url: 'https://mon.example/up?a=1&b="2"', sources: [] }] }) }));
    expect(linked).toContain('<a href="https://mon.example/up?a=1&#38;b=&#34;2&#34;" rel="noreferrer noopener">Upgrade: https://mon.example/up?a=1&#38;b=&#34;2&#34;</a>');
  });

  it('shows the release lookups and the outdated software', () => {
    expect(text).toContain('Release lookups');
    expect(text).toContain('Mode marketplace');
    expect(text).toContain(`nginx 1.27.3${EVIL} 2026-11-22 12:29:00 UTC (1 min ago)`);
    expect(text).toContain(`php/php-src major 8 not known yet timed out ${EVIL}`);
    expect(text).toContain('shop 15 10 0 0 1');
    expect(text).toContain('nginx nginx/nginx 1.26 7 1.26.2');
    expect(text).toContain(`shop h1 web ${EVIL} nginx dev${EVIL}`);
  });

  it('escapes every upstream text: no tag, attribute or entity of theirs survives', () => {
    expect(html).not.toContain('<img');
    expect(html).not.toContain('onerror="');
    expect(html).toContain('&#60;img src=x onerror=&#34;alert(1)&#34;&#62;&#39;&#34;&#38;');
    // Everything upstream said is on the page, as text, once per place it can be.
    expect(text.split(EVIL).length - 1).toBe(9);
  });

  it('cuts a long upstream text and says where the whole is', () => {
    const long = `x${'y'.repeat(5000)}END-OF-IT`;
    const page = statusPage(info({ status: readStatus(payload(long)) }));
    expect(page).not.toContain('END-OF-IT');
    expect(visible(page)).toMatch(/y… \(\d+ more characters in \/status\?format=json\)/);
  });

  it('says one thing about readiness: starting, not "every source works"', () => {
    const starting = visible(statusPage(info({ ready: false, notReadyReason: 'account shop: 3 polling job(s) have not run yet', status: readStatus({ accounts: [{ account: 'shop', sources: [{ source: 'hosts', up: true }, { source: 'checks', up: false, reason: 'pending' }] }] }) })));
    expect(starting).toContain('Starting: not ready (account shop: 3 polling job(s) have not run yet)');
    expect(starting).toContain('No source has failed so far. 1 source has not run yet.');
    expect(starting).not.toContain('Every source works');
  });

  it('draws whatever the provider returns without throwing', () => {
    for (const odd of [null, 3, 'text', [], { accounts: 'no' }, { accounts: [null, 4, { sources: [null, { up: 'yes' }] }] }, { releases: [], config: { last_reload_successful: true, last_reload_at: 'never' } }]) {
      expect(statusPage(info({ status: readStatus(odd) }))).toContain('</html>');
    }
  });
});
