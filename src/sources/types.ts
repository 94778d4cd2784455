import type { Logger } from 'pino';
import type { Priority } from '../budget/types.js';
import type { AccountConfig, CadenceName, ExporterConfig, SourceName } from '../config/types.js';
import type { MetricSink } from '../exposition/model.js';
import type { Clock } from '../lib/clock.js';
import type { MonitoringClient } from '../upstream/monitoring/client.js';
import type { Host, Website } from '../upstream/monitoring/schemas.js';

/**
 * What the account's list sources have learned and the per-target sources fan out over.
 * Filters are applied here, before any per-host or per-website request is planned.
 */
export interface Inventory {
  /** Hosts selected by the filters with `allowed: true`: per-host jobs exist for these. */
  readonly hosts: Map<string, Host>;
  /** Websites selected by the filters: per-website jobs exist for these. */
  readonly websites: Map<number, Website>;
  /** Metric names to fetch per host, after the metric filters (from the host's catalogue). */
  readonly metricNames: Map<string, readonly string[]>;
}

/** Counts that sources report and the exporter exposes as self-metrics. */
export interface SourceEvents {
  /** Two metric names that sanitise to one family: reported once per host and family. */
  nameCollision(hostUuid: string, familyKey: string, kept: string | undefined, dropped: readonly string[]): void;
}

export interface SourceContext {
  readonly account: AccountConfig;
  /** Exporter-wide choices: null handling, sample timestamps. */
  readonly exporter: ExporterConfig;
  readonly client: MonitoringClient;
  readonly sink: MetricSink;
  readonly inventory: Inventory;
  readonly clock: Clock;
  readonly log: Logger;
  readonly events: SourceEvents;
  /** A list source calls this after it changed the inventory, so per-target jobs follow. */
  inventoryChanged(): void;
  /**
   * Every fixed family name the account's sources publish (their `families`), so the series
   * naming can keep agent metrics off them. Read it after construction: it is complete then.
   */
  reservedFamilyNames(): readonly string[];
}

interface SourceCommon {
  /** Also the `source` label of the job self-metrics and the prefix of its sink groups. */
  readonly name: string;
  /** The `sources` toggle in the account's configuration that turns this source on or off. */
  readonly toggle: SourceName;
  readonly priority: Priority;
  /** The fixed family names this source publishes (agent series names are not fixed). */
  readonly families: readonly string[];
}

/** Polls one thing for the whole account (the host list, the account, recent alerts). */
export interface AccountSource extends SourceCommon {
  readonly scope: 'account';
  readonly cadence: CadenceName;
  poll(signal: AbortSignal): Promise<void>;
}

/** Polls one thing per host or per website; holds per-target state. */
export interface TargetSource<Target> extends SourceCommon {
  readonly scope: 'host' | 'website';
  cadenceMs(target: Target): number;
  requestsPerRun(target: Target): number;
  /** False while the target cannot be polled yet (a host whose metric names are unknown). */
  ready?(target: Target): boolean;
  poll(target: Target, signal: AbortSignal): Promise<void>;
  /** The target is gone (or filtered out): drop its state and retract its series. */
  forget(key: string): void;
}

export type HostSource = TargetSource<Host> & { readonly scope: 'host' };
export type WebsiteSource = TargetSource<Website> & { readonly scope: 'website' };

export type MonitoringSource = AccountSource | HostSource | WebsiteSource;

/** Each source module exports one of these; src/sources/index.ts lists them. */
export type MonitoringSourceFactory = (ctx: SourceContext) => MonitoringSource;

/** The names of a map module's family specs, for a source's `families`. */
export function familyNames(specs: Readonly<Record<string, { readonly name: string }>>): string[] {
  return Object.values(specs).map((spec) => spec.name);
}

/** Sink group of a source's series for the whole account, or for one target of it. */
export function groupName(source: string, account: string, target?: string | number): string {
  return target === undefined ? `${source}/${account}` : `${source}/${account}/${String(target)}`;
}
