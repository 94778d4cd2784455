/**
 * Issue 21's floods against the real program, for the figures in docs/reliability.md:
 *
 *   node --import tsx bench/floods.ts                      # both floods, plain HTTP and TLS
 *   node --import tsx bench/floods.ts --root /work/main    # the same against another checkout
 *
 * 1. Connections: 2,100 idle TCP connections from 127.0.0.1 held open (each one the server
 *    closes is replaced), then 30 health probes and 30 authenticated scrapes, each on a new
 *    connection, one every 200 ms: how many are answered within 1 s. With TLS, client
 *    certificates (RequireAndVerifyClientCert) and basic auth on /metrics.
 * 2. Passwords: 16 keep-alive connections and 40 clients with a connection per request send
 *    wrong passwords as fast as they are answered, while a probe asks every 100 ms and a
 *    scraper with the right password scrapes every 250 ms on its kept-alive connection:
 *    probe p50/p99, and scrape p50/p99 against the same without the flood.
 *
 * Everything runs on loopback; the floods stop after their sampling (at most a minute each).
 * `--root` runs the exporter of another checkout (e.g. main before this work) with this
 * checkout's clients, simulator and certificates; the probe listener is used when it has one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import bcrypt from 'bcryptjs';
import { startSimulator } from '../simulator/index.js';
import { basicAuth, holdIdleConnectionsOnThread, percentile, sample, timedGet, within, wrongPasswordFloodOnThread, type Sampled, type Target } from '../test/security/flood-clients.js';
import { freePort } from '../test/support/prometheus.js';
import { makeTestPki } from '../test/support/tls.js';
import { REPO_ROOT, stopProcess, waitForLine } from './scale/processes.js';

const PASSWORD = 'correct horse battery staple';

const { values } = parseArgs({
  options: {
    root: { type: 'string', default: REPO_ROOT },
    scenario: { type: 'string', default: 'all' },
    tls: { type: 'string', default: 'both' },
    'reopen-per-second': { type: 'string', default: '200' },
    /** With TLS: the flood completes TLS handshakes (true) or holds raw TCP connections (false). */
    handshake: { type: 'string', default: 'false' },
    /** Where the probes and scrapes come from: 127.0.0.1 (the flood's own address) or another loopback address. */
    from: { type: 'string', default: '127.0.0.1' },
  },
});
const root = values.root;

function log(text: string): void {
  process.stdout.write(`${text}\n`);
}

function summary(name: string, s: Sampled): string {
  const finite = s.ms.filter(Number.isFinite);
  return `${name}: ${within(s, 1_000)}/${s.ms.length} within 1 s; p50 ${percentile(s.ms, 50).toFixed(1)} ms, p99 ${percentile(s.ms, 99).toFixed(1)} ms, max ${Math.max(...finite).toFixed(1)} ms; failed ${s.ms.length - finite.length}`;
}

