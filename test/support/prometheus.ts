import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A real Prometheus server for end-to-end tests. The Debian package `prometheus` provides
 * it; .ci/run installs it. A missing binary is an error, never a skipped test.
 */

export function requireBinary(name: 'prometheus' | 'promtool'): string {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  const path = found.stdout.trim();
  if (found.status !== 0 || path === '') {
    throw new Error(`${name} is not installed: install the Debian package "prometheus" (apt-get install -y prometheus); .ci/run does this`);
  }
  return path;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function staticConfig(target: PromTarget): string {
  const { address, labels } = typeof target === 'string' ? { address: target, labels: {} } : target;
  const labelLines = Object.entries(labels).map(([name, value]) => `          ${name}: ${JSON.stringify(value)}\n`);
  return `      - targets: [${JSON.stringify(address)}]\n${labelLines.length > 0 ? `        labels:\n${labelLines.join('')}` : ''}`;
}

export interface PromSample {
  readonly metric: Record<string, string>;
  readonly value: number;
}

export interface RunningPrometheus {
  readonly url: string;
  /** Instant query; returns vector samples. */
  query(promql: string): Promise<PromSample[]>;
  /** Raw samples of a range selector such as `foo[1m]`: [timestamp seconds, value][] per series. */
  rangeSamples(selector: string): Promise<{ metric: Record<string, string>; values: [number, number][] }[]>;
  waitFor(promql: string, predicate: (samples: PromSample[]) => boolean, timeoutMs: number): Promise<PromSample[]>;
  stop(): Promise<void>;
}

interface ApiAnswer {
  status: string;
  error?: string;
  data?: { resultType: string; result: { metric: Record<string, string>; value?: [number, string]; values?: [number, string][] }[] };
}

/** A scrape target: `host:port`, optionally with labels Prometheus attaches to everything scraped from it. */
export type PromTarget = string | { readonly address: string; readonly labels: Readonly<Record<string, string>> };

export async function startPrometheus(options: { targets: readonly PromTarget[]; scrapeIntervalSeconds: number; metricsPath?: string }): Promise<RunningPrometheus> {
  const binary = requireBinary('prometheus');
  const dir = mkdtempSync(join(tmpdir(), 'monapi-prom-'));
  const port = await freePort();
  const config = `global:
  scrape_interval: ${options.scrapeIntervalSeconds}s
  scrape_timeout: ${Math.max(1, options.scrapeIntervalSeconds - 0.5)}s
scrape_configs:
  - job_name: monapi
    metrics_path: ${options.metricsPath ?? '/metrics'}
    static_configs:
${options.targets.map(staticConfig).join('')}`;
  writeFileSync(join(dir, 'prometheus.yml'), config);
  const child: ChildProcess = spawn(
    binary,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;

  const api = async (path: string): Promise<NonNullable<ApiAnswer['data']>> => {
    const response = await fetch(`${url}${path}`);
    const body = (await response.json()) as ApiAnswer;
    if (body.status !== 'success' || !body.data) throw new Error(`prometheus ${path}: ${body.error ?? response.status}`);
    return body.data;
  };

  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prometheus exited with ${child.exitCode}: ${stderr}`);
    try {
      const ready = await fetch(`${url}/-/ready`);
      if (ready.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`prometheus did not become ready: ${stderr}`);
    await new Promise((r) => setTimeout(r, 200));
  }

  const query = async (promql: string): Promise<PromSample[]> => {
    const data = await api(`/api/v1/query?query=${encodeURIComponent(promql)}`);
    return data.result.map((r) => ({ metric: r.metric, value: Number(r.value?.[1]) }));
  };

  return {
    url,
    query,
    async rangeSamples(selector) {
      const data = await api(`/api/v1/query?query=${encodeURIComponent(selector)}`);
      return data.result.map((r) => ({ metric: r.metric, values: (r.values ?? []).map(([t, v]) => [t, Number(v)] as [number, number]) }));
    },
    async waitFor(promql, predicate, timeoutMs) {
      const end = Date.now() + timeoutMs;
      let last: PromSample[] = [];
      for (;;) {
        last = await query(promql);
        if (predicate(last)) return last;
        if (Date.now() > end) throw new Error(`timed out waiting for ${promql}; last answer: ${JSON.stringify(last).slice(0, 500)}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    },
    async stop() {
      child.kill('SIGTERM');
      await new Promise<void>((resolve) => {
        if (child.exitCode !== null) resolve();
        else child.once('exit', () => resolve());
        setTimeout(() => {
          child.kill('SIGKILL');
          resolve();
        }, 5000).unref();
      });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
