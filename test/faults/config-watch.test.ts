import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../simulator/index.js';
import { freePort } from '../support/prometheus.js';
import { startExporterProcess, type ExporterProcess } from './process.js';

/**
 * The real process with its config and keys on volumes laid out as the kubelet lays out a
 * mounted ConfigMap and Secret, updated as the kubelet updates them (a new folder, then the
 * `..data` symlink swapped): the exporter reloads in place, without SIGHUP or restart.
 */

let sim: RunningSimulator;
let dir: string;
const running: ExporterProcess[] = [];

beforeAll(async () => {
  sim = await startSimulator({ monitoringPort: 0, releasesPort: 0, marketplacePort: 0, hosts: 2, websites: 2 });
  dir = mkdtempSync(join(tmpdir(), 'monapi-config-watch-'));
});
afterAll(async () => {
  for (const p of running) p.child.kill('SIGKILL');
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A volume as the kubelet writes it: `name -> ..data/name`, `..data -> ..<version>`. */
function kubeletVolume(path: string) {
  mkdirSync(path, { recursive: true });
  let version = 0;
  return (files: Record<string, string>) => {
    version += 1;
    const folder = `..2026_11_26_10_00_${String(version).padStart(2, '0')}.${version}`;
    mkdirSync(join(path, folder));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(path, folder, name), text);
    symlinkSync(folder, join(path, '..data_tmp'));
    renameSync(join(path, '..data_tmp'), join(path, '..data'));
    for (const name of Object.keys(files)) {
      if (!existsSync(join(path, name))) symlinkSync(join('..data', name), join(path, name));
    }
  };
}

const account = (name: string) => `  - name: ${name}
    base_url: ${sim.monitoringBaseUrl}
    api_key_file: ../secrets/${name}
    metrics: {include: ["system.cpu.user"]}
`;

const metricsOf = async (p: ExporterProcess) => (await fetch(`${p.url}/metrics`)).text();

async function waitForMetrics(p: ExporterProcess, pattern: RegExp, timeoutMs = 20_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const body = await metricsOf(p);
    if (pattern.test(body)) return body;
    if (Date.now() > deadline) throw new Error(`/metrics did not match ${pattern} within ${timeoutMs} ms:\n${body.split('\n').filter((l) => l.includes('account=')).slice(0, 30).join('\n')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('config watch', () => {
  it('picks up a changed ConfigMap and Secret in place; a broken config keeps the previous one and says so', async () => {
    const publishConfig = kubeletVolume(join(dir, 'config'));
    const publishSecrets = kubeletVolume(join(dir, 'secrets'));
    // The pro key is wrong at first, as when a Secret is created after the pod.
    publishSecrets({ pro: 'not-the-pro-key-0000000000000000' });
    publishConfig({ 'monapi.yaml': `accounts:\n${account('pro')}` });
    const p = await startExporterProcess(
      [`--config.file=${join(dir, 'config', 'monapi.yaml')}`, '--config.watch-interval=200ms'],
      {},
      await freePort(),
    );
    running.push(p);
    await waitForMetrics(p, /^monapi_upstream_requests_total\{api="monitoring",account="pro",endpoint="[^"]+",code="401"\} [1-9]/m);

    // The Secret is fixed: the pro account restarts with the right key, no signal sent.
    publishSecrets({ pro: sim.keys.pro, business: sim.keys.business });
    const keyChange = JSON.parse(await p.waitForLine(/configuration files changed/)) as { files: string[] };
    expect(keyChange.files).toEqual([join(dir, 'secrets', 'pro')]);
    expect(JSON.parse(await p.waitForLine(/configuration reloaded/))).toMatchObject({ changed: ['pro'] });
    await waitForMetrics(p, /^monapi_upstream_requests_total\{api="monitoring",account="pro",endpoint="[^"]+",code="200"\} [1-9]/m);

    // The ConfigMap gains an account: it is polled.
    const linesBefore = p.lines.length;
    publishConfig({ 'monapi.yaml': `accounts:\n${account('pro')}${account('business')}` });
    await waitForMetrics(p, /^monapi_upstream_requests_total\{api="monitoring",account="business",endpoint="[^"]+",code="200"\} [1-9]/m);
    const reloaded = p.lines.slice(linesBefore).map((l) => JSON.parse(l) as { msg: string; changed?: string[]; files?: string[] });
    expect(reloaded.find((l) => l.msg.startsWith('configuration files changed'))?.files).toEqual([join(dir, 'config', 'monapi.yaml')]);
    expect(reloaded.find((l) => l.msg === 'configuration reloaded')?.changed).toEqual(['business']);
    expect(await metricsOf(p)).toMatch(/^monapi_exporter_config_last_reload_successful 1$/m);

    // A broken ConfigMap: refused, both accounts go on, the metric says 0.
    publishConfig({ 'monapi.yaml': `accounts:\n${account('pro')}${account('business')}  - name: broken\n    base_url: nope\n` });
    const failure = JSON.parse(await p.waitForLine(/configuration reload failed/)) as { err: { message: string } };
    expect(failure.err.message).toContain('accounts[2].base_url: must be an http or https URL');
    await waitForMetrics(p, /^monapi_exporter_config_last_reload_successful 0$/m);
    const status = (await (await fetch(`${p.url}/status`)).json()) as { accounts: { account: string }[]; config: { last_reload_successful: boolean } };
    expect(status.accounts.map((a) => a.account).sort()).toEqual(['business', 'pro']);
    expect(status.config.last_reload_successful).toBe(false);
    // Ten more looks at the unchanged broken file.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(p.lines.filter((l) => l.includes('configuration reload failed')), 'a broken file is reported once, not at every look').toHaveLength(1);

    // Fixed again: reloaded, the metric back to 1.
    publishConfig({ 'monapi.yaml': `accounts:\n${account('pro')}${account('business')}` });
    await waitForMetrics(p, /^monapi_exporter_config_last_reload_successful 1$/m);
    for (const line of p.lines) expect(line).not.toContain(sim.keys.pro);
    p.child.kill('SIGTERM');
    expect(await p.exited()).toBe(0);
  }, 90_000);

  it('does not watch with --config.watch-interval=0', async () => {
    const publishConfig = kubeletVolume(join(dir, 'config-off'));
    const config = (cadence: string) => `accounts:\n  - name: pro\n    base_url: ${sim.monitoringBaseUrl}\n    api_key_env: SIM_PRO_KEY\n    cadence: {checks: ${cadence}}\n`;
    publishConfig({ 'monapi.yaml': config('60s') });
    const p = await startExporterProcess([`--config.file=${join(dir, 'config-off', 'monapi.yaml')}`], { SIM_PRO_KEY: sim.keys.pro, MONAPI_CONFIG_WATCH_INTERVAL: '0' }, await freePort());
    running.push(p);
    publishConfig({ 'monapi.yaml': config('2m') });
    await new Promise((r) => setTimeout(r, 2_000));
    expect(p.lines.some((l) => l.includes('configuration files changed') || l.includes('configuration reloaded'))).toBe(false);
    p.child.kill('SIGHUP');
    expect(JSON.parse(await p.waitForLine(/configuration reloaded/))).toMatchObject({ changed: ['pro'] });
    p.child.kill('SIGTERM');
    expect(await p.exited()).toBe(0);
  }, 30_000);
});
