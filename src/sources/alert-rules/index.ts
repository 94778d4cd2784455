import { groupName, type AccountSource, type SourceContext } from '../types.js';
import { mapAlertRules } from './map.js';

/** `/alerts`: the alert rules, their thresholds and whether they are enabled. */
export function createAlertRulesSource(ctx: SourceContext): AccountSource {
  return {
    name: 'alert_rules',
    toggle: 'alertRules',
    scope: 'account',
    priority: 'normal',
    cadence: 'alertRules',
    async poll() {
      const { value } = await ctx.client.alertRules('normal');
      ctx.sink.publish(groupName('alert_rules', ctx.account.name), mapAlertRules(value.rules, { account: ctx.account.name }));
    },
  };
}
