import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../simulator/index.js';
import type { SimAccount } from '../../simulator/monitoring/world-types.js';
import { requireBinary, startPrometheus, type RunningPrometheus } from '../support/prometheus.js';
import { run, type RunResult } from '../support/run.js';
import { startVictoriaMetrics, type RunningVictoriaMetrics } from '../support/victoria-metrics.js';
import { deltaCountersOf } from '../support/truth-run.js';
import { startWriteFaultProxy, type WriteFaultProxy } from '../support/write-fault-proxy.js';

/**
 * The backfill command end to end, both ways in, into Debian's Prometheus: 30 simulated days
 * of every host of the Pro account (the plan's retention) from the simulator, then what
 * Prometheus answers to `query_range` is compared with the simulator's own numbers, per
 * interval class (60 s up to 4 h back, 120 s to a day, 300 s to 2 days, 900 s to a week,
 * 3600 s beyond): gauges value for value, counters bucket by bucket (`c - c offset <interval>`)
 * and over the whole history (last minus first equals the simulator's sum of every minute
 * between, so no stretch is missing or counted twice where the classes join or where a
 * stopped run went on).
 *
 * 1. An OpenMetrics file, turned into blocks by `promtool tsdb create-blocks-from openmetrics`
 *    and loaded by Prometheus at start.
 * 2. Remote write into a Prometheus with the receiver flag and an out-of-order window, through
 *    a proxy answering 503, 500, 429 and losing an answer; the first run is killed (SIGKILL)
 *    after one host and part-way through the next, the second goes on from the progress file.
 * 3. Remote write into VictoriaMetrics single-node (scripts/victoria-metrics), an engine built
 *    to scale past one Prometheus, queried with the same PromQL.
 */

const REPO = resolve(import.meta.dirname, '../..');
const HOSTS = 3;
/** Hosts within the plan's host limit: the ones with history. */
const allowedHosts = () => simAccount.hosts(Date.now()).filter((h) => h.allowed).length;
const ACCOUNT = 'pro';
const GAUGE = { metric: 'system.load.1', family: 'monapi_system_load1' };
const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
/** A stretch well inside each interval class, as ages back from the comparison. */
const CLASSES = [
  { intervalS: 60, fromAgoMs: 200 * MINUTE_MS, toAgoMs: 30 * MINUTE_MS },
  { intervalS: 120, fromAgoMs: 22 * HOUR_MS, toAgoMs: 5 * HOUR_MS },
  { intervalS: 300, fromAgoMs: 46 * HOUR_MS, toAgoMs: 26 * HOUR_MS },
  { intervalS: 900, fromAgoMs: 6.5 * DAY_MS, toAgoMs: 2.5 * DAY_MS },
  { intervalS: 3600, fromAgoMs: 29 * DAY_MS, toAgoMs: 8 * DAY_MS },
] as const;

let sim: RunningSimulator;
let simAccount: SimAccount;
let dir: string;
let configFile: string;

beforeAll(async () => {
  sim = await startSimulator({ monitoringPort: 0, releasesPort: 0, marketplacePort: 0, hosts: HOSTS, websites: 1, seed: 'backfill', rateLimitPerMinute: 600, burst: 100 });
  const account = sim.world.accountByKey(sim.keys.pro);
  if (!account) throw new Error('the simulator has no Pro account');
  simAccount = account;
  dir = mkdtempSync(join(tmpdir(), 'monapi-backfill-'));
  configFile = join(dir, 'config.yaml');
  writeFileSync(
    configFile,
    `accounts:\n  - name: ${ACCOUNT}\n    base_url: ${sim.monitoringBaseUrl}\n    api_key_env: BACKFILL_TEST_KEY\n    rate_limit:\n      requests_per_minute: 600\n      burst: 100\n`,
  );
});

