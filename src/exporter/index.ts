import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../config/types.js';
import { MetricStore } from '../exposition/store.js';
import { systemClock, type Clock } from '../lib/clock.js';
import type { UnitRuntime } from '../scheduler/unit-runtime.js';
import { TopicBoard } from '../scheduler/topics.js';
import type { createServer} from '../server/app.js';
import { createServerParts, startHttpServer, type RunningServer } from '../server/app.js';
import { startServingThreads, type LoopDelayFigures } from '../server/serving-threads.js';
import { describeShard, registerShardMetrics, SINGLE_SHARD, type ShardAssignment } from '../sharding/index.js';
import { proxySettingsFromEnv } from '../upstream/http/transport.js';
import { EXPORTER_VERSION } from '../version.js';
import type { Lifecycle, ReloadResult } from '../server/lifecycle.js';
import { applyHeapSettings } from './heap-settings.js';
import { Reloader } from './reload.js';
import { LivePush } from './remote-write.js';
import { createSelfMetrics } from './self-metrics.js';
import { openStateFile } from './state.js';
import { ExporterStatus } from './status.js';
import { UnitSet } from './unit-set.js';

export type { Lifecycle, ReloadResult } from '../server/lifecycle.js';
export { createReloadMetrics, registerBuildInfo } from './self-metrics.js';

export interface ExporterOptions {
  config: Config;
  /** `host:port`, `:port` or `[::1]:port`. */
  listenAddress: string;
  telemetryPath: string;
  /** Scrapes served at once (`--web.max-requests`); 0: no limit. Default 10. */
  maxConcurrentScrapes?: number;
  log: Logger;
  clock?: Clock;
  /** Process metrics (CPU, memory, event loop lag) of the exporter itself. Default on. */
  processMetrics?: boolean;
  /**
   * Poll only the accounts whose names jump-hash to this shard. The configured release
   * projects are looked up on shard 0 only; every shard looks up the version lines of its own
   * components, with 1/N of the release budget, so N shards together ask no faster than one
   * process would. Default: one shard, every account.
   */
  shard?: ShardAssignment;
  /** Re-reads the configuration for a reload (SIGHUP, POST /-/reload); throws `ConfigError`. */
  reloadConfig?: () => Config;
  /** Keeps cursors and counter totals across restarts (`--state.file`). */
  stateFile?: string;
  /** Where HTTPS_PROXY, HTTP_PROXY and NO_PROXY are read. Default: `process.env`. */
  env?: NodeJS.ProcessEnv;
  /**
   * Starts the HTTP server for the app; default `startHttpServer` (plain HTTP). The CLI
   * passes one that adds TLS and basic auth from `--web.config.file`.
   */
  serve?: (app: ReturnType<typeof createServer>, listenAddress: string, lifecycle: Lifecycle, registry: Registry) => Promise<RunningServer>;
  /**
   * `--web.serving-threads`: serve the listen address from this many worker threads
   * (serving-threads.ts), with TLS and basic auth from `webConfigFile`; `serve` is then not
   * used. Default 0: the main thread serves.
   */
  servingThreads?: number;
  /** `--web.config.file`, for the serving threads. */
  webConfigFile?: string;
  /** Resolution of the serving threads' event-loop delay histograms; default 10 ms. */
  servingLoopResolutionMs?: number;
  /** How long after a serving thread stops it is started again; default 1 s. */
  servingRestartDelayMs?: number;
  /** `--web.enable-lifecycle`: POST /-/reload re-reads the configuration (403 without). */
  enableLifecycle?: boolean;
}


