/**
 * The JSON of `/status` read back for the pages people look at (`/status` as HTML and `/`).
 * Both are drawn from the very value the JSON is made of, so the three never disagree; it is
 * read defensively (a field of another type, or absent, is left out) because the provider
 * only promises JSON, and anything in it may have come from an upstream.
 */

import type { BudgetTotals } from '../budget/snapshot.js';

type Json = Readonly<Record<string, unknown>>;

const record = (v: unknown): Json => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const array = (v: unknown): readonly unknown[] => (Array.isArray(v) ? v : []);
const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const number = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const flag = (v: unknown): boolean | undefined => (typeof v === 'boolean' ? v : undefined);
const sum = (v: unknown): number => Object.values(record(v)).reduce<number>((total, n) => total + (number(n) ?? 0), 0);

export interface ListView {
  readonly path: string | undefined;
  readonly how: string | undefined;
  readonly lists: number;
  readonly pages: number;
  readonly via: string | undefined;
  readonly incomplete: number;
  readonly example: { readonly target: string | undefined; readonly read: number | undefined; readonly announced: number | undefined; readonly reason: string } | undefined;
}

export interface SourceView {
  readonly source: string;
  readonly up: boolean;
  /** '' when up; `pending` before its first run. */
  readonly reason: string;
  readonly targets: number;
  readonly failingTargets: number;
  readonly lastError: { readonly target: string | undefined; readonly atMs: number | undefined; readonly message: string } | undefined;
  /** Age of the source's oldest data, from `staleness_seconds`. */
  readonly ageSeconds: number | undefined;
  readonly cadenceSeconds: number | undefined;
  readonly configuredCadenceSeconds: number | undefined;
  readonly missingFields: readonly string[];
  readonly foundFields: readonly { readonly field: string; readonly path: string; readonly unit: string | undefined; readonly configured: boolean }[];
  readonly list: ListView | undefined;
}

/** The budget's totals as /status gives them (retries summed over their reasons), and its state. */
export type BudgetView = Omit<BudgetTotals, 'retries'> & {
  readonly ratePerSecond: number | undefined;
  readonly configuredRatePerSecond: number | undefined;
  readonly burst: number | undefined;
  readonly retries: number;
  readonly pausedUntilMs: number | undefined;
  readonly authFailed: { readonly kind: string; readonly retryAtMs: number | undefined } | undefined;
  readonly inFlight: number;
  readonly queued: number;
};

export interface PlanView {
  readonly requestsPerCycle: number | undefined;
  readonly demandPerSecond: number | undefined;
  readonly supplyPerSecond: number | undefined;
  readonly pressure: number | undefined;
  readonly fullCycleSeconds: number | undefined;
}

export interface ErrorView {
  readonly source: string;
  readonly target: string | undefined;
  readonly atMs: number | undefined;
  readonly kind: string;
  readonly message: string;
}

export interface SubscriptionView {
  readonly plan: string | undefined;
  readonly hostLimit: number | undefined;
  readonly websiteLimit: number | undefined;
  readonly hostsUsed: number | undefined;
  readonly websitesUsed: number | undefined;
}

/** One account, or the release lookups. */
export interface UnitView {
  readonly name: string;
  /** Accounts only: whether the key works. */
  readonly up: boolean | undefined;
  readonly reason: string | undefined;
  readonly upgradeUrl: string | undefined;
  readonly subscription: SubscriptionView | undefined;
  readonly hostsPolled: number | undefined;
  readonly websitesPolled: number | undefined;
  readonly series: number | undefined;
  readonly sources: readonly SourceView[];
  readonly budget: BudgetView | undefined;
  readonly plan: PlanView | undefined;
  readonly lagSeconds: number | undefined;
  readonly errors: readonly ErrorView[];
}

export interface ProjectView {
  readonly project: string;
  readonly major: string | undefined;
  readonly version: string | undefined;
  readonly lastSuccessMs: number | undefined;
  readonly freshness: string | undefined;
  readonly lastError: { readonly atMs: number | undefined; readonly message: string } | undefined;
}

export interface OutdatedView {
  readonly lines: readonly {
    readonly project: string;
    readonly line: string;
    readonly software: readonly string[];
    readonly installs: number | undefined;
    readonly latest: string | undefined;
    readonly error: string | undefined;
  }[];
  readonly checks: readonly { readonly account: string; readonly counts: Readonly<Record<string, number>> }[];
  readonly unknownVersions: readonly { readonly account: string; readonly host: string; readonly component: string; readonly software: string; readonly version: string }[];
}