afterAll(async () => {
  await sim?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function backfillArgs(extra: readonly string[]): string[] {
  return ['--import', 'tsx', 'src/cli.ts', 'backfill', `--config.file=${configFile}`, '--log.format=json', '--log.level=info', ...extra];
}

function backfill(extra: readonly string[]): Promise<RunResult> {
  return run(process.execPath, backfillArgs(extra), { cwd: REPO, timeoutMs: 180_000, env: { ...process.env, BACKFILL_TEST_KEY: sim.keys.pro } });
}

/** The `backfill: account` log line of a run. */
function accountReport(result: RunResult): { hosts: number; hostsDone: number; requests: number; samples: number } {
  const line = result.stdout
    .split('\n')
    .filter((l) => l.includes('"backfill: account"'))
    .at(-1);
  if (line === undefined) throw new Error(`no account report in the backfill's output:\n${result.stdout}\n${result.stderr}`);
  return JSON.parse(line) as { hosts: number; hostsDone: number; requests: number; samples: number };
}

interface Mismatch {
  readonly what: string;
  readonly t: number;
  readonly got: number | undefined;
  readonly want: number;
}

const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));

/** What the comparison reads from a receiver: PromQL query_range, and raw samples. */
interface Reader {
  queryRange(promql: string, startSeconds: number, endSeconds: number, stepSeconds: number): Promise<{ values: [number, number][] }[]>;
  rawSamples(selector: string, range: string): Promise<{ values: [number, number][] }[]>;
}

function prometheusReader(prometheus: RunningPrometheus): Reader {
  return { queryRange: (q, start, end, step) => prometheus.queryRange(q, start, end, step), rawSamples: (selector, range) => prometheus.rangeSamples(`${selector}[${range}]`) };
}

/** query_range against the simulator's numbers, per interval class, for every host. */
async function compareWithTruth(prometheus: Reader): Promise<void> {
  const now = Date.now();
  const hosts = simAccount.hosts(now).filter((h) => h.allowed);
  expect(hosts.length).toBeGreaterThan(0);
  const counters = deltaCountersOf(ACCOUNT, simAccount, now);
  expect(counters.length, 'the simulated hosts report delta counters').toBeGreaterThan(0);
  const mismatches: Mismatch[] = [];
  for (const c of CLASSES) {
    const stepS = c.intervalS;
    const start = Math.ceil((now - c.fromAgoMs) / 1000 / stepS) * stepS;
    const end = Math.floor((now - c.toAgoMs) / 1000 / stepS) * stepS;
    for (const host of hosts) {
      const [gauge] = await prometheus.queryRange(`${GAUGE.family}{host_uuid="${host.uuid}"}`, start, end, stepS);
      const got = new Map((gauge?.values ?? []).map(([t, v]) => [t, v]));
      let compared = 0;
      for (let t = start; t <= end; t += stepS) {
        const want = simAccount.pointValue(host.uuid, GAUGE.metric, t * 1000, stepS, now);
        if (want === null) continue;
        compared += 1;
        if (got.get(t) === undefined || !close(got.get(t) as number, want)) mismatches.push({ what: `${GAUGE.family} ${host.hostname} at ${stepS}s`, t, got: got.get(t), want });
      }
      expect(compared, `${GAUGE.family} ${host.hostname}: buckets with data at ${stepS}s`).toBeGreaterThan(((end - start) / stepS) * 0.5);
    }
    for (const counter of counters) {
      const [delta] = await prometheus.queryRange(`${counter.series} - ${counter.series} offset ${stepS}s`, start + stepS, end, stepS);
      const got = new Map((delta?.values ?? []).map(([t, v]) => [t, v]));
      expect(got.size, `${counter.series}: buckets at ${stepS}s`).toBeGreaterThan(0);
      for (let t = start + stepS; t <= end; t += stepS) {
        const want = simAccount.pointValue(counter.hostUuid, counter.metric, (t - stepS) * 1000, stepS, now) ?? 0;
        if (!close(got.get(t) ?? NaN, want)) mismatches.push({ what: `${counter.series} per ${stepS}s bucket`, t, got: got.get(t), want });
      }
    }
  }
  // The whole history of each counter: last minus first is every minute in between, once.
  for (const counter of counters) {
    const [raw] = await prometheus.rawSamples(counter.series, '31d');
    const values = raw?.values ?? [];
    expect(values.length, counter.series).toBeGreaterThan(30 * 24);
    const times = values.map(([t]) => t);
    expect(times, `${counter.series}: one sample per time, oldest first`).toEqual([...new Set(times)].sort((a, b) => a - b));
    const [firstT, first] = values[0] as [number, number];
    const [lastT, last] = values.at(-1) as [number, number];
    expect(firstT * 1000, `${counter.series} starts within the 30 days`).toBeGreaterThanOrEqual(now - 30 * DAY_MS - HOUR_MS);
    expect(lastT * 1000, `${counter.series} reaches the last minutes`).toBeGreaterThan(now - 15 * MINUTE_MS);
    const truth = sim.truth({ key: simAccount.key, hostUuid: counter.hostUuid, metric: counter.metric, fromMs: firstT * 1000, toMs: lastT * 1000 });
    if (!close(last - first, truth.sum)) mismatches.push({ what: `${counter.series} over the whole history`, t: lastT, got: last - first, want: truth.sum });
  }
  expect(mismatches.slice(0, 10), `${mismatches.length} values differ from the simulator's`).toEqual([]);
}

