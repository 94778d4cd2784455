import type { Logger } from 'pino';
import { createRequestBudget, type RequestBudget } from '../budget/index.js';
import type { SpendLease } from '../budget/lease.js';
import type { SourceConfig } from '../config/source-spec.js';
import { FREE_ENDPOINT_CACHE_MS, type AccountConfig, type ExporterConfig, type HttpConfig, type ReleasesConfig } from '../config/types.js';
import type { MetricSink } from '../exposition/model.js';
import type { Clock } from '../lib/clock.js';
import { LIMIT_REASONS, LimitedAccountSink } from '../limits/account-sink.js';
import { UnitRuntime } from '../scheduler/unit-runtime.js';
import type { TopicBoard } from '../scheduler/topics.js';
import type { ShardAssignment } from '../sharding/index.js';
import { SOURCES } from '../sources/index.js';
import type { ConfigSection } from '../config/source-spec.js';
import type { SourceDefinition } from '../sources/source.js';
import { DEFAULT_TRANSPORT_OPTIONS, UndiciTransport, type ProxySettings } from '../upstream/http/transport.js';
import type { FieldReport } from '../upstream/fields/resolve.js';
import { MonitoringClient, sourceApi, type MonitoringApi } from '../upstream/monitoring/client.js';
import { ReleaseClient } from '../upstream/releases/client.js';
import { SharedReleaseLookups } from '../upstream/releases/lookups.js';
import { budgetEventLogger } from './budget-log.js';
import type { SelfMetrics } from './self-metrics.js';

/** The account label of the release lookups in self-metrics (no account name can contain parentheses). */
export const RELEASES_UNIT = '(releases)';

/**
 * One upstream connection and everything that polls through it: an account of the
 * Monitoring API, or the release lookups. A reload replaces a unit whole when its
 * configuration changed; the others keep running.
 */
export interface Unit {
  readonly name: string;
  readonly section: ConfigSection;
  /** What it was built from, to tell whether a reload changes it. */
  readonly config: AccountConfig | ReleasesConfig;
  readonly budget: RequestBudget;
  readonly transport: UndiciTransport;
  readonly runtime: UnitRuntime;
  readonly sink: LimitedAccountSink;
}

/** What every unit is built with. */
export interface UnitDeps {
  readonly exporter: ExporterConfig;
  readonly clock: Clock;
  readonly log: Logger;
  /** Where the units publish (the store, or the state file's gate in front of it). */
  readonly sink: MetricSink;
  readonly metrics: SelfMetrics;
  readonly board: TopicBoard;
  readonly proxy: ProxySettings;
  readonly shard: ShardAssignment;
  /** With a state file: the budgets' spending is covered by saves written ahead (src/budget/lease.ts). */
  readonly lease?: SpendLease;
  /** The probe command: one target per source, and every answer's field report handed over. */
  readonly probe?: {
    readonly targetsPerSource: number;
    onFieldReport(unit: string, source: string, target: string, report: FieldReport): void;
  };
}

const RESERVED_FAMILIES = SOURCES.flatMap((source) => source.families);
const NO_LIMITS = { series: 0, metricNameLength: 0, labelNameLength: 0, labelValueLength: 0 };

/** The transport of one unit: its timeouts, size cap and TLS settings, behind the environment's proxy. */
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

/** The sources of a section that its configuration switches on, in the order of the list. */
function enabledSources(section: ConfigSection, config: Readonly<Record<string, SourceConfig>>): SourceDefinition<unknown, unknown>[] {
  return SOURCES.filter((source) => source.section === section && config[source.name]?.enabled === true);
}

/** The base URL a unit's saved state is tied to. */
export function releasesBaseUrl(releases: ReleasesConfig): string {
  return releases.mode === 'free' ? releases.freeBaseUrl : releases.marketplaceBaseUrl;
}

