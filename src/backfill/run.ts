import type { Logger } from 'pino';
import { createRequestBudget, type RequestBudget } from '../budget/index.js';
import type { AccountConfig, Config } from '../config/types.js';
import type { Clock } from '../lib/clock.js';
import { ACCOUNT_ENDPOINT } from '../sources/account/index.js';
import { HOSTS_ENDPOINT } from '../sources/hosts/index.js';
import { createHostFilter, inventoryHost } from '../sources/hosts/map.js';
import type { HostSettings } from '../sources/hosts/settings.js';
import { SOURCES } from '../sources/index.js';
import { METRIC_CATALOGUE_ENDPOINT } from '../sources/metric-catalogue/index.js';
import { fetchSeries } from '../sources/series/fetch.js';
import { seriesNaming } from '../sources/series/index.js';
import { EMPTY_SERIES_STATE, HostLabels, selectMetricNames, type SeriesHostState } from '../sources/series/map.js';
import type { SeriesSettings } from '../sources/series/settings.js';
import { UndiciTransport, type ProxySettings } from '../upstream/http/transport.js';
import { MonitoringClient } from '../upstream/monitoring/client.js';
import { counterEnds, type LiveStart } from './join.js';
import type { Progress } from './progress.js';
import { HistoryBuffer, replayHistory, type HistorySeries } from './replay.js';
import { assembleHistory, historyWindows, type HistoryStep } from './timeline.js';
import type { HistoryWriter } from './writers.js';

/**
 * The backfill of every account of a configuration: per host, its history window by window
 * (timeline.ts), through the live mapping (replay.ts), into a writer, a chunk at a time, the
 * progress file updated after each chunk the writer has kept. Its requests go through a
 * request budget of their own sized to what the live exporter leaves of the key (by default
 * the account's `headroom`), at bulk priority: the live exporter's freshness is not what pays.
 */

const DAY_MS = 86_400_000;
const RESERVED_FAMILIES = SOURCES.flatMap((source) => source.families);

export interface BackfillOptions {
  readonly config: Config;
  readonly writer: HistoryWriter;
  readonly progress: Progress;
  readonly clock: Clock;
  readonly log: Logger;
  readonly proxy: ProxySettings;
  /** How far back; default: the plan's retention from `/account`. */
  readonly sinceMs?: number | undefined;
  /** Requests per minute per account; default: the account's rate limit times its headroom (at least 1). */
  readonly requestsPerMinute?: number | undefined;
  /**
   * Where a host's history must end: where the live exporter began counting it (its
   * counters, each), when known; otherwise the progress file's end of history.
   */
  readonly boundaryOf?: ((account: string, uuid: string) => Promise<LiveStart | undefined>) | undefined;
  /** A chunk is written once it holds this many samples. */
  readonly chunkSamples?: number | undefined;
  /** Labels added to every series, such as the `job` and `instance` a scraping Prometheus gives the live ones. */
  readonly labels?: Readonly<Record<string, string>> | undefined;
  /** Stops after the chunk being written. */
  readonly signal?: AbortSignal | undefined;
}

export interface AccountReport {
  readonly account: string;
  hosts: number;
  hostsDone: number;
  hostsFailed: number;
  requests: number;
  samples: number;
  readonly errors: string[];
}

export interface BackfillReport {
  readonly accounts: AccountReport[];
  readonly startedAtMs: number;
  finishedAtMs: number;
  /** Every host of every account is done and the output is complete. */
  complete: boolean;
  /**
   * What an earlier run left, when the progress file says it made the output complete:
   * `complete`, the output is there and this run left it as it was; `output-gone`, it is not.
   */
  earlierRun: 'complete' | 'output-gone' | undefined;
}

