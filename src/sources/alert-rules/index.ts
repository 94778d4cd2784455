import { familyNames, groupName, type AccountSource, type SourceContext } from '../types.js';
import { ALERT_RULE_FAMILIES, mapAlertRules } from './map.js';

/** `/alerts`: the alert rules, their thresholds and whether they are enabled. */
export function createAlertRulesSource(ctx: SourceContext): AccountSource {
  return {
    name: 'alert_rules',
    toggle: 'alertRules',
    families: familyNames(ALERT_RULE_FAMILIES),
    scope: 'account',
    priority: 'normal',
    cadence: 'alertRules',
    async poll() {
      const { value } = await ctx.client.alertRules('normal');
      ctx.sink.publish(groupName('alert_rules', ctx.account.name), mapAlertRules(value.rules, { account: ctx.account.name }));
    },
  };
}
