import pino from 'pino';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { clearFaults, setFaults } from '../integration/harness.js';
import { drive, type Driven } from '../support/drive.js';
import { sampleValue, samplesOf } from '../support/exposition-text.js';

/**
 * Every failure is visible where operators look: monapi_source_up per source and
 * monapi_source_up_reason, /status and the landing page, while readiness stays about the
 * process; and a failure changes values, never the set of series. And the request budget
 * follows the rate limit /account states when it is lower than the configured one.
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
    const sources = ['hosts', 'account', 'websites', 'checks', 'website_summary', 'alerts', 'alert_rules', 'series', 'components', 'metric_catalogue', 'host_details', 'api_description'];
    expect(up.sort()).toEqual(sources.map((source) => `monapi_source_up{account="acme",source="${source}"} 1`).sort());

    await setFaults(driven.simulator, { malformed_json: 1 });
    await driven.advance(61_000);
    body = await driven.scrape();
    expect(sampleValue(body, 'monapi_source_up{account="acme",source="hosts"}')).toBe(0);
    expect(sampleValue(body, 'monapi_source_up_reason{account="acme",source="hosts",reason="decode_error"}')).toBe(1);
    expect(samplesOf(body, 'monapi_source_up_reason').filter((line) => line.startsWith('monapi_source_up_reason{account="acme",source="hosts",') && line.endsWith(' 1'))).toHaveLength(1);
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
    expect(sampleValue(body, 'monapi_source_up{account="acme",source="hosts"}')).toBe(1);
    expect(sampleValue(body, 'monapi_source_up_reason{account="acme",source="hosts",reason="decode_error"}')).toBe(0);
    expect(await (await fetch(`${driven.exporter.url}/`)).text()).toContain('Every source works.');
  });

  it('shows the upgrade URL of a 403 plan_required in /status and on the landing page, and logs it once', async () => {
    const { log, lines } = capturingLog();
    driven = await drive({ simulator: { hosts: 1, websites: 1 }, config: `accounts:\n${account('starter', 'KEY')}`, env: (sim) => ({ KEY: sim.keys.starter }), log });
    await driven.advance(30 * 60_000);
    const body = await driven.scrape();
    expect(sampleValue(body, 'monapi_source_up{account="starter",source="hosts"}')).toBe(0);
    expect(sampleValue(body, 'monapi_source_up_reason{account="starter",source="hosts",reason="plan_required"}')).toBe(1);
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

/**
 * The series of a text exposition by family (its `# TYPE` line): every sample's name and
 * labels, without the value. A histogram's or summary's `_bucket`, `_sum` and `_count` lines
 * belong to their family.
 */
function seriesByFamily(body: string): Map<string, string[]> {
  const families = new Map<string, string[]>();
  let family: string[] | undefined;
  for (const line of body.split('\n')) {
    const type = /^# TYPE (\S+) /.exec(line);
    if (type) {
      family = [];
      families.set(type[1]!, family);
    } else if (line !== '' && !line.startsWith('#')) {
      if (family === undefined) throw new Error(`a sample before any # TYPE line: ${line}`);
      family.push(line.slice(0, line.lastIndexOf(' ')));
    }
  }
  for (const series of families.values()) series.sort();
  return families;
}

/**
 * Counters and histograms: their series only ever grow, as outcomes, status codes or values
 * (a CDN's cache status) are seen for the first time, and never go while the exporter runs.
 */
const COUNTED = /^# TYPE (\S+) (counter|histogram)$/gm;

describe('series identity', () => {
  it.each([
    ['unreachable: every request answered 503', { error_503: 1 }, 'unreachable', 'http_5xx'],
    ['answering with broken JSON', { malformed_json: 1 }, 'unreachable', 'decode_error'],
  ] as const)('keeps every series of every family when an account goes down and up again (%s)', async (_name, faults, accountReason, sourceReason) => {
    driven = await drive({
      simulator: { hosts: 2, websites: 1 },
      config: `accounts:\n${account('acme', 'KEY')}${account('other', 'OTHER')}`,
      env: (sim) => ({ KEY: sim.keys.pro, OTHER: sim.keys.business }),
    });
    await driven.advance(90_000);
    const up = await driven.scrape();
    expect(sampleValue(up, 'monapi_up{account="acme"}')).toBe(1);
    expect(sampleValue(up, 'monapi_source_up{account="acme",source="hosts"}')).toBe(1);
    expect([...up.matchAll(/^monapi_(source_)?up_reason\{.*\} 1$/gm)]).toEqual([]);

    // Both accounts share the simulator, so both go down; "other" shows the same series stay for every account.
    await setFaults(driven.simulator, faults);
    await driven.advance(3 * 61_000);
    const down = await driven.scrape();
    expect(sampleValue(down, 'monapi_source_up{account="acme",source="hosts"}')).toBe(0);
    expect(sampleValue(down, `monapi_source_up_reason{account="acme",source="hosts",reason="${sourceReason}"}`)).toBe(1);
    expect(sampleValue(down, 'monapi_up{account="acme"}')).toBe(0);
    expect(sampleValue(down, `monapi_up_reason{account="acme",reason="${accountReason}"}`)).toBe(1);

    await clearFaults(driven.simulator);
    await driven.advance(3 * 61_000);
    const upAgain = await driven.scrape();
    expect(sampleValue(upAgain, 'monapi_up{account="acme"}')).toBe(1);
    expect(sampleValue(upAgain, 'monapi_source_up{account="acme",source="hosts"}')).toBe(1);
    expect([...upAgain.matchAll(/^monapi_(source_)?up_reason\{.*\} 1$/gm)]).toEqual([]);

    const [before, during, after] = [up, down, upAgain].map(seriesByFamily);
    const counted = new Set([...up.matchAll(COUNTED)].map((m) => m[1]!));
    // The same families in the three states; every other family with the same series in each.
    expect([...during!.keys()].sort()).toEqual([...before!.keys()].sort());
    expect([...after!.keys()].sort()).toEqual([...before!.keys()].sort());
    for (const [family, series] of before!) {
      if (counted.has(family)) {
        // A counter keeps every series it had (the first error adds monapi_job_runs_total{outcome="error"}).
        expect(during!.get(family), family).toEqual(expect.arrayContaining(series));
        expect(after!.get(family), family).toEqual(expect.arrayContaining(during!.get(family)!));
      } else {
        expect(during!.get(family), `${family} down`).toEqual(series);
        expect(after!.get(family), `${family} up again`).toEqual(series);
      }
    }
    // The families whose series carried the state before this change are among those compared whole.
    for (const family of ['monapi_up', 'monapi_up_reason', 'monapi_source_up', 'monapi_source_up_reason', 'monapi_hosts']) {
      expect(counted.has(family), family).toBe(false);
      expect(before!.get(family)?.length, family).toBeGreaterThan(0);
    }
    expect(counted.size).toBeGreaterThan(10);
    expect(before!.size - counted.size).toBeGreaterThan(50);
    expect(before!.get('monapi_up_reason')).toHaveLength(2 * 4);
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
