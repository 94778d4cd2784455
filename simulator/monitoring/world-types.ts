import type {
  SimAccountBody as Account,
  SimAlertEvent as AlertEvent,
  SimAlertRule as AlertRule,
  SimComponent as Component,
  SimHost as Host,
  SimWebsite as Website,
  SimWebsiteCheck as WebsiteCheck,
  SimWebsiteSummary as WebsiteSummary,
} from './schemas.js';
import type { DeltaTruth, LateDataSettings, TruthQuery } from './late-data.js';
import type { ComponentRecord } from './world/components.js';

/**
 * The contract between the simulated data (world.ts: what exists and what values it has,
 * computed on demand from a seed and a time) and the simulated HTTP API (server.ts: auth,
 * rate limits, parameters, errors, faults). Everything here is deterministic for a given
 * seed and time; nothing stores per-point data.
 */

export type PlanName = 'starter' | 'pro' | 'business';

export interface WorldOptions {
  seed: string;
  /** Hosts per account (the Business account gets the same number). */
  hosts: number;
  /** Websites per account. */
  websites: number;
  /** Late arrivals and permanent gaps on top of the ordinary ingest delay; off when absent. */
  lateData?: LateDataSettings;
}

export interface SimAccount {
  readonly id: string;
  readonly key: string;
  readonly plan: PlanName;
  readonly retentionDays: number;
  readonly hostLimit: number;

  account(nowMs: number): Account;
  /** Every host of the account in list order, `allowed: false` ones included. */
  hosts(nowMs: number): Host[];
  host(uuid: string, nowMs: number): Host | undefined;
  /** Metric names grouped by component; undefined for an unknown host. Empty for `allowed: false`. */
  metricCatalogue(uuid: string): Record<string, string[]> | undefined;
  /**
   * The value of one metric for the sampling bucket [bucketStartMs, bucketStartMs + intervalS)
   * as the API would report it at `nowMs`: null where data is missing (agent offline, not yet
   * ingested, gaps). Gauges are the bucket mean, counters the sum of per-minute deltas.
   */
  pointValue(uuid: string, name: string, bucketStartMs: number, intervalS: number, nowMs: number): number | null;
  /**
   * What the agent eventually reports for a delta metric over [fromMs, toMs): the sum of the
   * minutes that arrive, and when the last of them does. @throws Error for an unknown host,
   * a name the host does not list, or a gauge
   */
  deltaTruth(query: TruthQuery): DeltaTruth;
  /** Newest non-null one-minute point at `nowMs`, or nulls when none exists within retention. */
  latest(uuid: string, name: string, nowMs: number): { timestampMs: number | null; value: number | null };
  /** Standard component bodies; undefined for an unknown host. */
  components(uuid: string): Component[] | undefined;
  /** What the agent reports about each component (the alternative shape is built from these). */
  componentRecords(uuid: string): readonly ComponentRecord[] | undefined;
  alertRules(): AlertRule[];
  /** Events that occurred at or before `nowMs`, newest first. */
  recentAlerts(nowMs: number, limit: number): AlertEvent[];
  websites(nowMs: number): Website[];
  websiteSummary(id: number, nowMs: number): WebsiteSummary | undefined;
  hasWebsite(id: number): boolean;
  /** Checks of one website with checked_at in [fromMs, toMs], oldest first. */
  checks(id: number, fromMs: number, toMs: number): WebsiteCheck[];
  /** Count of checks in [fromMs, toMs] without building them. */
  checkCount(id: number, fromMs: number, toMs: number): number;
  /** Check interval of one website in ms (for "newest 100" queries). */
  checkIntervalMs(id: number): number;

  /** Fault control: add `n` new hosts, or remove the last `n`, from now on. */
  addHosts(n: number, nowMs: number): void;
  removeHosts(n: number, nowMs: number): void;
}

export interface MonitoringWorld {
  readonly options: WorldOptions;
  accounts(): SimAccount[];
  accountByKey(key: string): SimAccount | undefined;
}

/** Keys, documented in docs/simulator.md ("Keys"). */
export const SIM_KEYS = {
  pro: 'sim-pro-key',
  business: 'sim-business-key',
  starter: 'sim-starter-key',
  marketplace: 'sim-marketplace-key',
  /** Known to the marketplace, without a subscription to the Release Lookup API: 403. */
  marketplaceUnsubscribed: 'sim-marketplace-unsubscribed-key',
} as const;
