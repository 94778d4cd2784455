import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, waitUntilReady } from '../../scripts/lib/prometheus-process.js';

export { freePort };

/**
 * A real Prometheus server for end-to-end tests, in two generations: Debian's Prometheus 2
 * (the package `prometheus`, 2.42) and Prometheus 3, built from the Go module proxy by
 * scripts/prometheus3 into a cache outside the repository. .ci/run installs the one and
 * builds the other. A missing binary is an error, never a skipped test.
 */

export type PrometheusMajor = 2 | 3;
/** Every end-to-end test that needs a Prometheus runs against each of these. */
export const PROMETHEUS_MAJORS: readonly PrometheusMajor[] = [2, 3];

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export function requireBinary(name: 'prometheus' | 'promtool', major: PrometheusMajor = 2): string {
  if (major === 3) return prometheus3Binary(name);
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  const path = found.stdout.trim();
  if (found.status !== 0 || path === '') {
    throw new Error(`${name} is not installed: install the Debian package "prometheus" (apt-get install -y prometheus); .ci/run does this`);
  }
  return path;
}

/** Where scripts/prometheus3 puts its build; the script names the folder, so the version is pinned in one place. */
function prometheus3Binary(name: 'prometheus' | 'promtool'): string {
  const where = spawnSync('bash', [join(ROOT, 'scripts/prometheus3'), '--where'], { encoding: 'utf8' });
  const dir = where.stdout.trim();
  if (where.status !== 0 || dir === '') throw new Error(`scripts/prometheus3 --where failed: ${where.stderr.trim()}`);
  const path = join(dir, name);
  if (!existsSync(path)) {
    throw new Error(`Prometheus 3's ${name} is not built (${path} is missing): run scripts/prometheus3, which builds it from the Go module proxy in a few minutes; .ci/run does this`);
  }
  return path;
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

export interface RangeSeries {
  readonly metric: Record<string, string>;
  readonly values: [number, number][];
}

export interface RuleState {
  readonly name: string;
  readonly health: string;
  readonly lastError?: string;
}

export interface RunningPrometheus {
  readonly url: string;
  /** Which generation this is: the binary it was started from. */
  readonly major: PrometheusMajor;
  /** The version the server reports (/api/v1/status/buildinfo), e.g. 3.16.0. */
  readonly version: string;
  /** Instant query; returns vector samples (a scalar answer as one sample without labels). */
  query(promql: string, timeSeconds?: number): Promise<PromSample[]>;
  /** Range query (/api/v1/query_range). */
  queryRange(promql: string, startSeconds: number, endSeconds: number, stepSeconds: number): Promise<RangeSeries[]>;
  /** Values of a label, optionally of the series matching a selector (/api/v1/label/<name>/values). */
  labelValues(label: string, match?: string): Promise<string[]>;
  /** Every loaded rule with its evaluation health (/api/v1/rules). */
  rules(): Promise<RuleState[]>;
  /** Raw samples of a range selector such as `foo[1m]`: [timestamp seconds, value][] per series. */
  rangeSamples(selector: string): Promise<{ metric: Record<string, string>; values: [number, number][] }[]>;
  waitFor(promql: string, predicate: (samples: PromSample[]) => boolean, timeoutMs: number): Promise<PromSample[]>;
  stop(): Promise<void>;
}

interface ApiAnswer<T> {
  status: string;
  error?: string;
  data?: T;
}

/** A scrape target: `host:port`, optionally with labels Prometheus attaches to everything scraped from it. */
export type PromTarget = string | { readonly address: string; readonly labels: Readonly<Record<string, string>> };

interface QueryData {
  resultType: string;
  result: { metric: Record<string, string>; value?: [number, string]; values?: [number, string][] }[] | [number, string];
}

export interface PrometheusOptions {
  /** Debian's Prometheus 2 (default) or the Prometheus 3 of scripts/prometheus3. */
  major?: PrometheusMajor;
  targets: readonly PromTarget[];
  scrapeIntervalSeconds: number;
  metricsPath?: string;
  /** The scrape job's name, the `job` label of every series (default monapi). */
  jobName?: string;
  /** Rule files to load, evaluated every `evaluationIntervalSeconds` (default: the scrape interval). */
  ruleFiles?: string[];
  evaluationIntervalSeconds?: number;
  /** More entries of `scrape_configs`, as YAML list items indented by two spaces. */
  extraScrapeConfigs?: string;
  /** Accept remote write at /api/v1/write (`--web.enable-remote-write-receiver`). */
  remoteWriteReceiver?: boolean;
  /** `storage.tsdb.out_of_order_time_window`, e.g. 40d: samples this much older than the newest are taken. */
  outOfOrderWindow?: string;
  /** `--storage.tsdb.retention.time` (Prometheus' default is 15d). */
  retention?: string;
  /** A folder of TSDB blocks (such as promtool's backfill output) copied into the data folder before the start. */
  blocks?: string;
}

export async function startPrometheus(options: PrometheusOptions): Promise<RunningPrometheus> {
  const binary = requireBinary('prometheus', options.major ?? 2);
  const dir = mkdtempSync(join(tmpdir(), 'monapi-prom-'));
  const port = await freePort();
  const config = `global:
  scrape_interval: ${options.scrapeIntervalSeconds}s
  scrape_timeout: ${Math.max(1, Math.floor(options.scrapeIntervalSeconds * 0.9))}s
  evaluation_interval: ${options.evaluationIntervalSeconds ?? options.scrapeIntervalSeconds}s
rule_files: [${(options.ruleFiles ?? []).map((f) => JSON.stringify(f)).join(', ')}]
${options.outOfOrderWindow === undefined ? '' : `storage:\n  tsdb:\n    out_of_order_time_window: ${options.outOfOrderWindow}\n`}scrape_configs:
${options.targets.length === 0 ? '' : `  - job_name: ${options.jobName ?? 'monapi'}
    metrics_path: ${options.metricsPath ?? '/metrics'}
    static_configs:
${options.targets.map(staticConfig).join('')}`}${options.extraScrapeConfigs ?? ''}`;
  writeFileSync(join(dir, 'prometheus.yml'), config);
  if (options.blocks !== undefined) cpSync(options.blocks, join(dir, 'data'), { recursive: true });
  const child: ChildProcess = spawn(
    binary,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
      ...(options.remoteWriteReceiver === true ? ['--web.enable-remote-write-receiver'] : []),
      ...(options.retention === undefined ? [] : [`--storage.tsdb.retention.time=${options.retention}`]),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;

  const api = async <T = QueryData>(path: string): Promise<T> => {
    const response = await fetch(`${url}${path}`);
    const body = (await response.json()) as ApiAnswer<T>;
    if (body.status !== 'success' || !body.data) throw new Error(`prometheus ${decodeURIComponent(path)}: ${body.error ?? response.status}`);
    return body.data;
  };
  const vector = (data: QueryData) => {
    if (data.resultType === 'scalar') return [{ metric: {}, value: Number((data.result as [number, string])[1]) }];
    return (data.result as Exclude<QueryData['result'], [number, string]>).map((r) => ({ metric: r.metric, value: Number(r.value?.[1]) }));
  };

  await waitUntilReady(url, child, 'prometheus', () => stderr);

  const major = options.major ?? 2;
  const { version } = await api<{ version: string }>('/api/v1/status/buildinfo');
  if (!version.startsWith(`${major}.`)) {
    child.kill('SIGKILL');
    throw new Error(`${binary} is Prometheus ${version}, not the Prometheus ${major} asked for`);
  }

  const query = async (promql: string, timeSeconds?: number): Promise<PromSample[]> =>
    vector(await api(`/api/v1/query?query=${encodeURIComponent(promql)}${timeSeconds === undefined ? '' : `&time=${timeSeconds}`}`));
  const matrix = (data: QueryData): RangeSeries[] =>
    (data.result as Exclude<QueryData['result'], [number, string]>).map((r) => ({
      metric: r.metric,
      values: (r.values ?? []).map(([t, v]) => [t, Number(v)] as [number, number]),
    }));

  return {
    url,
    major,
    version,
    query,
    async queryRange(promql, startSeconds, endSeconds, stepSeconds) {
      return matrix(await api(`/api/v1/query_range?query=${encodeURIComponent(promql)}&start=${startSeconds}&end=${endSeconds}&step=${stepSeconds}`));
    },
    async labelValues(label, match) {
      return api<string[]>(`/api/v1/label/${encodeURIComponent(label)}/values${match === undefined ? '' : `?match[]=${encodeURIComponent(match)}`}`);
    },
    async rules() {
      const data = await api<{ groups: { rules: { name: string; health: string; lastError?: string }[] }[] }>('/api/v1/rules');
      return data.groups.flatMap((g) => g.rules.map((r) => ({ name: r.name, health: r.health, ...(r.lastError ? { lastError: r.lastError } : {}) })));
    },
    async rangeSamples(selector) {
      return matrix(await api(`/api/v1/query?query=${encodeURIComponent(selector)}`));
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
    stop: () => stopServer(child, dir),
  };
}

/** SIGTERM, SIGKILL after 5 s, then the server's folder removed: how a test server is stopped. */
export async function stopServer(child: ChildProcess, dir: string): Promise<void> {
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
}
