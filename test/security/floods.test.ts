import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent as HttpAgent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../simulator/index.js';
import { startExporterProcess, type ExporterProcess } from '../faults/process.js';
import { freePort } from '../support/prometheus.js';
import { makeTestPki, type TestPki } from '../support/tls.js';
import { basicAuth, holdIdleConnectionsOnThread, percentile, sample, timedGet, type Target, wrongPasswordFloodOnThread } from './flood-clients.js';

/**
 * Issue 21, items 1 and 2: nobody without credentials can take the server down. The real
 * program, on loopback, against floods bounded in count and time:
 * - 2,100 idle connections from one address, each one the server closes replaced (up to 200 a
 *   second): health probes and authenticated scrapes are still answered (before: 28 of 30
 *   probes refused on plain HTTP, as Node's connection cap counted idle connections);
 * - the same with TLS, client certificates and basic auth (before: every probe refused);
 * - 16 keep-alive connections and 40 clients sending wrong passwords: 429 with Retry-After
 *   (answered a second late, so a loop costs one request a second per connection), and
 *   probes and correct scrapes are not held up behind bcrypt (before: 2 to 3 s).
 * Latency figures (answers within 1 s, p99) come from `bench/floods.ts`; the bounds here are
 * loose enough for a loaded machine and still far from the failures they guard against.
 */

const PASSWORD = 'correct horse battery staple';
let sim: RunningSimulator;
let pki: TestPki;
let dir: string;
const running: ExporterProcess[] = [];

beforeAll(async () => {
  sim = await startSimulator({ monitoringPort: 0, releasesPort: 0, marketplacePort: 0, hosts: 3, websites: 1 });
  pki = makeTestPki();
  dir = mkdtempSync(join(tmpdir(), 'monapi-floods-'));
  writeFileSync(join(dir, 'monapi.yaml'), `accounts:\n  - name: pro\n    base_url: ${sim.monitoringBaseUrl}\n    api_key_env: SIM_PRO_KEY\n`);
});
afterAll(async () => {
  for (const p of running) p.child.kill('SIGKILL');
  await sim.close();
  pki.remove();
  rmSync(dir, { recursive: true, force: true });
});

async function start(web: string, tls: boolean): Promise<{ target: Target; probes: Target; port: number }> {
  const file = join(dir, `web-${tls}.yml`);
  writeFileSync(file, web);
  const port = await freePort();
  const probePort = await freePort();
  const p = await startExporterProcess(
    [`--config.file=${join(dir, 'monapi.yaml')}`, `--web.config.file=${file}`, `--web.probe-listen-address=127.0.0.1:${probePort}`],
    { SIM_PRO_KEY: sim.keys.pro },
    port,
    tls ? 'https' : 'http',
  );
  running.push(p);
  const target: Target = { url: p.url, authorization: basicAuth('prometheus', PASSWORD), ...(tls && { tls: { ca: pki.caCert, cert: pki.clientCert, key: pki.clientKey } }) };
  return { target, probes: { url: `http://127.0.0.1:${probePort}` }, port };
}

const hash = () => bcrypt.hashSync(PASSWORD, 10);

const okOf = (run: { statuses: readonly (number | undefined)[] }) => run.statuses.filter((s) => s === 200).length;

/** The figures of a flood, for the record (the assertions below are what holds them). */
function report(what: string, health: { statuses: readonly (number | undefined)[]; ms: number[] }, scrapes: typeof health, own: typeof health): void {
  console.log(
    `${what}: probes ${okOf(health)}/30 answered, p99 ${percentile(health.ms, 99).toFixed(1)} ms; scrapes ${okOf(scrapes)}/30, p99 ${percentile(scrapes.ms, 99).toFixed(1)} ms; ` +
      `probe listener ${okOf(own)}/30, p99 ${percentile(own.ms, 99).toFixed(1)} ms`,
  );
}

