import type { Logger } from 'pino';
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { createBudgetMetrics, createRequestBudget, type RequestBudget } from './budget/index.js';
import { ConfigError } from './config/errors.js';
import type { AccountConfig, Config, HttpConfig, ReleasesConfig } from './config/types.js';
import { MetricStore } from './exposition/store.js';
import type { MetricSink } from './exposition/model.js';
import { systemClock, type Clock } from './lib/clock.js';
import { createLimitMetrics, LIMIT_REASONS, LimitedAccountSink } from './limits/account-sink.js';
import { AccountRuntime } from './scheduler/account-runtime.js';
import { createSchedulerMetrics } from './scheduler/metrics.js';
import { RELEASES_ACCOUNT, ReleaseRuntime } from './scheduler/release-runtime.js';
import { createServer, startHttpServer, type RunningServer } from './server/app.js';
import { describeShard, registerShardMetrics, selectForShard, SINGLE_SHARD, type ShardAssignment } from './sharding/index.js';
import { MONITORING_SOURCES } from './sources/index.js';
import { OutdatedTracker } from './sources/outdated/tracker.js';
import { StateKeeper } from './state/keeper.js';
import { loadStateFile, type AccountState } from './state/state-file.js';
import { DEFAULT_TRANSPORT_OPTIONS, proxySettingsFromEnv, UndiciTransport, type ProxySettings } from './upstream/http/transport.js';
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
  /** `--web.enable-lifecycle`: POST /-/reload re-reads the configuration (403 without). */
  enableLifecycle?: boolean;
}

/** What the HTTP layer may ask of the exporter beyond serving data. */
export interface Lifecycle {
  reload(): ReloadResult;
}

export type ReloadResult = { readonly ok: true; readonly changed: string[] } | { readonly ok: false; readonly error: string };

