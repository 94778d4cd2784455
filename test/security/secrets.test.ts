import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../simulator/index.js';
import { startFaultProxy, type FaultProxy } from '../faults/fault-proxy.js';
import { startExporterProcess, type ExporterProcess } from '../faults/process.js';
import { freePort } from '../support/prometheus.js';

/**
 * Item 9 of issue 13: the whole program, as an operator runs it, with recognisable keys at
 * debug level, driven into 401 (a key the upstream does not know, echoed back in its error
 * body) and 403 plan_required (from a proxy that echoes the key too), a failed reload and a
 * key file. Every place a key could surface is read: every log line, /metrics, /status, the
 * landing page, the readiness text, error pages, the reload answer, --config.check. No hit.
 * (src/upstream/secrets.test.ts forces each path of the HTTP client one by one.)
 */

const KEY_401 = 'canary-401-k3y-5f1d0a9e77';
const KEY_403 = 'canary-403-k3y-c0ffee1234';
const KEY_FILE = 'canary-file-k3y-8badf00d42';

let sim: RunningSimulator;
let proxy: FaultProxy;
let dir: string;
let exporter: ExporterProcess | undefined;

beforeAll(async () => {
  sim = await startSimulator({ monitoringPort: 0, releasesPort: 0, marketplacePort: 0, hosts: 2, websites: 1 });
  proxy = await startFaultProxy(sim.monitoringBaseUrl);
  proxy.set({ kind: 'plan_required' });
  dir = mkdtempSync(join(tmpdir(), 'monapi-secrets-'));
});
afterAll(async () => {
  exporter?.child.kill('SIGKILL');
  await proxy.close();
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('no key anywhere', () => {
  it('in logs at debug level, /metrics, /status, /, readiness, error pages, the reload answer or --config.check', async () => {
    writeFileSync(join(dir, 'file.key'), `${KEY_FILE}\n`);
    const config = `accounts:
  - name: refused
    base_url: ${sim.monitoringBaseUrl}
    api_key_env: KEY_401
  - name: starter
    base_url: ${proxy.baseUrl}
    api_key_env: KEY_403
  - name: from-file
    base_url: ${sim.monitoringBaseUrl}
    api_key_file: file.key
`;
    writeFileSync(join(dir, 'monapi.yaml'), config);
    const env = { KEY_401, KEY_403 };
    exporter = await startExporterProcess([`--config.file=${join(dir, 'monapi.yaml')}`, '--log.level=debug', '--web.enable-lifecycle'], env, await freePort());
    const p = exporter;
    await p.waitForLine(/API key is refused/);
    await p.waitForLine(/plan_required/);
    const texts: Record<string, string> = {};
    for (const path of ['/metrics', '/status', '/', '/-/ready', '/-/healthy', '/nowhere', '/metrics?x=1']) {
      texts[path] = await (await fetch(`${p.url}${path}`)).text();
    }
    texts.openmetrics = await (await fetch(`${p.url}/metrics`, { headers: { accept: 'application/openmetrics-text; version=1.0.0' } })).text();
    // A reload that fails, with a key-looking field pasted into the file.
    writeFileSync(join(dir, 'monapi.yaml'), `${config}    api_key: ${KEY_401}\n`);
    texts.reload = await (await fetch(`${p.url}/-/reload`, { method: 'POST' })).text();
    expect(texts.reload).toContain('API keys must not be written in the config file');
    writeFileSync(join(dir, 'monapi.yaml'), config);
    const check = await import('node:child_process').then(({ spawnSync }) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', `--config.file=${join(dir, 'monapi.yaml')}`, '--config.check'], {
        cwd: new URL('../..', import.meta.url),
        env: { PATH: process.env.PATH ?? '', ...env },
        encoding: 'utf8',
      }),
    );
    texts.check = `${check.stdout}${check.stderr}`;
    expect(check.status).toBe(0);
    p.child.kill('SIGTERM');
    await p.exited();
    texts.logs = p.lines.join('\n');

    expect(texts['/metrics']).toMatch(/monapi_up\{account="refused",reason="unauthorized"\} 0/);
    expect(texts['/metrics']).toMatch(/monapi_up\{account="starter",reason="plan_required"\} 0/);
    expect(texts.logs).toContain('"level":"debug"');
    for (const [where, text] of Object.entries(texts)) {
      for (const key of [KEY_401, KEY_403, KEY_FILE]) expect(text.includes(key), `${key} found in ${where}`).toBe(false);
    }
  }, 60_000);
});