export async function runBackfill(options: BackfillOptions): Promise<BackfillReport> {
  const report: BackfillReport = { accounts: [], startedAtMs: options.clock.now(), finishedAtMs: 0, complete: false, earlierRun: undefined };
  const completedAtMs = options.progress.completedAtMs;
  if (completedAtMs !== undefined) {
    const missing = options.writer.missingOutput();
    if (missing === undefined) {
      // Parts a run stopped while removing them are of no use any more.
      await options.writer.discardParts();
      options.log.info({ target: options.writer.target, completedAt: new Date(completedAtMs).toISOString() }, 'backfill: already complete: the output holds the whole history; nothing to do');
    } else {
      options.log.error(
        { target: options.writer.target, completedAt: new Date(completedAtMs).toISOString() },
        `backfill: an earlier run completed this backfill, but ${missing}; remove the progress file to backfill afresh`,
      );
    }
    report.complete = missing === undefined;
    report.earlierRun = missing === undefined ? 'complete' : 'output-gone';
    report.finishedAtMs = options.clock.now();
    return report;
  }
  for (const account of options.config.accounts) {
    if (options.signal?.aborted) break;
    report.accounts.push(await backfillAccount(account, options));
  }
  // An account that failed before its hosts were listed has none done of none: not done.
  const allDone = !options.signal?.aborted && report.accounts.every((a) => a.hostsDone === a.hosts && a.errors.length === 0);
  if (allDone) {
    // In this order, so that a stop at any point leaves the parts to make the output from, or a complete output.
    await options.writer.finish();
    await options.progress.complete(options.clock.now());
    await options.writer.discardParts();
  }
  report.complete = allDone;
  report.finishedAtMs = options.clock.now();
  return report;
}

/** A key's rate limit, as `/account` states it (either figure may be missing). */
export interface StatedRateLimit {
  readonly requestsPerMinute?: number | undefined;
  readonly burst?: number | undefined;
}

export interface BackfillRate {
  readonly ratePerMinute: number;
  readonly burst: number;
  /** The key's limit: the configuration's `rate_limit`, or a lower one `/account` states (as the live exporter's budget follows it); `from` names where the rate's came from. */
  readonly limit: { readonly requestsPerMinute: number; readonly burst: number; readonly from: 'configuration' | '/account' };
  /** The `--requests-per-minute` asked for, when it was above the limit and held to it. */
  readonly clampedFrom: number | undefined;
}

/**
 * The budget of the backfill for one account: by default what the live exporter leaves of the
 * key (its limit times the account's `headroom`), or the rate asked for, never above the limit:
 * more would only draw 429s.
 */
export function backfillRate(account: AccountConfig, requestsPerMinute: number | undefined, stated: StatedRateLimit = {}): BackfillRate {
  const configured = account.rateLimit;
  const statedLower = stated.requestsPerMinute !== undefined && stated.requestsPerMinute < configured.requestsPerMinute;
  const limit = {
    requestsPerMinute: Math.min(configured.requestsPerMinute, stated.requestsPerMinute ?? Infinity),
    burst: Math.max(1, Math.min(configured.burst, Math.floor(stated.burst ?? Infinity))),
    from: statedLower ? ('/account' as const) : ('configuration' as const),
  };
  const ratePerMinute = Math.max(1, Math.min(requestsPerMinute ?? Math.floor(limit.requestsPerMinute * account.headroom), limit.requestsPerMinute));
  const burst = Math.max(1, Math.min(limit.burst, Math.floor(limit.burst * (ratePerMinute / limit.requestsPerMinute))));
  const clampedFrom = requestsPerMinute !== undefined && requestsPerMinute > limit.requestsPerMinute ? requestsPerMinute : undefined;
  return { ratePerMinute, burst, limit, clampedFrom };
}

interface AccountContext {
  readonly account: AccountConfig;
  readonly client: MonitoringClient;
  readonly settings: SeriesSettings;
  readonly naming: ReturnType<typeof seriesNaming>;
  readonly spanMs: number;
  readonly report: AccountReport;
  readonly log: Logger;
}