let fileRun: RunResult;

describe('backfill of 30 simulated days into an OpenMetrics file, through promtool, into Prometheus', () => {
  let prometheus: RunningPrometheus;

  beforeAll(async () => {
    const promtool = requireBinary('promtool');
    const output = join(dir, 'history.om');
    fileRun = await backfill([`--output=${output}`, '--label=job=monapi', '--label=instance=exporter:9866']);
    if (fileRun.status !== 0) throw new Error(`backfill exited with ${fileRun.status}: ${fileRun.stderr}\n${fileRun.stdout}`);
    const blocks = join(dir, 'blocks');
    const created = await run(promtool, ['tsdb', 'create-blocks-from', 'openmetrics', '--max-block-duration=720h', output, blocks], { timeoutMs: 120_000 });
    if (created.status !== 0) throw new Error(`promtool exited with ${created.status}: ${created.stderr}${created.stdout}`);
    prometheus = await startPrometheus({ targets: [], scrapeIntervalSeconds: 15, retention: '40d', blocks });
  }, 240_000);
  afterAll(async () => {
    await prometheus?.stop();
  });

  it('writes every host and removes its parts once complete', () => {
    expect(accountReport(fileRun)).toMatchObject({ hosts: allowedHosts(), hostsDone: allowedHosts() });
    expect(existsSync(join(dir, 'history.om.parts'))).toBe(false);
    expect(readFileSync(join(dir, 'history.om'), 'utf8').endsWith('# EOF\n')).toBe(true);
  });

  it('gives every series the labels of --label, as the scraping Prometheus gives the live ones', async () => {
    expect(await prometheus.labelValues('job')).toEqual(['monapi']);
    expect(await prometheus.labelValues('instance')).toEqual(['exporter:9866']);
    expect((await prometheus.query('count({__name__=~"monapi_.+", job!="monapi"})')).length).toBe(0);
  });

  it('Prometheus answers query_range with the simulator\'s gauges and counter deltas, per interval class', async () => {
    await compareWithTruth(prometheusReader(prometheus));
  }, 60_000);
});

describe('backfill of 30 simulated days over remote write, killed part-way and resumed', () => {
  let prometheus: RunningPrometheus;
  let proxy: WriteFaultProxy;
  let resumed: RunResult;
  let progressAtKill: ProgressFile;

  beforeAll(async () => {
    prometheus = await startPrometheus({ targets: [], scrapeIntervalSeconds: 15, remoteWriteReceiver: true, outOfOrderWindow: '40d', retention: '40d' });
    proxy = await startWriteFaultProxy(`${prometheus.url}/api/v1/write`);
    proxy.script([{ kind: 'status', status: 503 }, { kind: 'pass' }, { kind: 'status', status: 429, retryAfter: '1' }, { kind: 'lost_answer' }, { kind: 'status', status: 500 }]);
    const progressFile = join(dir, 'remote-write.progress.json');
    const common = [`--remote-write.url=${proxy.url}`, `--progress.file=${progressFile}`];
    // Small chunks, each acknowledged before the progress file moves on: killed between two.
    progressAtKill = await killPartWay(backfillArgs([...common, '--chunk-samples=5000']), progressFile);
    resumed = await backfill(common);
    if (resumed.status !== 0) throw new Error(`the resumed backfill exited with ${resumed.status}: ${resumed.stderr}\n${resumed.stdout}`);
  }, 240_000);
  afterAll(async () => {
    await proxy?.close();
    await prometheus?.stop();
  });

  it('goes on where the killed run stopped: what it had kept is neither read nor written again', () => {
    const atKill = Object.values(progressAtKill.accounts[ACCOUNT]?.hosts ?? {});
    expect(atKill.filter((h) => h.done), 'hosts done at the kill').toHaveLength(1);
    expect(atKill.filter((h) => !h.done), 'a host part-way at the kill').toHaveLength(1);
    const report = accountReport(resumed);
    expect(report).toMatchObject({ hosts: allowedHosts(), hostsDone: allowedHosts() });
    // The account's 2 requests, then the requests of each host not done, as many as in a whole run.
    expect(fileRun, 'the file backfill, run first, gives the cost of a whole run').toBeDefined();
    const full = accountReport(fileRun);
    expect(report.requests).toBeLessThanOrEqual(2 + ((full.requests - 2) / full.hosts) * (full.hosts - 1));
    expect(report.samples, 'samples written after the resume').toBeLessThan(full.samples / full.hosts);
    expect(proxy.log.filter((r) => r.fault !== 'pass').length).toBe(4);
  });

  it('Prometheus answers query_range with the simulator\'s gauges and counter deltas, per interval class', async () => {
    await compareWithTruth(prometheusReader(prometheus));
  }, 60_000);
});

