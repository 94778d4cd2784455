import { agentMetric } from './catalogue.js';
import type { DeltaTruth, LateDataSettings, TruthQuery } from './late-data.js';
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
import { createRules, recentEvents, type EventSources, type RuleProfile } from './world/alerts.js';
import { componentBody, type ComponentRecord } from './world/components.js';
import { hashString } from './world/hash.js';
import { createHostProfile, hostBody, hostRecord, type HostRecord } from './world/hosts.js';
import { bucketValue, latestValue, minuteTruth, type SeriesQuery } from './world/series.js';
import { hostSignal } from './world/signals.js';
import {
  buildChecks,
  countChecks,
  createSiteProfile,
  websiteBody,
  websiteSummaryBody,
  type SiteProfile,
} from './world/websites.js';
import { SIM_KEYS, type MonitoringWorld, type PlanName, type SimAccount, type WorldOptions } from './world-types.js';

/**
 * The simulated monitoring data: three accounts with hosts, metrics, components, alert
 * rules, events and website checks, every value computed on demand from (seed, time).
 * The simulated HTTP API (server.ts) reads it through the SimAccount contract.
 */

interface AccountDefinition {
  readonly slot: number;
  readonly plan: PlanName;
  readonly key: string;
  readonly id: string;
  readonly name: string;
  readonly retentionDays: number;
  readonly domain: string;
  readonly websiteLimit: number;
}

const ACCOUNT_DEFINITIONS: readonly AccountDefinition[] = [
  { slot: 0, plan: 'pro', key: SIM_KEYS.pro, id: 'acc_pro_01', name: 'Northwind Pro', retentionDays: 30, domain: 'example.com', websiteLimit: 50 },
  {
    slot: 1,
    plan: 'business',
    key: SIM_KEYS.business,
    id: 'acc_business_01',
    name: 'Contoso Business',
    retentionDays: 90,
    domain: 'example.org',
    websiteLimit: 200,
  },
  { slot: 2, plan: 'starter', key: SIM_KEYS.starter, id: 'acc_starter_01', name: 'Fabrikam Starter', retentionDays: 7, domain: 'example.net', websiteLimit: 5 },
];

const DAY_MS = 86_400_000;

/**
 * Plan host limits: every plan covers all but the last two of the hosts the world starts
 * with (one of three or fewer, none of one), so a default world always shows a couple of
 * `allowed: false` hosts per account. The two are the newest hosts (by created_at), which
 * sit anywhere in the list. Hosts added later by fault control come with their own room
 * on the plan (the limit grows with them), so they report data.
 */
function initialHostLimit(hosts: number): number {
  const beyond = hosts >= 8 ? 2 : hosts >= 2 ? 1 : 0;
  return hosts - beyond;
}

function validateOptions(options: WorldOptions): void {
  if (!options.seed) throw new Error('world: seed must be a non-empty string');
  for (const field of ['hosts', 'websites'] as const) {
    const value = options[field];
    if (!Number.isInteger(value) || value < 0) throw new Error(`world: ${field} must be a non-negative integer, got ${value}`);
  }
}

class SimulatedAccount implements SimAccount {
  readonly id: string;
  readonly key: string;
  readonly plan: PlanName;
  readonly retentionDays: number;
  private limit: number;
  private records: HostRecord[] = [];
  private readonly byUuid = new Map<string, HostRecord>();
  private readonly hostnameCounters = new Map<string, number>();
  private nextHostIndex = 0;
  private readonly sites: SiteProfile[];
  private readonly siteById: Map<number, SiteProfile>;
  private readonly rules: RuleProfile[];
  private readonly events: EventSources;
  private readonly late: LateDataSettings | undefined;

  constructor(
    private readonly definition: AccountDefinition,
    private readonly seed: number,
    private readonly accountCount: number,
    options: WorldOptions,
  ) {
    this.id = definition.id;
    this.key = definition.key;
    this.plan = definition.plan;
    this.retentionDays = definition.retentionDays;
    this.limit = initialHostLimit(options.hosts);
    this.late = options.lateData;

    const profiles = Array.from({ length: options.hosts }, () => this.newProfile());
    const newestFirst = [...profiles].sort((a, b) => b.createdAtMs - a.createdAtMs || b.index - a.index);
    const beyondLimit = new Set(newestFirst.slice(0, options.hosts - this.limit).map((p) => p.uuid));
    for (const profile of profiles) this.addRecord(hostRecord(profile, !beyondLimit.has(profile.uuid), seed));

    this.sites = Array.from({ length: options.websites }, (_, index) =>
      createSiteProfile({
        seed,
        accountSlot: definition.slot,
        accountCount,
        index,
        siteCount: options.websites,
        domain: definition.domain,
      }),
    );
    this.siteById = new Map(this.sites.map((s) => [s.id, s]));
    this.rules = createRules(seed, definition.slot, accountCount, this.records);
    this.events = { accountSlot: definition.slot, accountCount, rules: this.rules, sites: this.sites };
  }

  get hostLimit(): number {
    return this.limit;
  }

  private newProfile(createdAtMs?: number) {
    return createHostProfile({
      seed: this.seed,
      accountSlot: this.definition.slot,
      index: this.nextHostIndex++,
      hostnameCounters: this.hostnameCounters,
      ...(createdAtMs === undefined ? {} : { createdAtMs }),
      ...(this.late ? { late: this.late } : {}),
    });
  }

  private addRecord(record: HostRecord): void {
    this.records.push(record);
    this.byUuid.set(record.profile.uuid, record);
  }

