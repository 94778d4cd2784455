import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { atLowerPriority } from '../../bench/scale/processes.js';
import type { LatencyFigures, RunResult } from '../../bench/scale/results.js';

/**
 * The scale harness's tiny version (`npm run bench -- --tiny`): one small step with
 * simulators, nginx, wrk and prom-client, seconds per window. Asserts that the report is
 * produced with every figure present and sane, never how fast anything was. Needs nginx and
 * wrk, like the harness; fails (never skips) without them.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
let out: string;
let run: RunResult;
let report: string;

beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), 'monapi-scale-test-'));
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/scale.ts'), '--tiny', '--allocations', 'all', '--out', out], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`the tiny harness run failed (exit ${code}):\n${output.slice(-4000)}`);
  run = JSON.parse(readFileSync(join(out, 'latest.json'), 'utf8')) as RunResult;
  report = readFileSync(join(out, 'latest.md'), 'utf8');
}, 240_000);

afterAll(() => {
  if (out) rmSync(out, { recursive: true, force: true });
});

function expectSaneLatency(figures: LatencyFigures, what: string): void {
  expect(figures.requests, what).toBeGreaterThan(0);
  expect(figures.perSecond, what).toBeGreaterThan(0);
  expect(figures.p50Ms, what).toBeGreaterThan(0);
  expect(figures.p99Ms, what).toBeGreaterThanOrEqual(figures.p50Ms);
  expect(figures.maxMs, what).toBeGreaterThanOrEqual(figures.p99Ms);
  expect(figures.fullLength200, `${what}: every counted answer a 200 of the full length`).toBe(true);
}

describe('scale harness, tiny run', () => {
  it('records the machine, the tools and the decode + map figures', () => {
    expect(run.node).toBe(process.version);
    expect(run.machine.cores).toBeGreaterThan(0);
    expect(run.tools.nginx).toMatch(/nginx/);
    expect(run.tools.wrk).toMatch(/wrk/);
    expect(run.decode.requests).toBeGreaterThan(0);
    expect(run.decode.bytes).toBeGreaterThan(0);
    expect(run.decode.decodeMapMs).toBeGreaterThan(0);
    expect(run.decode.bySource.every((s) => s.jsonParseMs > 0 && s.ms > 0)).toBe(true);
  });

  it('fills the exporter and measures every variant against nginx with full-length 200s', () => {
    expect(run.steps).toHaveLength(1);
    const step = run.steps[0] as RunResult['steps'][number];
    expect(step.series).toBeGreaterThan(500);
    expect(step.fillSeconds).toBeGreaterThan(0);
    expect(step.variants.map((v) => v.id)).toEqual(['text-gzip', 'text-identity', 'openmetrics-gzip']);
    for (const variant of step.variants) {
      expect(variant.bodyBytes).toBeGreaterThan(0);
      expectSaneLatency(variant.exporter, `exporter ${variant.id}`);
      expectSaneLatency(variant.nginx, `nginx ${variant.id}`);
      expect(variant.loop.samples).toBeGreaterThan(0);
      expect(variant.loop.maxMs).toBeGreaterThan(0);
      // Linux scheduler statistics per thread: the serving thread wrote the scrapes, so it ran.
      const serving = variant.threads.find((t) => t.thread === 'serving-0');
      expect(serving?.cpuSeconds, `${variant.id}: ${JSON.stringify(variant.threads)}`).toBeGreaterThan(0);
      expect(variant.threads.map((t) => t.thread)).toEqual(expect.arrayContaining(['main', 'serving-0', 'builder']));
      for (const t of variant.threads) expect(t.cpuSeconds + t.waitingSeconds, `${variant.id} ${t.thread}`).toBeLessThanOrEqual(variant.wallSeconds * (t.thread === 'V8 helpers' || t.thread === 'other' ? 16 : 1.05));
    }
    const gzip = step.variants.find((v) => v.id === 'text-gzip');
    const identity = step.variants.find((v) => v.id === 'text-identity');
    expect(gzip?.bodyBytes).toBeLessThan(identity?.bodyBytes ?? 0);
  });

  it('measures prom-client, memory, the event loop and publish-to-snapshot times', () => {
    const step = run.steps[0] as RunResult['steps'][number];
    expect(step.promClient, step.promClientSkipped).toBeDefined();
    expect(step.promClient?.series).toBeGreaterThan(0);
    expect(step.promClient?.heapBytes).toBeGreaterThan(0);
    if (step.promClient) expectSaneLatency(step.promClient.latency, 'prom-client');
    expect(step.memory.heapUsed).toBeGreaterThan(step.memory.bootHeapUsed);
    expect(step.memory.rss).toBeGreaterThan(step.memory.heapUsed);
    // Linux's peak resident set is read, in bytes (a figure in kB would fall below the resident set measured before the scrapes).
    expect(step.memory.peakRss).toBeGreaterThanOrEqual(step.memory.rss);
    expect(step.polling.loop.samples).toBeGreaterThan(0);
    expect(step.visibility.fill.count).toBeGreaterThan(0);
    expect(step.visibility.fill.maxMs).toBeGreaterThanOrEqual(step.visibility.fill.p50Ms);
    expect(step.renderSeconds).toBeGreaterThan(0);
  });

  it('samples the exporter allocations over the polling window, and tells whose they are', () => {
    const read = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/scale/allocations.ts'), join(out, 'profiles', `exporter-${run.steps[0]?.targetSeries}.heapprofile`), '40'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(read.status, read.stderr).toBe(0);
    const sampledMb = Number(/sampled allocations: ([\d.]+) MB/.exec(read.stdout)?.[1]);
    expect(sampledMb).toBeGreaterThan(0);
    const [own, under] = read.stdout.split('allocated under the function:');
    // Some of it is the exporter's own code (a compiled file of src/, not Node's, a dependency's nor the harness's).
    expect(own).toMatch(/^\s+[\d.]+ MB\s+[\d.]+%\s+\S+ src\/[\w/.-]+\.js:\d+$/m);
    expect(under).toMatch(/^\s+[\d.]+ MB\s+100\.0%\s+\(root\)/m);
  });

  it('runs the load below the servers it measures, and says so', () => {
    expect(run.settings.loadNice).toBe(10);
    expect(report).toContain('wrk and the simulators ran 10 nice steps below the exporter, nginx and prom-client (`--load-nice 10`)');
    // Every thread of a program started so is that much lower, the ones it starts later too.
    const niceOf = (command: string[]): string[] => spawnSync(command[0] as string, command.slice(1), { encoding: 'utf8' }).stdout.trim().split(' ');
    const probe = [process.execPath, '-e', "const { Worker } = require('node:worker_threads'); const os = require('node:os'); new Worker('require(\"node:worker_threads\").parentPort.postMessage(require(\"node:os\").getPriority(Number(require(\"node:fs\").readlinkSync(\"/proc/thread-self\").split(\"/\")[2])))', { eval: true }).once('message', (inWorker) => console.log(os.getPriority(), inWorker))"];
    const [ownNice = '0'] = niceOf([process.execPath, '-e', "console.log(require('node:os').getPriority())"]);
    expect(niceOf(atLowerPriority(probe, 10))).toEqual([String(Number(ownNice) + 10), String(Number(ownNice) + 10)]);
    expect(niceOf(atLowerPriority(probe, 0))).toEqual([ownNice, ownNice]);
  });

  it('writes the Markdown report with every section and a plot', () => {
    for (const heading of ['## Targets', '## Steps', '## Scrape latency', '## Against prom-client', '## Event-loop delay', "## Where the exporter's threads spent each window", '## Memory', '## From a completed poll', '## Decode + map']) {
      expect(report).toContain(heading);
    }
    expect(report).not.toMatch(/NaN|undefined/);
    // The largest step's peak resident set, against the limit the docs give for its series.
    expect(report).toMatch(/peak RSS \(filling and scrapes included\) within the container limit[^|]*\| [\d,]+\.\d of [\d,]+\.\d MiB \|/);
    const svg = readFileSync(join(out, 'latest.svg'), 'utf8');
    expect(svg).toMatch(/^<svg /);
    expect(svg.match(/<path /g)?.length).toBeGreaterThanOrEqual(5);
  });
});