type ProgressFile = { accounts: Record<string, { hosts: Record<string, { done: boolean; coveredUntilMs: number }> }> };

/** Runs the backfill until the progress file shows a host done and the next part-way (some chunks kept), then kills it. */
function killPartWay(args: readonly string[], progressFile: string): Promise<ProgressFile> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [...args], { cwd: REPO, env: { ...process.env, BACKFILL_TEST_KEY: sim.keys.pro }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const poll = setInterval(() => {
      let progress: ProgressFile;
      try {
        progress = JSON.parse(readFileSync(progressFile, 'utf8')) as ProgressFile;
      } catch {
        return;
      }
      const hosts = Object.values(progress.accounts[ACCOUNT]?.hosts ?? {});
      if (hosts.some((h) => h.done) && hosts.some((h) => !h.done)) {
        clearInterval(poll);
        child.kill('SIGKILL');
        child.once('close', () => resolvePromise(progress));
      }
    }, 10);
    child.once('close', (status) => {
      clearInterval(poll);
      if (status !== null) reject(new Error(`the backfill ended (${status}) before it could be killed part-way: ${stderr}`));
    });
  });
}

describe('backfill of 30 simulated days over remote write into VictoriaMetrics single-node', () => {
  let vm: RunningVictoriaMetrics;

  beforeAll(async () => {
    vm = await startVictoriaMetrics();
    const result = await backfill([`--remote-write.url=${vm.writeUrl}`, `--progress.file=${join(dir, 'victoria-metrics.progress.json')}`]);
    if (result.status !== 0) throw new Error(`backfill exited with ${result.status}: ${result.stderr}\n${result.stdout}`);
    const report = accountReport(result);
    expect(report).toMatchObject({ hosts: allowedHosts(), hostsDone: allowedHosts() });
    // VictoriaMetrics makes what it took searchable within seconds, not at once: wait until the count stops moving.
    const deadline = Date.now() + 60_000;
    const counts: number[] = [];
    while (Date.now() < deadline && !(counts.length >= 3 && counts.at(-1) === counts.at(-3) && (counts.at(-1) ?? 0) > 0)) {
      await new Promise((r) => setTimeout(r, 1_000));
      const answer = (await (await fetch(`${vm.url}/api/v1/query?query=${encodeURIComponent('sum(count_over_time({account="pro"}[32d]))')}`)).json()) as {
        data?: { result?: { value: [number, string] }[] };
      };
      counts.push(Number(answer.data?.result?.[0]?.value[1] ?? 0));
    }
    // All of them but the NaN ones (a timer's quantiles in a minute without requests), which VictoriaMetrics does not store.
    const stored = counts.at(-1) ?? 0;
    expect(stored, 'samples VictoriaMetrics holds').toBeLessThanOrEqual(report.samples);
    expect(stored, 'samples VictoriaMetrics holds').toBeGreaterThan(report.samples * 0.999);
  }, 240_000);
  afterAll(async () => {
    await vm?.stop();
  });

  it('VictoriaMetrics answers query_range with the simulator\'s gauges and counter deltas, per interval class', async () => {
    await compareWithTruth(vm);
  }, 60_000);
});
