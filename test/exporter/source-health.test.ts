import pino from 'pino';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { clearFaults, setFaults } from '../integration/harness.js';
import { drive, type Driven } from '../support/drive.js';
import { sampleValue, samplesOf } from '../support/exposition-text.js';

/**
 * Every failure is visible where operators look: monapi_source_up per source with a reason,
 * /status and the landing page, while readiness stays about the process. And the request
 * budget follows the rate limit /account states when it is lower than the configured one.
 */

let driven: Driven | undefined;
afterEach(async () => {
  await driven?.stop();
  driven = undefined;
});

const account = (name: string, env: string, extra = '') => `  - name: ${name}
    base_url: \${monitoring}
    api_key_env: ${env}
${extra}`;

function capturingLog() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino({ level: 'info' }, stream), lines };
}

describe('source health', () => {
  it('says every source works, then names the failing ones with the reason, and recovers', async () => {
    driven = await drive({ simulator: { hosts: 2, websites: 1 }, config: `accounts:\n${account('acme', 'KEY')}`, env: (sim) => ({ KEY: sim.keys.pro }) });
    await driven.advance(90_000);
    let body = await driven.scrape();
    const up = samplesOf(body, 'monapi_source_up');
    for (const source of ['hosts', 'account', 'websites', 'checks', 'website_summary', 'alerts', 'alert_rules', 'series', 'components', 'metric_catalogue', 'host_details']) {
      expect(up, source).toContain(`monapi_source_up{account="acme",source="${source}",reason=""} 1`);
    }

    await setFaults(driven.simulator, { malformed_json: 1 });
    await driven.advance(61_000);
    body = await driven.scrape();
    expect(sampleValue(body, 'monapi_source_up{account="acme",source="hosts",reason="decode_error"}')).toBe(0);
    expect(sampleValue(body, 'monapi_source_failing_targets{account="acme",source="hosts"}')).toBe(1);
    // Still ready: a failing upstream must not make Prometheus stop scraping what is known.
    expect((await fetch(`${driven.exporter.url}/-/ready`)).status).toBe(200);
    const status = (await (await fetch(`${driven.exporter.url}/status`)).json()) as { accounts: { sources: { source: string; up: boolean; reason?: string; last_error?: { message: string } }[] }[] };
    const hosts = status.accounts[0]?.sources.find((s) => s.source === 'hosts');
    expect(hosts).toMatchObject({ up: false, reason: 'decode_error' });
    expect(hosts?.last_error?.message).toContain('not valid JSON');
    const landing = await (await fetch(`${driven.exporter.url}/`)).text();
    expect(landing).toContain('Failing sources');
    expect(landing).toMatch(/account acme, source hosts: <strong>decode_error<\/strong>/);

    await clearFaults(driven.simulator);
    await driven.advance(61_000);
    body = await driven.scrape();
    expect(sampleValue(body, 'monapi_source_up{account="acme",source="hosts",reason=""}')).toBe(1);
    expect(await (await fetch(`${driven.exporter.url}/`)).text()).toContain('Every source works.');
  });

  it('shows the upgrade URL of a 403 plan_required in /status and on the landing page, and logs it once', async () => {
    const { log, lines } = capturingLog();
    driven = await drive({ simulator: { hosts: 1, websites: 1 }, config: `accounts:\n${account('starter', 'KEY')}`, env: (sim) => ({ KEY: sim.keys.starter }), log });
    await driven.advance(30 * 60_000);
    const body = await driven.scrape();
    expect(sampleValue(body, 'monapi_source_up{account="starter",source="hosts",reason="plan_required"}')).toBe(0);
    const status = (await (await fetch(`${driven.exporter.url}/status`)).json()) as { accounts: { upgrade_url?: string }[] };
    const url = status.accounts[0]?.upgrade_url;
    expect(url).toMatch(/^https?:\/\//);
    expect(await (await fetch(`${driven.exporter.url}/`)).text()).toContain(`Upgrade: ${url ?? ''}`);
    const logged = lines.filter((l) => l.upgradeUrl !== undefined);
    expect(logged).toHaveLength(1);
    expect(logged[0]?.upgradeUrl).toBe(url);
    expect(JSON.stringify(lines)).not.toContain(driven.simulator.keys.starter);
  });
});

describe('the rate limit /account states', () => {
  it('lowers the request budget when it is below the configured one, and never raises it', async () => {
    const { log, lines } = capturingLog();
    driven = await drive({
      simulator: { hosts: 1, websites: 1, rateLimitPerMinute: 60, burst: 10 },
      config: `accounts:\n${account('low', 'KEY', '    rate_limit: {requests_per_minute: 120, burst: 30}\n')}${account('cautious', 'OTHER', '    rate_limit: {requests_per_minute: 30, burst: 5}\n')}`,
      env: (sim) => ({ KEY: sim.keys.pro, OTHER: sim.keys.business }),
      log,
    });
    await driven.advance(10_000);
    const body = await driven.scrape();
    expect(sampleValue(body, 'monapi_account_rate_limit_requests_per_second{account="low"}')).toBe(1);
    // 60/min minus 10 % headroom, and a burst of 10 minus headroom.
    expect(sampleValue(body, 'monapi_plan_budget_requests_per_second{account="low"}')).toBeCloseTo(0.9, 10);
    expect(sampleValue(body, 'monapi_budget_burst{account="low"}')).toBe(9);
    // The account allows more than configured: the configuration stands.
    expect(sampleValue(body, 'monapi_plan_budget_requests_per_second{account="cautious"}')).toBeCloseTo(0.45, 10);
    expect(sampleValue(body, 'monapi_budget_burst{account="cautious"}')).toBe(4);
    await driven.advance(10 * 60_000);
    const warnings = lines.filter((l) => String(l.msg).includes('lower rate limit than configured'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ account: 'low', upstreamPerMinute: 60, budgetPerMinute: 60, budgetBurst: 10 });
    expect(lines.filter((l) => String(l.msg).includes('allows more requests than configured'))).toHaveLength(1);
  });
});