export interface RunningExporter {
  /** Each serving thread's event-loop delay since the last reset; none without serving threads. */
  servingLoopDelays(reset?: boolean): Promise<LoopDelayFigures[]>;
  readonly url: string;
  readonly store: MetricStore;
  readonly registry: Registry;
  /** The runtimes of the accounts this process polls. */
  readonly accounts: readonly UnitRuntime[];
  ready(): boolean;
  /** Why /-/ready says not ready (meaningless while ready). */
  notReadyReason(): string;
  /** No upstream request in flight or waiting to be retried, no state save being written (tests drive a fake clock by it). */
  quiet(): boolean;
  /** No upstream request in flight and no state save being written; retries may be waiting for their time. */
  idle(): boolean;
  status(): Record<string, unknown>;
  /** Re-reads the configuration (`reloadConfig`) and applies what changed. Never throws. */
  reload(): ReloadResult;
  /** Applies a new configuration: unchanged accounts keep their state and budget. */
  applyConfig(config: Config): string[];
  /** With a state file: writes it now and publishes what waited for it. */
  saveState(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Builds the exporter from a validated configuration and starts it: a unit (request budget,
 * client, scheduler of its sources) per account and one for the release lookups, the store
 * that renders /metrics off the scrape path, and the HTTP server. A reload replaces only the
 * units whose configuration changed.
 */
export async function startExporter(options: ExporterOptions): Promise<RunningExporter> {
  applyHeapSettings();
  const { log } = options;
  const clock = options.clock ?? systemClock;
  const shard = options.shard ?? SINGLE_SHARD;
  const metrics = createSelfMetrics(clock, options.processMetrics ?? true);
  const { registry } = metrics;
  registerShardMetrics(registry, shard);
  const store = new MetricStore({
    clock,
    registry,
    onConflict: (c) => log.error({ conflict: c }, 'two sources publish one metric family with different types or help; kept the first'),
    onInvalidFamily: (f) => log.error({ invalid: f }, 'dropped a metric family with an invalid name'),
    onDuplicateSeries: (d) => log.warn({ duplicate: d }, 'dropped a duplicate series'),
    onRebuildError: (err) => log.error({ err }, 'rendering /metrics failed; the previous body is still served'),
    onBuilderNotice: (notice) => log[notice.level](notice.message),
  });
  const state = options.stateFile === undefined ? undefined : openStateFile(options.stateFile, clock, log, registry, () => units.saveState());
  const board = new TopicBoard();
  const proxy = proxySettingsFromEnv(options.env ?? process.env);
  const push = options.config.remoteWrite === undefined ? undefined : new LivePush({ config: options.config.remoteWrite, registry, clock, log, proxy });
  const pushed = push?.tee(store) ?? store;
  const units: UnitSet = new UnitSet({ exporter: options.config.exporter, clock, log, sink: state?.keeper.gate(pushed) ?? pushed, metrics, board, proxy, shard, lease: state?.keeper.lease }, registry, log);
  units.create(options.config, (name, baseUrl) => state?.restoredFor(name, baseUrl));
  const reloader = new Reloader(options.config, units, metrics.reload, clock, log, options.reloadConfig);
  const status = new ExporterStatus(units, store, shard, () => reloader.current);

  const lifecycle = { reload: () => reloader.reload(), enabled: options.enableLifecycle ?? false };
  const parts = createServerParts({ store, selfRegistry: registry, telemetryPath: options.telemetryPath, maxConcurrentScrapes: options.maxConcurrentScrapes, clock, log, version: EXPORTER_VERSION, status, lifecycle });
  const threads = options.servingThreads ?? 0;
  let server: RunningServer & { loopDelays?: (reset?: boolean) => Promise<LoopDelayFigures[]> };
  try {
    server =
      threads > 0
        ? await startServingThreads(parts, { threads, listenAddress: options.listenAddress, webConfigFile: options.webConfigFile, log, registry, loopResolutionMs: options.servingLoopResolutionMs, restartDelayMs: options.servingRestartDelayMs })
        : await (options.serve ?? ((a, address) => startHttpServer(a, address)))(parts.listener, options.listenAddress, lifecycle, registry);
  } catch (err) {
    units.abandon();
    throw err;
  }
  units.start();
  state?.keeper.start();
  push?.start();
  logStart(log, server.url, options, units, shard, reloader.current.config);

  return {
    url: server.url,
    store,
    registry,
    servingLoopDelays: (reset) => server.loopDelays?.(reset) ?? Promise.resolve([]),
    get accounts() {
      return units.accounts.map((u) => u.runtime);
    },
    ready: () => status.ready(),
    notReadyReason: () => status.notReadyReason(),
    quiet: () => !(state?.keeper.busy() ?? false) && units.quiet(),
    idle: () => !(state?.keeper.busy() ?? false) && units.idle(),
    status: () => status.status(),
    reload: () => reloader.reload(),
    applyConfig: (config) => reloader.apply(config),
    saveState: async () => {
      await state?.keeper.saveNow();
    },
    async stop() {
      // Readiness turns false first, so a load balancer stops sending scrapes.
      status.stopping = true;
      await units.stop();
      // The last save: a restart continues exactly from here.
      await state?.keeper.stop();
      // In-flight scrapes may finish; a connection still open after 3 s is cut, so the whole stop stays within 5 s.
      await server.close(3_000);
      await push?.stop();
      await store.close();
      await units.closeTransports();
    },
  };
}

function logStart(log: Logger, url: string, options: ExporterOptions, units: UnitSet, shard: ShardAssignment, config: Config): void {
  const accounts = units.accounts.map((u) => u.name);
  log.info({ url, telemetryPath: options.telemetryPath, servingThreads: options.servingThreads ?? 0, accounts }, 'monapi-exporter listening');
  if (shard.total <= 1) return;
  log.info({ shard: shard.ordinal, totalShards: shard.total, accounts, releases: units.releases !== undefined }, `${describeShard(shard)}: polling ${accounts.length} of ${config.accounts.length} configured accounts`);
  if (accounts.length === 0) log.warn(`${describeShard(shard)} has no account to poll: the account names hash to other shards`);
}