/** An account's unit; `restoredBudget` is what its budget's `persistentState()` or `handOver()` gave before. */
export function createAccountUnit(account: AccountConfig, deps: UnitDeps, restoredBudget?: unknown): Unit {
  const { clock, log, metrics } = deps;
  const accountLog = log.child({ account: account.name });
  const budget = createRequestBudget({
    name: account.name,
    ratePerMinute: account.rateLimit.requestsPerMinute,
    burst: account.rateLimit.burst,
    headroom: account.headroom,
    concurrency: account.concurrency,
    clock,
    metrics: metrics.budget,
    onEvent: budgetEventLogger(log, clock),
    lease: deps.lease,
    restored: restoredBudget,
  });
  if (account.http?.insecureSkipVerify) {
    log.warn({ account: account.name }, 'insecure_skip_verify is on: the upstream certificate is not checked, so anyone on the path can read the API key; set http.ca_file instead');
  }
  const transport = transportFor(account.http, account.concurrency, deps.proxy);
  const sink = new LimitedAccountSink(deps.sink, account.limits ?? NO_LIMITS, {
    dropped: (reason, series) => metrics.limitDropped.inc({ account: account.name, reason }, series),
    firstDrop: (reason, detail) =>
      accountLog.warn({ reason, ...detail }, `series not exposed (${reason}): limits of this account; monapi_series_limit_dropped_total counts every one (logged once)`),
  });
  for (const reason of LIMIT_REASONS) metrics.limitDropped.inc({ account: account.name, reason }, 0);
  const client = new MonitoringClient({
    baseUrl: account.baseUrl,
    apiKey: account.apiKey.reveal(),
    authScheme: account.authScheme,
    transport,
    gate: budget,
    metrics: metrics.upstream,
    logger: log.child({ component: 'upstream' }),
    account: account.name,
    clock,
    ...(account.maxPagesPerList !== undefined && { maxPagesPerList: account.maxPagesPerList }),
  });
  const runtime = new UnitRuntime<MonitoringApi>({
    unit: { name: account.name, baseUrl: account.baseUrl, counterGraceMs: account.counterGraceMs, shard: deps.shard },
    sources: enabledSources('account', account.sources),
    sourceConfig: account.sources,
    exporter: deps.exporter,
    upstream: client,
    budget,
    sink,
    clock,
    log: accountLog,
    metrics: metrics.scheduler,
    board: deps.board,
    concurrency: account.concurrency,
    configuredRate: account.rateLimit,
    reportsUp: true,
    reservedFamilyNames: RESERVED_FAMILIES,
    upstreamFor: (source, record) =>
      sourceApi(client, account.sources[source.name]?.fieldPaths ?? {}, (target, report) => {
        record(target, report);
        deps.probe?.onFieldReport(account.name, source.name, target, report);
      }),
    targetsPerSource: deps.probe?.targetsPerSource,
  });
  return { name: account.name, section: 'account', config: account, budget, transport, runtime, sink };
}

/**
 * The release lookups: the free endpoint's limits are not published and the marketplace's
 * depend on the plan, so the budget is a modest guess; N shards share it, so together they
 * ask no faster than one process would.
 */
export function createReleasesUnit(releases: ReleasesConfig, deps: UnitDeps): Unit {
  const { clock, log, metrics, shard } = deps;
  const share = (whole: number) => Math.max(1, Math.floor(whole / shard.total));
  const budget = createRequestBudget({
    name: RELEASES_UNIT,
    ratePerMinute: share(releases.mode === 'free' ? 30 : 60),
    burst: share(5),
    headroom: 0,
    concurrency: 2,
    clock,
    metrics: metrics.budget,
  });
  const transport = transportFor(releases.http, 2, deps.proxy);
  const common = { transport, gate: budget, metrics: metrics.upstream, logger: log.child({ component: 'upstream' }), clock, account: RELEASES_UNIT };
  const baseUrl = releasesBaseUrl(releases);
  const client = new ReleaseClient(
    releases.mode === 'free'
      ? { mode: 'free', baseUrl, ...common }
      : { mode: 'marketplace', baseUrl, marketplaceKey: releases.marketplaceKey.reveal(), marketplaceHost: releases.marketplaceHost, headerNames: releases.headerNames, ...common },
  );
  // An answer is shared by the lookups of one run; half the schedule's gap keeps one run's answers from the next.
  const lookups = new SharedReleaseLookups(client, clock, (releases.shortestScheduleGapMs ?? FREE_ENDPOINT_CACHE_MS) / 2, (outcome) => metrics.releaseLookups.inc({ outcome }));
  const sink = new LimitedAccountSink(deps.sink, NO_LIMITS, { dropped: () => undefined, firstDrop: () => undefined });
  const runtime = new UnitRuntime({
    unit: { name: RELEASES_UNIT, baseUrl, counterGraceMs: 0, shard },
    sources: enabledSources('releases', releases.sources),
    sourceConfig: releases.sources,
    exporter: deps.exporter,
    upstream: lookups,
    budget,
    sink,
    clock,
    log: log.child({ component: 'releases' }),
    metrics: metrics.scheduler,
    board: deps.board,
    concurrency: 2,
    reportsUp: false,
    reservedFamilyNames: RESERVED_FAMILIES,
    statusFacts: { mode: releases.mode, schedule: releases.schedule },
  });
  return { name: RELEASES_UNIT, section: 'releases', config: releases, budget, transport, runtime, sink };
}

/** Whether the configuration has release lookups to make. */
export function wantsReleasesUnit(releases: ReleasesConfig | undefined): releases is ReleasesConfig {
  return releases !== undefined && Object.values(releases.sources).some((source) => source.enabled);
}
