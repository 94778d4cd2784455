/**
 * The scale harness (`npm run bench`): the exporter filled to 10k, 100k and 1M series from
 * simulators in their own processes, measured side by side with its baselines in one run.
 *
 *   npm run bench                                   # 10k, 100k, 1M series; writes bench/results/latest.*
 *   npm run bench -- --series 10000,100000          # other steps
 *   npm run bench -- --tiny --out /tmp/scale        # the CI version: seconds, one small step
 *   npm run bench -- --profile                      # also --cpu-prof the exporter (bench/results/profiles/)
 *
 * Per step: simulators (two accounts each, distinct seeds) behind a pacer, the exporter in
 * its own process. The pacer lets everything through while the exporter fills, then holds
 * every account to the real per-key rate (120 requests per minute, burst 30) while measuring:
 * - event-loop delay (monitorEventLoopDelay, 1 ms resolution) while polling, and while scraped;
 * - scrape latency with 8 concurrent wrk connections, for text+gzip, text+identity and
 *   OpenMetrics+gzip, against nginx serving the exporter's own bytes from files (gzip_static);
 * - the same series in prom-client, rendered on every scrape;
 * - heap and RSS per series; publish-to-snapshot time; decode+map CPU against JSON.parse.
 * Needs nginx and wrk (Debian packages of the same names); fails with a clear message without.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { startSimulator } from '../simulator/index.js';
import { rawRequest } from '../test/server/http.js';
import { measureDecode } from './scale/decode.js';
import { MemoryCgroup, memoryLimitBytes } from './scale/memory-limit.js';
import { startNginx, type RunningNginx } from './scale/nginx.js';
import { UpstreamPacer, type PacerRoute } from './scale/pacer.js';
import { atLowerPriority, nodeArgs, relayStderr, reportCrashes, REPO_ROOT, requireProgram, stopProcess, waitForLine } from './scale/processes.js';
import type { AllocationKind, ExporterMessage, ExporterRequest, ExporterStats, LoopDelay, PromClientReady } from './scale/protocol.js';
import { renderReport, renderPlot } from './scale/report.js';
import type { LatencyFigures, PromClientResult, RunResult, StepResult, VariantResult } from './scale/results.js';
import { sumThreadTimes, type ThreadTime } from './scale/thread-times.js';
import { fullLengthProblem, runWrk, type WrkResult } from './scale/wrk.js';

const PROMETHEUS_3_ACCEPT =
  'application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2';
const TEXT_ACCEPT = 'text/plain;version=0.0.4;q=1,*/*;q=0.1';

/** Series per host the simulator's agent produces, to size the steps; the report gives the real count. */
const SERIES_PER_HOST_ESTIMATE = 117;
const PACE = { perMinute: 120, burst: 30 };
/** The default series cadence of the exporter (docs/configuration.md). */
const SERIES_CADENCE_MS = 60_000;
/** Where each run compiles the exporter (inside the repository, so that the build finds node_modules). */
const BENCH_BUILDS = '.tmp/bench-builds';
/** The simulator's own limit: its two keys are shared by every account of the step. */
const SIMULATOR_LIMIT = 1_000_000_000;
/** Replayed polling cycles whose median is the decode + map figure. */
const DECODE_REPETITIONS = 60;

interface Variant {
  readonly id: string;
  readonly label: string;
  readonly nginxPath: '/text' | '/openmetrics';
  readonly headers: Readonly<Record<string, string>>;
  readonly gzip: boolean;
}

const VARIANTS: readonly Variant[] = [
  { id: 'text-gzip', label: 'text, gzip', nginxPath: '/text', headers: { accept: TEXT_ACCEPT, 'accept-encoding': 'gzip' }, gzip: true },
  { id: 'text-identity', label: 'text, identity', nginxPath: '/text', headers: { accept: TEXT_ACCEPT }, gzip: false },
  { id: 'openmetrics-gzip', label: 'OpenMetrics, gzip (Prometheus 3)', nginxPath: '/openmetrics', headers: { accept: PROMETHEUS_3_ACCEPT, 'accept-encoding': 'gzip' }, gzip: true },
];

const CONTENT_TYPES = {
  '/text': 'text/plain; version=0.0.4; charset=utf-8',
  '/openmetrics': 'application/openmetrics-text; version=1.0.0; charset=utf-8',
} as const;

interface Options {
  readonly series: number[];
  readonly accounts: number[] | undefined;
  readonly websites: number;
  readonly scrapeSeconds: number;
  readonly rounds: number;
  readonly pollingSeconds: number;
  readonly connections: number;
  readonly promClientMaxSeries: number;
  readonly decodeHosts: number;
  readonly out: string;
  readonly profile: boolean;
  readonly heapSnapshot: boolean;
  /** Sample allocations over the polling window: all of them, those no scavenge collected, or those held after a collection at its end. */
  readonly allocations: AllocationKind | undefined;
  readonly tiny: boolean;
  /** Extra Node options for the exporter's process, e.g. to try garbage-collector settings. */
  readonly exporterNodeOptions: string[];
  /** `--web.serving-threads` of the exporter; undefined: as auto picks. */
  readonly servingThreads: string | undefined;
  /** A cgroup the exporter's process joins before Node starts, limited per step as docs/scaling.md says a container should be. */
  readonly exporterCgroup: MemoryCgroup | undefined;
  /** Nice steps below the servers measured that the load (wrk, the simulators) runs at. */
  readonly loadNice: number;
}

