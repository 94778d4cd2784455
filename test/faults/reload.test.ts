import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/exporter/config.js';
import { familySum, sampleValue, startRig, type Rig } from './harness.js';

/**
 * Item 3 of issue 13: a reload re-reads the configuration; accounts that did not change
 * keep their runtime, state and budget; a changed one starts afresh but continues its
 * counters; a bad file keeps the old configuration and says so.
 */

const MINUTE = 60_000;
let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const yaml = (monitoring: string, businessCadence = '60s', extra = '') => `accounts:
  - name: pro
    base_url: ${monitoring}
    api_key_env: SIM_PRO_KEY
    metrics: {include: ["system.cpu.user"]}
  - name: business
    base_url: ${monitoring}
    api_key_env: SIM_BUSINESS_KEY
    metrics: {include: ["system.cpu.user"]}
    cadence: {checks: ${businessCadence}}
${extra}`;

describe('reload', () => {
  it('keeps unchanged accounts, restarts a changed one with its counters, refuses a bad file, drops a removed account', async () => {
    rig = await startRig({ simulator: { hosts: 2, websites: 2, rateLimitPerMinute: 100_000, burst: 10_000 } });
    const r = rig;
    const file = join(r.dir, 'monapi.yaml');
    const env = { SIM_PRO_KEY: r.sim.keys.pro, SIM_BUSINESS_KEY: r.sim.keys.business };
    writeFileSync(file, yaml(r.sim.monitoringBaseUrl));
    const exporter = await r.start({
      config: loadConfig(file, env),
      reloadConfig: () => loadConfig(file, env),
      enableLifecycle: true,
    });
    await r.advance(5 * MINUTE);
    const pro = exporter.accounts.find((a) => a.account === 'pro');
    const business = exporter.accounts.find((a) => a.account === 'business');
    const proAttempts = () => (exporter.status().accounts as { account: string; budget: { totals: { attempts: number } } }[]).find((a) => a.account === 'pro')?.budget.totals.attempts ?? 0;
    const attemptsBefore = proAttempts();
    const checksBefore = familySum(await r.scrape(), 'monapi_website_checks_total', 'account="business"');
    expect(checksBefore).toBeGreaterThan(0);

    // Change one account, through POST /-/reload.
    writeFileSync(file, yaml(r.sim.monitoringBaseUrl, '2m'));
    const answer = await fetch(`${exporter.url}/-/reload`, { method: 'POST' });
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe('configuration reloaded; restarted: business\n');
    expect(exporter.accounts.find((a) => a.account === 'pro')).toBe(pro);
    expect(exporter.accounts.find((a) => a.account === 'business')).not.toBe(business);
    expect(proAttempts()).toBeGreaterThanOrEqual(attemptsBefore);
    await r.advance(4 * MINUTE);
    const checksAfter = familySum(await r.scrape(), 'monapi_website_checks_total', 'account="business"');
    expect(checksAfter, 'the changed account continued its counters').toBeGreaterThan(checksBefore);
    expect(exporter.ready()).toBe(true);

    // A broken file: the old configuration stays, the metrics say so.
    writeFileSync(file, `${yaml(r.sim.monitoringBaseUrl, '2m')}  - name: broken\n    base_url: nope\n`);
    const refused = await fetch(`${exporter.url}/-/reload`, { method: 'POST' });
    expect(refused.status).toBe(500);
    expect(await refused.text()).toContain('accounts[2].base_url: must be an http or https URL');
    // Self-metrics are rendered at most once a second (shared by the scrapes within it).
    await r.advance(2_000);
    let body = await r.scrape();
    expect(sampleValue(body, 'monapi_exporter_config_last_reload_successful')).toBe(0);
    expect(exporter.accounts.map((a) => a.account).sort()).toEqual(['business', 'pro']);
    expect((exporter.status().config as { last_reload_successful: boolean }).last_reload_successful).toBe(false);
    await r.advance(2 * MINUTE);
    expect(proAttempts()).toBeGreaterThan(attemptsBefore);

    // Removing an account takes its series off /metrics.
    writeFileSync(file, yaml(r.sim.monitoringBaseUrl, '2m').replace(/ {2}- name: business[\s\S]*$/, ''));
    expect(exporter.reload()).toEqual({ ok: true, changed: ['business'] });
    await exporter.saveState();
    await r.advance(10_000);
    body = await r.scrape();
    const reloadedAt = r.clock.now() - 10_000;
    expect(body).not.toContain('account="business"');
    expect(sampleValue(body, 'monapi_exporter_config_last_reload_successful')).toBe(1);
    expect(sampleValue(body, 'monapi_exporter_config_last_reload_success_timestamp_seconds')).toBe(reloadedAt / 1000);
  });

  it('POST /-/reload: 403 without --web.enable-lifecycle, 405 for GET', async () => {
    rig = await startRig({ simulator: { hosts: 1, websites: 1 } });
    const r = rig;
    const exporter = await r.start({
      reloadConfig: () => r.config(),
      enableLifecycle: false,
    });
    const forbidden = await fetch(`${exporter.url}/-/reload`, { method: 'POST' });
    expect(forbidden.status).toBe(403);
    expect(await forbidden.text()).toBe('Lifecycle API is not enabled: start the exporter with --web.enable-lifecycle (SIGHUP reloads without it)\n');
    const get = await fetch(`${exporter.url}/-/reload`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST, PUT');
    expect(await get.text()).toBe('Method Not Allowed: use POST\n');
    expect((await fetch(`${exporter.url}/-/reload`, { method: 'PUT' })).status).toBe(403);
    expect(forbidden.headers.get('cache-control')).toBe('no-store');
  });
});

describe('stop', () => {
  it('readiness turns false the moment the exporter starts to stop', async () => {
    rig = await startRig({ simulator: { hosts: 1, websites: 1 } });
    const exporter = await rig.start();
    await rig.advance(2 * MINUTE);
    expect(exporter.ready()).toBe(true);
    const stopping = exporter.stop();
    expect(exporter.ready()).toBe(false);
    await stopping;
    rig.exporter = undefined;
  });
});
