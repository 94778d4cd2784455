import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, stopServer } from './prometheus.js';

/**
 * VictoriaMetrics single-node, built from the Go module proxy by scripts/victoria-metrics into a
 * cache outside the repository (.ci/run builds it). A missing binary is an error, never a
 * skipped test. It takes Prometheus remote write at /api/v1/write and answers PromQL (MetricsQL)
 * at /api/v1/query and /api/v1/query_range; /api/v1/export gives the raw samples.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface RunningVictoriaMetrics {
  readonly url: string;
  readonly writeUrl: string;
  readonly version: string;
  /** Raw samples of the series matching `selector` over the last `range` (e.g. 2h, 40d), per series. */
  rawSamples(selector: string, range: string): Promise<{ metric: Record<string, string>; values: [number, number][] }[]>;
  /** Range query: [seconds, value] per series. */
  queryRange(promql: string, startSeconds: number, endSeconds: number, stepSeconds: number): Promise<{ metric: Record<string, string>; values: [number, number][] }[]>;
  stop(): Promise<void>;
}

export function victoriaMetricsBinary(): string {
  const where = spawnSync('bash', [join(ROOT, 'scripts/victoria-metrics'), '--where'], { encoding: 'utf8' });
  const dir = where.stdout.trim();
  if (where.status !== 0 || dir === '') throw new Error(`scripts/victoria-metrics --where failed: ${where.stderr.trim()}`);
  const path = join(dir, 'victoria-metrics');
  if (!existsSync(path)) {
    throw new Error(`victoria-metrics is not built (${path} is missing): run scripts/victoria-metrics, which builds it from the Go module proxy; .ci/run does this`);
  }
  return path;
}

const RANGE = /^(\d+)([smhd])$/;
function rangeSeconds(range: string): number {
  const m = RANGE.exec(range);
  if (!m) throw new Error(`range must look like 2h or 40d, got ${range}`);
  return Number(m[1]) * { s: 1, m: 60, h: 3600, d: 86_400 }[m[2] as 's' | 'm' | 'h' | 'd'];
}

export async function startVictoriaMetrics(): Promise<RunningVictoriaMetrics> {
  const binary = victoriaMetricsBinary();
  const version = spawnSync(binary, ['-version'], { encoding: 'utf8' }).stdout.trim();
  const dir = mkdtempSync(join(tmpdir(), 'monapi-vm-'));
  const port = await freePort();
  const child: ChildProcess = spawn(
    binary,
    [
      `-storageDataPath=${join(dir, 'data')}`,
      `-httpListenAddr=127.0.0.1:${port}`,
      '-retentionPeriod=1y',
      // Samples sent twice (a lost answer) are kept once, as for an HA pair of senders.
      '-dedup.minScrapeInterval=1ms',
      // Queries see the newest samples at once, not after the default 30 s.
      '-search.latencyOffset=0s',
      '-search.disableCache',
      '-inmemoryDataFlushInterval=1s',
      '-loggerLevel=ERROR',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`victoria-metrics exited with ${child.exitCode}: ${stderr}`);
    try {
      if ((await fetch(`${url}/health`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`victoria-metrics did not become ready: ${stderr}`);
    await new Promise((r) => setTimeout(r, 200));
  }

  return {
    url,
    writeUrl: `${url}/api/v1/write`,
    version,
    async rawSamples(selector, range) {
      const end = Date.now() / 1000 + 60;
      const response = await fetch(`${url}/api/v1/export?match[]=${encodeURIComponent(selector)}&start=${end - rangeSeconds(range) - 60}&end=${end}`);
      if (!response.ok) throw new Error(`victoria-metrics export: ${response.status} ${await response.text()}`);
      const lines = (await response.text()).split('\n').filter((l) => l.trim() !== '');
      return lines.map((line) => {
        const row = JSON.parse(line) as { metric: Record<string, string>; values: (number | null)[]; timestamps: number[] };
        return { metric: row.metric, values: row.timestamps.map((t, i): [number, number] => [t / 1000, row.values[i] ?? NaN]) };
      });
    },
    async queryRange(promql, startSeconds, endSeconds, stepSeconds) {
      const response = await fetch(`${url}/api/v1/query_range?query=${encodeURIComponent(promql)}&start=${startSeconds}&end=${endSeconds}&step=${stepSeconds}`);
      const body = (await response.json()) as { status: string; error?: string; data?: { result: { metric: Record<string, string>; values: [number, string][] }[] } };
      if (body.status !== 'success' || !body.data) throw new Error(`victoria-metrics ${promql}: ${body.error ?? response.status}`);
      return body.data.result.map((r) => ({ metric: r.metric, values: r.values.map(([t, v]): [number, number] => [t, Number(v)]) }));
    },
    stop: () => stopServer(child, dir),
  };
}
