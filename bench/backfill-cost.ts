/**
 * What a 30-day backfill of 50 hosts costs, and what it does to a live exporter on the same
 * key: upstream requests and minutes, samples and remote write samples per second, and the
 * live series source's staleness and scheduler lag before and during the backfill.
 *
 *   node --import tsx bench/backfill-cost.ts [--hosts 50] [--scale 10]
 *
 * The simulator's rate limit is `scale` times the Business plan's default 120 a minute, so
 * the run takes minutes instead of an hour; the budget shares are the defaults (the backfill
 * spends the account's 10 % headroom), so requests are as at scale 1 and minutes scale by
 * `scale`. History goes over remote write into Debian's Prometheus (receiver flag,
 * out-of-order window).
 */
import { parseArgs } from 'node:util';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { startSimulator } from '../simulator/index.js';
import { parseConfig } from '../src/exporter/config.js';
import { startExporter } from '../src/exporter/index.js';
import { startPrometheus } from '../test/support/prometheus.js';
import { run } from '../test/support/run.js';

const { values } = parseArgs({ options: { hosts: { type: 'string', default: '50' }, scale: { type: 'string', default: '10' } } });
const HOSTS = Number(values.hosts);
const SCALE = Number(values.scale);
const RATE = 120 * SCALE;
const BURST = 30 * SCALE;

const sim = await startSimulator({ monitoringPort: 0, releasesPort: 0, marketplacePort: 0, hosts: HOSTS, websites: 2, seed: 'backfill-cost', rateLimitPerMinute: RATE, burst: BURST });
const allowed = sim.world.accountByKey(sim.keys.business)?.hosts(Date.now()).filter((h) => h.allowed).length ?? 0;
const dir = mkdtempSync(join(tmpdir(), 'monapi-backfill-cost-'));
const yaml = `accounts:\n  - name: business\n    base_url: ${sim.monitoringBaseUrl}\n    api_key_env: COST_KEY\n    rate_limit: { requests_per_minute: ${RATE}, burst: ${BURST} }\n`;
writeFileSync(join(dir, 'config.yaml'), yaml);
const env = { ...process.env, COST_KEY: sim.keys.business };
const exporter = await startExporter({ config: parseConfig(yaml, { env }), listenAddress: '127.0.0.1:0', telemetryPath: '/metrics', log: pino({ level: 'silent' }), processMetrics: false });
const prometheus = await startPrometheus({ targets: [], scrapeIntervalSeconds: 15, remoteWriteReceiver: true, outOfOrderWindow: '40d', retention: '40d' });

/** The live series source's staleness and the scheduler's lag, as /metrics shows them. */
async function freshness(): Promise<{ staleness: number; lag: number }> {
  const body = await (await fetch(`${exporter.url}/metrics`)).text();
  const value = (pattern: RegExp) => Number(pattern.exec(body)?.[1] ?? NaN);
  return { staleness: value(/^monapi_job_staleness_seconds\{account="business",source="series"\} (\S+)$/m), lag: value(/^monapi_scheduler_lag_seconds\{account="business"\} (\S+)$/m) };
}
function watch(): { stop: () => { staleness: number; lag: number; samples: number } } {
  let staleness = 0;
  let lag = 0;
  let samples = 0;
  const timer = setInterval(() => {
    void freshness().then((f) => {
      if (Number.isFinite(f.staleness)) staleness = Math.max(staleness, f.staleness);
      if (Number.isFinite(f.lag)) lag = Math.max(lag, f.lag);
      samples += 1;
    });
  }, 2_000);
  return {
    stop: () => {
      clearInterval(timer);
      return { staleness, lag, samples };
    },
  };
}

// The live exporter alone first: its first cycle, then a baseline as long as a few cadences.
const warmup = Date.now();
while (!exporter.ready() && Date.now() - warmup < 15 * 60_000) await new Promise((r) => setTimeout(r, 1_000));
const readyAfterS = (Date.now() - warmup) / 1000;
const baselineWatch = watch();
await new Promise((r) => setTimeout(r, 120_000));
const baseline = baselineWatch.stop();

const duringWatch = watch();
const started = Date.now();
const result = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'backfill', `--config.file=${join(dir, 'config.yaml')}`, '--since=30d', `--remote-write.url=${prometheus.url}/api/v1/write`, `--progress.file=${join(dir, 'progress.json')}`, '--log.format=json'], {
  cwd: new URL('..', import.meta.url).pathname,
  timeoutMs: 3 * 3_600_000,
  env,
});
const seconds = (Date.now() - started) / 1000;
const during = duringWatch.stop();
const report = JSON.parse(result.stdout.split('\n').filter((l) => l.includes('"backfill: account"')).at(-1) ?? '{}') as { hosts?: number; requests?: number; samples?: number };
console.error(JSON.stringify({ seconds, report, during, baseline, readyAfterS }));

// Remote write throughput with the upstream out of the way: the live exporter stopped, the whole key for the backfill.
await exporter.stop();
const fast = await startPrometheus({ targets: [], scrapeIntervalSeconds: 15, remoteWriteReceiver: true, outOfOrderWindow: '40d', retention: '40d' });
const fastStarted = Date.now();
const fastResult = await run(
  process.execPath,
  ['--import', 'tsx', 'src/cli.ts', 'backfill', `--config.file=${join(dir, 'config.yaml')}`, '--since=30d', `--remote-write.url=${fast.url}/api/v1/write`, `--progress.file=${join(dir, 'fast.json')}`, `--requests-per-minute=${RATE}`, '--log.format=json'],
  { cwd: new URL('..', import.meta.url).pathname, timeoutMs: 3_600_000, env },
);
const fastSeconds = (Date.now() - fastStarted) / 1000;
const fastReport = JSON.parse(fastResult.stdout.split('\n').filter((l) => l.includes('"backfill: account"')).at(-1) ?? '{}') as { samples?: number };
await fast.stop();

console.log(
  JSON.stringify(
    {
      hosts: { simulated: HOSTS, allowed, backfilled: report.hosts },
      scale: SCALE,
      upstreamRateLimitPerMinute: RATE,
      backfillRequestsPerMinute: Math.floor(RATE * 0.1),
      requests: report.requests,
      minutes: Math.round((seconds / 60) * 10) / 10,
      minutesAtScale1: Math.round(((seconds * SCALE) / 60) * 10) / 10,
      samples: report.samples,
      remoteWriteSamplesPerSecond: report.samples === undefined ? undefined : Math.round(report.samples / seconds),
      liveExporter: { readyAfterS, baselineMax: baseline, duringBackfillMax: during },
      exitStatus: result.status,
      wholeKey: { seconds: Math.round(fastSeconds), samples: fastReport.samples, samplesPerSecond: fastReport.samples === undefined ? undefined : Math.round(fastReport.samples / fastSeconds), exitStatus: fastResult.status },
    },
    null,
    2,
  ),
);
await prometheus.stop();
await sim.close();
rmSync(dir, { recursive: true, force: true });
