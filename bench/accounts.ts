/**
 * How many accounts one exporter serves (issue 21, item 5): the real program with N small
 * accounts (2 hosts and 1 website each, every account at its own default budget of 120
 * requests a minute), polling simulators through the harness's pacer, for the figures in
 * docs/scaling.md and the limit the configuration check enforces (src/sharding/capacity.ts).
 *
 *   node --import tsx bench/accounts.ts --accounts 200,500,1000
 *
 * More than MAX_ACCOUNTS_PER_EXPORTER (src/sharding/capacity.ts) is refused by the exporter
 * itself; `--root` runs a checkout from before that limit to measure beyond it.
 *
 * Per step: time until /-/ready, then for `--seconds` (default 60): /-/healthy on the main
 * port and on the probe listener every 250 ms (p50, p99, max), a gzip scrape of /metrics
 * every 5 s (time, bytes), the exporter's CPU (all threads) and resident memory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { percentile } from '../test/security/flood-clients.js';
import { freePort } from '../test/support/prometheus.js';
import { UpstreamPacer, type PacerRoute } from './scale/pacer.js';
import { nodeArgs, REPO_ROOT, stopProcess, waitForLine } from './scale/processes.js';

const { values } = parseArgs({
  options: {
    accounts: { type: 'string', default: '200,500,1000' },
    root: { type: 'string', default: REPO_ROOT },
    seconds: { type: 'string', default: '60' },
    'ready-timeout': { type: 'string', default: '600' },
    'accounts-per-simulator': { type: 'string', default: '500' },
    /** Writes one uncompressed /metrics body of each step here (<path>-<accounts>.prom), to see what it holds. */
    dump: { type: 'string' },
  },
});

function log(text: string): void {
  process.stdout.write(`${text}\n`);
}

const name = (i: number) => `a${String(i).padStart(5, '0')}`;

async function startSimulator(index: number): Promise<{ child: ChildProcess; origin: string }> {
  const limit = String(1_000_000_000);
  const args = ['--monitoring-port', '0', '--releases-port', '0', '--marketplace-port', '0', '--hosts', '2', '--websites', '1', '--seed', `accounts-${index}`, '--rate-limit', limit, '--burst', limit];
  const child = spawn(process.execPath, nodeArgs(join(REPO_ROOT, 'simulator/cli.ts'), args), { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const match = await waitForLine(child, `simulator ${index}`, /Monitoring API:\s+(http:\/\/[^/\s]+)\/api\/v2/, 60_000);
  child.stdout?.resume();
  child.stderr?.resume();
  return { child, origin: match[1] as string };
}

function get(url: string, headers: Record<string, string> = {}, timeoutMs = 60_000): Promise<{ status: number; ms: number; bytes: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request(url, { headers, agent: false, timeout: timeoutMs }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, bytes }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ status: 0, ms: Infinity, bytes: 0 }));
    req.end();
  });
}

