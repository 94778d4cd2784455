/**
 * Exposition micro-benchmark: 100,000 series (1,000 groups x 100 series, 3 labels) through
 * MetricStore, against prom-client's `register.metrics()` with the same series, in one run.
 *
 *   npx tsx bench/exposition.bench.ts [--groups 1000] [--per-group 100] [--seconds 8]
 *
 * Part 1 (in process): publish time, rebuild time, longest event-loop stretch, body and
 * gzip sizes, heap. Part 2 (child processes, one server at a time): scrape latency under
 * concurrent load while data keeps changing, and the latency of /-/healthy probes sent
 * meanwhile, which shows how long the server's event loop is blocked.
 */
import { fork } from 'node:child_process';
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import express from 'express';
import { Gauge, Registry } from 'prom-client';
import type { FamilySamples } from '../src/exposition/model.js';
import { MetricStore } from '../src/exposition/store.js';
import { createServer, startHttpServer } from '../src/server/app.js';

const gzipAsync = promisify(gzip);

const PROMETHEUS_3_ACCEPT =
  'application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const GROUPS = arg('groups', 1000);
const PER_GROUP = arg('per-group', 100);
const SECONDS = arg('seconds', 8);
const SCRAPERS = arg('scrapers', 2);
const FAMILY = { name: 'bench_host_disk_io_bytes', type: 'gauge', help: 'Disk I/O of a host.', unit: 'bytes' } as const;

function groupName(g: number): string {
  return `monitoring/host/${String(g).padStart(5, '0')}`;
}

function groupFamilies(g: number, salt: number): FamilySamples[] {
  const samples = [];
  for (let s = 0; s < PER_GROUP; s++) {
    samples.push({
      labels: { host: `host-${String(g).padStart(5, '0')}.example.net`, device: `nvme${Math.floor(s / 10)}n${s % 10}`, direction: s % 2 ? 'read' : 'write' },
      value: Math.round((g * 7919 + s * 104729 + salt) % 1e9) / 8,
    });
  }
  return [{ spec: FAMILY, samples }];
}

function promClientGauge(registry: Registry): Gauge<'host' | 'device' | 'direction'> {
  return new Gauge({ name: FAMILY.name, help: FAMILY.help, labelNames: ['host', 'device', 'direction'], registers: [registry] });
}

