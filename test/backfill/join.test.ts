import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../simulator/index.js';
import type { SimAccount } from '../../simulator/monitoring/world-types.js';
import { parseConfig } from '../../src/exporter/config.js';
import { startExporter, type RunningExporter } from '../../src/exporter/index.js';
import { startPrometheus, type RunningPrometheus } from '../support/prometheus.js';
import { run, type RunResult } from '../support/run.js';
import { deltaCountersOf, type DeltaCounter } from '../support/truth-run.js';

/**
 * The join of history and live data, exact. The live exporter polls the simulator with a
 * state file, scraped every second by Debian's Prometheus, until each host's counters have
 * counted a poll past their start; then the backfill, given that state file, writes the
 * last hour of history over remote write into the same Prometheus (same job and instance
 * labels: one series), ending each counter where its live counter began. Then `increase()`
 * over windows that start in history (1 to 30 minutes before the join) and end at the last
 * live sample, asked of query_range, must equal the simulator's sum of every minute between:
 * no minute missing at the join and none counted twice.
 *
 * The windows start on a history sample and end on a live one, so Prometheus extrapolates
 * nothing and the comparison is exact. Ending history one minute later counts a minute twice,
 * one minute earlier leaves one out: both fail here. Two live exporters run side by side, one
 * scraped at scrape time (the default) and one with `sample_timestamps: true`, whose first
 * counter sample has the join's own time (history's last goes 1 ms before it).
 */

const REPO = resolve(import.meta.dirname, '../..');
const ACCOUNT = 'pro';
const MINUTE_MS = 60_000;
const INGEST_DELAY_MS = 3 * MINUTE_MS;
/** Windows start this many minutes before the join. */
const LEADS = [1, 2, 3, 5, 10, 30];

let sim: RunningSimulator;
let simAccount: SimAccount;
let dir: string;

/** One live exporter, its Prometheus and the backfill joined to it; both variants run side by side. */
interface Variant {
  readonly name: string;
  readonly sampleTimestamps: boolean;
  stateFile: string;
  prometheus?: RunningPrometheus;
  exporter?: RunningExporter | undefined;
  backfillRun?: RunResult;
  backfillStartedMs: number;
}

const VARIANTS: Variant[] = [
  { name: 'scraped at scrape time (the default)', sampleTimestamps: false, stateFile: '', backfillStartedMs: 0 },
  { name: 'with sample_timestamps: true', sampleTimestamps: true, stateFile: '', backfillStartedMs: 0 },
];

interface SavedCounter {
  readonly total: number;
  readonly coveredUntilMs: number;
  readonly countingSinceMs?: number | null;
}

/** The live counters in an exporter's state file, by host uuid and counter key. */
function savedCounters(stateFile: string): Map<string, Map<string, SavedCounter>> {
  const hosts = new Map<string, Map<string, SavedCounter>>();
  let json: { accounts?: Record<string, { sources?: { series?: { uuid: string; state: { counters: [string, SavedCounter][] } }[] } }> };
  try {
    json = JSON.parse(readFileSync(stateFile, 'utf8')) as typeof json;
  } catch {
    return hosts;
  }
  for (const host of json.accounts?.[ACCOUNT]?.sources?.series ?? []) hosts.set(host.uuid, new Map(host.state.counters));
  return hosts;
}

/** A counter's key in the series state: a delta's own name, a timer's name for its `.count`. */
function savedOf(hosts: Map<string, Map<string, SavedCounter>>, counter: DeltaCounter): SavedCounter | undefined {
  const host = hosts.get(counter.hostUuid);
  return host?.get(counter.metric) ?? host?.get(counter.metric.replace(/\.count$/, ''));
}

