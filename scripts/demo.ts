import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/exporter/config.js';
import { ScaledClock } from '../src/lib/clock.js';
import { createLogger } from '../src/lib/logger.js';
import { startExporter, type RunningExporter } from '../src/exporter/index.js';
import { MAX_SERVING_THREADS, servingThreadsOf } from '../src/server/serving-threads.js';
import { mainThreadWebServer } from '../src/server/web-server.js';
import { SHAPE_SETS, startSimulator, type RunningSimulator, type ShapeSet } from '../simulator/index.js';
import { findPrometheus, PrometheusNotFound, startDemoPrometheus, type DemoPrometheus } from './demo-prometheus.js';

/**
 * `npm run demo`: the simulator in-process and the exporter against it, configured through
 * a real config file, so what runs here is what runs in production.
 */

export interface DemoOptions {
  hosts: number;
  /** Threads serving the exporter's port, as `--web.serving-threads`; absent: the main thread serves (tests that start the demo in-process). */
  servingThreads?: number;
  websites: number;
  rateLimitPerMinute: number;
  burst: number;
  seed: string;
  listenAddress: string;
  releasesMode: 'free' | 'marketplace';
  simulatorPorts: { monitoring: number; releases: number; marketplace: number };
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  logFormat: 'json' | 'pretty';
  /** Simulated seconds per real second (1: real time). */
  speed: number;
  /** Which legal layout the simulator answers "not shown" bodies in. Default standard. */
  shapes?: ShapeSet;
  /** Agent points arrive up to 2 hours late, some never (the simulator's late-data mode). */
  lateData?: boolean;
  /** Simulated time at start, Unix ms (default: now); tests pick a moment the simulated world makes interesting. */
  startMs?: number;
  /** --prometheus: start a Prometheus scraping the exporter; '' finds one, a path names it. Only main() reads it. */
  prometheus?: string;
}

export interface RunningDemo {
  /** Real time at --speed 1; faster otherwise. */
  clock: ScaledClock;
  simulator: RunningSimulator;
  exporter: RunningExporter;
  configFile: string;
  stop(): Promise<void>;
}

const HELP = `Usage: npm run demo -- [flags]

Starts the API simulator and the exporter against it (two accounts, Pro and Business,
and a few release projects), and prints the URLs.

Flags:
  --hosts N                 hosts per simulated account (default 12)
  --websites N              websites per simulated account (default 6)
  --rate-limit PER_MINUTE   the simulator's rate limit per API key; the exporter's budget
                            is set to match with 2% headroom (default 120)
  --burst N                 the simulator's burst (default 30)
  --seed S                  simulator seed (default quickstart: its two accounts hold every
                            kind of host the dashboards show, Varnish included)
  --web.listen-address A    where the exporter listens (default 127.0.0.1:9866)
  --web.serving-threads N   threads that write the scrapes, as the exporter's flag: auto (one
                            per CPU beyond one, 1 to 4) or a number, 0 for the main thread
                            (default auto)
  --releases MODE           free or marketplace (default marketplace)
  --simulator-port N        first of three simulator ports (default 0: any free ports)
  --speed N                 run the simulator and the exporter N times faster than real
                            time, to watch counters and cadences at work (default 1)
  --shapes SET              standard, alt or nested: the legal layout the simulator answers the
                            bodies the API documents leave "not shown" in (default standard)
  --late-data               agent points arrive up to 2 hours late, a few never
  --log.level L             debug, info, warn, error (default info)
  --log.format F            json or pretty (default pretty on a terminal)
  --prometheus[=PATH]       also start a Prometheus (the one on PATH, else the cached build of
                            scripts/prometheus3, or PATH) scraping the exporter every 5 s with
                            the alert rules of alerts/ loaded, data in a temporary folder; prints
                            its URL. Without one found: says how to get one and exits 2
  --help
`;

function positiveInt(flag: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < 1) throw new Error(`--${flag} must be a positive whole number, got ${JSON.stringify(text)}`);
  return n;
}

function servingThreads(text: string | undefined): number {
  const threads = servingThreadsOf(text ?? 'auto');
  if (threads === undefined) throw new Error(`--web.serving-threads must be auto or a whole number from 0 to ${MAX_SERVING_THREADS}, got ${JSON.stringify(text)}`);
  return threads;
}