const HELP = `Usage: npm run bench -- [flags]

  --series LIST              target series per step (default 10000,100000,1000000)
  --accounts LIST            accounts per step (default: about sqrt(series)/40, at least 1)
  --websites N               websites per account (default 5)
  --scrape-seconds S         wrk time per variant and server (default 12), split into rounds
  --rounds N                 alternating exporter/nginx rounds per variant (default 3; the median round counts)
  --polling-seconds S        the polling-only window (default 20)
  --connections N            concurrent scrapers (default 8)
  --prom-client-max-series N above this, prom-client is scraped by one client (default 200000)
  --out DIR                  where latest.md, latest.json and latest.svg go (default bench/results)
  --tiny                     the CI version: one step of about 1,500 series, 2 s windows
  --profile                  run the exporter with --cpu-prof (profiles in DIR/profiles)
  --heap-snapshot            write a heap snapshot of the exporter per step (DIR/profiles)
  --allocations all|old|live sample the exporter's allocations over the polling window: all of them
                             (collected ones included); those no scavenge collected (held, promoted, or
                             swept young by a full collection); or those held after a collection at its end
                             (DIR/profiles/*.heapprofile; read with bench/scale/allocations.ts)
  --exporter-node-options S  extra Node options for the exporter, e.g. "--max-semi-space-size=64"
  --serving-threads N        threads serving the exporter's port (default: as --web.serving-threads=auto;
                             0: its main thread serves, as before they existed)
  --exporter-cgroup DIR      run the exporter in this cgroup (its directory, made by you: mkdir
                             /sys/fs/cgroup/memory/monapi, or under /sys/fs/cgroup with cgroup v2), limited
                             at each step to the container limit docs/scaling.md gives for its series, no
                             swap beyond it, as Kubernetes would: Node sizes its heaps by the limit it finds
                             at start; the report adds how often the limit was reached and the OOM kills
  --load-nice N              run wrk and the simulators N nice steps below the exporter, nginx and
                             prom-client (default 10; 0 to 19), so on a small machine the servers measured
                             get the cores first, as beside a Prometheus on other hosts; 0: equal terms
`;

function allocationsKind(text: string | undefined): Options['allocations'] {
  if (text === undefined || text === 'all' || text === 'old' || text === 'live') return text;
  throw new Error(`--allocations must be all, old or live, got ${JSON.stringify(text)}`);
}

function parseOptions(argv: readonly string[]): Options | 'help' {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    options: {
      series: { type: 'string' },
      accounts: { type: 'string' },
      websites: { type: 'string' },
      'scrape-seconds': { type: 'string' },
      rounds: { type: 'string' },
      'polling-seconds': { type: 'string' },
      connections: { type: 'string' },
      'prom-client-max-series': { type: 'string' },
      out: { type: 'string' },
      tiny: { type: 'boolean' },
      profile: { type: 'boolean' },
      'heap-snapshot': { type: 'boolean' },
      allocations: { type: 'string' },
      'exporter-node-options': { type: 'string' },
      'serving-threads': { type: 'string' },
      'exporter-cgroup': { type: 'string' },
      'load-nice': { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) return 'help';
  const positive = (flag: string, text: string | undefined, fallback: number): number => {
    if (text === undefined) return fallback;
    const n = Number(text);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`--${flag} must be a positive number, got ${JSON.stringify(text)}`);
    return n;
  };
  const list = (flag: string, text: string | undefined): number[] | undefined =>
    text === undefined ? undefined : text.split(',').map((part) => Math.round(positive(flag, part.trim(), 0)));
  const loadNice = Number(values['load-nice'] ?? 10);
  if (!Number.isInteger(loadNice) || loadNice < 0 || loadNice > 19) throw new Error(`--load-nice must be a whole number from 0 to 19, got ${JSON.stringify(values['load-nice'])}`);
  const tiny = values.tiny ?? false;
  const series = list('series', values.series) ?? (tiny ? [1500] : [10_000, 100_000, 1_000_000]);
  const accounts = list('accounts', values.accounts);
  if (accounts && accounts.length !== series.length) throw new Error(`--accounts must give one count per --series step (${series.length}), got ${accounts.length}`);
  return {
    series,
    accounts,
    websites: positive('websites', values.websites, tiny ? 2 : 5),
    scrapeSeconds: positive('scrape-seconds', values['scrape-seconds'], tiny ? 2 : 12),
    rounds: Math.round(positive('rounds', values.rounds, tiny ? 1 : 3)),
    pollingSeconds: positive('polling-seconds', values['polling-seconds'], tiny ? 3 : 20),
    connections: positive('connections', values.connections, 8),
    promClientMaxSeries: positive('prom-client-max-series', values['prom-client-max-series'], 200_000),
    decodeHosts: tiny ? 4 : 40,
    out: resolve(values.out ?? join(REPO_ROOT, 'bench', 'results')),
    profile: values.profile ?? false,
    heapSnapshot: values['heap-snapshot'] ?? false,
    allocations: allocationsKind(values.allocations),
    tiny,
    exporterNodeOptions: (values['exporter-node-options'] ?? '').split(/\s+/).filter((o) => o !== ''),
    servingThreads: values['serving-threads'],
    exporterCgroup: values['exporter-cgroup'] === undefined ? undefined : new MemoryCgroup(values['exporter-cgroup']),
    loadNice,
  };
}

