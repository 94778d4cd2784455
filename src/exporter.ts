import type { Logger } from 'pino';
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { createBudgetMetrics, createRequestBudget, type RequestBudget } from './budget/index.js';
import type { Config } from './config/types.js';
import { MetricStore } from './exposition/store.js';
import { systemClock, type Clock } from './lib/clock.js';
import { AccountRuntime } from './scheduler/account-runtime.js';
import { createSchedulerMetrics } from './scheduler/metrics.js';
import { RELEASES_ACCOUNT, ReleaseRuntime } from './scheduler/release-runtime.js';
import { createServer, startHttpServer, type RunningServer } from './server/app.js';
import { describeShard, registerShardMetrics, selectForShard, SINGLE_SHARD, type ShardAssignment } from './sharding/index.js';
import { MONITORING_SOURCES } from './sources/index.js';
import { OutdatedTracker } from './sources/outdated/tracker.js';
import { UndiciTransport } from './upstream/http/transport.js';
import { createUpstreamMetrics } from './upstream/metrics.js';
import { MonitoringClient } from './upstream/monitoring/client.js';
import { ReleaseClient } from './upstream/releases/client.js';
import { EXPORTER_VERSION } from './version.js';

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
}

export interface RunningExporter {
  readonly url: string;
  readonly store: MetricStore;
  readonly registry: Registry;
  readonly accounts: readonly AccountRuntime[];
  ready(): boolean;
  /** No upstream request in flight or waiting to be retried (tests drive a fake clock by it). */
  quiet(): boolean;
  status(): Record<string, unknown>;
  stop(): Promise<void>;
}

export function registerBuildInfo(registry: Registry): void {
  new Gauge({
    name: 'monapi_exporter_build_info',
    help: 'Build of the exporter: version and Node.js version. Always 1.',
    labelNames: ['version', 'nodejs_version'],
    registers: [registry],
  }).set({ version: EXPORTER_VERSION, nodejs_version: process.version }, 1);
}

/**
 * Builds the exporter from a validated configuration and starts it: one request budget,
 * client and scheduler per account, the release lookups on their cron schedule, the
 * store that renders /metrics off the scrape path, and the HTTP server.
 */
