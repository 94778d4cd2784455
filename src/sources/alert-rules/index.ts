import { catalogueEntry } from '../../upstream/monitoring/metric-catalogue.js';
import { familyNames, groupName, type AccountSource, type SourceContext } from '../types.js';
import { ALERT_RULE_FAMILIES, mapAlertRules } from './map.js';

/** `/alerts`: the alert rules, their thresholds (in their metric's unit) and whether they are enabled. */
export function createAlertRulesSource(ctx: SourceContext): AccountSource {
  const unitOf = (metric: string) => ctx.account.metricOverrides[metric]?.unit ?? catalogueEntry(metric)?.unit;
  return {
    name: 'alert_rules',
    toggle: 'alertRules',
    families: familyNames(ALERT_RULE_FAMILIES),
    scope: 'account',
    priority: 'normal',
    cadence: 'alertRules',
    async poll() {
      const { value } = await ctx.client.alertRules('normal');
      ctx.sink.publish(groupName('alert_rules', ctx.account.name), mapAlertRules(value, { account: ctx.account.name, unitOf }));
    },
  };
}