/** The longest stalls and GC pauses of a window, to look up in a --profile run. */
function stallsText(stats: ExporterStats): string {
  const stalls = stats.stalls.map((s) => `${s.ms.toFixed(0)} ms ending at ${s.endedAtUs} µs`).join(', ');
  const kinds = Object.entries(stats.gc.byKind)
    .map(([kind, count]) => `${count} ${kind}`)
    .join(', ');
  const threads = stats.threads.map((t) => `${t.thread} ${t.cpuSeconds.toFixed(2)} / ${t.waitingSeconds.toFixed(2)} s`).join(', ');
  return `stalls over 50 ms: ${stalls || 'none'}; GC pauses ${stats.gc.count}, ${stats.gc.totalMs.toFixed(0)} ms in all, longest ${stats.gc.maxMs.toFixed(1)} ms (${stats.gc.maxKind || '-'}); ${kinds || 'no pauses'}; external memory rose ${(stats.gc.externalRiseBytes / 1e6 / stats.wallSeconds).toFixed(2)} MB/s from one GC callback to the next; threads, CPU / waiting for a core over ${stats.wallSeconds.toFixed(1)} s: ${threads || 'not read (no /proc schedstat)'}`;
}

/** What the run was last doing, for a crash report. */
let lastLogged = 'starting';

