/**
 * The exporter under test, in its own process: the same `loadConfig` and `startExporter`
 * as the command line, plus what the harness reads over IPC (event-loop delay at 1 ms
 * resolution, memory, CPU, and how long each publish takes to reach a snapshot). Started by
 * bench/scale.ts with `--expose-gc`; not meant to be run by hand.
 *
 *   node --expose-gc .tmp/bench-builds/<run>/bench/scale/exporter-process.js <config.yaml> <log file>
 *
 * (compiled by tsc -p tsconfig.bench.json, as the image's dist/ is, before each run)
 */
import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { constants as perfConstants, monitorEventLoopDelay, performance, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { writeHeapSnapshot } from 'node:v8';
import pino from 'pino';
import { loadConfig } from '../../src/exporter/config.js';
import { startExporter } from '../../src/exporter/index.js';
import { defaultServingThreads } from '../../src/server/serving-threads.js';
import type { ExpositionSnapshot } from '../../src/exposition/store.js';
import { reportCrashes } from './processes.js';
import { readThreads, threadTimesBetween } from './thread-times.js';
import type { AllocationKind, ExporterRequest, ExporterStats, LoopDelay } from './protocol.js';

const [configFile, logFile] = process.argv.slice(2);
if (!configFile || !logFile || !process.send) {
  process.stderr.write('exporter-process: run by bench/scale.ts with <config.yaml> <log file> and an IPC channel\n');
  process.exit(2);
}
const send = process.send.bind(process);
let lastRequest = 'starting';
reportCrashes('the exporter process (bench/scale/exporter-process.ts)', () => `serving, after the harness asked for "${lastRequest}"`);

const gc = (globalThis as { gc?: () => void }).gc;
function collectGarbage(): void {
  gc?.();
  gc?.();
}

collectGarbage();
const bootMemory = process.memoryUsage();

const loop = monitorEventLoopDelay({ resolution: 1 });
loop.enable();

const log = pino({ level: 'warn' }, createWriteStream(logFile));
const config = loadConfig(configFile, process.env);
// As the command line's --web.serving-threads=auto does, unless the harness says otherwise.
const servingThreads = process.env.MONAPI_BENCH_SERVING_THREADS === undefined ? defaultServingThreads() : Number(process.env.MONAPI_BENCH_SERVING_THREADS);
const exporter = await startExporter({ config, listenAddress: '127.0.0.1:0', telemetryPath: '/metrics', log, servingThreads, servingLoopResolutionMs: 1 });

/**
 * Publish times (ms since epoch, the store's clock) waiting for the snapshot that holds them,
 * and the publish-to-visible delays measured since the last reset.
 */
let waiting: number[] = [];
let visibleDelaysMs: number[] = [];
const noRebuilds = () => ({ count: 0, seconds: 0, maxSeconds: 0, compressedBytes: 0 });
let rebuilds = noRebuilds();
let lastGeneration = 0;
const store = exporter.store;
const publish = store.publish.bind(store);
store.publish = (group, families) => {
  waiting.push(Date.now());
  publish(group, families);
};
store.onSnapshot((snapshot: ExpositionSnapshot) => {
  const now = Date.now();
  if (snapshot.generation > lastGeneration) {
    lastGeneration = snapshot.generation;
    rebuilds.count++;
    rebuilds.seconds += snapshot.renderSeconds;
    rebuilds.maxSeconds = Math.max(rebuilds.maxSeconds, snapshot.renderSeconds);
    rebuilds.compressedBytes += snapshot.compressedBytes;
  }
  const still: number[] = [];
  for (const at of waiting) {
    if (at <= snapshot.capturedAtMs) visibleDelaysMs.push(now - at);
    else still.push(at);
  }
  waiting = still;
});

/**
 * Stalls, to find what caused them in a profile: a 10 ms interval that fires late by more
 * than 50 ms records when the stall ended, on the clock --cpu-prof stamps its samples with.
 */
const STALL_TICK_MS = 10;
let stalls: { endedAtUs: number; ms: number }[] = [];
let lastTick = performance.now();
setInterval(() => {
  const now = performance.now();
  const late = now - lastTick - STALL_TICK_MS;
  lastTick = now;
  if (late > 50) {
    stalls.push({ endedAtUs: Number(process.hrtime.bigint() / 1000n), ms: late });
    if (stalls.length > 200) stalls = stalls.sort((a, b) => b.ms - a.ms).slice(0, 20);
  }
}, STALL_TICK_MS).unref();

const GC_KINDS: Record<number, string> = {
  [perfConstants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [perfConstants.NODE_PERFORMANCE_GC_MINOR_MARK_SWEEP]: 'minor mark-sweep',
  [perfConstants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
  [perfConstants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental marking step',
  [perfConstants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
};
/** Why V8 collected, where it says: a collection for external memory (array buffers) or a forced one. */
const GC_FLAGS: readonly (readonly [number, string])[] = [
  [perfConstants.NODE_PERFORMANCE_GC_FLAGS_FORCED, 'forced'],
  [perfConstants.NODE_PERFORMANCE_GC_FLAGS_ALL_AVAILABLE_GARBAGE, 'all available garbage'],
  [perfConstants.NODE_PERFORMANCE_GC_FLAGS_ALL_EXTERNAL_MEMORY, 'external memory'],
];
function gcKind(entry: PerformanceEntry): string {
  const detail = (entry as PerformanceEntry & { detail?: { kind?: number; flags?: number } }).detail;
  const kind = GC_KINDS[detail?.kind ?? 0] ?? String(detail?.kind);
  const flags = GC_FLAGS.filter(([bit]) => ((detail?.flags ?? 0) & bit) !== 0).map(([, name]) => name);
  return flags.length > 0 ? `${kind}: ${flags.join(', ')}` : kind;
}
let gcPauses = { count: 0, totalMs: 0, maxMs: 0, maxKind: '', byKind: {} as Record<string, number> };

/**
 * How fast the main thread's external memory (array buffers, and what Node accounts to V8)
 * rises, read once per batch of collections the observer is told of: the rises summed, the
 * falls left out. What a rise holds (promoted, or still young) it cannot say; a lasting one is
 * what brings V8's collections for external memory, 64 MB above what the last full one left.
 */
let externalRise = 0;
let externalAtLastCallback = process.memoryUsage().external;
function externalAtCallback(): void {
  const external = process.memoryUsage().external;
  if (external > externalAtLastCallback) externalRise += external - externalAtLastCallback;
  externalAtLastCallback = external;
}

new PerformanceObserver((list) => {
  externalAtCallback();
  for (const entry of list.getEntries()) {
    const kind = gcKind(entry);
    gcPauses.count++;
    gcPauses.totalMs += entry.duration;
    gcPauses.byKind[kind] = (gcPauses.byKind[kind] ?? 0) + 1;
    if (entry.duration > gcPauses.maxMs) {
      gcPauses.maxMs = entry.duration;
      gcPauses.maxKind = kind;
    }
  }
}).observe({ entryTypes: ['gc'] });

/** The process's largest resident set since it started: what a container's memory limit has to hold. */
function readPeakRss(): number | undefined {
  try {
    const kib = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    return kib === undefined ? undefined : Number(kib) * 1024;
  } catch {
    return undefined;
  }
}

let cpuAtReset = process.cpuUsage();
let wallAtReset = performance.now();
let threadsAtReset = readThreads();

function loopDelay(): LoopDelay {
  const ms = (ns: number): number => ns / 1e6;
  return { p50Ms: ms(loop.percentile(50)), p99Ms: ms(loop.percentile(99)), maxMs: ms(loop.max), samples: loop.count };
}

/** `afterCollection`: the builder thread collects its garbage first too (the main thread's was collected by the caller). */
async function stats(afterCollection = false): Promise<ExporterStats> {
  const snapshot = store.snapshot();
  const builderHeapUsed = await store.builderHeapUsed(afterCollection);
  const cpu = process.cpuUsage(cpuAtReset);
  const sorted = [...visibleDelaysMs].sort((a, b) => a - b);
  const at = (p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
  return {
    series: snapshot.series,
    generation: snapshot.generation,
    renderSeconds: snapshot.renderSeconds,
    ready: exporter.ready(),
    loop: loopDelay(),
    servingLoops: await exporter.servingLoopDelays(),
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    threads: threadTimesBetween(threadsAtReset, readThreads()),
    wallSeconds: (performance.now() - wallAtReset) / 1000,
    memory: process.memoryUsage(),
    peakRss: readPeakRss(),
    builderHeapUsed,
    bootMemory,
    visible: { count: sorted.length, p50Ms: at(50), p99Ms: at(99), maxMs: sorted.at(-1) ?? NaN },
    rebuilds: {
      count: rebuilds.count,
      meanMs: rebuilds.count > 0 ? (rebuilds.seconds * 1000) / rebuilds.count : NaN,
      maxMs: rebuilds.count > 0 ? rebuilds.maxSeconds * 1000 : NaN,
      meanCompressedBytes: rebuilds.count > 0 ? rebuilds.compressedBytes / rebuilds.count : NaN,
    },
    stalls: [...stalls].sort((a, b) => b.ms - a.ms).slice(0, 5),
    gc: { ...gcPauses, byKind: { ...gcPauses.byKind }, externalRiseBytes: externalRise },
  };
}

/**
 * The main thread's allocations, sampled; which of them the profile keeps is the
 * `AllocationKind` (protocol.ts): `all`, with the collected objects (a plain heap profile keeps
 * only the survivors), where the garbage the collections work for comes from; `old`, without
 * those scavenges collected; `live`, only what a collection at the end of the window leaves.
 */
let inspector: Session | undefined;
let sampledKind: AllocationKind | undefined;
async function startAllocationSampling(kind: AllocationKind, intervalBytes: number): Promise<void> {
  sampledKind = kind;
  inspector = new Session();
  inspector.connect();
  await inspector.post('HeapProfiler.startSampling', {
    samplingInterval: intervalBytes,
    includeObjectsCollectedByMajorGC: kind !== 'live',
    includeObjectsCollectedByMinorGC: kind === 'all',
  });
}

async function stopAllocationSampling(path: string): Promise<void> {
  if (!inspector) return;
  // Without a collection first, objects that died since the last one would count as alive.
  if (sampledKind === 'live') collectGarbage();
  const { profile } = await inspector.post('HeapProfiler.stopSampling');
  writeFileSync(path, JSON.stringify(profile));
  inspector.disconnect();
  inspector = undefined;
}

process.on('message', (message: ExporterRequest) => {
  lastRequest = message.type;
  switch (message.type) {
    case 'reset':
      // The reply waits for the serving threads' reset too, so a window starts with every histogram empty.
      void exporter.servingLoopDelays(true).then(() => {
        loop.reset();
        visibleDelaysMs = [];
        rebuilds = noRebuilds();
        stalls = [];
        gcPauses = { count: 0, totalMs: 0, maxMs: 0, maxKind: '', byKind: {} };
        externalRise = 0;
        cpuAtReset = process.cpuUsage();
        wallAtReset = performance.now();
        threadsAtReset = readThreads();
        send({ type: 'reset' });
      });
      return;
    case 'stats':
      void stats().then((s) => send({ type: 'stats', stats: s }));
      return;
    case 'gc':
      collectGarbage();
      // ArrayBuffer backing stores are freed after GC on a background thread: give it a moment.
      setTimeout(() => {
        collectGarbage();
        void stats(true).then((s) => send({ type: 'stats', stats: s }));
      }, 300);
      return;
    case 'heap-snapshot':
      send({ type: 'heap-snapshot', path: writeHeapSnapshot(message.path) });
      return;
    case 'allocations-start':
      void startAllocationSampling(message.kind, message.intervalBytes).then(() => send({ type: 'allocations-start' }));
      return;
    case 'allocations-stop':
      void stopAllocationSampling(message.path).then(() => send({ type: 'allocations-stop', path: message.path }));
      return;
    case 'stop':
      void exporter.stop().then(() => process.exit(0));
      return;
  }
});

process.on('SIGTERM', () => void exporter.stop().then(() => process.exit(0)));
send({ type: 'ready', url: exporter.url, servingThreads });
