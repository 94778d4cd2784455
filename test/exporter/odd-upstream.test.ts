import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/exporter/config.js';
import { startExporter, type RunningExporter } from '../../src/exporter/index.js';
import { SOURCES } from '../../src/sources/index.js';
import { ODD_HOSTS, ODD_KEY, ODD_TRUTH, startOddUpstream, type OddUpstream } from '../support/odd-upstream.js';

/**
 * The exporter against a Monitoring API written by hand in layouts no other upstream of the
 * project uses (test/support/odd-upstream.ts). Issue 17's promise: every declared field is
 * exported with the right value or reported missing, never silently absent; and an operator
 * who names the missing ones' paths in `fields:` gets them without a release.
 */

let odd: OddUpstream | undefined;
let exporter: RunningExporter | undefined;
afterEach(async () => {
  await exporter?.stop();
  await odd?.close();
  exporter = undefined;
  odd = undefined;
});

async function scrapeAfterOnePass(extra = ''): Promise<string> {
  odd = await startOddUpstream();
  const config = parseConfig(`accounts:\n  - name: odd\n    base_url: ${odd.baseUrl}\n    api_key_env: ODD_KEY\n${extra}`, { env: { ODD_KEY } });
  exporter = await startExporter({ config, listenAddress: '127.0.0.1:0', telemetryPath: '/metrics', log: pino({ level: 'silent' }), processMetrics: false });
  const until = Date.now() + 20_000;
  while (!exporter.ready() || !exporter.idle()) {
    if (Date.now() > until) throw new Error('the exporter did not finish its first pass in 20 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  // The store renders off the scrape path: a snapshot holding every publish made so far.
  await exporter.store.flush();
  return (await fetch(`${exporter.url}/metrics`, { headers: { accept: 'text/plain' } })).text();
}

const value = (body: string, series: string): number | undefined => {
  const line = body.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};
const missingFields = (body: string) =>
  body
    .split('\n')
    .filter((l) => l.startsWith('monapi_decode_field_missing{') && l.endsWith(' 1'))
    .map((l) => /source="([^"]+)",field="([^"]+)"/.exec(l)?.slice(1).join('.') ?? l)
    .sort();

const A = 'account="odd"';
const site = (w: (typeof ODD_TRUTH.websites)[number]) => `${A},website_id="${w.id}",website="${w.name}"`;

describe('a hand-written upstream in layouts nobody used before', () => {
  it('exports every field it finds with the right value, and reports each one it cannot find', async () => {
    const body = await scrapeAfterOnePass();

    expect(value(body, `monapi_account_info{${A},plan="${ODD_TRUTH.plan}"}`)).toBe(1);
    expect(value(body, `monapi_account_host_limit{${A}}`)).toBe(ODD_TRUTH.hostLimit);
    expect(value(body, `monapi_account_website_limit{${A}}`)).toBe(ODD_TRUTH.websiteLimit);
    expect(value(body, `monapi_account_retention_seconds{${A}}`)).toBe(ODD_TRUTH.retentionDays * 86_400);
    expect(value(body, `monapi_account_rate_limit_burst{${A}}`)).toBe(ODD_TRUTH.burst);
    for (const w of ODD_TRUTH.websites) {
      expect(value(body, `monapi_website_info{${site(w)},url="${w.url}"}`)).toBe(1);
      expect(value(body, `monapi_website_enabled{${site(w)}}`)).toBe(w.paused ? 0 : 1);
      expect(value(body, `monapi_website_check_interval_seconds{${site(w)}}`)).toBe(w.intervalSeconds);
      expect(value(body, `monapi_website_checks_24h{${site(w)}}`)).toBe(w.checks24h);
      expect(value(body, `monapi_website_failures_24h{${site(w)}}`)).toBe(w.failures24h);
      expect(value(body, `monapi_website_uptime_ratio{${site(w)},window="24h"}`)).toBeCloseTo(w.uptime24h, 9);
      expect(value(body, `monapi_website_ttfb_24h_avg_seconds{${site(w)}}`)).toBeCloseTo(w.ttfbAvg, 9);
      expect(value(body, `monapi_website_ttfb_24h_p95_seconds{${site(w)}}`)).toBeCloseTo(w.ttfbP95, 9);
      expect(value(body, `monapi_website_last_status_code{${site(w)}}`)).toBe(w.statusCode);
    }
    const [shop, blog] = ODD_TRUTH.websites;
    expect(value(body, `monapi_website_uptime_ratio{${site(shop)},window="7d"}`)).toBe(ODD_TRUTH.summary.uptime7d);
    expect(value(body, `monapi_website_uptime_ratio{${site(shop)},window="30d"}`)).toBe(ODD_TRUTH.summary.uptime30d);
    expect(value(body, `monapi_website_cert_expiry_timestamp_seconds{${site(shop)},basis="upstream"}`)).toBe(Date.parse(ODD_TRUTH.summary.certExpires) / 1000);
    // The newest check of the active website; the paused one is asked for none.
    expect(value(body, `monapi_website_check_status_code{${site(shop)}}`)).toBe(ODD_TRUTH.checks[1].statusCode);
    expect(value(body, `monapi_website_check_success{${site(shop)}}`)).toBe(0);
    expect(odd?.requests).not.toContain(`/api/v2/websites/${blog.id}/checks`);
    const rule = `${A},rule_id="${ODD_TRUTH.rule.id}"`;
    expect(value(body, `monapi_alert_rule_info{${rule},rule="${ODD_TRUTH.rule.name}",metric="${ODD_TRUTH.rule.metric}",operator="${ODD_TRUTH.rule.operator}"}`)).toBe(1);
    expect(value(body, `monapi_alert_rule_threshold{${rule}}`)).toBeCloseTo(ODD_TRUTH.rule.threshold / 100, 9);
    expect(value(body, `monapi_alert_rule_hosts{${rule}}`)).toBe(ODD_HOSTS.length);
    for (const uuid of ODD_HOSTS) expect(value(body, `monapi_alert_rule_host_info{${rule},host_uuid="${uuid}"}`)).toBe(1);
    expect(value(body, `monapi_alert_rule_enabled{${rule}}`)).toBe(1);

    // What the layouts hide from the finder is said, and its metrics are absent, not made up.
    expect(missingFields(body)).toEqual(
      [
        'account.rate_limit',
        'alert_rules.duration',
        'checks.has_permissions_policy',
        'checks.has_referrer_policy',
        'checks.has_x_content_type_options',
        'checks.has_x_frame_options',
        'checks.tls_handshake',
        'checks.tls_version',
        'components.version',
        'website_summary.ttfb_avg_24h',
        'website_summary.uptime_24h',
        'websites.last_checked_at',
        'websites.up',
      ].sort(),
    );
    expect(body).not.toMatch(/^monapi_account_rate_limit_requests_per_second\{/m);
    expect(body).not.toMatch(/^monapi_website_up\{/m);
    expect(body).not.toMatch(/^monapi_alert_rule_duration_seconds\{/m);
    // Never silently absent: every declared field of every source that ran has a line, 0 or 1.
    // (host_details asks only for hosts whose list item lacks fields: here none does.)
    const ran = (source: (typeof SOURCES)[number]) =>
      (source.endpoints ?? []).some((e) => {
        const route = new RegExp(`^/api/v2${e.path.replace(/\{\w+\}/g, '[^/]+')}$`);
        return odd?.requests.some((path) => route.test(path)) ?? false;
      });
    expect(SOURCES.filter((source) => source.fields !== undefined && !ran(source)).map((source) => source.name)).toEqual(['host_details']);
    for (const source of SOURCES.filter(ran)) {
      for (const field of Object.keys(source.fields ?? {})) {
        expect(body, `${source.name}.${field}`).toMatch(new RegExp(`^monapi_decode_field_missing\\{${A},source="${source.name}",field="${field}"\\} [01]$`, 'm'));
      }
    }
  });

  it('reads the fields an operator places with fields:, without a release', async () => {
    const body = await scrapeAfterOnePass(
      [
        '    fields:',
        '      account:',
        '        rate_limit: result.subscription.api.limit',
        '      websites:',
        '        up: lastResult.ok',
        '        last_checked_at: lastResult.ts',
        '      alert_rules:',
        '        duration: sustainSeconds',
        '      components:',
        '        version: ver',
        '',
      ].join('\n'),
    );
    expect(value(body, `monapi_account_rate_limit_requests_per_second{${A}}`)).toBe(ODD_TRUTH.ratePerMinute / 60);
    for (const w of ODD_TRUTH.websites) {
      expect(value(body, `monapi_website_up{${site(w)}}`)).toBe(1);
      expect(value(body, `monapi_website_last_check_timestamp_seconds{${site(w)}}`)).toBe(Date.parse('2026-11-22T12:00:00Z') / 1000);
    }
    expect(value(body, `monapi_alert_rule_duration_seconds{${A},rule_id="${ODD_TRUTH.rule.id}"}`)).toBe(300);
    expect(body).toMatch(/^monapi_component_info\{[^}]*component="nginx @ odd-1",type="nginx",version="1\.27\.3"\} 1$/m);
    expect(missingFields(body)).not.toEqual(expect.arrayContaining(['account.rate_limit', 'websites.up', 'websites.last_checked_at', 'alert_rules.duration', 'components.version']));
  });
});
