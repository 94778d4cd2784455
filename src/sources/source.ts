import type { Logger } from 'pino';
import type { Priority } from '../budget/types.js';
import type { SourceConfigSpec } from '../config/source-spec.js';
import type { ExporterConfig } from '../config/types.js';
import type { MetricSink } from '../exposition/model.js';
import type { Clock } from '../lib/clock.js';
import type { Endpoint, MonitoringApi } from '../upstream/monitoring/client.js';
import type { ReleaseLookups } from '../upstream/releases/lookups.js';

/**
 * What a source is. A source is one polled thing of an upstream (the host list, each host's
 * series, each website's checks, the latest release of each project), declared in one folder
 * under src/sources/ and listed once in src/sources/index.ts. Its definition says everything
 * the rest of the exporter needs: its configuration (switch, cadences, own keys; see
 * `SourceConfigSpec`), the families it publishes, its priority, and `create`, which builds
 * the poller that does the requests, maps the answers with the folder's pure functions and
 * publishes them. Sources that need what another learned read it through a `Topic` the
 * other provides, never through a shared object.
 */

/**
 * A typed value one source provides to others: the hosts to poll, the metric names per host,
 * the website summaries. Each unit (an account, the release lookups) has its own value.
 */
export interface Topic<T> {
  readonly name: string;
  /** The source that provides it. */
  readonly provider: string;
  /** What readers get before the provider has provided anything, or while it is off. */
  readonly empty: T;
}

export function topic<T>(provider: string, name: string, empty: T): Topic<T> {
  return { name: `${provider}.${name}`, provider, empty };
}

/** The unit a source polls for: an account, or the release lookups. */
export interface UnitInfo {
  /** The `account` label: the account's name, or `(releases)`. */
  readonly name: string;
  /** The upstream's base URL, without a trailing slash. */
  readonly baseUrl: string;
  /** How long the counters of a target that left are kept, so they continue if it comes back. */
  readonly counterGraceMs: number;
  /** This process's shard: configured release projects are looked up on shard 0 only. */
  readonly shard: { readonly ordinal: number; readonly total: number };
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

export interface SourceContext<Api, Settings> {
  readonly unit: UnitInfo;
  /** Exporter-wide choices: null handling, sample timestamps. */
  readonly exporter: ExporterConfig;
  /** The client of the unit's upstream, behind its request budget. */
  readonly upstream: Api;
  /** This source's own settings, as its spec's `settings` made them. */
  readonly settings: Settings;
  /** One of this source's cadences, by its YAML key. */
  cadenceMs(key: string): number;
  readonly sink: MetricSink;
  readonly clock: Clock;
  readonly log: Logger;
  readonly events: SourceEvents;
  /** Sets a topic this source provides; the per-target jobs of every source follow. */
  provide<T>(topic: Topic<T>, value: T): void;
  /** A topic of this unit, one of the source's `reads`. */
  read<T>(topic: Topic<T>): T;
  /** A topic of every unit, by unit name: one of the source's `readsEveryUnit`. */
  readAll<T>(topic: Topic<T>): ReadonlyMap<string, T>;
  /** Another source's settings in this unit, on or off (the alert rules read the series' metric overrides). */
  settingsOf<S>(source: SourceDefinition<never, S>): S | undefined;
  /** Every fixed family name the sources publish (their `families`), so the series naming can keep agent metrics off them. */
  reservedFamilyNames(): readonly string[];
  /** The account source reports the rate limit upstream states; the budget follows it when lower. */
  upstreamRateLimit?(limit: UpstreamRateLimit): void;
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

/** How often a job runs: every so many milliseconds, or at the fire times of a schedule. */
export interface Cadence {
  /** The interval, or for a schedule its shortest gap: what the plan figures count with. */
  readonly everyMs: number;
  /** When the next run is due after a run that started then; default: that start plus `everyMs`. */
  nextDueMs?(startedMs: number): number;
}

interface PollerCommon {
  /** Absent when the source keeps no state worth restoring. */
  readonly persist?: PersistentState;
  /** What `/status` shows of it beyond its health, or nothing. */
  status?(): Record<string, unknown> | undefined;
}

/** Polls one thing for the whole unit (the host list, the account, recent alerts). */
export interface UnitPoller extends PollerCommon {
  readonly scope: 'unit';
  cadence(): Cadence;
  poll(signal: AbortSignal): Promise<void>;
}

/** Polls one thing per target (a host, a website, a project); holds per-target state. */
export interface TargetPoller<Target> extends PollerCommon {
  readonly scope: 'target';
  /** The targets now, by key; read again whenever a topic changes. */
  targets(): ReadonlyMap<string, Target>;
  cadence(target: Target): Cadence;
  requestsPerRun(target: Target): number;
  /** False while the target cannot be polled yet (a host whose metric names are unknown). */
  ready?(target: Target): boolean;
  /** The signal aborts when the target leaves: publish nothing then. */
  poll(target: Target, signal: AbortSignal): Promise<void>;
  /** The target is gone (or filtered out): drop its state and retract its series. */
  forget(key: string): void;
}

export type Poller = UnitPoller | TargetPoller<unknown>;

/** The client a source of each configuration section polls with. */
export interface Upstreams {
  readonly account: MonitoringApi;
  readonly releases: ReleaseLookups;
}

export interface SourceDefinition<Api, Settings> extends SourceConfigSpec<Settings> {
  /** The endpoints it requests, each with its route and decoder (the release sources ask through the release client). */
  readonly endpoints?: readonly Endpoint<unknown>[];
  readonly priority: Priority;
  /** The fixed family names it publishes (agent series names are not fixed). */
  readonly families: readonly string[];
  /** The topics it reads (its targets, what they wait for, what completes its answers); a change of one makes the unit's jobs follow. */
  readonly reads?: readonly Topic<unknown>[];
  /** Topics it reads from every unit with `readAll` (the outdated check reads every account's components). */
  readonly readsEveryUnit?: readonly Topic<unknown>[];
  /**
   * Whether the unit waits for its jobs' first runs before it is ready (default true). A source
   * whose targets keep appearing as other units poll (the outdated check's version lines)
   * would hold readiness back for as long as they do.
   */
  readonly holdsReadiness?: boolean;
  /** Builds the poller of one unit. */
  create(ctx: SourceContext<Api, Settings>): Poller;
}

/** A source of each account, polling the Monitoring API. */
export type MonitoringSource<Settings = unknown> = SourceDefinition<MonitoringApi, Settings> & { readonly section: 'account' };
/** A source of the `releases` section, polling the Release Lookup API. */
export type ReleaseSource<Settings = unknown> = SourceDefinition<ReleaseLookups, Settings> & { readonly section: 'releases' };
export type AnySource = MonitoringSource<unknown> | ReleaseSource<unknown>;

/** The names of a map module's family specs, for a source's `families`. */
export function familyNames(specs: Readonly<Record<string, { readonly name: string }>>): string[] {
  return Object.values(specs).map((spec) => spec.name);
}

/** Sink group of a source's series for the whole unit, or for one target of it. */
export function groupName(source: string, unit: string, target?: string | number): string {
  return target === undefined ? `${source}/${unit}` : `${source}/${unit}/${String(target)}`;
}

/** A cadence of a fixed interval. */
export function every(ms: number): Cadence {
  return { everyMs: ms };
}
