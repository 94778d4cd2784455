import pino, { type Logger } from 'pino';
import { parseConfig } from '../../src/exporter/config.js';
import { startExporter, type RunningExporter } from '../../src/exporter/index.js';
import { FakeClock } from '../../src/lib/clock.js';
import type { ShardAssignment } from '../../src/sharding/index.js';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../simulator/index.js';

/**
 * The exporter against the in-process simulator on one fake clock. Time moves only when
 * `advance` is called and only once no request is in flight, so runs are repeatable.
 */
export interface Driven {
  clock: FakeClock;
  simulator: RunningSimulator;
  exporter: RunningExporter;
  /** Moves simulated time forward one second at a time, letting requests finish in between. */
  advance(ms: number): Promise<void>;
  /** Flushes the store and scrapes /metrics as text. */
  scrape(): Promise<string>;
  stop(): Promise<void>;
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

export async function drive(options: {
  start?: number;
  /** A clock of the caller's, e.g. to record what happens from the first request on; `start` is then ignored. */
  clock?: FakeClock;
  simulator?: SimulatorOptions;
  /** YAML of the config; `${monitoring}`, `${marketplace}` and `${releases}` are replaced by the simulator's URLs. */
  config: string;
  env: (sim: RunningSimulator) => Record<string, string>;
  /** The exporter's logger; silent by default. */
  log?: Logger;
  /** This process's shard; one shard by default. */
  shard?: ShardAssignment;
  /** Serve from this many threads (`--web.serving-threads`); default the main thread. */
  servingThreads?: number;
  /** How long after a serving thread stops it is started again (default 1 s). */
  servingRestartDelayMs?: number;
  webConfigFile?: string;
  enableLifecycle?: boolean;
}): Promise<Driven> {
  const clock = options.clock ?? new FakeClock(options.start ?? Date.UTC(2026, 10, 22, 12, 0, 0));
  const simulator = await startSimulator({ clock, monitoringPort: 0, releasesPort: 0, marketplacePort: 0, random: () => 0.5, ...options.simulator });
  const yaml = options.config
    .replaceAll('${monitoring}', simulator.monitoringBaseUrl)
    .replaceAll('${marketplace}', simulator.marketplaceBaseUrl)
    .replaceAll('${releases}', simulator.releasesBaseUrl);
  const config = parseConfig(yaml, { env: options.env(simulator) });
  const exporter = await startExporter({
    config,
    clock,
    listenAddress: '127.0.0.1:0',
    telemetryPath: '/metrics',
    log: options.log ?? pino({ level: 'silent' }),
    processMetrics: false,
    ...(options.shard ? { shard: options.shard } : {}),
    ...(options.servingThreads === undefined ? {} : { servingThreads: options.servingThreads }),
    ...(options.servingRestartDelayMs === undefined ? {} : { servingRestartDelayMs: options.servingRestartDelayMs }),
    ...(options.webConfigFile === undefined ? {} : { webConfigFile: options.webConfigFile }),
    ...(options.enableLifecycle === undefined ? {} : { enableLifecycle: options.enableLifecycle }),
  });

  /**
   * Lets the exporter run what the fake clock's present allows. Bounded by turns, not waited out:
   * a retry waits for its time on the fake clock, so an upstream answering 503 keeps the exporter
   * from quiet until `advance` moves the clock (a wait for quiet hung those tests).
   */
  async function settle(): Promise<void> {
    let quietTurns = 0;
    for (let i = 0; i < 2000 && quietTurns < 5; i++) {
      await tick();
      quietTurns = exporter.quiet() ? quietTurns + 1 : 0;
    }
  }

  return {
    clock,
    simulator,
    exporter,
    async advance(ms) {
      for (let done = 0; done < ms; done += 1000) {
        await settle();
        clock.advance(Math.min(1000, ms - done));
      }
      await settle();
    },
    async scrape() {
      await exporter.store.flush();
      const response = await fetch(`${exporter.url}/metrics`, { headers: { accept: 'text/plain' } });
      return response.text();
    },
    async stop() {
      await exporter.stop();
      await simulator.close();
    },
  };
}
