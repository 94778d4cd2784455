import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderRules } from '../../mixin/alerts.js';
import { DEFAULT_CONFIG, scaleDurations, type MixinConfig } from '../../mixin/config.js';
import { startDemo, type RunningDemo } from '../../scripts/demo.js';
import { createWorld } from '../../simulator/monitoring/world.js';
import type { MonitoringWorld } from '../../simulator/monitoring/world-types.js';
import { findScenario, MIXIN_WORLD, SERVER_KINDS, type Scenario } from './mixin-scenario.js';
import { startPrometheus, type PrometheusMajor, type RunningPrometheus } from './prometheus.js';

/**
 * The demo started at a scenario's moment (a host offline, a website outage coming), on a
 * sped-up clock, scraped by a real Prometheus that evaluates the mixin's alert rules with
 * their durations scaled to that clock. Shared by test/e2e/mixin.test.ts and
 * scripts/dashboard-screenshots.ts.
 */

const MINUTE_MS = 60_000;

export interface MixinDemoOptions {
  /** Simulated seconds per real second. */
  readonly speed: number;
  readonly scrapeIntervalSeconds: number;
  /** Real time the run should last: the offline host stays offline at least this long. */
  readonly runMs: number;
  /** The rules' configuration before scaling (default: the shipped one). */
  readonly configure?: (world: MonitoringWorld, scenario: Scenario) => MixinConfig;
  /** Prometheus servers that scrape the demo and evaluate the rules side by side (default: Prometheus 2). */
  readonly majors?: readonly PrometheusMajor[];
  /** Simulated time from the start to the website outage (default 4 minutes), and its shortest length (default 12 minutes). */
  readonly outage?: { readonly leadMs: number; readonly minMs: number };
}

export interface MixinDemo {
  readonly demo: RunningDemo;
  /** The first of `servers`. */
  readonly prometheus: RunningPrometheus;
  readonly servers: ReadonlyMap<PrometheusMajor, RunningPrometheus>;
  readonly scenario: Scenario;
  /** The configuration the rules were rendered with, scaled. */
  readonly config: MixinConfig;
  /** When Prometheus started, Unix seconds. */
  readonly startedSeconds: number;
  stop(): Promise<void>;
}

export async function startMixinDemo(options: MixinDemoOptions): Promise<MixinDemo> {
  const world = createWorld(MIXIN_WORLD);
  const scenario = findScenario(world, Date.now(), {
    leadMs: options.outage?.leadMs ?? 4 * MINUTE_MS,
    minOutageMs: options.outage?.minMs ?? 12 * MINUTE_MS,
    windowMs: options.runMs * options.speed + 10 * MINUTE_MS,
    maxDays: 20,
    onlineKinds: SERVER_KINDS,
  });
  const config = scaleDurations(options.configure?.(world, scenario) ?? DEFAULT_CONFIG, options.speed);
  const dir = mkdtempSync(join(tmpdir(), 'monapi-mixin-'));
  const rulesFile = join(dir, 'monapi-exporter.rules.yaml');
  writeFileSync(rulesFile, renderRules(config));
  let demo: RunningDemo | undefined;
  const servers = new Map<PrometheusMajor, RunningPrometheus>();
  try {
    demo = await startDemo({
      ...MIXIN_WORLD,
      rateLimitPerMinute: 120,
      burst: 30,
      listenAddress: '127.0.0.1:0',
      releasesMode: 'marketplace',
      simulatorPorts: { monitoring: 0, releases: 0, marketplace: 0 },
      logLevel: 'error',
      logFormat: 'json',
      speed: options.speed,
      startMs: scenario.startMs,
    });
    const demoHost = new URL(demo.exporter.url).host;
    const majors = options.majors ?? [2];
    const started = await Promise.allSettled(
      majors.map((major) =>
        startPrometheus({
          major,
          targets: [demoHost],
          // The job the chart's ServiceMonitor gives, which MonapiExporterDown selects.
          jobName: 'monapi-exporter',
          scrapeIntervalSeconds: options.scrapeIntervalSeconds,
          ruleFiles: [rulesFile],
          evaluationIntervalSeconds: 1,
        }),
      ),
    );
    for (const result of started) if (result.status === 'fulfilled') servers.set(result.value.major, result.value);
    const failed = started.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
    const prometheus = servers.get(majors[0]!)!;
    const running = demo;
    return {
      demo: running,
      prometheus,
      servers,
      scenario,
      config,
      startedSeconds: Date.now() / 1000,
      async stop() {
        await Promise.all([...servers.values()].map((server) => server.stop()));
        await running.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await Promise.all([...servers.values()].map((server) => server.stop()));
    await demo?.stop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
