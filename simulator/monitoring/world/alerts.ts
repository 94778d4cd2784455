import { agentMetric } from '../catalogue.js';
import type { SimAlertEvent as AlertEvent, SimAlertRule as AlertRule } from '../schemas.js';
import { hash2, hash3, pick, unit } from './hash.js';
import type { HostRecord } from './hosts.js';
import { CHECK_EPOCH_MS, firstFailureMs, outageInSlot, type SiteProfile } from './websites.js';

/**
 * Alert rules and events. Events live on a one-hour grid: in each hour an enabled rule
 * fires with a small probability, and a website outage that starts its failing checks in
 * that hour yields a `website_down` event. So the newest events are found by walking back
 * hour by hour from now, never by scanning history from the start.
 */

const HOUR_MS = 3_600_000;
const OUTAGE_SLOT_MS = 6 * HOUR_MS;
/** How far back `recentAlerts` looks at most. */
const LOOKBACK_HOURS = 30 * 24;

interface RuleTemplate {
  readonly name: string;
  readonly metric: string;
  readonly operator: '>' | '<';
  readonly threshold: number;
  readonly durationS: number;
}

const RULE_TEMPLATES: readonly RuleTemplate[] = [
  { name: 'cpu high', metric: 'system.cpu.user', operator: '>', threshold: 90, durationS: 300 },
  { name: 'load high', metric: 'system.load.5', operator: '>', threshold: 8, durationS: 600 },
  { name: 'memory almost full', metric: 'system.mem.pct_used', operator: '>', threshold: 90, durationS: 300 },
  { name: 'disk almost full', metric: 'system.disk.in_use', operator: '>', threshold: 85, durationS: 900 },
  { name: 'nginx 5xx burst', metric: 'nginx.http.status.5xx', operator: '>', threshold: 50, durationS: 120 },
  { name: 'nginx down', metric: 'nginx.status', operator: '<', threshold: 1, durationS: 60 },
  { name: 'mysql slow queries', metric: 'mysql.global.slow_queries', operator: '>', threshold: 10, durationS: 300 },
  { name: 'swap low', metric: 'system.swap.pct_free', operator: '<', threshold: 20, durationS: 600 },
];

export interface RuleProfile {
  readonly body: AlertRule;
  /** Position in RULE_TEMPLATES: the event-id slot of this rule. */
  readonly slot: number;
  readonly key: number;
  readonly fireProbability: number;
  /** Hosts the rule can fire for: its bound hosts, or every allowed host with the metric. */
  readonly hostUuids: readonly string[];
}

/** How many hosts the rule bound to several hosts covers: two or three, always fewer than could trigger it. */
const SCOPED_RULE_HOSTS = [2, 3] as const;

/** Rule ids: 701 + slot + k·accounts, so accounts never share one. */
export function createRules(
  seed: number,
  accountSlot: number,
  accountCount: number,
  hosts: readonly HostRecord[],
): RuleProfile[] {
  const rules: RuleProfile[] = [];
  const candidatesOf = new Map<number, readonly HostRecord[]>();
  RULE_TEMPLATES.forEach((template, k) => {
    const h = (salt: number): number => hash3(seed, accountSlot * 1000 + k, salt);
    // Each account has a handful of the templates, and only those its hosts can trigger.
    if (unit(h(1)) < 0.25) return;
    const component = agentMetric(template.metric)?.component;
    if (!component) throw new Error(`simulator: alert rule metric ${template.metric} is not in the catalogue`);
    const candidates = hosts.filter((r) => r.allowed && r.profile.components.has(component));
    if (candidates.length === 0) return;
    const bound = unit(h(2)) < 0.35 ? pick(h(3), candidates).profile.uuid : null;
    candidatesOf.set(k, candidates);
    rules.push({
      slot: k,
      key: h(4),
      fireProbability: 0.01 + 0.05 * unit(h(5)),
      hostUuids: bound ? [bound] : candidates.map((r) => r.profile.uuid),
      body: {
        id: 701 + accountSlot + k * accountCount,
        name: template.name,
        metric: template.metric,
        operator: template.operator,
        threshold: template.threshold,
        duration_seconds: template.durationS,
        enabled: unit(h(6)) < 0.85,
        host_uuid: bound,
        created_at: new Date(Date.UTC(2025, 0, 1) + Math.floor(unit(h(7)) * 200) * 86_400_000).toISOString(),
      },
    });
  });
  return bindOneRuleToSeveralHosts(rules, candidatesOf, hash3(seed, accountSlot, 0x5c0e));
}