describe('2,100 idle connections from one address', () => {
  it('plain HTTP: probes and authenticated scrapes from the same address are still answered', async () => {
    const { target, probes, port } = await start(`basic_auth_users:\n  prometheus: ${hash()}\n`, false);
    const auth = { authorization: target.authorization ?? '' };
    await timedGet(target, '/metrics', { headers: auth });
    const flood = await holdIdleConnectionsOnThread(port, 2_100, { reopenPerSecond: 200 });
    try {
      await new Promise((r) => setTimeout(r, 3_000));
      const health = await sample(30, 150, () => timedGet(target, '/-/healthy', { timeoutMs: 5_000 }));
      const scrapes = await sample(30, 150, () => timedGet(target, '/metrics', { timeoutMs: 5_000, headers: auth }));
      const own = await sample(30, 50, () => timedGet(probes, '/-/healthy', { timeoutMs: 5_000 }));
      report('plain HTTP, 2,100 idle connections from the same address', health, scrapes, own);
      expect(await flood.opened()).toBeGreaterThanOrEqual(2_100);
      expect(health.statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(29);
      expect(scrapes.statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(29);
      expect(own.statuses.filter((s) => s === 200)).toHaveLength(30);
    } finally {
      await flood.stop();
    }
  }, 90_000);

  it('TLS + client certificates + basic auth: probes and scrapes from another host are answered', async () => {
    const web = `tls_server_config:\n  cert_file: ${pki.serverCertFile}\n  key_file: ${pki.serverKeyFile}\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ${pki.caCertFile}\nbasic_auth_users:\n  prometheus: ${hash()}\n`;
    const started = await start(web, true);
    // Another loopback address stands for another host (kubelet, Prometheus).
    const target: Target = { ...started.target, from: '127.0.0.2' };
    const auth = { authorization: target.authorization ?? '' };
    expect((await timedGet(target, '/metrics', { headers: auth })).status).toBe(200);
    const flood = await holdIdleConnectionsOnThread(started.port, 2_100, { reopenPerSecond: 200 });
    try {
      await new Promise((r) => setTimeout(r, 3_000));
      const health = await sample(30, 150, () => timedGet(target, '/-/healthy', { timeoutMs: 5_000 }));
      const scrapes = await sample(30, 150, () => timedGet(target, '/metrics', { timeoutMs: 5_000, headers: auth }));
      const own = await sample(30, 50, () => timedGet({ ...started.probes, from: '127.0.0.1' }, '/-/healthy', { timeoutMs: 5_000 }));
      report('TLS + client certificates + basic auth, 2,100 idle connections', health, scrapes, own);
      expect(health.statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(29);
      expect(scrapes.statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(29);
      expect(own.statuses.filter((s) => s === 200)).toHaveLength(30);
    } finally {
      await flood.stop();
    }
  }, 90_000);
});

describe('wrong passwords', () => {
  it('get 429 with Retry-After past a few per address; probes and correct scrapes are not held up behind bcrypt', async () => {
    const { target } = await start(`basic_auth_users:\n  prometheus: ${hash()}\n`, false);
    const auth = { authorization: target.authorization ?? '' };
    const agent = new HttpAgent({ keepAlive: true, maxSockets: 1 });
    const scrape = () => timedGet(target, '/metrics', { headers: auth, agent, timeoutMs: 10_000 });
    expect((await scrape()).status).toBe(200);
    const unloaded = await sample(8, 100, scrape);
    const flood = await wrongPasswordFloodOnThread(target, '/metrics', 16, 40, 200_000);
    let stopped = false;
    try {
      await new Promise((r) => setTimeout(r, 2_000));
      const [probes, scrapes] = await Promise.all([
        sample(60, 100, () => timedGet(target, '/-/healthy', { timeoutMs: 10_000 })),
        sample(24, 250, scrape),
      ]);
      const { statuses, retryAfter } = await flood.stop();
      stopped = true;
      console.log(
        `wrong-password flood (16 connections): probes ${okOf(probes)}/${probes.statuses.length}, p99 ${percentile(probes.ms, 99).toFixed(1)} ms; ` +
          `correct scrapes ${okOf(scrapes)}/${scrapes.statuses.length}, p50 ${percentile(scrapes.ms, 50).toFixed(1)} / p99 ${percentile(scrapes.ms, 99).toFixed(1)} ms (unloaded p50 ${percentile(unloaded.ms, 50).toFixed(1)} / p99 ${percentile(unloaded.ms, 99).toFixed(1)} ms); ` +
          `answers 401 x ${statuses.get(401) ?? 0}, 429 x ${statuses.get(429) ?? 0}`,
      );
      // A few checks per address, then 429s, each held a second: some 56 a second, not thousands.
      expect(statuses.get(401) ?? 0).toBeGreaterThanOrEqual(5);
      expect(statuses.get(401) ?? 0).toBeLessThanOrEqual(20);
      expect(statuses.get(429) ?? 0).toBeGreaterThan(100);
      expect(statuses.get(429) ?? 0).toBeLessThan(2_000);
      expect(retryAfter.size).toBeGreaterThan(0);
      expect([...retryAfter].every((s) => /^\d+$/.test(s) && Number(s) >= 1)).toBe(true);
      expect(probes.statuses.every((s) => s === 200)).toBe(true);
      expect(scrapes.statuses.every((s) => s === 200)).toBe(true);
      // Before: 1.9 to 3.1 s for probes (or none answered), 2.8 to 4.7 s for scrapes, nearly all
      // of them. p95, not p99 (the slowest of 60 or 24): one answer late on a busy machine is no regression.
      expect(percentile(probes.ms, 95)).toBeLessThan(750);
      expect(percentile(scrapes.ms, 95)).toBeLessThan(750);
    } finally {
      if (!stopped) await flood.stop();
      agent.destroy();
    }
  }, 60_000);
});