function fillPromClient(gauge: Gauge<'host' | 'device' | 'direction'>, g: number, salt: number): void {
  for (const family of groupFamilies(g, salt)) for (const sample of family.samples as { labels: Record<'host' | 'device' | 'direction', string>; value: number }[]) {
    gauge.set(sample.labels, sample.value);
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
}

const ms = (x: number): string => `${x.toFixed(1)} ms`;
const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(2)} MB`;

// ---------------------------------------------------------------------------------------
// Child process: one server, with data changing in the background.

async function child(mode: 'store' | 'prom-client'): Promise<void> {
  let app: express.Express;
  let churn: (round: number) => void;
  if (mode === 'store') {
    const registry = new Registry();
    const store = new MetricStore({ registry });
    for (let g = 0; g < GROUPS; g++) store.publish(groupName(g), groupFamilies(g, 0));
    await store.flush();
    app = createServer({ store, selfRegistry: registry, status: { ready: () => true, status: () => ({}) }, version: 'bench' });
    churn = (round) => {
      for (let i = 0; i < 10; i++) {
        const g = (round * 10 + i) % GROUPS;
        store.publish(groupName(g), groupFamilies(g, round));
      }
    };
  } else {
    // The usual prom-client setup: render on every scrape, no compression.
    const registry = new Registry();
    const gauge = promClientGauge(registry);
    for (let g = 0; g < GROUPS; g++) fillPromClient(gauge, g, 0);
    app = express();
    app.get('/metrics', async (_req, res) => {
      res.set('Content-Type', registry.contentType).send(await registry.metrics());
    });
    app.get('/-/healthy', (_req, res) => {
      res.send('OK\n');
    });
    churn = (round) => {
      for (let i = 0; i < 10; i++) fillPromClient(gauge, (round * 10 + i) % GROUPS, round);
    };
  }
  const server = await startHttpServer(app, '127.0.0.1:0');
  let round = 0;
  const timer = setInterval(() => churn(++round), 100);
  process.send?.({ url: server.url });
  process.once('message', () => {
    clearInterval(timer);
    void server.close(1000).then(() => process.exit(0));
  });
}

// ---------------------------------------------------------------------------------------
// Parent: measurements.

function get(url: string, agent: Agent, headers: Record<string, string>): Promise<{ ms: number; bytes: number; status: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () => resolve({ ms: performance.now() - started, bytes, status: res.statusCode ?? 0 }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

interface LoadResult {
  scrapes: number[];
  bytes: number;
  pings: number[];
}

async function underLoad(mode: 'store' | 'prom-client'): Promise<LoadResult> {
  const proc = fork(fileURLToPath(import.meta.url), ['--child', mode, '--groups', String(GROUPS), '--per-group', String(PER_GROUP)], {
    execArgv: process.execArgv,
  });
  const url = await new Promise<string>((resolve, reject) => {
    proc.once('message', (m) => resolve((m as { url: string }).url));
    proc.once('error', reject);
    proc.once('exit', (code) => reject(new Error(`bench child ${mode} exited with ${code}`)));
  });
  const scrapeAgent = new Agent({ keepAlive: true, maxSockets: SCRAPERS });
  const pingAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  const headers = { accept: PROMETHEUS_3_ACCEPT, 'accept-encoding': 'gzip' };
  const result: LoadResult = { scrapes: [], bytes: 0, pings: [] };
  const end = performance.now() + SECONDS * 1000;
  const scraper = async (): Promise<void> => {
    while (performance.now() < end) {
      const r = await get(`${url}/metrics`, scrapeAgent, headers);
      if (r.status !== 200) throw new Error(`scrape answered ${r.status}`);
      result.scrapes.push(r.ms);
      result.bytes = r.bytes;
    }
  };
  const pinger = async (): Promise<void> => {
    while (performance.now() < end) {
      result.pings.push((await get(`${url}/-/healthy`, pingAgent, {})).ms);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  await Promise.all([...Array.from({ length: SCRAPERS }, scraper), pinger()]);
  proc.send('stop');
  await new Promise((resolve) => proc.once('exit', resolve));
  scrapeAgent.destroy();
  pingAgent.destroy();
  return result;
}

async function parent(): Promise<void> {
  const series = GROUPS * PER_GROUP;
  console.log(`exposition bench: ${series.toLocaleString('en')} series (${GROUPS} groups x ${PER_GROUP}, 3 labels), Node ${process.version}`);

  // MetricStore: publish, then rebuild.
  global.gc?.();
  const memoryBefore = process.memoryUsage();
  const store = new MetricStore();
  let started = performance.now();
  for (let g = 0; g < GROUPS; g++) store.publish(groupName(g), groupFamilies(g, 0));
  const publishMs = performance.now() - started;
  const rebuilds: number[] = [];
  const slices: number[] = [];
  for (let i = 0; i < 5; i++) {
    store.publish(groupName(i), groupFamilies(i, i + 1));
    started = performance.now();
    await store.flush();
    rebuilds.push(performance.now() - started);
    slices.push(store.snapshot().longestSliceSeconds * 1000);
  }
  // ArrayBuffer backing stores are released after GC on a background thread: give it time.
  global.gc?.();
  await new Promise((resolve) => setTimeout(resolve, 200));
  global.gc?.();
  const memoryAfter = process.memoryUsage();
  const storeHeap = memoryAfter.heapUsed - memoryBefore.heapUsed;
  // Buffers live outside the V8 heap; `external` counts them.
  const storeExternal = memoryAfter.external - memoryBefore.external;
  const snap = store.snapshot();
  const snapBytes = snap.text.raw.length + snap.text.deflated.length + snap.openMetrics.raw.length + snap.openMetrics.deflated.length;
  started = performance.now();
  store.publish(groupName(0), groupFamilies(0, 99));
  const republishMs = performance.now() - started;

  // prom-client: the same series, rendered as a scrape would.
  const registry = new Registry();
  const gauge = promClientGauge(registry);
  for (let g = 0; g < GROUPS; g++) fillPromClient(gauge, g, 0);
  const renders: number[] = [];
  let promBody = '';
  for (let i = 0; i < 5; i++) {
    started = performance.now();
    promBody = await registry.metrics();
    renders.push(performance.now() - started);
  }
  started = performance.now();
  const promGzip = await gzipAsync(promBody);
  const promGzipMs = performance.now() - started;

  const rebuild = median(rebuilds);
  const promRender = median(renders);
  console.log('\n## Rendering (median of 5)');
  console.log(`MetricStore publish of all ${GROUPS} groups: ${ms(publishMs)} (${ms(republishMs)} to republish one group)`);
  console.log(`MetricStore rebuild (text + OpenMetrics, both gzipped): ${ms(rebuild)}; longest event-loop stretch ${ms(median(slices))}`);
  console.log(`prom-client register.metrics(): ${ms(promRender)} on the event loop, + gzip ${ms(promGzipMs)} if compressed`);
  console.log(`longest event-loop block: prom-client ${ms(promRender)} vs MetricStore ${ms(median(slices))} -> ${(promRender / median(slices)).toFixed(1)}x shorter`);
  console.log(`body: text ${mb(snap.text.raw.length)} (${(snap.text.raw.length / series).toFixed(0)} B/series), OpenMetrics ${mb(snap.openMetrics.raw.length)}, prom-client ${mb(Buffer.byteLength(promBody))}`);
  console.log(`gzip: text ${mb(snap.text.deflated.length)}, OpenMetrics ${mb(snap.openMetrics.deflated.length)}, prom-client body ${mb(promGzip.length)}`);
  console.log(
    `MetricStore memory after rebuild: heap ${mb(storeHeap)} (${(storeHeap / series).toFixed(0)} B/series), buffers ${mb(storeExternal)} (of which snapshot bodies ${mb(snapBytes)})${global.gc ? '' : ' (run with --expose-gc for steadier figures)'}`,
  );

  console.log(`\n## Under load (${SECONDS} s each, ${SCRAPERS} concurrent scrapers + a /-/healthy probe every 20 ms, 1,000 series changed every 100 ms)`);
  const rows: [string, LoadResult][] = [];
  for (const mode of ['store', 'prom-client'] as const) rows.push([mode, await underLoad(mode)]);
  console.log('| server | scrapes/s | scrape p50 | scrape p99 | body sent | probe p50 | probe p99 | probe max |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const [mode, r] of rows) {
    console.log(
      `| ${mode === 'store' ? 'MetricStore (OpenMetrics, gzip)' : 'prom-client (text, identity)'} | ${(r.scrapes.length / SECONDS).toFixed(1)} | ${ms(median(r.scrapes))} | ${ms(percentile(r.scrapes, 99))} | ${mb(r.bytes)} | ${ms(median(r.pings))} | ${ms(percentile(r.pings, 99))} | ${ms(Math.max(...r.pings))} |`,
    );
  }
  const [storeRow, promRow] = [rows[0]?.[1] as LoadResult, rows[1]?.[1] as LoadResult];
  console.log(
    `ratios (prom-client / MetricStore): scrape p50 ${(median(promRow.scrapes) / median(storeRow.scrapes)).toFixed(1)}x, probe p99 ${(percentile(promRow.pings, 99) / percentile(storeRow.pings, 99)).toFixed(1)}x, throughput ${(storeRow.scrapes.length / promRow.scrapes.length).toFixed(1)}x`,
  );
  await store.close();
}

const childIndex = process.argv.indexOf('--child');
if (childIndex >= 0) await child(process.argv[childIndex + 1] as 'store' | 'prom-client');
else await parent();
