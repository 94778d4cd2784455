import type { FamilySamples } from '../../exposition/model.js';
import type { SourceUnit } from '../../upstream/monitoring/metric-catalogue.js';
import type { AlertRule } from './decode.js';
import { FamilyCollector, gaugeSpec, infoSpec } from '../shared/families.js';
import { boolToNumber, toBaseUnit } from '../shared/units.js';

/** Maps `/alerts` (alert rules) to one set of series per rule. Pure: no I/O, no clock. */

const FROM = 'from /alerts, polled in the background';

export const ALERT_RULE_FAMILIES = {
  info: infoSpec('monapi_alert_rule_info', `Alert rule facts (value 1): name, watched agent metric and comparison operator, ${FROM}.`),
  hosts: gaugeSpec('monapi_alert_rule_hosts', `Hosts the alert rule is bound to; 0: every host; absent when upstream names a scope that could not be read, ${FROM}.`),
  host: infoSpec('monapi_alert_rule_host_info', `One series (value 1) per host the alert rule is bound to; a rule for every host has none, ${FROM}.`),
  enabled: gaugeSpec('monapi_alert_rule_enabled', `1 when the alert rule is enabled, else 0, ${FROM}.`),
  threshold: gaugeSpec(
    'monapi_alert_rule_threshold',
    `Threshold of the alert rule in the unit of the metric series it watches, converted as that series is (a 90 % CPU threshold is 0.9, kilobytes become bytes, milliseconds seconds); as upstream stores it when the metric's unit is unknown, ${FROM}.`,
  ),
  duration: gaugeSpec(
    'monapi_alert_rule_duration_seconds',
    `How long the condition must hold before the alert rule fires, ${FROM}.`,
    'seconds',
  ),
} as const;

export interface AlertRuleMapOptions {
  readonly account: string;
  /**
   * The unit the agent sends a metric in (the account's metric_overrides, else the
   * catalogue), so the threshold is converted exactly as the metric's series is; undefined
   * for a metric neither knows, whose series pass through unconverted.
   */
  readonly unitOf: (metric: string) => SourceUnit | undefined;
}

export function mapAlertRules(rules: readonly AlertRule[], opts: AlertRuleMapOptions): FamilySamples[] {
  const c = new FamilyCollector();
  const seen = new Set<string>();
  for (const rule of rules) {
    // An id listed twice is one rule: the first entry wins.
    if (seen.has(rule.id)) continue;
    seen.add(rule.id);
    const id = { account: opts.account, rule_id: rule.id };
    c.add(
      ALERT_RULE_FAMILIES.info,
      { ...id, rule: rule.name ?? '', metric: rule.metric ?? '', operator: rule.operator ?? '' },
      1,
    );
    const hosts = [...new Set(rule.hosts ?? [])];
    // 0 means every host: a scope that could not be read is no series, never that.
    if (rule.hosts_unknown !== true) c.add(ALERT_RULE_FAMILIES.hosts, id, hosts.length);
    for (const hostUuid of hosts) c.add(ALERT_RULE_FAMILIES.host, { ...id, host_uuid: hostUuid }, 1);
    if (rule.enabled !== undefined) c.add(ALERT_RULE_FAMILIES.enabled, id, boolToNumber(rule.enabled));
    if (rule.threshold !== undefined) {
      const unit = rule.metric === undefined ? undefined : opts.unitOf(rule.metric);
      c.add(ALERT_RULE_FAMILIES.threshold, id, unit === undefined ? rule.threshold : toBaseUnit(rule.threshold, unit));
    }
    if (rule.duration_seconds !== undefined) c.add(ALERT_RULE_FAMILIES.duration, id, rule.duration_seconds);
  }
  return c.toFamilies();
}