/**
 * Rules are bound to one host or to none (every host), and one rule per account to a few
 * hosts: the first account-wide rule that at least three hosts could trigger (or, if every
 * such rule is bound to one host, the first of those) gets a scope of two or three of them,
 * in list order. An account whose rules no three hosts can trigger has no such rule.
 */
function bindOneRuleToSeveralHosts(rules: RuleProfile[], candidatesOf: ReadonlyMap<number, readonly HostRecord[]>, key: number): RuleProfile[] {
  const wide = (r: RuleProfile): boolean => (candidatesOf.get(r.slot)?.length ?? 0) >= 3;
  const chosen = rules.find((r) => r.body.host_uuid === null && wide(r)) ?? rules.find(wide);
  if (!chosen) return rules;
  const candidates = candidatesOf.get(chosen.slot) ?? [];
  const size = Math.min(pick(hash2(key, 1), SCOPED_RULE_HOSTS), candidates.length - 1);
  const order = candidates.map((record, i) => ({ record, i, rank: hash3(key, 2, i) }));
  const picked = order
    .sort((a, b) => a.rank - b.rank || a.i - b.i)
    .slice(0, size)
    .sort((a, b) => a.i - b.i)
    .map((c) => c.record.profile.uuid);
  const scoped: RuleProfile = { ...chosen, hostUuids: picked, body: { ...chosen.body, host_uuid: null, host_uuids: picked } };
  return rules.map((r) => (r === chosen ? scoped : r));
}

export interface EventSources {
  readonly accountSlot: number;
  readonly accountCount: number;
  readonly rules: readonly RuleProfile[];
  readonly sites: readonly SiteProfile[];
}

/**
 * Event ids grow with time (one per second and source) and are interleaved by account:
 * unique per account and disjoint across accounts.
 */
function eventId(src: EventSources, occurredMs: number, sourceSlot: number): number {
  const seconds = Math.floor((occurredMs - CHECK_EPOCH_MS) / 1000);
  const sourcesPerSecond = RULE_TEMPLATES.length + src.sites.length;
  return (seconds * sourcesPerSecond + sourceSlot) * src.accountCount + src.accountSlot + 1;
}

function eventsInHour(src: EventSources, hour: number): AlertEvent[] {
  const events: AlertEvent[] = [];
  const hourStart = hour * HOUR_MS;
  for (const rule of src.rules) {
    if (!rule.body.enabled) continue;
    const h = hash3(rule.key, 0xe7e7, hour);
    if (unit(h) >= rule.fireProbability) continue;
    const occurredMs = hourStart + (hash2(h, 1) % 3600) * 1000;
    events.push({
      type: 'host_alert',
      id: eventId(src, occurredMs, rule.slot),
      source_id: rule.body.id,
      source_name: rule.body.name,
      host_uuid: pick(hash2(h, 2), rule.hostUuids),
      message: `${rule.body.metric} ${rule.body.operator} ${rule.body.threshold}`,
      occurred_at: new Date(occurredMs).toISOString(),
    });
  }
  const outageSlot = Math.floor(hourStart / OUTAGE_SLOT_MS);
  for (const site of src.sites) {
    const outage = outageInSlot(site, outageSlot);
    if (!outage) continue;
    const occurredMs = firstFailureMs(site, outage);
    if (occurredMs === undefined || occurredMs < hourStart || occurredMs >= hourStart + HOUR_MS) continue;
    events.push({
      type: 'website_down',
      id: eventId(src, occurredMs, RULE_TEMPLATES.length + site.index),
      source_id: site.id,
      source_name: site.name,
      message: outage.status === 0 ? 'timeout' : `HTTP ${outage.status}`,
      occurred_at: new Date(occurredMs).toISOString(),
    });
  }
  return events;
}

export function recentEvents(src: EventSources, nowMs: number, limit: number): AlertEvent[] {
  if (limit <= 0) return [];
  const out: AlertEvent[] = [];
  const newestHour = Math.floor(nowMs / HOUR_MS);
  for (let hour = newestHour; hour > newestHour - LOOKBACK_HOURS && out.length < limit; hour--) {
    const events = eventsInHour(src, hour)
      .filter((e) => Date.parse(e.occurred_at) <= nowMs)
      .sort((a, b) => b.id - a.id);
    out.push(...events);
  }
  return out.slice(0, limit);
}