export interface ReleasesView extends UnitView {
  readonly mode: string | undefined;
  readonly schedule: string | undefined;
  readonly projects: readonly ProjectView[];
  readonly outdated: OutdatedView | undefined;
}

export interface StatusView {
  readonly version: string | undefined;
  readonly ready: boolean | undefined;
  readonly accounts: readonly UnitView[];
  readonly releases: ReleasesView | undefined;
  readonly shard: { readonly ordinal: number; readonly total: number; readonly accountsElsewhere: number; readonly releasesHere: boolean } | undefined;
  readonly config: { readonly ok: boolean; readonly atMs: number | undefined; readonly error: string | undefined } | undefined;
  readonly exposition: { readonly generation: number | undefined; readonly series: number | undefined; readonly families: number | undefined } | undefined;
}

export function readStatus(value: unknown): StatusView {
  const json = record(value);
  const shard = record(json.shard);
  const config = record(json.config);
  const exposition = record(json.exposition);
  const reloadOk = flag(config.last_reload_successful);
  const atText = text(config.last_reload_at);
  const atMs = atText === undefined ? undefined : Date.parse(atText);
  return {
    version: text(json.version),
    ready: flag(json.ready),
    accounts: array(json.accounts).map((a) => readUnit(record(a))),
    releases: json.releases === undefined ? undefined : readReleases(record(json.releases)),
    shard:
      number(shard.total) === undefined
        ? undefined
        : { ordinal: number(shard.ordinal) ?? 0, total: number(shard.total) ?? 1, accountsElsewhere: number(shard.accounts_on_other_shards) ?? 0, releasesHere: flag(shard.releases) ?? false },
    config: reloadOk === undefined ? undefined : { ok: reloadOk, atMs: Number.isFinite(atMs) ? atMs : undefined, error: text(config.last_reload_error) },
    exposition: json.exposition === undefined ? undefined : { generation: number(exposition.generation), series: number(exposition.series), families: number(exposition.families) },
  };
}

function readUnit(json: Json): UnitView {
  const staleness = record(json.staleness_seconds);
  const cadences = new Map(
    array(record(json.plan).sources).map((s) => {
      const r = record(s);
      return [text(r.source) ?? '', { effective: number(r.effectiveCadenceSeconds), configured: number(r.configuredCadenceSeconds) }] as const;
    }),
  );
  return {
    name: text(json.account) ?? '(unnamed)',
    up: flag(json.up),
    reason: text(json.reason),
    upgradeUrl: text(json.upgrade_url),
    subscription: json.subscription === undefined ? undefined : readSubscription(record(json.subscription)),
    hostsPolled: number(json.hosts_polled),
    websitesPolled: number(json.websites_polled),
    series: number(json.series_exposed),
    sources: array(json.sources).map((s) => readSource(record(s), number(staleness[text(record(s).source) ?? ''] ), cadences.get(text(record(s).source) ?? ''))),
    budget: json.budget === undefined ? undefined : readBudget(record(json.budget)),
    plan: json.plan === undefined ? undefined : readPlan(record(json.plan)),
    lagSeconds: number(json.lag_seconds),
    errors: array(json.last_errors).map((e) => {
      const r = record(e);
      return { source: text(r.source) ?? '', target: text(r.target), atMs: number(r.atMs), kind: text(r.kind) ?? '', message: text(r.message) ?? '' };
    }),
  };
}

function readSubscription(json: Json): SubscriptionView {
  return {
    plan: text(json.plan),
    hostLimit: number(json.host_limit),
    websiteLimit: number(json.website_limit),
    hostsUsed: number(json.hosts_used),
    websitesUsed: number(json.websites_used),
  };
}

function readSource(json: Json, ageSeconds: number | undefined, cadence: { effective: number | undefined; configured: number | undefined } | undefined): SourceView {
  const error = record(json.last_error);
  const fields = record(json.fields);
  const up = flag(json.up) ?? false;
  return {
    source: text(json.source) ?? '(unnamed)',
    up,
    reason: text(json.reason) ?? (up ? '' : 'unknown'),
    targets: number(json.targets) ?? 0,
    failingTargets: number(json.failing_targets) ?? 0,
    lastError: json.last_error === undefined ? undefined : { target: text(error.target), atMs: number(error.at_ms), message: text(error.message) ?? '' },
    ageSeconds,
    cadenceSeconds: cadence?.effective,
    configuredCadenceSeconds: cadence?.configured,
    missingFields: array(fields.missing).flatMap((f) => (typeof f === 'string' ? [f] : [])),
    foundFields: Object.entries(record(fields.found)).map(([field, where]) => {
      const w = record(where);
      return { field, path: text(w.path) ?? '', unit: text(w.unit), configured: w.configured === true };
    }),
    list: json.list === undefined ? undefined : readList(record(json.list)),
  };
}