export function parseDemoArgs(argv: readonly string[]): DemoOptions | 'help' {
  const { values } = parseArgs({
    // --prometheus takes an optional value: alone it means "find one".
    args: argv.map((a) => (a === '--prometheus' ? '--prometheus=' : a)),
    options: {
      hosts: { type: 'string' },
      websites: { type: 'string' },
      'rate-limit': { type: 'string' },
      burst: { type: 'string' },
      seed: { type: 'string' },
      'web.listen-address': { type: 'string' },
      'web.serving-threads': { type: 'string' },
      releases: { type: 'string' },
      'simulator-port': { type: 'string' },
      'log.level': { type: 'string' },
      'log.format': { type: 'string' },
      speed: { type: 'string' },
      shapes: { type: 'string' },
      'late-data': { type: 'boolean' },
      prometheus: { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) return 'help';
  const releases = values.releases ?? 'marketplace';
  if (releases !== 'free' && releases !== 'marketplace') throw new Error(`--releases must be free or marketplace, got ${JSON.stringify(releases)}`);
  const level = values['log.level'] ?? 'info';
  if (!['debug', 'info', 'warn', 'error'].includes(level)) throw new Error(`--log.level must be debug, info, warn or error, got ${JSON.stringify(level)}`);
  const format = values['log.format'] ?? (process.stdout.isTTY ? 'pretty' : 'json');
  if (format !== 'json' && format !== 'pretty') throw new Error(`--log.format must be json or pretty, got ${JSON.stringify(format)}`);
  const shapes = values.shapes ?? 'standard';
  if (!(SHAPE_SETS as readonly string[]).includes(shapes)) throw new Error(`--shapes must be ${SHAPE_SETS.join(' or ')}, got ${JSON.stringify(shapes)}`);
  const firstPort = values['simulator-port'] === undefined ? 0 : positiveInt('simulator-port', values['simulator-port'], 0);
  const rate = positiveInt('rate-limit', values['rate-limit'], 120);
  return {
    hosts: positiveInt('hosts', values.hosts, 12),
    websites: positiveInt('websites', values.websites, 6),
    rateLimitPerMinute: rate,
    burst: positiveInt('burst', values.burst, Math.max(30, Math.round(rate / 4))),
    seed: values.seed ?? 'quickstart',
    listenAddress: values['web.listen-address'] ?? '127.0.0.1:9866',
    servingThreads: servingThreads(values['web.serving-threads']),
    releasesMode: releases,
    simulatorPorts: firstPort === 0 ? { monitoring: 0, releases: 0, marketplace: 0 } : { monitoring: firstPort, releases: firstPort + 1, marketplace: firstPort + 2 },
    logLevel: level as DemoOptions['logLevel'],
    logFormat: format,
    speed: positiveInt('speed', values.speed, 1),
    shapes: shapes as ShapeSet,
    lateData: values['late-data'] ?? false,
    ...(values.prometheus === undefined ? {} : { prometheus: values.prometheus }),
  };
}

/** The demo's config file: what an operator would write for these two accounts. */
export function demoConfigYaml(sim: RunningSimulator, opts: Pick<DemoOptions, 'rateLimitPerMinute' | 'burst' | 'releasesMode'>): string {
  const account = (name: string, env: string) => `  - name: ${name}
    base_url: ${sim.monitoringBaseUrl}
    api_key_env: ${env}
    rate_limit:
      requests_per_minute: ${opts.rateLimitPerMinute}
      burst: ${opts.burst}
    headroom: 0.02
    tag_labels: [env, role]
`;
  const releases =
    opts.releasesMode === 'marketplace'
      ? `releases:
  mode: marketplace
  marketplace_base_url: ${sim.marketplaceBaseUrl}
  marketplace_key_env: DEMO_MARKETPLACE_KEY
  schedule: "*/5 * * * *"
  projects:
    - id: nginx
    - id: php/php-src
      major: 8
    - id: mariadb
    - id: varnish
    - id: torvalds/linux
      major: 4
    - id: nginxinc/nginx-amplify-agent
`
      : `releases:
  mode: free
  free_base_url: ${sim.releasesBaseUrl}
  projects:
    - id: nginx/nginx
    - id: torvalds/linux
    - id: nginxinc/nginx-amplify-agent
`;
  return `# Written by npm run demo.
accounts:
${account('pro', 'DEMO_PRO_KEY')}${account('business', 'DEMO_BUSINESS_KEY')}${releases}`;
}

export async function startDemo(opts: DemoOptions): Promise<RunningDemo> {
  const clock = new ScaledClock(opts.speed, opts.startMs);
  const simulator = await startSimulator({
    clock,
    monitoringPort: opts.simulatorPorts.monitoring,
    releasesPort: opts.simulatorPorts.releases,
    marketplacePort: opts.simulatorPorts.marketplace,
    hosts: opts.hosts,
    websites: opts.websites,
    seed: opts.seed,
    rateLimitPerMinute: opts.rateLimitPerMinute,
    burst: opts.burst,
    shapes: opts.shapes ?? 'standard',
    lateData: opts.lateData ?? false,
  });
  const dir = mkdtempSync(join(tmpdir(), 'monapi-demo-'));
  const configFile = join(dir, 'monapi-exporter.yaml');
  writeFileSync(configFile, demoConfigYaml(simulator, opts));
  const env = {
    DEMO_PRO_KEY: simulator.keys.pro,
    DEMO_BUSINESS_KEY: simulator.keys.business,
    DEMO_MARKETPLACE_KEY: simulator.keys.marketplace,
  };
  try {
    const config = loadConfig(configFile, env);
    const log = createLogger({ level: opts.logLevel, format: opts.logFormat });
    const exporter = await startExporter({
      config,
      listenAddress: opts.listenAddress,
      telemetryPath: '/metrics',
      log,
      clock,
      // The CLI's server on the main thread too, so /metrics has the same self-metrics either way.
      serve: mainThreadWebServer({ log }),
      // SIGHUP (forwarded by main) re-reads the printed config file, as the real command does.
      reloadConfig: () => loadConfig(configFile, env),
      ...(opts.servingThreads === undefined ? {} : { servingThreads: opts.servingThreads }),
    });
    return {
      clock,
      simulator,
      exporter,
      configFile,
      async stop() {
        await exporter.stop();
        await simulator.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await simulator.close();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

async function main(): Promise<void> {
  let opts: DemoOptions | 'help';
  try {
    opts = parseDemoArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`demo: ${err instanceof Error ? err.message : String(err)}\n\n${HELP}`);
    process.exitCode = 2;
    return;
  }
  if (opts === 'help') {
    process.stdout.write(HELP);
    return;
  }
  // Found before anything starts: without a Prometheus the demo does not start half-way.
  let prometheusBinary: string | undefined;
  if (opts.prometheus !== undefined) {
    try {
      prometheusBinary = findPrometheus(opts.prometheus);
    } catch (err) {
      if (!(err instanceof PrometheusNotFound)) throw err;
      process.stderr.write(`demo: ${err.message}\n`);
      process.exitCode = 2;
      return;
    }
  }
  // Node's default for SIGHUP is to exit: the demo reloads its config file instead, like the exporter.
  const running: { demo?: RunningDemo } = {};
  process.on('SIGHUP', () => running.demo?.exporter.reload());
  const demo = await startDemo(opts);
  running.demo = demo;
  const { simulator, exporter } = demo;
  let prometheus: DemoPrometheus | undefined;
  if (prometheusBinary !== undefined) {
    try {
      prometheus = await startDemoPrometheus(prometheusBinary, exporter.url);
    } catch (err) {
      await demo.stop();
      throw err;
    }
  }
  process.stdout.write(`
monapi-exporter demo
  exporter   ${exporter.url}/            landing page
             ${exporter.url}/metrics     Prometheus / OpenMetrics
             ${exporter.url}/status      JSON status (budget, plan, freshness)
  simulator  ${simulator.monitoringBaseUrl}   keys: ${simulator.keys.pro}, ${simulator.keys.business}, ${simulator.keys.starter}
             ${simulator.releasesBaseUrl}   free release lookup
             ${simulator.marketplaceBaseUrl}   marketplace (X-RapidAPI-Key: ${simulator.keys.marketplace})
             ${simulator.adminUrl}/stats   requests and 429s per key
  config     ${demo.configFile}   (edit it, then kill -HUP ${process.pid} to reload)
  scale      ${opts.hosts} hosts and ${opts.websites} websites per account, ${opts.rateLimitPerMinute} requests/min per key (burst ${opts.burst})${opts.speed === 1 ? '' : `, time ${opts.speed}x faster`}
  upstream   ${opts.shapes ?? 'standard'} response shapes${opts.lateData ? ', late data' : ''}
${
  prometheus === undefined
    ? ''
    : `  prometheus ${prometheus.url}   Prometheus ${prometheus.version} (pid ${prometheus.pid}), scraping the exporter every 5 s, alert rules loaded
${
  prometheus.links.graph === undefined || prometheus.links.alerts === undefined
    ? '             (this build has no web UI: scripts/prometheus3 builds without it; the API answers)\n'
    : `             ${prometheus.links.graph}   monapi_up
             ${prometheus.links.alerts}   alerts
`
}             ${prometheus.links.query}
             ${prometheus.links.alertsApi}
`
}Press Ctrl+C to stop.

`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  setTimeout(() => process.exit(0), prometheus === undefined ? 5_000 : 10_000).unref();
  await prometheus?.stop();
  await demo.stop();
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((err: unknown) => {
    process.stderr.write(`demo: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