export interface RunningExporter {
  readonly url: string;
  readonly store: MetricStore;
  readonly registry: Registry;
  readonly accounts: readonly AccountRuntime[];
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

export function registerBuildInfo(registry: Registry): void {
  new Gauge({
    name: 'monapi_exporter_build_info',
    help: 'Build of the exporter: version and Node.js version. Always 1.',
    labelNames: ['version', 'nodejs_version'],
    registers: [registry],
  }).set({ version: EXPORTER_VERSION, nodejs_version: process.version }, 1);
}

/** `monapi_exporter_config_last_reload_*`, as Prometheus names its own. */
export function createReloadMetrics(registry: Registry): { successful: Gauge; timestamp: Gauge } {
  return {
    successful: new Gauge({
      name: 'monapi_exporter_config_last_reload_successful',
      help: 'Whether the last configuration reload (SIGHUP or POST /-/reload) succeeded: 1, or 0 while the previous configuration stays in force.',
      registers: [registry],
    }),
    timestamp: new Gauge({
      name: 'monapi_exporter_config_last_reload_success_timestamp_seconds',
      help: 'Unix time of the last successful configuration load (the start counts as one).',
      registers: [registry],
    }),
  };
}

/**
 * Removes every self-metric series of an account a reload removed, so it leaves /metrics
 * whole (its data series are retracted from the store separately).
 */
export async function forgetAccountSeries(registry: Registry, account: string): Promise<void> {
  for (const metric of registry.getMetricsAsArray()) {
    // prom-client types the array as plain objects; every entry is a metric with get() and, when labelled, remove().
    const withLabels = metric as unknown as {
      labelNames?: readonly string[];
      remove?: (labels: Record<string, string>) => void;
      get(): Promise<{ values: { labels: Record<string, string | number> }[] }>;
    };
    if (!withLabels.labelNames?.includes('account') || typeof withLabels.remove !== 'function') continue;
    const seen = new Set<string>();
    for (const value of (await withLabels.get()).values) {
      const labels = value.labels;
      if (labels.account !== account) continue;
      // Histogram buckets, sums and counts share one label set apart from le.
      const own = Object.fromEntries(Object.entries(labels).filter(([name]) => withLabels.labelNames?.includes(name)).map(([k, v]) => [k, String(v)]));
      const key = JSON.stringify(own);
      if (seen.has(key)) continue;
      seen.add(key);
      withLabels.remove(own);
    }
  }
}

/** The objects of one polled account; replaced whole when its configuration changes. */
interface AccountUnit {
  readonly config: AccountConfig;
  readonly budget: RequestBudget;
  readonly transport: UndiciTransport;
  readonly runtime: AccountRuntime;
  readonly sink: LimitedAccountSink;
}

interface ReleasesUnit {
  readonly config: ReleasesConfig;
  readonly budget: RequestBudget;
  readonly transport: UndiciTransport;
  readonly runtime: ReleaseRuntime;
  readonly sink: LimitedAccountSink;
}

/** The transport of one account: its timeouts, size cap and TLS settings, behind the environment's proxy. */
export function transportFor(http: HttpConfig | undefined, connections: number, proxy: ProxySettings): UndiciTransport {
  return new UndiciTransport(
    {
      headersTimeoutMs: http?.timeoutMs,
      bodyTimeoutMs: http?.timeoutMs,
      deadlineMs: http?.deadlineMs,
      maxResponseBytes: http?.maxResponseBytes,
      connectionsPerOrigin: Math.max(DEFAULT_TRANSPORT_OPTIONS.connectionsPerOrigin, connections),
    },
    { ca: http?.ca, insecureSkipVerify: http?.insecureSkipVerify },
    proxy,
  );
}

/** Configurations compare by their JSON (secrets print as `<redacted>`) and by the keys themselves. */
function sameAccount(a: AccountConfig, b: AccountConfig): boolean {
  return JSON.stringify(a) === JSON.stringify(b) && a.apiKey.equals(b.apiKey);
}

function sameReleases(a: ReleasesConfig | undefined, b: ReleasesConfig | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  const keysEqual = a.mode === 'marketplace' && b.mode === 'marketplace' ? a.marketplaceKey.equals(b.marketplaceKey) : a.mode === b.mode;
  return keysEqual && JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Builds the exporter from a validated configuration and starts it: one request budget,
 * client and scheduler per account, the release lookups on their cron schedule, the
 * store that renders /metrics off the scrape path, and the HTTP server. A reload replaces
 * only the accounts whose configuration changed.
 */
export async function startExporter(options: ExporterOptions): Promise<RunningExporter> {
  const { log } = options;
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
  const proxy = proxySettingsFromEnv(options.env ?? process.env);

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
  const limitDropped = createLimitMetrics(registry);
  const { successful: reloadSuccessful, timestamp: reloadTimestamp } = createReloadMetrics(registry);
  const upstreamLogger = log.child({ component: 'upstream' });

  let config = options.config;
  let units = new Map<string, AccountUnit>();
  let releases: ReleasesUnit | undefined;
  // The outdated check joins what the accounts report with what the release lookups find.
  const trackerFor = (next: Config, accounts: number) => {
    const rules = next.releases?.outdated;
    return rules && accounts > 0 ? new OutdatedTracker({ rules: new Map(Object.entries(rules.software)), sink: store }) : undefined;
  };
  let outdated: OutdatedTracker | undefined;
  let lastReload: { ok: boolean; atMs: number; error?: string } = { ok: true, atMs: clock.now() };
  reloadSuccessful.set(1);
  reloadTimestamp.set(clock.now() / 1000);

  const keeper = options.stateFile === undefined
    ? undefined
    : new StateKeeper({
        path: options.stateFile,
        clock,
        log,
        registry,
        collect: () =>
          Object.fromEntries([...units.values()].map((u): [string, AccountState] => [u.config.name, { baseUrl: u.config.baseUrl, sources: u.runtime.saveState(), budget: u.budget.persistentState() }])),
      });
  const dataSink: MetricSink = keeper ? keeper.gate(store) : store;

  function createAccount(account: AccountConfig, restore: AccountState | undefined): AccountUnit {
    const budget = createRequestBudget({
      name: account.name,
      ratePerMinute: account.rateLimit.requestsPerMinute,
      burst: account.rateLimit.burst,
      headroom: account.headroom,
      concurrency: account.concurrency,
      clock,
      metrics: budgetMetrics,
      // The account runtime logs a refused key once, with the reason; the budget's own event would repeat it.
      onEvent: (event) => (event.type === 'auth_failed' ? log.debug({ event }, 'request budget: auth_failed') : log.warn({ event }, `request budget: ${event.type}`)),
      lease: keeper?.lease,
      restored: restore?.budget,
    });
    if (account.http?.insecureSkipVerify) {
      log.warn({ account: account.name }, 'insecure_skip_verify is on: the upstream certificate is not checked, so anyone on the path can read the API key; set http.ca_file instead');
    }
    const transport = transportFor(account.http, account.concurrency, proxy);
    const accountLog = log.child({ account: account.name });
    const sink = new LimitedAccountSink(dataSink, account.limits ?? { series: 0, metricNameLength: 0, labelNameLength: 0, labelValueLength: 0 }, {
      dropped: (reason, series) => limitDropped.inc({ account: account.name, reason }, series),
      firstDrop: (reason, detail) =>
        accountLog.warn({ reason, ...detail }, `series not exposed (${reason}): limits of this account; monapi_series_limit_dropped_total counts every one (logged once)`),
    });
    for (const reason of LIMIT_REASONS) limitDropped.inc({ account: account.name, reason }, 0);
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
    const runtime = new AccountRuntime({
      account,
      exporter: config.exporter,
      client,
      budget,
      sink,
      clock,
      log: accountLog,
      sources: MONITORING_SOURCES,
      metrics: schedulerMetrics,
      ...(outdated ? { versions: outdated.forAccount(account.name) } : {}),
    });
    if (restore !== undefined) {
      const problems = runtime.restoreState(restore.sources);
      for (const problem of problems) accountLog.warn({ problem }, 'part of the saved state could not be read; that source starts afresh');
    }
    return { config: account, budget, transport, runtime, sink };
  }

  /** The release lookups, when this shard has projects to look up or the outdated check needs lines. */
  function createReleases(r: ReleasesConfig | undefined): ReleasesUnit | undefined {
    const projects = shard.ordinal === 0 ? (r?.projects ?? []) : [];
    if (r === undefined || (projects.length === 0 && !outdated)) return undefined;
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
    const transport = transportFor(r.http, 2, proxy);
    const baseUrl = r.mode === 'free' ? r.freeBaseUrl : r.marketplaceBaseUrl;
    const common = { transport, gate: budget, metrics: upstreamMetrics, logger: upstreamLogger, clock, account: RELEASES_ACCOUNT };
    const client = new ReleaseClient(
      r.mode === 'free'
        ? { mode: 'free', baseUrl, ...common }
        : { mode: 'marketplace', baseUrl, marketplaceKey: r.marketplaceKey.reveal(), marketplaceHost: r.marketplaceHost, headerNames: r.headerNames, ...common },
    );
    const sink = new LimitedAccountSink(store, { series: 0, metricNameLength: 0, labelNameLength: 0, labelValueLength: 0 }, { dropped: () => undefined, firstDrop: () => undefined });
    const runtime = new ReleaseRuntime({
      config: r,
      client,
      sink,
      clock,
      log: log.child({ component: 'releases' }),
      registry,
      health: schedulerMetrics,
      projects,
      ...(outdated ? { outdated } : {}),
    });
    return { config: r, budget, transport, runtime, sink };
  }

  async function retireAccount(unit: AccountUnit): Promise<void> {
    schedulerMetrics.untrack(unit.runtime);
    const stopped = unit.runtime.stop();
    unit.budget.close();
    await stopped;
    unit.sink.retractAll();
    await unit.transport.close();
    // A replaced account gets the same names again at once; only a removed one is forgotten.
    if (!units.has(unit.config.name)) await forgetAccountSeries(registry, unit.config.name);
  }

  async function retireReleases(unit: ReleasesUnit): Promise<void> {
    schedulerMetrics.untrack(unit.runtime);
    unit.runtime.stop();
    unit.budget.close();
    unit.sink.retractAll();
    await unit.transport.close();
  }

  // Start: every polled account, with its saved state when the state file has it.
  let restored: Readonly<Record<string, AccountState>> = {};
  if (options.stateFile !== undefined) {
    const loaded = loadStateFile(options.stateFile, clock.now());
    if (loaded.kind === 'set_aside') {
      log.warn(
        { stateFile: options.stateFile, reason: loaded.reason, movedTo: loaded.movedTo },
        'the state file cannot be used and was set aside; counters start afresh (nothing is counted twice)',
      );
    } else if (loaded.kind === 'loaded') {
      restored = loaded.snapshot.accounts;
      log.info({ stateFile: options.stateFile, savedAt: new Date(loaded.snapshot.savedAtMs).toISOString(), accounts: Object.keys(restored) }, 'restored cursors and counter totals from the state file');
    }
  }
  const restoreFor = (account: AccountConfig): AccountState | undefined => {
    const saved = restored[account.name];
    return saved !== undefined && saved.baseUrl === account.baseUrl ? saved : undefined;
  };
  const polledAtStart = selectForShard(config.accounts, shard);
  outdated = trackerFor(config, polledAtStart.length);
  for (const account of polledAtStart) units.set(account.name, createAccount(account, restoreFor(account)));
  releases = createReleases(config.releases);

  let stopping = false;
  let everReady = false;
  const ready = () => {
    if (stopping) return false;
    // Once ready, a reload that adds or changes an account does not take the pod out of its Service.
    everReady ||= [...units.values()].every((u) => u.runtime.ready()) && (releases?.runtime.ready() ?? true);
    return everReady;
  };
  const runtimes = () => [...units.values()].map((u) => u.runtime);
  const status = () => {
    const polled = [...units.values()].map((u) => u.config.name);
    return {
      version: EXPORTER_VERSION,
      ready: ready(),
      accounts: runtimes().map((a) => ({ ...a.status(), series_exposed: units.get(a.account)?.sink.series })),
      releases: releases?.runtime.status(),
      shard: {
        ordinal: shard.ordinal,
        total: shard.total,
        accounts: polled,
        accounts_on_other_shards: config.accounts.length - polled.length,
        releases: config.releases !== undefined && shard.ordinal === 0,
      },
      config: { last_reload_successful: lastReload.ok, last_reload_at: new Date(lastReload.atMs).toISOString(), last_reload_error: lastReload.error },
      exposition: (() => {
        const s = store.snapshot();
        return { generation: s.generation, series: s.series, families: s.families, render_seconds: s.renderSeconds };
      })(),
    };
  };

  /** Replaces what changed; returns the names of the accounts (and `(releases)`) started afresh or removed. */
  const applyConfig = (next: Config): string[] => {
    const changed: string[] = [];
    const wanted = new Map(selectForShard(next.accounts, shard).map((a) => [a.name, a]));
    // The outdated rules feed every account: a change of them restarts all, with a new tracker.
    const outdatedChanged = JSON.stringify(next.releases?.outdated) !== JSON.stringify(config.releases?.outdated) || (outdated !== undefined) !== (wanted.size > 0 && next.releases?.outdated !== undefined);
    const exporterChanged = JSON.stringify(next.exporter) !== JSON.stringify(config.exporter) || outdatedChanged;
    const carried = new Map<string, AccountState>();
    const retiring: Promise<void>[] = [];
    for (const [name, unit] of units) {
      const account = wanted.get(name);
      if (account !== undefined && !exporterChanged && sameAccount(unit.config, account)) continue;
      // Same upstream and key: the new runtime continues the counters of the old one.
      if (account !== undefined && account.baseUrl === unit.config.baseUrl && account.apiKey.equals(unit.config.apiKey)) {
        carried.set(name, { baseUrl: unit.config.baseUrl, sources: unit.runtime.saveState(), budget: unit.budget.handOver() });
      }
      units.delete(name);
      retiring.push(retireAccount(unit));
      changed.push(name);
    }
    config = next;
    if (outdatedChanged) outdated = trackerFor(next, wanted.size);
    const fresh = new Map(units);
    for (const [name, account] of wanted) {
      if (fresh.has(name)) continue;
      const unit = createAccount(account, carried.get(name));
      fresh.set(name, unit);
      unit.runtime.start();
      if (!changed.includes(name)) changed.push(name);
    }
    units = fresh;
    if (outdatedChanged || !sameReleases(releases?.config, next.releases)) {
      if (releases) retiring.push(retireReleases(releases));
      releases = createReleases(next.releases);
      releases?.runtime.start();
      changed.push(RELEASES_ACCOUNT);
    }
    void Promise.all(retiring).catch((err: unknown) => log.error({ err }, 'stopping a replaced account failed'));
    return changed;
  };

  const reload = (): ReloadResult => {
    if (!options.reloadConfig) return { ok: false, error: 'this exporter was started without a configuration file to reload' };
    let next: Config;
    try {
      next = options.reloadConfig();
    } catch (error) {
      const message = error instanceof ConfigError ? error.message : error instanceof Error ? error.message : String(error);
      lastReload = { ok: false, atMs: clock.now(), error: message };
      reloadSuccessful.set(0);
      log.error({ err: { message } }, 'configuration reload failed; the previous configuration stays in force');
      return { ok: false, error: message };
    }
    const changed = applyConfig(next);
    lastReload = { ok: true, atMs: clock.now() };
    reloadSuccessful.set(1);
    reloadTimestamp.set(clock.now() / 1000);
    log.info({ changed, unchanged: [...units.keys()].filter((n) => !changed.includes(n)) }, 'configuration reloaded');
    return { ok: true, changed };
  };

  const notReadyReason = () =>
    stopping
      ? 'shutting down'
      : [...runtimes().map((a) => a.notReadyReason()), releases && !releases.runtime.ready() ? 'release lookups have not run yet' : undefined]
          .filter((r) => r !== undefined)
          .join('; ') || 'waiting for the first complete polling cycle';
  const app = createServer({
    store,
    selfRegistry: registry,
    telemetryPath: options.telemetryPath,
    maxConcurrentScrapes: options.maxConcurrentScrapes,
    clock,
    log,
    version: EXPORTER_VERSION,
    lifecycle: { reload, enabled: options.enableLifecycle ?? false },
    status: {
      ready,
      status,
      failingSources: () => [...runtimes().flatMap((a) => a.failingSources()), ...(releases?.runtime.failingSources() ?? [])],
      notReadyReason,
    },
  });
  let server: RunningServer;
  try {
    server = await (options.serve ?? ((a, address) => startHttpServer(a, address)))(app, options.listenAddress, { reload }, registry);
  } catch (err) {
    for (const unit of units.values()) unit.budget.close();
    releases?.budget.close();
    throw err;
  }
  for (const unit of units.values()) unit.runtime.start();
  releases?.runtime.start();
  keeper?.start();
  log.info({ url: server.url, telemetryPath: options.telemetryPath, accounts: [...units.keys()] }, 'monapi-exporter listening');
  if (shard.total > 1) {
    log.info(
      { shard: shard.ordinal, totalShards: shard.total, accounts: [...units.keys()], releases: releases !== undefined },
      `${describeShard(shard)}: polling ${units.size} of ${config.accounts.length} configured accounts`,
    );
    if (units.size === 0) log.warn(`${describeShard(shard)} has no account to poll: the account names hash to other shards`);
  }

  return {
    url: server.url,
    store,
    registry,
    get accounts() {
      return runtimes();
    },
    ready,
    notReadyReason,
    quiet: () =>
      !(keeper?.busy() ?? false) &&
      [...[...units.values()].map((u) => u.budget), ...(releases ? [releases.budget] : [])].every((b) => {
        const s = b.snapshot();
        return s.inFlight === 0 && s.waitingToRetry === 0;
      }),
    idle: () =>
      !(keeper?.busy() ?? false) && [...[...units.values()].map((u) => u.budget), ...(releases ? [releases.budget] : [])].every((b) => b.snapshot().inFlight === 0),
    status,
    reload,
    applyConfig,
    saveState: async () => {
      await keeper?.saveNow();
    },
    async stop() {
      // Readiness turns false first, so a load balancer stops sending scrapes.
      stopping = true;
      // Schedulers first, so the runs the closing budgets reject are not reported as failures.
      releases?.runtime.stop();
      const stopped = Promise.all(runtimes().map((a) => a.stop()));
      for (const unit of units.values()) unit.budget.close();
      releases?.budget.close();
      await stopped;
      // The last save: a restart continues exactly from here.
      await keeper?.stop();
      // In-flight scrapes may finish; a connection still open after 3 s is cut, so the whole stop stays within 5 s.
      await server.close(3_000);
      await store.close();
      await Promise.all([...[...units.values()].map((u) => u.transport.close()), releases?.transport.close()]);
    },
  };
}
