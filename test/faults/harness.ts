import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import { parseConfig } from '../../src/exporter/config.js';
import type { Config } from '../../src/config/types.js';
import { startExporter, type ExporterOptions, type RunningExporter } from '../../src/exporter/index.js';
import { FakeClock } from '../../src/lib/clock.js';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../simulator/index.js';

/**
 * The fault suite's rig: one simulator on a fake clock that outlives any number of exporter
 * processes (started, stopped, "killed"), each on the same clock, so a run can go through
 * restarts and downtime and still be compared with the simulator's ground truth.
 */
export interface Rig {
  readonly clock: FakeClock;
  readonly sim: RunningSimulator;
  readonly dir: string;
  /** The exporter running now, if any. */
  exporter: RunningExporter | undefined;
  config(yaml?: string): Config;
  start(options?: Partial<ExporterOptions>): Promise<RunningExporter>;
  /** Simulated time passes one second at a time, letting requests finish in between; with or without an exporter. */
  advance(ms: number): Promise<void>;
  scrape(): Promise<string>;
  close(): Promise<void>;
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

export const DEFAULT_ACCOUNT_YAML = (sim: RunningSimulator, extra = '') =>
  `accounts:\n  - name: pro\n    base_url: ${sim.monitoringBaseUrl}\n    api_key_env: SIM_PRO_KEY\n${extra}`;

export async function startRig(options: { simulator?: SimulatorOptions; yaml?: (sim: RunningSimulator) => string; log?: Logger } = {}): Promise<Rig> {
  const clock = new FakeClock(Date.UTC(2026, 10, 22, 12, 0, 0));
  const sim = await startSimulator({ clock, monitoringPort: 0, releasesPort: 0, marketplacePort: 0, random: () => 0.5, ...options.simulator });
  const dir = mkdtempSync(join(tmpdir(), 'monapi-rig-'));
  const env = { SIM_PRO_KEY: sim.keys.pro, SIM_BUSINESS_KEY: sim.keys.business, SIM_STARTER_KEY: sim.keys.starter };
  const config = (yaml = (options.yaml ?? ((s) => DEFAULT_ACCOUNT_YAML(s)))(sim)) => parseConfig(yaml, { env });

  const rig: Rig = {
    clock,
    sim,
    dir,
    exporter: undefined,
    config,
    async start(extra = {}) {
      rig.exporter = await startExporter({
        config: config(),
        clock,
        listenAddress: '127.0.0.1:0',
        telemetryPath: '/metrics',
        log: options.log ?? pino({ level: 'silent' }),
        processMetrics: false,
        env: {},
        ...extra,
      });
      return rig.exporter;
    },
    async advance(ms) {
      const settle = async () => {
        let quiet = 0;
        // Bounded by real time, not by turns: on a loaded machine a request takes many turns.
        for (const end = Date.now() + 10_000; quiet < 5 && Date.now() < end; ) {
          await tick();
          quiet = !rig.exporter || rig.exporter.idle() ? quiet + 1 : 0;
        }
      };
      for (let done = 0; done < ms; done += 1000) {
        await settle();
        clock.advance(Math.min(1000, ms - done));
      }
      await settle();
    },
    async scrape() {
      if (!rig.exporter) throw new Error('no exporter is running');
      await rig.exporter.store.flush();
      return (await fetch(`${rig.exporter.url}/metrics`, { headers: { accept: 'text/plain' } })).text();
    },
    async close() {
      await rig.exporter?.stop();
      rig.exporter = undefined;
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return rig;
}

/** The value of one sample line of a text exposition, or undefined. */
export function sampleValue(body: string, series: string): number | undefined {
  const line = body.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Sum of every sample of a family (optionally only lines containing `filter`). */
export function familySum(body: string, family: string, filter = ''): number {
  return body
    .split('\n')
    .filter((l) => (l.startsWith(`${family}{`) || l.startsWith(`${family} `)) && l.includes(filter))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

/** The parts of a saved state file the tests read. */
export interface SavedDelta {
  total: number;
  coveredUntilMs: number;
  lastSeenMs: number;
}
export interface SavedState {
  accounts: Record<
    string,
    {
      sources: {
        series: { uuid: string; state: { counters: [string, SavedDelta][] } }[];
        checks: { id: string; state: { cursor: { checkedAtMs: number; id: number } | null; results: { labels: Record<string, string>; value: number }[] } }[];
      };
    }
  >;
}

export const readState = (path: string): SavedState => JSON.parse(readFileSync(path, 'utf8')) as SavedState;

export const deltaOf = (state: SavedState, uuid: string, metric: string, account = 'pro'): SavedDelta | undefined =>
  state.accounts[account]?.sources.series.find((h) => h.uuid === uuid)?.state.counters.find(([name]) => name === metric)?.[1];

/**
 * Advances in 10 s steps, saving the state each time, until every host's counter of `metric`
 * has been seen: returns the cursor each started from (read right after its first poll, at
 * total 0, so truth over [cursor, end) is what the counter must reach).
 */
export async function firstCursors(rig: Rig, stateFile: string, metric: string, maxMs = 5 * 60_000): Promise<Map<string, number>> {
  const cursors = new Map<string, number>();
  for (let waited = 0; waited < maxMs; waited += 10_000) {
    await rig.advance(10_000);
    await rig.exporter?.saveState();
    if (!existsSync(stateFile)) continue;
    const state = readState(stateFile);
    for (const host of state.accounts.pro?.sources.series ?? []) {
      const delta = deltaOf(state, host.uuid, metric);
      if (delta && !cursors.has(host.uuid)) {
        if (delta.total !== 0) throw new Error(`host ${host.uuid} was polled twice before its cursor was read`);
        cursors.set(host.uuid, delta.coveredUntilMs);
      }
    }
  }
  return cursors;
}