async function backfillAccount(account: AccountConfig, options: BackfillOptions): Promise<AccountReport> {
  const report: AccountReport = { account: account.name, hosts: 0, hostsDone: 0, hostsFailed: 0, requests: 0, samples: 0, errors: [] };
  const log = options.log.child({ account: account.name });
  const series = account.sources.series;
  if (series?.enabled !== true) {
    log.warn('the series source is off for this account: nothing to backfill');
    return report;
  }
  const budgetOf = (rate: BackfillRate, initialTokens: number): RequestBudget =>
    createRequestBudget({ name: account.name, ratePerMinute: rate.ratePerMinute, burst: rate.burst, headroom: 0, concurrency: 1, initialTokens, clock: options.clock });
  const configured = backfillRate(account, options.requestsPerMinute);
  let budget = budgetOf(configured, configured.burst);
  const transport = new UndiciTransport(
    { headersTimeoutMs: account.http?.timeoutMs, bodyTimeoutMs: account.http?.timeoutMs, deadlineMs: account.http?.deadlineMs, maxResponseBytes: account.http?.maxResponseBytes },
    { ca: account.http?.ca, insecureSkipVerify: account.http?.insecureSkipVerify },
    options.proxy,
  );
  const gate = {
    run<T>(priority: 'high' | 'normal' | 'bulk', endpoint: string, attempt: (signal: AbortSignal) => Promise<T>): Promise<T> {
      return budget.run(priority, endpoint, (signal) => {
        report.requests += 1;
        return attempt(signal);
      });
    },
  };
  const client = new MonitoringClient({ baseUrl: account.baseUrl, apiKey: account.apiKey.reveal(), authScheme: account.authScheme, transport, gate, account: account.name, clock: options.clock });
  try {
    const facts = await accountFacts(client, options.sinceMs === undefined, log);
    const rate = backfillRate(account, options.requestsPerMinute, facts.rateLimit);
    if (rate.ratePerMinute !== configured.ratePerMinute || rate.burst !== configured.burst) {
      // The key allows less than configured: a budget of its size, less what /account took of its burst.
      budget.close();
      budget = budgetOf(rate, Math.max(0, rate.burst - report.requests));
    }
    if (rate.clampedFrom !== undefined) {
      log.warn(
        { requested: rate.clampedFrom, limitPerMinute: rate.limit.requestsPerMinute, limitFrom: rate.limit.from },
        `backfill: --requests-per-minute=${rate.clampedFrom} is above the account's rate limit (${rate.limit.requestsPerMinute} a minute, from ${rate.limit.from === 'configuration' ? 'rate_limit in the configuration' : '/account'}): the backfill sends at most ${rate.ratePerMinute} a minute, since more would only draw 429s`,
      );
    }
    log.info({ requestsPerMinute: rate.ratePerMinute }, 'backfill: starting');
    const spanMs = options.sinceMs ?? facts.retentionMs;
    if (spanMs === undefined) throw new Error('/account does not state the plan\'s retention: give --since (such as 30d)');
    const settings = series.settings as SeriesSettings;
    const context: AccountContext = { account, client, settings, naming: seriesNaming(settings, RESERVED_FAMILIES), spanMs, report, log };
    const hosts = await hostsToBackfill(client, account);
    report.hosts = hosts.length;
    for (const uuid of hosts) {
      if (options.signal?.aborted) break;
      try {
        if (await backfillHost(context, uuid, options)) report.hostsDone += 1;
      } catch (error) {
        if (error instanceof Error && error.name === 'HistoryRefusedError') throw error;
        report.hostsFailed += 1;
        const message = error instanceof Error ? error.message : String(error);
        report.errors.push(`host ${uuid}: ${message}`);
        log.error({ host_uuid: uuid, err: message }, 'backfill: host failed; run the backfill again to retry it');
      }
    }
  } catch (error) {
    if (error instanceof Error && error.name === 'HistoryRefusedError') throw error;
    const message = error instanceof Error ? error.message : String(error);
    report.errors.push(message);
    log.error({ err: message }, 'backfill: account failed');
  } finally {
    budget.close();
    await transport.close();
  }
  return report;
}

/**
 * What `/account` says that the backfill needs: the plan's retention (the default history) and
 * the key's rate limit. With `--since` given only the limit is wanted, and an `/account` that
 * fails leaves the configuration's.
 */
async function accountFacts(client: MonitoringClient, retentionNeeded: boolean, log: Logger): Promise<{ retentionMs: number | undefined; rateLimit: StatedRateLimit }> {
  try {
    const { value } = await client.get(ACCOUNT_ENDPOINT, {}, {}, 'bulk');
    const days = value.limits.retention_days;
    return { retentionMs: days === undefined ? undefined : days * DAY_MS, rateLimit: { requestsPerMinute: value.rate_limit.requests_per_minute, burst: value.rate_limit.burst } };
  } catch (error) {
    if (retentionNeeded) throw error;
    log.warn({ err: error instanceof Error ? error.message : String(error) }, 'backfill: /account did not answer: the rate limit in the configuration holds');
    return { retentionMs: undefined, rateLimit: {} };
  }
}

