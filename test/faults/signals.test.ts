import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../simulator/index.js';
import { freePort } from '../support/prometheus.js';
import { startExporterProcess, type ExporterProcess } from './process.js';

/**
 * The real process: SIGHUP reloads and never kills (Node's default for it is to exit), a
 * broken file on reload keeps the old configuration, and kill -9 at random moments never
 * leaves a state file the next start cannot read.
 */

let sim: RunningSimulator;
let dir: string;
const running: ExporterProcess[] = [];

beforeAll(async () => {
  sim = await startSimulator({ monitoringPort: 0, releasesPort: 0, marketplacePort: 0, hosts: 3, websites: 2 });
  dir = mkdtempSync(join(tmpdir(), 'monapi-signals-'));
});
afterAll(async () => {
  for (const p of running) p.child.kill('SIGKILL');
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

const config = (extra = '') => `accounts:\n  - name: pro\n    base_url: ${sim.monitoringBaseUrl}\n    api_key_env: SIM_PRO_KEY\n${extra}`;

async function start(args: string[] = []): Promise<ExporterProcess> {
  const p = await startExporterProcess([`--config.file=${join(dir, 'monapi.yaml')}`, ...args], { SIM_PRO_KEY: sim.keys.pro }, await freePort());
  running.push(p);
  return p;
}

describe('signals', () => {
  it('SIGHUP reloads and never kills; a broken file keeps the old configuration and says so', async () => {
    writeFileSync(join(dir, 'monapi.yaml'), config());
    const p = await start();
    writeFileSync(join(dir, 'monapi.yaml'), config('    cadence: {checks: 2m}\n'));
    p.child.kill('SIGHUP');
    expect(JSON.parse(await p.waitForLine(/configuration reloaded/))).toMatchObject({ changed: ['pro'] });
    writeFileSync(join(dir, 'monapi.yaml'), config('    cadence: {checks: 1s}\n'));
    p.child.kill('SIGHUP');
    const failure = JSON.parse(await p.waitForLine(/configuration reload failed/)) as { err: { message: string } };
    expect(failure.err.message).toContain('accounts[0].cadence.checks: must be at least 30s');
    const metrics = await (await fetch(`${p.url}/metrics`)).text();
    expect(metrics).toMatch(/^monapi_exporter_config_last_reload_successful 0$/m);
    expect(p.child.exitCode).toBeNull();
    p.child.kill('SIGTERM');
    expect(await p.exited()).toBe(0);
  });

  it('kill -9 at random moments never leaves a state file the next start cannot read', async () => {
    writeFileSync(join(dir, 'monapi.yaml'), config());
    const stateFile = join(dir, 'state.json');
    for (let round = 0; round < 3; round++) {
      const p = await start([`--state.file=${stateFile}`]);
      if (round > 0) await p.waitForLine(/restored cursors and counter totals/);
      expect(p.lines.some((l) => l.includes('set aside'))).toBe(false);
      // Long enough for some saves (every 5 s), then die at a random moment of one.
      const deadline = Date.now() + 8_000;
      while (!existsSync(stateFile) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      await new Promise((r) => setTimeout(r, 500 + Math.random() * 5_000));
      p.child.kill('SIGKILL');
      await p.exited();
    }
    expect(existsSync(stateFile)).toBe(true);
  }, 60_000);
});
