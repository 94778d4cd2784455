import type { Logger } from 'pino';
import type { Priority } from '../budget/types.js';
import type { AccountConfig, CadenceName, ExporterConfig, SourceName } from '../config/types.js';
import type { MetricSink } from '../exposition/model.js';
import type { Clock } from '../lib/clock.js';
import type { MonitoringClient } from '../upstream/monitoring/client.js';
import type { Host, HostDetailField } from '../upstream/monitoring/resources/hosts.js';
import type { Website, WebsiteSummary } from '../upstream/monitoring/resources/websites.js';
import type { InstalledVersionsFeed } from './outdated/tracker.js';

/**
 * A host as the per-host sources see it: the `/hosts` item completed from `/hosts/{uuid}`
 * where the list lacks fields, with what the polling needs resolved (see
 * sources/hosts/map.ts `resolveHost`).
 */
export interface InventoryHost extends Host {
  readonly hostname: string;
  /** Upstream's `online`, else derived from `last_seen` (the document's 3 minutes), else true. */
  readonly online: boolean;
  readonly tags: readonly string[];
}

/** What a per-target detail source learned, for the list and check sources to publish with their own. */
export interface TargetDetails {
  /** Listed hosts whose `/hosts` item lacks fields `/hosts/{uuid}` may have: the host_details source's targets. */
  readonly hostsLacking: Map<string, { readonly host: Host; readonly missing: readonly HostDetailField[] }>;
  /** `/hosts/{uuid}` answers, by uuid. */
  readonly hosts: Map<string, Host>;
  /** `/websites/{id}` answers, by website id. */
  readonly websites: Map<number, WebsiteSummary>;
}

/**
 * What the account's list sources have learned and the per-target sources fan out over.
 * Filters are applied here, before any per-host or per-website request is planned.
 */
export interface Inventory {
  /** Hosts selected by the filters and not refused by the plan: per-host jobs exist for these. */
  readonly hosts: Map<string, InventoryHost>;
  /** Websites selected by the filters: per-website jobs exist for these. */
  readonly websites: Map<number, Website>;
  /** Metric names to fetch per host, after the metric filters (from the host's catalogue). */
  readonly metricNames: Map<string, readonly string[]>;
  /** Created by the first source that needs it: use `detailsOf(inventory)`. */
  details?: TargetDetails;
}

/** The inventory's target details, created on first use. */
export function detailsOf(inventory: Inventory): TargetDetails {
  inventory.details ??= { hostsLacking: new Map(), hosts: new Map(), websites: new Map() };
  return inventory.details;
}

/** A request rate the upstream says it allows this key (from `/account`). */
export interface UpstreamRateLimit {
  readonly requestsPerMinute: number | undefined;
  readonly burst: number | undefined;
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
  /**
   * The account source reports the rate limit upstream states; the runtime lowers the
   * request budget to it when it is below the configured one. Absent in tests without a budget.
   */
  upstreamRateLimit?(limit: UpstreamRateLimit): void;
  /** The outdated check, told what is installed; absent when it is off (no `releases` section). */
  readonly versions?: InstalledVersionsFeed;
}

/**
 * State a source keeps across a restart (with --state.file) and a reload: cursors and
 * counter totals, as plain JSON. Without it a restarted source starts its counters at 0 and
 * skips what happened while the exporter was down.
 */
export interface PersistentState {
  /** The state now, as plain JSON. */
  save(): unknown;
  /** Takes back what `save` returned, possibly in an earlier process. Throws on anything unreadable. */
  restore(data: unknown): void;
}

interface SourceCommon {
  /** Also the `source` label of the job self-metrics and the prefix of its sink groups. */
  readonly name: string;
  /** The `sources` toggle in the account's configuration that turns this source on or off. */
  readonly toggle: SourceName;
  readonly priority: Priority;
  /** The fixed family names this source publishes (agent series names are not fixed). */
  readonly families: readonly string[];
  /** Absent when the source keeps no state worth restoring. */
  readonly persist?: PersistentState;
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
  /**
   * The targets, by key, when they are not the inventory's selected hosts or websites
   * (host_details polls listed hosts whose list item lacks fields, selected or not yet).
   */
  targets?(): ReadonlyMap<string, Target>;
  cadenceMs(target: Target): number;
  requestsPerRun(target: Target): number;
  /** False while the target cannot be polled yet (a host whose metric names are unknown). */
  ready?(target: Target): boolean;
  poll(target: Target, signal: AbortSignal): Promise<void>;
  /** The target is gone (or filtered out): drop its state and retract its series. */
  forget(key: string): void;
}

export type HostSource = TargetSource<InventoryHost> & { readonly scope: 'host' };
/** A per-host source whose targets are plain listed hosts (see `targets`). */
export type ListedHostSource = TargetSource<Host> & { readonly scope: 'host'; targets(): ReadonlyMap<string, Host> };
export type WebsiteSource = TargetSource<Website> & { readonly scope: 'website' };

export type MonitoringSource = AccountSource | HostSource | ListedHostSource | WebsiteSource;

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
