import type { FamilySamples } from '../../exposition/model.js';
import type { AlertRule } from '../../upstream/monitoring/schemas.js';
import { FamilyCollector, gaugeSpec, infoSpec } from '../shared/families.js';
import { boolToNumber } from '../shared/units.js';

/** Maps `/alerts` (AlertRuleList) to one set of series per alert rule. Pure: no I/O, no clock. */

const FROM = 'from /alerts, polled in the background';

export const ALERT_RULE_FAMILIES = {
  info: infoSpec(
    'monapi_alert_rule_info',
    `Alert rule facts (value 1): name, watched agent metric, comparison operator, and the host it is bound to (empty: every host), ${FROM}.`,
  ),
  enabled: gaugeSpec('monapi_alert_rule_enabled', `1 when the alert rule is enabled, else 0, ${FROM}.`),
  threshold: gaugeSpec(
    'monapi_alert_rule_threshold',
    `Threshold of the alert rule as upstream stores it, in the watched metric's own unit (percent 0-100, bytes, a count...; not converted), ${FROM}.`,
  ),
  duration: gaugeSpec(
    'monapi_alert_rule_duration_seconds',
    `How long the condition must hold before the alert rule fires (upstream "duration_seconds"), ${FROM}.`,
    'seconds',
  ),
} as const;

export interface AlertRuleMapOptions {
  readonly account: string;
}

export function mapAlertRules(rules: readonly AlertRule[], opts: AlertRuleMapOptions): FamilySamples[] {
  const c = new FamilyCollector();
  const seen = new Set<number>();
  for (const rule of rules) {
    // An id listed twice is one rule: the first entry wins.
    if (seen.has(rule.id)) continue;
    seen.add(rule.id);
    const id = { account: opts.account, rule_id: String(rule.id) };
    c.add(
      ALERT_RULE_FAMILIES.info,
      { ...id, rule: rule.name, metric: rule.metric, operator: rule.operator, host_uuid: rule.host_uuid ?? '' },
      1,
    );
    c.add(ALERT_RULE_FAMILIES.enabled, id, boolToNumber(rule.enabled));
    if (Number.isFinite(rule.threshold)) c.add(ALERT_RULE_FAMILIES.threshold, id, rule.threshold);
    if (rule.duration_seconds !== undefined) c.add(ALERT_RULE_FAMILIES.duration, id, rule.duration_seconds);
  }
  return c.toFamilies();
}