/** utime + stime of a process and all its threads, in seconds. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:')) ?? '';
  return Number(line.replace(/\D+/g, '')) / 1024;
}

const stats = (ms: number[]) => `p50 ${percentile(ms, 50).toFixed(1)} ms, p99 ${percentile(ms, 99).toFixed(1)} ms, max ${Math.max(...ms).toFixed(1)} ms${ms.some((m) => !Number.isFinite(m)) ? ` (${ms.filter((m) => !Number.isFinite(m)).length} failed)` : ''}`;

async function step(accounts: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'monapi-accounts-'));
  const perSimulator = Number(values['accounts-per-simulator']);
  const simulators: { child: ChildProcess; origin: string }[] = [];
  let pacer: UpstreamPacer | undefined;
  let exporter: ChildProcess | undefined;
  try {
    for (let i = 0; i < Math.ceil(accounts / perSimulator); i++) simulators.push(await startSimulator(i));
    const routes = new Map<string, PacerRoute>();
    for (let i = 0; i < accounts; i++) {
      routes.set(name(i), { origin: (simulators[Math.floor(i / perSimulator)] as { origin: string }).origin, simulatorKey: i % 2 === 0 ? 'sim-pro-key' : 'sim-business-key' });
    }
    pacer = new UpstreamPacer(routes);
    const pacerUrl = await pacer.start();
    const lines = ['accounts:'];
    for (let i = 0; i < accounts; i++) lines.push(`  - name: ${name(i)}`, `    base_url: ${pacerUrl}/${name(i)}/api/v2`, `    api_key_env: KEY_${i}`);
    writeFileSync(join(dir, 'monapi.yaml'), `${lines.join('\n')}\n`);
    const port = await freePort();
    const probePort = await freePort();
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '' };
    for (let i = 0; i < accounts; i++) env[`KEY_${i}`] = `bench-key-${name(i)}`;
    const started = Date.now();
    exporter = spawn(
      process.execPath,
      nodeArgs('src/cli.ts', [`--config.file=${join(dir, 'monapi.yaml')}`, `--web.listen-address=127.0.0.1:${port}`, `--web.probe-listen-address=127.0.0.1:${probePort}`, '--log.level=warn', '--log.format=json']),
      { cwd: values.root, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    exporter.stdout?.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-4000)));
    exporter.stderr?.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-4000)));
    exporter.stderr?.resume();
    const pid = exporter.pid ?? 0;
    let ready = false;
    for (const end = Date.now() + Number(values['ready-timeout']) * 1000; Date.now() < end; ) {
      if ((await get(`http://127.0.0.1:${probePort}/-/ready`, {}, 5_000)).status === 200) {
        ready = true;
        break;
      }
      if (exporter.exitCode !== null) throw new Error(`the exporter exited with ${exporter.exitCode}:\n${output}`);
      await new Promise((r) => setTimeout(r, 1_000));
    }
    const readySeconds = (Date.now() - started) / 1000;
    if (values.dump !== undefined) {
      const body = await new Promise<string>((resolve) => {
        request(`http://127.0.0.1:${port}/metrics`, (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve(text));
        }).end();
      });
      writeFileSync(`${values.dump}-${accounts}.prom`, body);
    }
    const main: number[] = [];
    const probes: number[] = [];
    const scrapes: { ms: number; bytes: number }[] = [];
    const cpu0 = cpuSeconds(pid);
    const sims0 = simulators.reduce((sum, s) => sum + cpuSeconds(s.child.pid ?? 0), 0);
    const end = Date.now() + Number(values.seconds) * 1000;
    let maxRss = 0;
    const health = async (url: string, into: number[]) => {
      while (Date.now() < end) {
        into.push((await get(url, {}, 10_000)).ms);
        await new Promise((r) => setTimeout(r, 250));
      }
    };
    const scrape = async () => {
      while (Date.now() < end) {
        const answer = await get(`http://127.0.0.1:${port}/metrics`, { 'accept-encoding': 'gzip' });
        scrapes.push({ ms: answer.ms, bytes: answer.bytes });
        maxRss = Math.max(maxRss, rssMiB(pid));
        await new Promise((r) => setTimeout(r, 5_000));
      }
    };
    await Promise.all([health(`http://127.0.0.1:${port}/-/healthy`, main), health(`http://127.0.0.1:${probePort}/-/healthy`, probes), scrape()]);
    const seconds = Number(values.seconds);
    const cpu = (cpuSeconds(pid) - cpu0) / seconds;
    const simCpu = (simulators.reduce((sum, s) => sum + cpuSeconds(s.child.pid ?? 0), 0) - sims0) / seconds;
    const counts = pacer.takeCounts();
    log(`\n== ${accounts} accounts (2 hosts, 1 website each; ${simulators.length} simulator process(es))`);
    log(`ready: ${ready ? `after ${readySeconds.toFixed(0)} s` : `NOT ready after ${readySeconds.toFixed(0)} s`}`);
    log(`upstream requests: ${(counts.requests / (Date.now() - started) * 1000).toFixed(1)}/s on average since the start`);
    log(`/-/healthy, main port: ${stats(main)}`);
    log(`/-/healthy, probe listener: ${stats(probes)}`);
    log(`/metrics (gzip): ${stats(scrapes.map((s) => s.ms))}; ${(Math.max(...scrapes.map((s) => s.bytes)) / 1e6).toFixed(1)} MB`);
    log(`exporter CPU: ${(cpu * 100).toFixed(0)}% of a core (all threads); simulators ${(simCpu * 100).toFixed(0)}%; RSS up to ${maxRss.toFixed(0)} MiB`);
  } finally {
    await stopProcess(exporter);
    await pacer?.close();
    await Promise.all(simulators.map((s) => stopProcess(s.child)));
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  for (const n of values.accounts.split(',').map(Number)) await step(n);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
