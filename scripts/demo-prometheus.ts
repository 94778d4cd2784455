import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, waitUntilReady } from './lib/prometheus-process.js';

/**
 * `npm run demo -- --prometheus`: a Prometheus beside the demo, scraping its exporter every
 * 5 s with the project's alert rules loaded, its data in a temporary folder, so a newcomer
 * sees graphs and alerts without writing a config.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const DEMO_RULES_FILE = join(ROOT, 'alerts/monapi-exporter.rules.yaml');
/** The job the alert rules name (`up{job="monapi-exporter"}`). */
export const DEMO_JOB = 'monapi-exporter';
const SCRAPE_INTERVAL_SECONDS = 5;

export const NO_PROMETHEUS_HELP = `Install one: apt-get install prometheus (Debian's Prometheus 2), or build
Prometheus 3 with scripts/prometheus3 (it needs Go); or name a binary with
--prometheus=/path/to/prometheus.`;

export class PrometheusNotFound extends Error {}

/**
 * The Prometheus to start: the one named, else `prometheus` on PATH, else the build of
 * scripts/prometheus3 if it is in its cache (never built here: that takes minutes).
 */
export function findPrometheus(named: string | undefined): string {
  if (named !== undefined && named !== '') {
    try {
      accessSync(named, constants.X_OK);
    } catch {
      throw new PrometheusNotFound(`--prometheus=${named}: no executable file there.\n${NO_PROMETHEUS_HELP}`);
    }
    return named;
  }
  const onPath = spawnSync('sh', ['-c', 'command -v prometheus'], { encoding: 'utf8' });
  if (onPath.status === 0 && onPath.stdout.trim() !== '') return onPath.stdout.trim();
  const where = spawnSync('bash', [join(ROOT, 'scripts/prometheus3'), '--where'], { encoding: 'utf8' });
  const cached = join(where.stdout.trim(), 'prometheus');
  if (where.status === 0 && where.stdout.trim() !== '' && existsSync(cached)) return cached;
  throw new PrometheusNotFound(`--prometheus: no prometheus on PATH and no build of scripts/prometheus3 in its cache.\n${NO_PROMETHEUS_HELP}`);
}

export interface DemoPrometheus {
  readonly url: string;
  readonly pid: number;
  readonly version: string;
  /**
   * Links to print: a graph of monapi_up and the alerts page where this build has a web UI
   * (Debian's has only the classic one, scripts/prometheus3's none), and both through the API.
   */
  readonly links: { graph?: string; alerts?: string; query: string; alertsApi: string };
  stop(): Promise<void>;
}

/** The address Prometheus scrapes: the exporter's URL with a wildcard or name host replaced by the loopback. */
export function scrapeTarget(exporterUrl: string): string {
  const url = new URL(exporterUrl);
  const host = ['localhost', '0.0.0.0', '[::]', ''].includes(url.hostname) ? '127.0.0.1' : url.hostname;
  return `${host}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`;
}

export async function startDemoPrometheus(binary: string, exporterUrl: string): Promise<DemoPrometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'monapi-demo-prometheus-'));
  const port = await freePort();
  const exporter = new URL(exporterUrl);
  const config = `# Written by npm run demo -- --prometheus.
global:
  scrape_interval: ${SCRAPE_INTERVAL_SECONDS}s
  scrape_timeout: ${SCRAPE_INTERVAL_SECONDS - 1}s
  evaluation_interval: ${SCRAPE_INTERVAL_SECONDS}s
rule_files: [${JSON.stringify(DEMO_RULES_FILE)}]
scrape_configs:
  - job_name: ${DEMO_JOB}
    scheme: ${exporter.protocol.replace(':', '')}
    metrics_path: /metrics
    static_configs:
      - targets: [${JSON.stringify(scrapeTarget(exporterUrl))}]
`;
  writeFileSync(join(dir, 'prometheus.yml'), config);
  const child: ChildProcess = spawn(
    binary,
    [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  let spawnError: Error | undefined;
  child.once('error', (err) => {
    spawnError = err;
  });
  // Should the demo die without stopping it, Prometheus goes with it.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      process.off('exit', killOnExit);
      if (child.exitCode === null && child.signalCode === null && spawnError === undefined) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    })());

  const url = `http://127.0.0.1:${port}`;
  try {
    await waitUntilReady(url, child, binary, () => stderr, () => spawnError);
    let version = 'unknown';
    try {
      const info = (await (await fetch(`${url}/api/v1/status/buildinfo`)).json()) as { data?: { version?: string } };
      version = info.data?.version ?? version;
    } catch {
      // only printed
    }
    return { url, pid: child.pid ?? 0, version, links: await uiLinks(url), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * Where this Prometheus' graph and alerts pages are: / redirects to its graph page, /classic/graph
 * (Debian's 2.x, only the classic UI), /graph (2.x) or /query (3.x). A build without the UI's
 * assets (scripts/prometheus3) answers that page with an error: then only the API links.
 */
async function uiLinks(url: string): Promise<DemoPrometheus['links']> {
  const expr = encodeURIComponent('monapi_up');
  const api = { query: `${url}/api/v1/query?query=${expr}`, alertsApi: `${url}/api/v1/alerts` };
  try {
    const root = await fetch(`${url}/`, { redirect: 'manual' });
    const location = root.headers.get('location');
    if (location === null) return api;
    const page = new URL(location, url).pathname;
    const graph = `${url}${page}?g0.expr=${expr}&g0.tab=${page.endsWith('/query') ? 'graph' : '0'}`;
    const answer = await fetch(graph);
    await answer.body?.cancel();
    if (!answer.ok) return api;
    return { graph, alerts: `${url}${page.replace(/[^/]*$/, 'alerts')}`, ...api };
  } catch {
    return api;
  }
}