async function liveThenBackfill(variant: Variant): Promise<void> {
  const folder = join(dir, variant.sampleTimestamps ? 'stamped' : 'plain');
  mkdirSync(folder);
  variant.stateFile = join(folder, 'state.json');
  const configText = `exporter:\n  sample_timestamps: ${variant.sampleTimestamps}\naccounts:\n  - name: ${ACCOUNT}\n    base_url: ${sim.monitoringBaseUrl}\n    api_key_env: JOIN_TEST_KEY\n    rate_limit:\n      requests_per_minute: 600\n      burst: 100\n`;
  const configFile = join(folder, 'config.yaml');
  writeFileSync(configFile, configText);
  const exporter = await startExporter({
    config: parseConfig(configText, { env: { JOIN_TEST_KEY: sim.keys.pro } }),
    listenAddress: '127.0.0.1:0',
    telemetryPath: '/metrics',
    log: pino({ level: 'silent' }),
    processMetrics: false,
    stateFile: variant.stateFile,
  });
  variant.exporter = exporter;
  const instance = new URL(exporter.url).host;
  variant.prometheus = await startPrometheus({ targets: [instance], scrapeIntervalSeconds: 1, remoteWriteReceiver: true, outOfOrderWindow: '2h' });

  // Live: until every counter has been polled again after its first sight (its cursor past its start), then a few scrapes more.
  const counters = deltaCountersOf(ACCOUNT, simAccount, Date.now());
  const deadline = Date.now() + 80_000;
  for (;;) {
    const states = counters.map((c) => savedOf(savedCounters(variant.stateFile), c));
    if (states.every((s) => s !== undefined && s.countingSinceMs != null && s.coveredUntilMs > s.countingSinceMs)) break;
    if (Date.now() > deadline) throw new Error(`${variant.name}: the live counters were not polled twice in time: ${JSON.stringify(states)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  await new Promise((r) => setTimeout(r, 8_000));
  await exporter.stop();
  variant.exporter = undefined;

  variant.backfillStartedMs = Date.now();
  const result = await run(
    process.execPath,
    [
      '--import',
      'tsx',
      'src/cli.ts',
      'backfill',
      `--config.file=${configFile}`,
      `--remote-write.url=${variant.prometheus.url}/api/v1/write`,
      `--progress.file=${join(folder, 'progress.json')}`,
      `--state.file=${variant.stateFile}`,
      '--since=1h',
      '--label=job=monapi',
      `--label=instance=${instance}`,
      '--log.format=json',
    ],
    { cwd: REPO, timeoutMs: 60_000, env: { ...process.env, JOIN_TEST_KEY: sim.keys.pro } },
  );
  variant.backfillRun = result;
  if (result.status !== 0) throw new Error(`${variant.name}: backfill exited with ${result.status}: ${result.stderr}\n${result.stdout}`);
}

beforeAll(async () => {
  sim = await startSimulator({ monitoringPort: 0, releasesPort: 0, marketplacePort: 0, hosts: 3, websites: 1, seed: 'backfill-join', rateLimitPerMinute: 1200, burst: 200 });
  const account = sim.world.accountByKey(sim.keys.pro);
  if (!account) throw new Error('the simulator has no Pro account');
  simAccount = account;
  dir = mkdtempSync(join(tmpdir(), 'monapi-join-'));
  await Promise.all(VARIANTS.map(liveThenBackfill));
}, 120_000);

afterAll(async () => {
  for (const variant of VARIANTS) {
    await variant.exporter?.stop();
    await variant.prometheus?.stop();
  }
  await sim?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));

describe.each(VARIANTS)('the join of backfilled history and live data, live $name', (variant) => {
  it('says that history ends where the live counters began, read from the state file', () => {
    expect(variant.backfillRun?.stdout).toContain('backfill: history ends where the live counters began counting');
    expect(variant.backfillRun?.stdout).not.toContain('no --state.file');
  });

  it('increase() across the join equals the simulator\'s sum of every minute in the window: no gap, nothing counted twice', async () => {
    const prometheus = variant.prometheus as RunningPrometheus;
    const saved = savedCounters(variant.stateFile);
    const counters = deltaCountersOf(ACCOUNT, simAccount, Date.now());
    expect(counters.length, 'the simulated hosts report delta counters').toBeGreaterThan(3);
    const mismatches: { series: string; leadMinutes: number; got: number | undefined; want: number }[] = [];
    let compared = 0;
    let joinMinutesWithCounts = 0;
    const joins: { series: string; lastHistoryS: number | undefined; firstLiveValue: number | undefined }[] = [];
    const wantJoins: typeof joins = [];
    for (const counter of counters) {
      const live = savedOf(saved, counter);
      if (live?.countingSinceMs == null) throw new Error(`${counter.series}: no live start in the state file`);
      const joinMs = live.countingSinceMs;
      // With sample timestamps the live 0 has the join's time, and history's last sample is 1 ms before it.
      const lastHistoryMs = variant.sampleTimestamps ? joinMs - 1 : joinMs;
      wantJoins.push({ series: counter.series, lastHistoryS: lastHistoryMs / 1000, firstLiveValue: 0 });
      // The live part: what the last live sample holds, as the state file's last save has it.
      const [raw] = await prometheus.rangeSamples(`${counter.series}[2h]`);
      const samples = raw?.values ?? [];
      const [lastS, lastValue] = samples.at(-1) ?? [NaN, NaN];
      expect(lastValue, `${counter.series}: the last live sample is the live counter's final total`).toBe(live.total);
      const endMs = Math.round(lastS * 1000);
      // History's last sample is at the join itself; the first live one after it is the live counter's 0.
      const history = samples.filter(([t]) => Math.round(t * 1000) <= lastHistoryMs);
      joins.push({ series: counter.series, lastHistoryS: history.at(-1)?.[0], firstLiveValue: samples[history.length]?.[1] });

      // Clean minutes only: each live minute read on time by a poll, each history minute there when the backfill read it.
      const detail = sim.truth({ key: simAccount.key, hostUuid: counter.hostUuid, metric: counter.metric, fromMs: joinMs - 30 * MINUTE_MS, toMs: live.coveredUntilMs, detail: true });
      const late = (detail.minutes ?? []).some((m) => m.arrivesAtMs !== null && m.arrivesAtMs > (m.minuteMs >= joinMs ? live.coveredUntilMs + INGEST_DELAY_MS : variant.backfillStartedMs));
      if (late) continue;
      const atJoin = sim.truth({ key: simAccount.key, hostUuid: counter.hostUuid, metric: counter.metric, fromMs: joinMs - MINUTE_MS, toMs: joinMs + MINUTE_MS });
      if (atJoin.sum > 0) joinMinutesWithCounts += 1;
      for (const lead of LEADS) {
        const fromMs = joinMs - lead * MINUTE_MS;
        // Evaluated at the last live sample, reaching back to a history sample: nothing to extrapolate.
        // Prometheus rounds the time to the millisecond, so it must be that millisecond exactly (a
        // time rounded up would leave the history sample at the window's start out).
        const at = Number((endMs / 1000).toFixed(3));
        const [answer] = await prometheus.queryRange(`increase(${counter.series}[${endMs - fromMs}ms])`, at, at, 1);
        const got = answer?.values[0]?.[1];
        const want = sim.truth({ key: simAccount.key, hostUuid: counter.hostUuid, metric: counter.metric, fromMs, toMs: live.coveredUntilMs }).sum;
        compared += 1;
        if (got === undefined || !close(got, want)) mismatches.push({ series: counter.series, leadMinutes: lead, got, want });
      }
    }
    expect(compared, 'windows compared').toBeGreaterThanOrEqual(LEADS.length * 3);
    expect(joinMinutesWithCounts, 'counters with counts in the minutes either side of the join (else a minute counted twice or left out would not show)').toBeGreaterThanOrEqual(3);
    expect(mismatches, `${mismatches.length} windows across the join differ from the simulator's sum`).toEqual([]);
    expect(joins, 'history\'s last sample at the join, the live counter\'s first (0) after it').toEqual(wantJoins);
  }, 60_000);
});
