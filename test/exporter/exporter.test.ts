import { afterEach, describe, expect, it } from 'vitest';
import { drive, type Driven } from '../support/drive.js';
import { sampleValue, samplesOf } from '../support/exposition-text.js';

/** The whole exporter against the simulator on a fake clock: behaviour an operator relies on. */

const ACCOUNT = (name: string, env: string, extra = '') => `  - name: ${name}
    base_url: \${monitoring}
    api_key_env: ${env}
${extra}`;

let driven: Driven | undefined;
afterEach(async () => {
  await driven?.stop();
  driven = undefined;
});

describe('the exporter against the simulator', () => {
  it('reports monapi_up 0 with the reason after a 401 or a 403, and 1 for a good key; no key appears anywhere', async () => {
    driven = await drive({
      config: `accounts:\n${ACCOUNT('good', 'GOOD')}${ACCOUNT('starter', 'STARTER')}${ACCOUNT('wrong', 'WRONG')}`,
      env: (sim) => ({ GOOD: sim.keys.pro, STARTER: sim.keys.starter, WRONG: 'secret-wrong-key-123' }),
    });
    await driven.advance(30_000);
    const body = await driven.scrape();
    expect(sampleValue(body, 'monapi_up{account="good"}')).toBe(1);
    expect(sampleValue(body, 'monapi_up{account="starter"}')).toBe(0);
    expect(sampleValue(body, 'monapi_up{account="wrong"}')).toBe(0);
    expect(samplesOf(body, 'monapi_up_reason').filter((line) => line.endsWith(' 1'))).toEqual([
      'monapi_up_reason{account="starter",reason="plan_required"} 1',
      'monapi_up_reason{account="wrong",reason="unauthorized"} 1',
    ]);
    expect(samplesOf(body, 'monapi_up_reason')).toHaveLength(3 * 4);
    // A refused key is an answer: the exporter is ready and says so through monapi_up.
    expect(driven.exporter.ready()).toBe(true);
    const status = await (await fetch(`${driven.exporter.url}/status`)).text();
    for (const text of [body, status]) {
      expect(text).not.toContain(driven.simulator.keys.pro);
      expect(text).not.toContain(driven.simulator.keys.starter);
      expect(text).not.toContain('secret-wrong-key-123');
    }
    // 401 and 403 are not retried in a loop: a handful of requests in 30 s, not one per cadence tick.
    const stats = driven.simulator.stats();
    expect(stats.monitoring.starter?.total ?? 0).toBeLessThanOrEqual(5);
    expect(JSON.parse(status)).toMatchObject({ accounts: [{ account: 'good', up: true }, { account: 'starter', up: false }, { account: 'wrong', up: false }] });
  });

  it('removes the series of a host that disappears upstream within one host-list cycle', async () => {
    driven = await drive({
      simulator: { hosts: 4, websites: 1 },
      config: `accounts:\n${ACCOUNT('acme', 'KEY')}`,
      env: (sim) => ({ KEY: sim.keys.pro }),
    });
    await driven.advance(120_000);
    const account = driven.simulator.world.accountByKey(driven.simulator.keys.pro)!;
    const before = await driven.scrape();
    const hosts = account.hosts(driven.clock.now()).filter((h) => h.allowed);
    const gone = hosts[hosts.length - 1]!;
    expect(before).toContain(`host_uuid="${gone.uuid}"`);
    expect(before).toMatch(new RegExp(`^monapi_system_cpu_time_ratio\\{[^}]*host_uuid="${gone.uuid}"`, 'm'));

    account.removeHosts(1, driven.clock.now());
    await driven.advance(61_000);
    const after = await driven.scrape();
    // An alert rule bound to the host is upstream configuration and stays; nothing else may.
    const left = after.split('\n').filter((l) => l.includes(`host_uuid="${gone.uuid}"`) && !l.startsWith('monapi_alert_rule_host_info'));
    expect(left).toEqual([]);
    expect(after).toMatch(/^monapi_system_cpu_time_ratio\{/m);
  });

  it('becomes ready after the first complete cycle, not before', async () => {
    driven = await drive({
      simulator: { hosts: 3, websites: 1 },
      config: `accounts:\n${ACCOUNT('acme', 'KEY')}`,
      env: (sim) => ({ KEY: sim.keys.pro }),
    });
    expect(driven.exporter.ready()).toBe(false);
    expect((await fetch(`${driven.exporter.url}/-/ready`)).status).toBe(503);
    await driven.advance(60_000);
    expect(driven.exporter.ready()).toBe(true);
    expect((await fetch(`${driven.exporter.url}/-/ready`)).status).toBe(200);
    const body = await driven.scrape();
    for (const family of ['monapi_host_info', 'monapi_system_cpu_time_ratio', 'monapi_website_info', 'monapi_alert_rule_info', 'monapi_account_info']) {
      expect(body).toMatch(new RegExp(`^${family}\\{`, 'm'));
    }
  });

  it('polls offline hosts less often and costs nothing for hosts beyond the plan limit', async () => {
    driven = await drive({
      simulator: { hosts: 12, websites: 0 },
      config: `accounts:\n${ACCOUNT('acme', 'KEY')}`,
      env: (sim) => ({ KEY: sim.keys.pro }),
    });
    await driven.advance(10 * 60_000);
    const body = await driven.scrape();
    const account = driven.simulator.world.accountByKey(driven.simulator.keys.pro)!;
    const notAllowed = account.hosts(driven.clock.now()).filter((h) => !h.allowed);
    expect(notAllowed.length).toBeGreaterThan(0);
    for (const host of notAllowed) {
      expect(body).toContain(`monapi_host_allowed{account="acme",host_uuid="${host.uuid}"} 0`);
      expect(body).not.toMatch(new RegExp(`^monapi_system_cpu_time_ratio\\{[^}]*host_uuid="${host.uuid}"`, 'm'));
    }
    const perHostSeries = new Map<string, number>();
    for (const line of body.split('\n')) {
      const m = /^monapi_upstream_requests_total\{[^}]*endpoint="\/hosts\/\{uuid\}\/metrics\/series"[^}]*\} (\d+)/.exec(line);
      if (m) perHostSeries.set(line, Number(m[1]));
    }
    const seriesRequests = [...perHostSeries.values()].reduce((a, b) => a + b, 0);
    const allowed = account.hosts(driven.clock.now()).filter((h) => h.allowed).length;
    // Ten minutes at a 60 s cadence is at most 11 runs per allowed host (plus batching); no more.
    expect(seriesRequests).toBeLessThanOrEqual(allowed * 11 * 2);
    expect(seriesRequests).toBeGreaterThan(0);
  });

  it('under demand far above the budget spends at least 95% of the limit with zero 429s, and says the cadence is stretched', async () => {
    driven = await drive({
      simulator: { hosts: 80, websites: 10 },
      config: `accounts:\n${ACCOUNT('acme', 'KEY', '    headroom: 0.02\n')}`,
      env: (sim) => ({ KEY: sim.keys.pro }),
    });
    await driven.advance(2 * 60_000);
    driven.simulator.resetStats();
    await driven.advance(5 * 60_000);
    const pro = driven.simulator.stats().monitoring.pro!;
    expect(pro.by_status['429'] ?? 0).toBe(0);
    const minutes = (driven.clock.now() - (pro.first_request_ms ?? 0)) / 60_000;
    const perMinute = pro.total / minutes;
    expect(perMinute / 120).toBeGreaterThanOrEqual(0.95);
    expect(perMinute / 120).toBeLessThanOrEqual(1);
    const body = await driven.scrape();
    const effective = sampleValue(body, 'monapi_plan_cadence_seconds{account="acme",source="series",cadence="effective"}');
    expect(effective).toBeGreaterThan(60);
  });
});