  account(_nowMs: number): Account {
    return {
      id: this.id,
      name: this.definition.name,
      plan: this.plan,
      limits: {
        hosts: this.limit,
        websites: Math.max(this.definition.websiteLimit, this.sites.length),
        retention_days: this.retentionDays,
      },
      usage: { hosts: this.records.length, websites: this.sites.length },
      rate_limit: { requests_per_minute: 120, burst: 30 },
    };
  }

  hosts(nowMs: number): Host[] {
    return this.records.map((r) => hostBody(r, nowMs));
  }

  host(uuid: string, nowMs: number): Host | undefined {
    const record = this.byUuid.get(uuid);
    return record && hostBody(record, nowMs);
  }

  metricCatalogue(uuid: string): Record<string, string[]> | undefined {
    const record = this.byUuid.get(uuid);
    if (!record) return undefined;
    return Object.fromEntries(Object.entries(record.catalogue).map(([component, names]) => [component, [...names]]));
  }

  // Series requests call pointValue once per (name, bucket): resolve each (host, name) once.
  private readonly queries = new Map<string, Map<string, SeriesQuery>>();

  private seriesQuery(uuid: string, name: string): SeriesQuery | undefined {
    const cached = this.queries.get(uuid)?.get(name);
    if (cached) return cached;
    const record = this.byUuid.get(uuid);
    if (!record?.allowed || !record.metricNames.has(name)) return undefined;
    const entry = agentMetric(name);
    const signal = hostSignal(record.profile, name);
    if (!entry || !signal) return undefined;
    const query = { profile: record.profile, kind: entry.kind, signal, retentionMs: this.retentionDays * DAY_MS };
    let perHost = this.queries.get(uuid);
    if (!perHost) {
      perHost = new Map();
      this.queries.set(uuid, perHost);
    }
    perHost.set(name, query);
    return query;
  }

  pointValue(uuid: string, name: string, bucketStartMs: number, intervalS: number, nowMs: number): number | null {
    const query = this.seriesQuery(uuid, name);
    return query ? bucketValue(query, bucketStartMs, intervalS, nowMs) : null;
  }

  deltaTruth(query: TruthQuery): DeltaTruth {
    const record = this.byUuid.get(query.hostUuid);
    if (!record) throw new Error(`no host ${query.hostUuid} in account ${this.plan}`);
    const entry = agentMetric(query.metric);
    if (!entry || !hostSignal(record.profile, query.metric)) throw new Error(`host ${query.hostUuid} reports no metric ${query.metric}`);
    if (entry.kind !== 'delta') throw new Error(`${query.metric} is a gauge: a sum over time is only defined for delta metrics`);
    if (!record.allowed) return { sum: 0, points: 0, missing: 0, pending: 0, completeAtMs: null, ...(query.detail ? { minutes: [] } : {}) };
    return minuteTruth(record.profile, hostSignal(record.profile, query.metric)!, query);
  }

  latest(uuid: string, name: string, nowMs: number): { timestampMs: number | null; value: number | null } {
    const query = this.seriesQuery(uuid, name);
    return query ? latestValue(query, nowMs) : { timestampMs: null, value: null };
  }

  components(uuid: string): Component[] | undefined {
    const record = this.byUuid.get(uuid);
    return record?.components.map((c) => componentBody(c, uuid));
  }

  componentRecords(uuid: string): readonly ComponentRecord[] | undefined {
    return this.byUuid.get(uuid)?.components;
  }

  alertRules(): AlertRule[] {
    return this.rules.map((r) => ({ ...r.body }));
  }

  recentAlerts(nowMs: number, limit: number): AlertEvent[] {
    return recentEvents(this.events, nowMs, limit);
  }

  websites(nowMs: number): Website[] {
    return this.sites.map((site) => websiteBody(site, nowMs));
  }

  websiteSummary(id: number, nowMs: number): WebsiteSummary | undefined {
    const site = this.siteById.get(id);
    return site && websiteSummaryBody(site, nowMs);
  }

  hasWebsite(id: number): boolean {
    return this.siteById.has(id);
  }

  checks(id: number, fromMs: number, toMs: number): WebsiteCheck[] {
    const site = this.siteById.get(id);
    return site ? buildChecks(site, fromMs, toMs) : [];
  }

  checkCount(id: number, fromMs: number, toMs: number): number {
    const site = this.siteById.get(id);
    return site ? countChecks(site, fromMs, toMs) : 0;
  }

  checkIntervalMs(id: number): number {
    const site = this.siteById.get(id);
    if (!site) throw new Error(`world: no website ${id} in account ${this.id}`);
    return site.intervalMs;
  }

  addHosts(n: number, nowMs: number): void {
    if (!Number.isInteger(n) || n < 0) throw new Error(`world: addHosts needs a non-negative integer, got ${n}`);
    for (let i = 0; i < n; i++) this.addRecord(hostRecord(this.newProfile(nowMs), true, this.seed));
    this.limit += n;
  }

  removeHosts(n: number, _nowMs: number): void {
    if (!Number.isInteger(n) || n < 0) throw new Error(`world: removeHosts needs a non-negative integer, got ${n}`);
    const removed = this.records.splice(Math.max(0, this.records.length - n));
    for (const record of removed) {
      this.byUuid.delete(record.profile.uuid);
      this.queries.delete(record.profile.uuid);
    }
  }
}

export function createWorld(options: WorldOptions): MonitoringWorld {
  validateOptions(options);
  const seed = hashString(options.seed);
  const accounts = ACCOUNT_DEFINITIONS.map(
    (definition) => new SimulatedAccount(definition, seed, ACCOUNT_DEFINITIONS.length, options),
  );
  const byKey = new Map<string, SimAccount>(accounts.map((a) => [a.key, a]));
  return {
    options: { ...options },
    accounts: () => [...accounts],
    accountByKey: (key) => byKey.get(key),
  };
}