export async function startExporter(options: ExporterOptions): Promise<RunningExporter> {
  const { config, log } = options;
  const clock = options.clock ?? systemClock;
  const registry = new Registry();
  if (options.processMetrics ?? true) {
    collectDefaultMetrics({ register: registry, prefix: 'monapi_exporter_' });
    // prom-client names these gauges ..._total, which promtool rejects (only counters may end in _total).
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
      registry.removeSingleMetric(`monapi_exporter_${name}`);
    }
  }
  registerBuildInfo(registry);
  const shard = options.shard ?? SINGLE_SHARD;
  registerShardMetrics(registry, shard);
  const polledAccounts = selectForShard(config.accounts, shard);
  const pollsReleases = shard.ordinal === 0;

  const store = new MetricStore({
    clock,
    registry,
    onConflict: (c) => log.error({ conflict: c }, 'two sources publish one metric family with different types or help; kept the first'),
    onInvalidFamily: (f) => log.error({ invalid: f }, 'dropped a metric family with an invalid name'),
    onDuplicateSeries: (d) => log.warn({ duplicate: d }, 'dropped a duplicate series'),
    onRebuildError: (err) => log.error({ err }, 'rendering /metrics failed; the previous body is still served'),
  });
  const upstreamMetrics = createUpstreamMetrics(registry, { accountLabel: true });
  const budgetMetrics = createBudgetMetrics(registry);
  const schedulerMetrics = createSchedulerMetrics(registry, clock);
  // One transport keeps one keep-alive pool per upstream origin.
  const transport = new UndiciTransport();
  const budgets: RequestBudget[] = [];
  const upstreamLogger = log.child({ component: 'upstream' });

  const outdatedConfig = config.releases?.outdated;
  const outdated =
    outdatedConfig && polledAccounts.length > 0 ? new OutdatedTracker({ rules: new Map(Object.entries(outdatedConfig.software)), sink: store }) : undefined;

  const accounts = polledAccounts.map((account) => {
    const budget = createRequestBudget({
      name: account.name,
      ratePerMinute: account.rateLimit.requestsPerMinute,
      burst: account.rateLimit.burst,
      headroom: account.headroom,
      concurrency: account.concurrency,
      clock,
      metrics: budgetMetrics,
      onEvent: (event) => log.warn({ event }, `request budget: ${event.type}`),
    });
    budgets.push(budget);
    const client = new MonitoringClient({
      baseUrl: account.baseUrl,
      apiKey: account.apiKey.reveal(),
      authScheme: account.authScheme,
      transport,
      gate: budget,
      metrics: upstreamMetrics,
      logger: upstreamLogger,
      account: account.name,
      clock,
    });
    return new AccountRuntime({
      account,
      exporter: config.exporter,
      client,
      budget,
      sink: store,
      clock,
      log: log.child({ account: account.name }),
      sources: MONITORING_SOURCES,
      metrics: schedulerMetrics,
      ...(outdated ? { versions: outdated.forAccount(account.name) } : {}),
    });
  });

  let releases: ReleaseRuntime | undefined;
  const releaseProjects = pollsReleases ? (config.releases?.projects ?? []) : [];
  if (config.releases && (releaseProjects.length > 0 || outdated)) {
    const r = config.releases;
    const share = (whole: number) => Math.max(1, Math.floor(whole / shard.total));
    const budget = createRequestBudget({
      // Parentheses cannot appear in an account name, so this budget's label never clashes with one.
      name: RELEASES_ACCOUNT,
      // The free endpoint's limits are not published; the marketplace's depend on the plan. Shards split them.
      ratePerMinute: share(r.mode === 'free' ? 30 : 60),
      burst: share(5),
      headroom: 0,
      concurrency: 2,
      clock,
      metrics: budgetMetrics,
    });
    budgets.push(budget);
    const baseUrl = r.mode === 'free' ? r.freeBaseUrl : r.marketplaceBaseUrl;
    const client = new ReleaseClient(
      r.mode === 'free'
        ? { mode: 'free', baseUrl, transport, gate: budget, metrics: upstreamMetrics, logger: upstreamLogger, clock, account: RELEASES_ACCOUNT }
        : {
            mode: 'marketplace',
            baseUrl,
            marketplaceKey: r.marketplaceKey.reveal(),
            marketplaceHost: r.marketplaceHost,
            headerNames: r.headerNames,
            transport,
            gate: budget,
            metrics: upstreamMetrics,
            logger: upstreamLogger,
            clock,
            account: RELEASES_ACCOUNT,
          },
    );
    releases = new ReleaseRuntime({
      config: r,
      client,
      sink: store,
      clock,
      log: log.child({ component: 'releases' }),
      registry,
      health: schedulerMetrics,
      projects: releaseProjects,
      ...(outdated ? { outdated } : {}),
    });
  }

  const ready = () => accounts.every((a) => a.ready()) && (releases?.ready() ?? true);
  const status = () => ({
    version: EXPORTER_VERSION,
    ready: ready(),
    accounts: accounts.map((a) => a.status()),
    releases: releases?.status(),
    shard: {
      ordinal: shard.ordinal,
      total: shard.total,
      accounts: polledAccounts.map((a) => a.name),
      accounts_on_other_shards: config.accounts.length - polledAccounts.length,
      releases: config.releases !== undefined && pollsReleases,
    },
    exposition: (() => {
      const s = store.snapshot();
      return { generation: s.generation, series: s.series, families: s.families, render_seconds: s.renderSeconds };
    })(),
  });

  const app = createServer({
    store,
    selfRegistry: registry,
    telemetryPath: options.telemetryPath,
    maxConcurrentScrapes: options.maxConcurrentScrapes,
    clock,
    log,
    version: EXPORTER_VERSION,
    status: {
      ready,
      status,
      failingSources: () => [...accounts.flatMap((a) => a.failingSources()), ...(releases?.failingSources() ?? [])],
      notReadyReason: () =>
        [...accounts.map((a) => a.notReadyReason()), releases && !releases.ready() ? 'release lookups have not run yet' : undefined]
          .filter((r) => r !== undefined)
          .join('; ') || 'waiting for the first complete polling cycle',
    },
  });
  let server: RunningServer;
  try {
    server = await startHttpServer(app, options.listenAddress);
  } catch (err) {
    budgets.forEach((b) => b.close());
    throw err;
  }
  for (const account of accounts) account.start();
  releases?.start();
  log.info({ url: server.url, telemetryPath: options.telemetryPath, accounts: accounts.map((a) => a.account) }, 'monapi-exporter listening');
  if (shard.total > 1) {
    log.info(
      { shard: shard.ordinal, totalShards: shard.total, accounts: accounts.map((a) => a.account), releases: releases !== undefined },
      `${describeShard(shard)}: polling ${accounts.length} of ${config.accounts.length} configured accounts`,
    );
    if (accounts.length === 0) log.warn(`${describeShard(shard)} has no account to poll: the account names hash to other shards`);
  }

  return {
    url: server.url,
    store,
    registry,
    accounts,
    ready,
    quiet: () => budgets.every((b) => {
      const s = b.snapshot();
      return s.inFlight === 0 && s.waitingToRetry === 0;
    }),
    status,
    async stop() {
      // Schedulers first, so the runs the closing budgets reject are not reported as failures.
      releases?.stop();
      const stopped = Promise.all(accounts.map((a) => a.stop()));
      budgets.forEach((b) => b.close());
      await stopped;
      await server.close();
      await store.close();
      await transport.close();
    },
  };
}
