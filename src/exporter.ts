import type { Logger } from 'pino';
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { createBudgetMetrics, createRequestBudget, type RequestBudget } from './budget/index.js';
import type { Config } from './config/types.js';
import { MetricStore } from './exposition/store.js';
import { systemClock, type Clock } from './lib/clock.js';
import { AccountRuntime } from './scheduler/account-runtime.js';
import { createSchedulerMetrics } from './scheduler/metrics.js';
import { ReleaseRuntime } from './scheduler/release-runtime.js';
import { createServer, startHttpServer, type RunningServer } from './server/app.js';
import { MONITORING_SOURCES } from './sources/index.js';
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

  const accounts = config.accounts.map((account) => {
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
    });
  });

  let releases: ReleaseRuntime | undefined;
  if (config.releases) {
    const r = config.releases;
    const budget = createRequestBudget({
      // Parentheses cannot appear in an account name, so this budget's label never clashes with one.
      name: '(releases)',
      // The free endpoint's limits are not published; the marketplace's depend on the plan.
      ratePerMinute: r.mode === 'free' ? 30 : 60,
      burst: 5,
      headroom: 0,
      concurrency: 2,
      clock,
      metrics: budgetMetrics,
    });
    budgets.push(budget);
    const baseUrl = r.mode === 'free' ? r.freeBaseUrl : r.marketplaceBaseUrl;
    const client = new ReleaseClient(
      r.mode === 'free'
        ? { mode: 'free', baseUrl, transport, gate: budget, metrics: upstreamMetrics, logger: upstreamLogger, clock, account: '(releases)' }
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
            account: '(releases)',
          },
    );
    releases = new ReleaseRuntime({ config: r, client, sink: store, clock, log: log.child({ component: 'releases' }), registry });
  }

  const ready = () => accounts.every((a) => a.ready()) && (releases?.ready() ?? true);
  const status = () => ({
    version: EXPORTER_VERSION,
    ready: ready(),
    accounts: accounts.map((a) => a.status()),
    releases: releases?.status(),
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
    log,
    version: EXPORTER_VERSION,
    status: {
      ready,
      status,
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