function readList(json: Json): ListView {
  const example = record(json.example);
  const reason = text(example.reason);
  return {
    path: text(json.path),
    how: text(json.how),
    lists: number(json.lists) ?? 0,
    pages: number(json.pages) ?? 0,
    via: text(json.via),
    incomplete: number(json.incomplete) ?? 0,
    example: reason === undefined ? undefined : { target: text(example.target), read: number(example.read), announced: number(example.announced), reason },
  };
}

function readBudget(json: Json): BudgetView {
  const totals = record(json.totals);
  const auth = record(json.authFailed);
  return {
    ratePerSecond: number(json.effectiveRatePerSecond),
    configuredRatePerSecond: number(json.configuredRatePerSecond),
    burst: number(json.burst),
    requests: number(totals.requests) ?? 0,
    attempts: number(totals.attempts) ?? 0,
    succeeded: number(totals.succeeded) ?? 0,
    failed: number(totals.failed) ?? 0,
    failedFast: number(totals.failedFast) ?? 0,
    rateLimited: number(totals.rateLimited) ?? 0,
    retries: sum(totals.retries),
    pauses: number(totals.pauses) ?? 0,
    pausedSeconds: number(totals.pausedSeconds) ?? 0,
    pausedUntilMs: number(json.pausedUntilMs),
    authFailed: text(auth.kind) === undefined ? undefined : { kind: text(auth.kind) ?? '', retryAtMs: number(auth.retryAtMs) },
    inFlight: number(json.inFlight) ?? 0,
    queued: sum(json.queued),
  };
}

function readPlan(json: Json): PlanView {
  return {
    requestsPerCycle: number(json.requestsPerCycle),
    demandPerSecond: number(json.demandPerSecond),
    supplyPerSecond: number(json.supplyPerSecond),
    pressure: number(json.pressure),
    fullCycleSeconds: number(json.fullCycleSeconds),
  };
}

function readReleases(json: Json): ReleasesView {
  const outdated = record(json.outdated);
  return {
    ...readUnit(json),
    name: 'release lookups',
    mode: text(json.mode),
    schedule: text(json.schedule),
    projects: array(json.projects).map((p) => {
      const r = record(p);
      const error = record(r.last_error);
      return {
        project: text(r.project) ?? '',
        major: text(r.major),
        version: text(r.version),
        lastSuccessMs: number(r.last_success_ms),
        freshness: text(r.answer_freshness),
        lastError: r.last_error === undefined ? undefined : { atMs: number(error.atMs), message: text(error.message) ?? '' },
      };
    }),
    outdated: json.outdated === undefined ? undefined : readOutdated(outdated),
  };
}

function readOutdated(json: Json): OutdatedView {
  return {
    lines: array(json.lines).map((l) => {
      const r = record(l);
      return {
        project: text(r.project) ?? '',
        line: text(r.line) ?? '',
        software: array(r.software).flatMap((s) => (typeof s === 'string' ? [s] : [])),
        installs: number(r.installs),
        latest: text(r.latest_version),
        error: text(r.last_error),
      };
    }),
    checks: Object.entries(record(json.checks)).map(([account, counts]) => ({
      account,
      counts: Object.fromEntries(Object.entries(record(counts)).flatMap(([k, v]) => (number(v) === undefined ? [] : [[k, number(v) ?? 0]]))),
    })),
    unknownVersions: array(json.unknown_versions).map((u) => {
      const r = record(u);
      return { account: text(r.account) ?? '', host: text(r.host_uuid) ?? '', component: text(r.component) ?? '', software: text(r.software) ?? '', version: text(r.version) ?? '' };
    }),
  };
}

/** What the exporter is doing, in one word, from readiness and the sources of every unit. */
export interface Overall {
  readonly sources: number;
  readonly failing: readonly { readonly unit: string; readonly source: SourceView }[];
  readonly pending: number;
  /** Accounts whose key does not work (down with a reason), whatever their sources say. */
  readonly accountsDown: readonly UnitView[];
}

export function overall(view: StatusView): Overall {
  const units: UnitView[] = [...view.accounts, ...(view.releases ? [view.releases] : [])];
  const all = units.flatMap((unit) => unit.sources.map((source) => ({ unit: unit.name, source })));
  return {
    sources: all.length,
    failing: all.filter(({ source }) => !source.up && source.reason !== 'pending'),
    pending: all.filter(({ source }) => source.reason === 'pending').length,
    accountsDown: view.accounts.filter((a) => a.up === false && a.reason !== 'pending'),
  };
}