async function main(): Promise<void> {
  const sim = await startSimulator({ monitoringPort: 0, releasesPort: 0, marketplacePort: 0, hosts: 5, websites: 1 });
  const pki = makeTestPki();
  const dir = mkdtempSync(join(tmpdir(), 'monapi-floods-'));
  const cleanups: (() => Promise<void> | void)[] = [() => sim.close(), () => pki.remove(), () => rmSync(dir, { recursive: true, force: true })];
  try {
    writeFileSync(join(dir, 'monapi.yaml'), `accounts:\n  - name: pro\n    base_url: ${sim.monitoringBaseUrl}\n    api_key_env: SIM_PRO_KEY\n`);
    const hash = bcrypt.hashSync(PASSWORD, 10);
    for (const tls of values.tls === 'both' ? [false, true] : [values.tls === 'true']) {
      const web = join(dir, `web-${tls}.yml`);
      writeFileSync(
        web,
        tls
          ? `tls_server_config:\n  cert_file: ${pki.serverCertFile}\n  key_file: ${pki.serverKeyFile}\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ${pki.caCertFile}\nbasic_auth_users:\n  prometheus: ${hash}\n`
          : `basic_auth_users:\n  prometheus: ${hash}\n`,
      );
      const port = await freePort();
      const probePort = await freePort();
      const exporter = await startExporter(port, probePort, web, sim.keys.pro);
      cleanups.push(() => stopProcess(exporter.child));
      const scheme = tls ? 'https' : 'http';
      const target: Target = { url: `${scheme}://127.0.0.1:${port}`, from: values.from, ...(tls && { tls: { ca: pki.caCert, cert: pki.clientCert, key: pki.clientKey } }), authorization: basicAuth('prometheus', PASSWORD) };
      const probeTarget: Target = exporter.probes ? { url: `http://127.0.0.1:${probePort}`, from: values.from } : target;
      const auth = { authorization: target.authorization ?? '' };
      log(`\n== ${tls ? 'TLS + client certificates + basic auth' : 'plain HTTP + basic auth'} (${root}${exporter.probes ? ', probe listener' : ', no probe listener'}; flood from 127.0.0.1, probes and scrapes from ${values.from})`);
      // The right password once, so it is cached as Prometheus' would be.
      await timedGet(target, '/metrics', { headers: auth });

      if (values.scenario === 'all' || values.scenario === 'connections') {
        const flood = await holdIdleConnectionsOnThread(port, 2_100, { reopenPerSecond: Number(values['reopen-per-second']), ...(target.tls && values.handshake === 'true' && { tls: target.tls }) });
        await settled(() => flood.open(), 15_000);
        log(`idle connections the flood holds: ${await flood.open()} (opened ${await flood.opened()} so far, closed ones replaced at up to ${values['reopen-per-second']} a second)`);
        const probesMain = await sample(30, 200, () => timedGet(target, '/-/healthy', { timeoutMs: 1_000 }));
        const scrapes = await sample(30, 200, () => timedGet(target, '/metrics', { timeoutMs: 1_000, headers: auth }));
        const probesOwn = exporter.probes ? await sample(30, 200, () => timedGet(probeTarget, '/-/healthy', { timeoutMs: 1_000 })) : undefined;
        log(`at the end: ${await flood.open()} held, ${await flood.opened()} opened in all`);
        await flood.stop();
        log(summary('health probes, main port', probesMain));
        log(summary('authenticated scrapes', scrapes));
        if (probesOwn) log(summary('health probes, probe listener', probesOwn));
        await new Promise((r) => setTimeout(r, 2_000));
      }

      if (values.scenario === 'all' || values.scenario === 'passwords') {
        const agent = tls ? new HttpsAgent({ keepAlive: true, maxSockets: 1, ca: pki.caCert, cert: pki.clientCert, key: pki.clientKey }) : new HttpAgent({ keepAlive: true, maxSockets: 1 });
        const scrapeOnce = () => timedGet(target, '/metrics', { headers: auth, agent, timeoutMs: 10_000 });
        const unloadedScrapes = await sample(40, 250, scrapeOnce);
        const unloadedProbes = await sample(60, 100, () => timedGet(probeTarget, '/-/healthy', { timeoutMs: 10_000 }));
        const flood = await wrongPasswordFloodOnThread(target, '/metrics', 16, 40);
        await new Promise((r) => setTimeout(r, 2_000));
        const [loadedProbes, loadedScrapes, loadedMainProbes] = await Promise.all([
          sample(100, 100, () => timedGet(probeTarget, '/-/healthy', { timeoutMs: 10_000 })),
          sample(40, 250, scrapeOnce),
          exporter.probes ? sample(100, 100, () => timedGet(target, '/-/healthy', { timeoutMs: 10_000 })) : Promise.resolve(undefined),
        ]);
        const seen = await flood.stop();
        agent.destroy();
        log(`wrong-password answers: ${JSON.stringify(Object.fromEntries(seen.statuses))}; Retry-After seen: ${[...seen.retryAfter].join(', ') || 'none'}`);
        log(summary(`health probes unloaded${exporter.probes ? ' (probe listener)' : ''}`, unloadedProbes));
        log(summary(`health probes under the flood${exporter.probes ? ' (probe listener)' : ''}`, loadedProbes));
        if (loadedMainProbes) log(summary('health probes under the flood (main port)', loadedMainProbes));
        log(summary('correct scrapes unloaded', unloadedScrapes));
        log(summary('correct scrapes under the flood', loadedScrapes));
        log(`scrape p50 ratio loaded/unloaded: ${(percentile(loadedScrapes.ms, 50) / percentile(unloadedScrapes.ms, 50)).toFixed(2)}x, p99 ratio ${(percentile(loadedScrapes.ms, 99) / percentile(unloadedScrapes.ms, 99)).toFixed(2)}x`);
      }
      await stopProcess(exporter.child);
    }
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}

/** Waits until `count` has stopped growing for a second (the flood's connections are up), at most `timeoutMs`. */
async function settled(count: () => Promise<number>, timeoutMs: number): Promise<void> {
  let last = -1;
  let stableSince = Date.now();
  for (const end = Date.now() + timeoutMs; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
    const now = await count();
    if (now > last) {
      last = now;
      stableSince = Date.now();
    } else if (Date.now() - stableSince >= 1_000) return;
  }
}

async function startExporter(port: number, probePort: number, webConfig: string, key: string): Promise<{ child: ChildProcess; probes: boolean }> {
  const help = await new Promise<string>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', '--help'], { cwd: root });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.on('close', () => resolve(out));
  });
  const probes = help.includes('--web.probe-listen-address');
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'src/cli.ts',
      `--config.file=${join(webConfig, '..', 'monapi.yaml')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      `--web.config.file=${webConfig}`,
      '--log.format=json',
      '--log.level=info',
      ...(probes ? [`--web.probe-listen-address=127.0.0.1:${probePort}`] : []),
    ],
    { cwd: root, env: { PATH: process.env.PATH ?? '', SIM_PRO_KEY: key }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await waitForLine(child, 'exporter', /monapi-exporter listening/, 30_000).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw error;
  });
  // Keep reading its output: a full pipe would block the exporter's writes.
  child.stdout?.resume();
  child.stderr?.resume();
  return { child, probes };
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