/** The hosts the live exporter polls: within the plan's host limit and the host filters. */
async function hostsToBackfill(client: MonitoringClient, account: AccountConfig): Promise<string[]> {
  const { value } = await client.get(HOSTS_ENDPOINT, {}, {}, 'bulk');
  const settings = account.sources.hosts?.settings as HostSettings | undefined;
  const selected = settings === undefined ? () => true : createHostFilter(settings.filters);
  return value.hosts
    .filter((host) => host.allowed !== false && selected(inventoryHost(host)))
    .map((host) => host.uuid)
    .sort();
}

/** Writes one host's history; true once it is all written, false when stopped before. */
async function backfillHost(context: AccountContext, uuid: string, options: BackfillOptions): Promise<boolean> {
  const { account, client, settings, naming, report } = context;
  const saved = options.progress.host(account.name, uuid);
  if (saved?.done) return true;
  const { value: catalogue } = await client.get(METRIC_CATALOGUE_ENDPOINT, { uuid }, {}, 'bulk');
  const names = naming.fetchable(selectMetricNames(catalogue.metrics, settings.metrics));
  const now = options.clock.now();
  const live = await options.boundaryOf?.(account.name, uuid);
  if (options.boundaryOf !== undefined && live === undefined && saved === undefined) {
    context.log.warn({ host_uuid: uuid, untilMs: options.progress.untilMs }, 'backfill: the live exporter has not counted this host (not in its state file): its history ends at the default end, the join with live data is not exact');
  }
  const untilMs = Math.min(saved?.untilMs ?? live?.untilMs ?? options.progress.untilMs, now - settings.ingestDelayMs);
  const fromMs = saved?.coveredUntilMs ?? -Infinity;
  let state: SeriesHostState = saved?.state ?? EMPTY_SERIES_STATE;
  if (names.length === 0 || fromMs >= untilMs) {
    await options.progress.record(account.name, uuid, { coveredUntilMs: Math.max(fromMs, untilMs), untilMs, done: true, state }, await options.writer.commit());
    return true;
  }
  const windows = historyWindows(context.spanMs, now - untilMs, Number.isFinite(fromMs) ? now - fromMs : context.spanMs);
  const answers = [];
  for (const window of windows) answers.push((await fetchSeries(client, uuid, names, window.since, 'bulk')).value);
  const steps = assembleHistory(answers, fromMs, untilMs);
  const lastEndMs = steps.length === 0 ? undefined : (steps.at(-1) as HistoryStep).t + (steps.at(-1) as HistoryStep).intervalMs;
  if (live !== undefined && lastEndMs !== undefined && lastEndMs < untilMs) {
    context.log.warn(
      { host_uuid: uuid, minutes: (untilMs - lastEndMs) / 60_000 },
      'backfill: the history next to the live start comes in buckets coarser than a minute that do not end there: the minutes between are left out (never counted twice); run the backfill within 4 hours of the exporter\'s start for a join exact to the minute',
    );
  }

  const labels = new HostLabels(account.name, uuid);
  const replay = {
    account: account.name,
    hostUuid: uuid,
    labels,
    naming,
    ingestDelayMs: settings.ingestDelayMs,
    lateDataHorizonMs: settings.lateDataHorizonMs,
    nullHandling: options.config.exporter.nullHandling,
    counterEnds: live === undefined ? undefined : counterEnds(live, naming, labels),
    liveSampleTimestamps: options.config.exporter.sampleTimestamps,
  };
  const buffer = new HistoryBuffer();
  const chunkSamples = options.chunkSamples ?? 100_000;
  let covered = fromMs;
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i] as HistoryStep;
    state = replayHistory([step], state, replay, buffer);
    covered = step.t + step.intervalMs;
    const last = i === steps.length - 1;
    if (buffer.samples < chunkSamples && !last) continue;
    report.samples += buffer.samples;
    await options.writer.write(withLabels(buffer.take(), options.labels));
    const parts = await options.writer.commit();
    await options.progress.record(account.name, uuid, { coveredUntilMs: covered, untilMs, done: last, state }, parts);
    if (options.signal?.aborted && !last) return false;
  }
  if (steps.length === 0) await options.progress.record(account.name, uuid, { coveredUntilMs: untilMs, untilMs, done: true, state }, await options.writer.commit());
  return true;
}

function withLabels(series: HistorySeries[], labels: Readonly<Record<string, string>> | undefined): HistorySeries[] {
  if (labels === undefined || Object.keys(labels).length === 0) return series;
  return series.map((s) => ({ ...s, labels: { ...s.labels, ...labels } }));
}