function log(message: string): void {
  lastLogged = message;
  process.stderr.write(`[scale ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

// ---------------------------------------------------------------------------------------
// The exporter's process

class ExporterProcess {
  private constructor(
    readonly child: ChildProcess,
    readonly url: string,
    /** Where to look when it is gone: its log, and the cgroup it ran in. */
    private readonly where: string,
  ) {}

  /**
   * The exporter runs as tsc compiles it, like the image's `dist/`, not through tsx: tsx's
   * transform names every function with a property of its own (esbuild's keepNames), which at
   * a million series was 120,000 property arrays and about 30 MB of heap the image never has.
   */
  static build(outDir: string): string {
    const built = spawnSync(process.execPath, [join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(REPO_ROOT, 'tsconfig.bench.json'), '--outDir', outDir], { cwd: REPO_ROOT, encoding: 'utf8' });
    if (built.status !== 0) throw new Error(`building the exporter for the bench failed (tsc -p tsconfig.bench.json):\n${built.stdout}${built.stderr}`);
    // src/version.ts reads ../package.json, as from dist/.
    copyFileSync(join(REPO_ROOT, 'package.json'), join(outDir, 'package.json'));
    return join(outDir, 'bench/scale/exporter-process.js');
  }

  static async start(script: string, configFile: string, logFile: string, env: NodeJS.ProcessEnv, profileDir: string | undefined, nodeOptions: readonly string[], cgroup: MemoryCgroup | undefined): Promise<ExporterProcess> {
    const extra = ['--expose-gc', ...nodeOptions, ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])];
    const node = [process.execPath, ...extra, script, configFile, logFile];
    const command = cgroup === undefined ? node : cgroup.wrap(node);
    const where = cgroup === undefined ? `log: ${logFile}` : `log: ${logFile}; it was started in the cgroup ${cgroup.dir}, limited to ${cgroup.figures().limit} bytes: an exit code of 137 is the kernel's OOM killer, 2 a cgroup it could not join`;
    const child = spawn(command[0] as string, command.slice(1), {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const url = await new Promise<string>((resolvePromise, reject) => {
      const onMessage = (message: ExporterMessage): void => {
        if (message.type === 'ready') {
          child.off('exit', onExit);
          servingThreadsUsed = message.servingThreads;
          resolvePromise(message.url);
        }
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null): void => reject(new Error(`the exporter process exited with ${code ?? signal} before it was ready (${where})`));
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
    return new ExporterProcess(child, url, where);
  }

  /** Answered by the exporter process, or failed if it exits first (killed for memory in a cgroup, crashed). */
  request(message: ExporterRequest): Promise<ExporterMessage> {
    return new Promise((resolvePromise, reject) => {
      const onMessage = (answer: ExporterMessage): void => {
        if (answer.type === 'ready') return;
        this.child.off('message', onMessage);
        this.child.off('exit', onExit);
        resolvePromise(answer);
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
        this.child.off('message', onMessage);
        reject(new Error(`the exporter process exited with ${code ?? signal} while the harness waited for its answer to "${message.type}" (${this.where})`));
      };
      this.child.on('message', onMessage);
      this.child.once('exit', onExit);
      if (this.child.exitCode !== null || this.child.signalCode !== null || !this.child.send(message)) onExit(this.child.exitCode, this.child.signalCode);
    });
  }

  async stats(message: 'stats' | 'gc' = 'stats'): Promise<ExporterStats> {
    const answer = await this.request({ type: message });
    if (answer.type !== 'stats') throw new Error(`exporter process answered ${answer.type} to ${message}`);
    return answer.stats;
  }

  async reset(): Promise<void> {
    await this.request({ type: 'reset' });
  }

  async stop(): Promise<void> {
    // Gone already (killed for memory, say): nothing to ask, and the error that says why stays the one reported.
    if (this.child.exitCode !== null || this.child.signalCode !== null || !this.child.connected) return;
    const exited = new Promise((resolvePromise) => this.child.once('exit', resolvePromise));
    this.child.send({ type: 'stop' } satisfies ExporterRequest);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  }
}

// ---------------------------------------------------------------------------------------
// One step

interface Simulator {
  readonly child: ChildProcess;
  readonly origin: string;
}

async function startSimulatorProcess(index: number, hosts: number, websites: number, nice: number): Promise<Simulator> {
  const args = [
    '--monitoring-port', '0', '--releases-port', '0', '--marketplace-port', '0',
    '--hosts', String(hosts), '--websites', String(websites), '--seed', `scale-${index}`,
    '--rate-limit', String(SIMULATOR_LIMIT), '--burst', String(SIMULATOR_LIMIT),
  ];
  const [program, ...programArgs] = atLowerPriority([process.execPath, ...nodeArgs(join(REPO_ROOT, 'simulator/cli.ts'), args)], nice);
  const child = spawn(program as string, programArgs, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const match = await waitForLine(child, `simulator ${index}`, /Monitoring API:\s+(http:\/\/[^/\s]+)\/api\/v2/, 60_000);
  child.stdout?.resume();
  relayStderr(child, `simulator ${index}`);
  child.once('exit', (code, signal) => {
    if (code !== 0 && signal !== 'SIGTERM') log(`simulator ${index} (pid ${child.pid}) exited with ${code ?? signal} in the middle of the run`);
  });
  return { child, origin: match[1] as string };
}

function accountName(index: number): string {
  return `a${String(index).padStart(3, '0')}`;
}

function exporterConfig(pacerUrl: string, accounts: number): string {
  const lines = ['accounts:'];
  for (let i = 0; i < accounts; i++) {
    lines.push(
      `  - name: ${accountName(i)}`,
      `    base_url: ${pacerUrl}/${accountName(i)}/api/v2`,
      `    api_key_env: BENCH_KEY_${i}`,
      // Above anything the pacer lets through: the pacer sets the pace (see pacer.ts).
      '    rate_limit: { requests_per_minute: 100000, burst: 100000 }',
      '    concurrency: 8',
    );
  }
  return `${lines.join('\n')}\n`;
}

function latency(result: WrkResult, bodyBytes: number, connections: number, what: string, exporter: boolean): LatencyFigures {
  // The exporter's body changes between scrapes (self-metrics), so it may be slightly shorter than the probe.
  const problem = fullLengthProblem(result, exporter ? Math.floor(bodyBytes * 0.99) : bodyBytes, connections, exporter);
  if (problem) log(`WARNING ${what}: ${problem}`);
  return {
    p50Ms: result.p50Ms,
    p99Ms: result.p99Ms,
    maxMs: result.maxMs,
    requests: result.requests,
    perSecond: result.requests / result.seconds,
    fullLength200: problem === undefined,
  };
}

/** The round with the median p99 (its p50 with it), the worst maximum, every request counted. */
function medianRound(rounds: readonly LatencyFigures[]): LatencyFigures {
  const sorted = [...rounds].sort((a, b) => a.p99Ms - b.p99Ms);
  const middle = sorted[Math.floor((sorted.length - 1) / 2)] as LatencyFigures;
  const requests = rounds.reduce((n, r) => n + r.requests, 0);
  return {
    p50Ms: middle.p50Ms,
    p99Ms: middle.p99Ms,
    maxMs: Math.max(...rounds.map((r) => r.maxMs)),
    requests,
    perSecond: requests / rounds.reduce((t, r) => t + r.requests / r.perSecond, 0),
    fullLength200: rounds.every((r) => r.fullLength200),
  };
}

/** Event-loop delay over several windows: the worst of each figure. */
/** Threads serving the exporter's port in this run, as its process said. */
let servingThreadsUsed = 0;

function worstLoop(loops: readonly LoopDelay[]): LoopDelay {
  return {
    p50Ms: Math.max(...loops.map((l) => l.p50Ms)),
    p99Ms: Math.max(...loops.map((l) => l.p99Ms)),
    maxMs: Math.max(...loops.map((l) => l.maxMs)),
    samples: loops.reduce((n, l) => n + l.samples, 0),
  };
}

async function waitForFill(exporter: ExporterProcess, hosts: number): Promise<ExporterStats> {
  const deadline = Date.now() + 120_000 + hosts * 200;
  let last = -1;
  let stableSince = Date.now();
  for (;;) {
    const stats = await exporter.stats();
    if (stats.series !== last) {
      last = stats.series;
      stableSince = Date.now();
    }
    if (stats.ready && stats.series > 0 && Date.now() - stableSince >= 3_000) return stats;
    if (Date.now() > deadline) throw new Error(`the exporter did not fill within ${Math.round((deadline - stableSince) / 1000)} s (series ${stats.series}, ready ${stats.ready})`);
    await sleep(1_000);
  }
}

async function capture(url: string, headers: Readonly<Record<string, string>>, what: string): Promise<Buffer> {
  const res = await rawRequest(url, { headers: { ...headers } });
  if (res.status !== 200) throw new Error(`${what} answered ${res.status}: ${res.body.toString().slice(0, 200)}`);
  return res.body;
}

/**
 * The identity and gzip bodies of one format, checked to be the same text. The exporter keeps
 * polling, and its self-metrics at the top change between two requests, so a pair that
 * differs is asked for again before the gzip body counts as broken.
 */
async function capturePair(url: string, accept: string, what: string): Promise<{ identity: Buffer; gzip: Buffer }> {
  for (let attempt = 1; ; attempt++) {
    const identity = await capture(url, { accept }, what);
    const gzip = await capture(url, { accept, 'accept-encoding': 'gzip' }, `${what} gzip`);
    if (gunzipSync(gzip).toString().startsWith(identity.toString().slice(0, 10_000))) return { identity, gzip };
    if (attempt === 5) throw new Error(`the exporter's gzip body (${what}) decodes to other text than its identity body, 5 times in a row`);
  }
}

/** Checks that nginx answers each variant with exactly the file's bytes, before any figure counts. */
async function verifyFloor(nginx: RunningNginx, variant: Variant, expected: Buffer): Promise<void> {
  const res = await rawRequest(`${nginx.origin}${variant.nginxPath}`, { headers: { ...variant.headers } });
  if (res.status === 403) throw new Error(`nginx answered 403 for ${variant.nginxPath}: its worker cannot read the file (check the directory permissions)`);
  if (res.status !== 200) throw new Error(`nginx answered ${res.status} for ${variant.nginxPath}`);
  if ((res.headers['content-encoding'] === 'gzip') !== variant.gzip) throw new Error(`nginx did not serve ${variant.nginxPath} ${variant.gzip ? 'with' : 'without'} gzip (gzip_static missing?)`);
  if (!res.body.equals(expected)) throw new Error(`nginx served ${res.body.length} bytes for ${variant.nginxPath}, not the ${expected.length} bytes of the exporter's body`);
}

async function measurePromClient(dir: string, textBody: Buffer, options: Options): Promise<PromClientResult> {
  const bodyFile = join(dir, 'prom-client-body.txt');
  writeFileSync(bodyFile, textBody);
  const child = spawn(process.execPath, nodeArgs(join(REPO_ROOT, 'bench/scale/prom-client-process.ts'), [bodyFile], ['--expose-gc']), {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    const ready = await new Promise<PromClientReady>((resolvePromise, reject) => {
      child.once('message', (m) => resolvePromise(m as PromClientReady));
      child.once('exit', (code) => reject(new Error(`prom-client process exited with ${code}`)));
    });
    const probe = await capture(ready.url, {}, 'prom-client');
    const scrapers = ready.series > options.promClientMaxSeries ? 1 : options.connections;
    const result = await runWrk({
      url: ready.url,
      headers: { accept: PROMETHEUS_3_ACCEPT, 'accept-encoding': 'gzip' },
      connections: scrapers,
      threads: 2,
      seconds: Math.max(options.scrapeSeconds, scrapers === 1 ? 20 : options.scrapeSeconds),
      timeoutSeconds: 120,
      dir,
      nice: options.loadNice,
    });
    return {
      series: ready.series,
      heapBytes: ready.heapBytes,
      loadSeconds: ready.loadSeconds,
      scrapers,
      latency: latency(result, probe.length, scrapers, 'prom-client', false),
    };
  } finally {
    await stopProcess(child);
  }
}

async function runStep(targetSeries: number, accountsOverride: number | undefined, options: Options, nginx: RunningNginx, runDir: string, exporterScript: string): Promise<StepResult> {
  const accounts = accountsOverride ?? Math.max(1, Math.round(Math.sqrt(targetSeries) / 40));
  const hostsPerAccount = Math.max(2, Math.ceil(targetSeries / accounts / SERIES_PER_HOST_ESTIMATE));
  const simulatorCount = Math.ceil(accounts / 2);
  const dir = join(runDir, `step-${targetSeries}`);
  mkdirSync(dir, { recursive: true });
  log(`step ${targetSeries.toLocaleString('en')} series: ${accounts} accounts x ${hostsPerAccount} hosts + ${options.websites} websites, ${simulatorCount} simulator process(es)`);

  const simulators: Simulator[] = [];
  let pacer: UpstreamPacer | undefined;
  let exporter: ExporterProcess | undefined;
  const cleanup = async (): Promise<void> => {
    await exporter?.stop();
    await pacer?.close();
    await Promise.all(simulators.map((s) => stopProcess(s.child)));
  };
  cleanups.add(cleanup);
  try {
    for (let i = 0; i < simulatorCount; i++) simulators.push(await startSimulatorProcess(i, hostsPerAccount, options.websites, options.loadNice));
    const routes = new Map<string, PacerRoute>();
    for (let i = 0; i < accounts; i++) {
      routes.set(accountName(i), { origin: (simulators[Math.floor(i / 2)] as Simulator).origin, simulatorKey: i % 2 === 0 ? 'sim-pro-key' : 'sim-business-key' });
    }
    pacer = new UpstreamPacer(routes);
    const pacerUrl = await pacer.start();
    const configFile = join(dir, 'exporter.yaml');
    writeFileSync(configFile, exporterConfig(pacerUrl, accounts));
    const profileDir = options.profile || options.heapSnapshot || options.allocations !== undefined ? join(options.out, 'profiles') : undefined;
    if (profileDir) mkdirSync(profileDir, { recursive: true });
    const started = Date.now();
    options.exporterCgroup?.limitTo(memoryLimitBytes(targetSeries));
    exporter = await ExporterProcess.start(
      exporterScript,
      configFile,
      join(dir, 'exporter.log'),
      {
        ...process.env,
        ...(options.servingThreads === undefined ? {} : { MONAPI_BENCH_SERVING_THREADS: options.servingThreads }),
        ...Object.fromEntries(Array.from({ length: accounts }, (_, i) => [`BENCH_KEY_${i}`, `bench-key-${accountName(i)}`])),
      },
      options.profile ? profileDir : undefined,
      options.exporterNodeOptions,
      options.exporterCgroup,
    );
    const filled = await waitForFill(exporter, accounts * hostsPerAccount);
    const fillSeconds = (Date.now() - started) / 1000;
    log(`filled: ${filled.series.toLocaleString('en')} series in ${fillSeconds.toFixed(0)} s; now at the real per-key pace`);

    pacer.pace(PACE);
    // Every host was polled while filling; its next series poll is due a cadence later. Measure
    // once those are due, so the upstream pace is what the exporter works at, not an idle gap,
    // and once each account's first burst of 30 is spent.
    const steadyAt = Math.max(started + SERIES_CADENCE_MS + 5_000, Date.now() + 15_000);
    await sleep(options.tiny ? 5_000 : Math.max(0, steadyAt - Date.now()));
    pacer.takeCounts();
    await exporter.reset();
    // A tiny run's window allocates a few MB: finer samples so that its profile still says whose they are.
    if (options.allocations) await exporter.request({ type: 'allocations-start', kind: options.allocations, intervalBytes: options.tiny ? 512 : 64 * 1024 });
    await sleep(options.pollingSeconds * 1000);
    const polling = await exporter.stats();
    if (options.allocations && profileDir) await exporter.request({ type: 'allocations-stop', path: join(profileDir, `exporter-${targetSeries}.heapprofile`) });
    const upstreamCounts = pacer.takeCounts();
    const memoryStats = await exporter.stats('gc');
    if (options.heapSnapshot && profileDir) await exporter.request({ type: 'heap-snapshot', path: join(profileDir, `exporter-${targetSeries}.heapsnapshot`) });
    log(`polling: loop p99 ${polling.loop.p99Ms.toFixed(1)} ms, max ${polling.loop.maxMs.toFixed(1)} ms; heap ${(memoryStats.memory.heapUsed / 1e6).toFixed(0)} MB, rss ${(memoryStats.memory.rss / 1e6).toFixed(0)} MB`);
    log(`polling: ${stallsText(polling)}`);

    const metricsUrl = `${exporter.url}/metrics`;
    const bodies = {
      '/text': await capturePair(metricsUrl, TEXT_ACCEPT, 'exporter text'),
      '/openmetrics': await capturePair(metricsUrl, PROMETHEUS_3_ACCEPT, 'exporter OpenMetrics'),
    };
    for (const [path, body] of Object.entries(bodies)) {
      nginx.write({ path, contentType: CONTENT_TYPES[path as keyof typeof CONTENT_TYPES] }, body.identity, body.gzip);
    }

    const variants: VariantResult[] = [];
    let underLoad: ExporterStats | undefined;
    let peakRss = memoryStats.peakRss;
    for (const variant of VARIANTS) {
      const body = bodies[variant.nginxPath][variant.gzip ? 'gzip' : 'identity'];
      await verifyFloor(nginx, variant, body);
      // Alternating rounds, exporter then nginx, so that a burst of load from elsewhere on the
      // machine spoils one round of each rather than one server's whole figure.
      const wrk = { connections: options.connections, threads: 2, seconds: options.scrapeSeconds / options.rounds, timeoutSeconds: 60, dir, nice: options.loadNice };
      const exporterRounds: LatencyFigures[] = [];
      const nginxRounds: LatencyFigures[] = [];
      const loops: LoopDelay[] = [];
      const servingLoops: LoopDelay[] = [];
      const threadWindows: (readonly ThreadTime[])[] = [];
      let cpuSeconds = 0;
      let wallSeconds = 0;
      for (let round = 0; round < options.rounds; round++) {
        await exporter.reset();
        const exporterRun = await runWrk({ ...wrk, url: metricsUrl, headers: variant.headers });
        const scraped = await exporter.stats();
        log(`${variant.label}, round ${round + 1}: ${stallsText(scraped)}`);
        underLoad ??= scraped;
        peakRss = scraped.peakRss ?? peakRss;
        loops.push(scraped.loop);
        servingLoops.push(...scraped.servingLoops);
        cpuSeconds += scraped.cpuSeconds;
        threadWindows.push(scraped.threads);
        wallSeconds += scraped.wallSeconds;
        exporterRounds.push(latency(exporterRun, body.length, options.connections, `exporter ${variant.label}`, true));
        const nginxRun = await runWrk({ ...wrk, url: `${nginx.origin}${variant.nginxPath}`, headers: variant.headers });
        nginxRounds.push(latency(nginxRun, body.length, options.connections, `nginx ${variant.label}`, false));
      }
      const loop = worstLoop(loops);
      const result: VariantResult = {
        id: variant.id,
        label: variant.label,
        bodyBytes: body.length,
        exporter: medianRound(exporterRounds),
        nginx: medianRound(nginxRounds),
        loop,
        servingLoop: servingLoops.length > 0 ? worstLoop(servingLoops) : undefined,
        exporterCpuShare: cpuSeconds / wallSeconds,
        threads: sumThreadTimes(threadWindows),
        wallSeconds,
      };
      variants.push(result);
      log(
        `${variant.label}: exporter p50 ${result.exporter.p50Ms.toFixed(2)} / p99 ${result.exporter.p99Ms.toFixed(2)} ms, nginx p50 ${result.nginx.p50Ms.toFixed(2)} / p99 ${result.nginx.p99Ms.toFixed(2)} ms; loop p99 ${loop.p99Ms.toFixed(1)} max ${loop.maxMs.toFixed(1)} ms`,
      );
    }

    // The peak of the whole step, the windows' last nginx round included, read when the cgroup's is.
    peakRss = (await exporter.stats()).peakRss ?? peakRss;
    const cgroup = options.exporterCgroup?.figures();
    let promClient: PromClientResult | undefined;
    let promClientSkipped: string | undefined;
    try {
      promClient = await measurePromClient(dir, bodies['/text'].identity, options);
      log(`prom-client: p50 ${promClient.latency.p50Ms.toFixed(1)} / p99 ${promClient.latency.p99Ms.toFixed(1)} ms with ${promClient.scrapers} scraper(s)`);
    } catch (error) {
      promClientSkipped = error instanceof Error ? error.message : String(error);
      log(`prom-client not measured: ${promClientSkipped}`);
    }

    return {
      targetSeries,
      accounts,
      hostsPerAccount,
      websitesPerAccount: options.websites,
      simulators: simulatorCount,
      series: memoryStats.series,
      fillSeconds,
      upstream: { requestsPerSecond: upstreamCounts.requests / polling.wallSeconds, bytesPerSecond: upstreamCounts.bytes / polling.wallSeconds },
      polling: { loop: polling.loop, servingLoop: polling.servingLoops.length > 0 ? worstLoop(polling.servingLoops) : undefined, cpuShare: polling.cpuSeconds / polling.wallSeconds, seconds: polling.wallSeconds, threads: polling.threads },
      memory: {
        heapUsed: memoryStats.memory.heapUsed + memoryStats.builderHeapUsed,
        builderHeapUsed: memoryStats.builderHeapUsed,
        bootHeapUsed: memoryStats.bootMemory.heapUsed,
        external: memoryStats.memory.external,
        arrayBuffers: memoryStats.memory.arrayBuffers,
        rss: memoryStats.memory.rss,
        ...(peakRss === undefined ? {} : { peakRss }),
        ...(cgroup === undefined ? {} : { cgroup }),
      },
      visibility: {
        fill: { ...filled.visible, rebuilds: filled.rebuilds },
        polling: { ...polling.visible, rebuilds: polling.rebuilds },
        underLoad: { ...(underLoad ?? polling).visible, rebuilds: (underLoad ?? polling).rebuilds },
      },
      renderSeconds: memoryStats.renderSeconds,
      variants,
      promClient,
      ...(promClientSkipped ? { promClientSkipped } : {}),
    };
  } finally {
    cleanups.delete(cleanup);
    await cleanup();
  }
}

// ---------------------------------------------------------------------------------------

function toolVersion(command: string, args: string[]): string {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  return `${result.stdout}${result.stderr}`.split('\n')[0]?.trim() ?? '';
}

/** Stops whatever the harness started when it is interrupted, so no simulator or nginx outlives it. */
const cleanups = new Set<() => Promise<void>>();
reportCrashes('the harness process (bench/scale.ts: the pacer, the wrk runs)', () => `"${lastLogged}"`, async () => {
  await Promise.allSettled([...cleanups].map((cleanup) => cleanup()));
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping the processes started by this run`);
    void Promise.allSettled([...cleanups].map((cleanup) => cleanup())).then(() => process.exit(130));
  });
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  if (options === 'help') {
    process.stdout.write(HELP);
    return;
  }
  requireProgram('nginx', 'nginx');
  requireProgram('wrk', 'wrk');
  const runDir = mkdtempSync(join(tmpdir(), 'monapi-scale-'));
  // nginx's workers run as nobody and must reach the files below.
  chmodSync(runDir, 0o755);
  const loadAtStart = loadavg();
  log(`run directory ${runDir}; load average ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}`);

  log('decode + map against JSON.parse');
  const sim = await startSimulator({ monitoringPort: 0, releasesPort: 0, marketplacePort: 0, hosts: options.decodeHosts, websites: options.websites, rateLimitPerMinute: SIMULATOR_LIMIT, burst: SIMULATOR_LIMIT });
  let decode;
  try {
    // The median of many cycles: a long-running exporter's decoders run warm, and seven cycles left the JIT half done and the figure noisy (2.1x to 2.7x on one commit).
    decode = await measureDecode(sim.monitoringBaseUrl, options.tiny ? 7 : DECODE_REPETITIONS);
  } finally {
    await sim.close();
  }
  log(`decode + map ${decode.decodeMapMs.toFixed(1)} ms vs JSON.parse ${decode.jsonParseMs.toFixed(1)} ms for ${(decode.bytes / 1e6).toFixed(2)} MB`);

  log('building the exporter as the image runs it (tsc -p tsconfig.bench.json)');
  // One per run, so that runs side by side do not share it.
  const buildDir = join(REPO_ROOT, BENCH_BUILDS, basename(runDir));
  cleanups.add(() => Promise.resolve(rmSync(buildDir, { recursive: true, force: true })));
  const exporterScript = ExporterProcess.build(buildDir);
  const nginx = await startNginx(join(runDir, 'nginx'), Object.entries(CONTENT_TYPES).map(([path, contentType]) => ({ path, contentType })));
  const stopNginx = (): Promise<void> => nginx.stop();
  cleanups.add(stopNginx);
  const steps: StepResult[] = [];
  try {
    for (const [i, series] of options.series.entries()) steps.push(await runStep(series, options.accounts?.[i], options, nginx, runDir, exporterScript));
  } finally {
    cleanups.delete(stopNginx);
    await stopNginx();
    rmSync(buildDir, { recursive: true, force: true });
  }

  const result: RunResult = {
    date: new Date().toISOString(),
    machine: { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, memoryBytes: totalmem(), loadAtStart, loadAtEnd: loadavg() },
    node: process.version,
    tools: { nginx: toolVersion('nginx', ['-v']), wrk: toolVersion('wrk', ['-v']) },
    settings: {
      connections: options.connections,
      scrapeSeconds: options.scrapeSeconds,
      rounds: options.rounds,
      pollingSeconds: options.pollingSeconds,
      pacePerMinute: PACE.perMinute,
      paceBurst: PACE.burst,
      command: ['npm run bench', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' '),
      exporterNodeOptions: options.exporterNodeOptions,
      servingThreads: servingThreadsUsed,
      loadNice: options.loadNice,
    },
    decode,
    steps,
  };
  mkdirSync(options.out, { recursive: true });
  writeFileSync(join(options.out, 'latest.json'), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(join(options.out, 'latest.svg'), renderPlot(result));
  writeFileSync(join(options.out, 'latest.md'), renderReport(result));
  rmSync(runDir, { recursive: true, force: true });
  log(`report: ${join(options.out, 'latest.md')}`);
}

await main();
