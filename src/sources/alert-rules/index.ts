import { MINUTE } from '../../config/schema.js';
import { endpoint } from '../../upstream/monitoring/client.js';
import { catalogueEntry } from '../../upstream/monitoring/metric-catalogue.js';
import { seriesSource } from '../series/index.js';
import { every, familyNames, groupName, type MonitoringSource } from '../source.js';
import { ALERT_RULE_FIELDS, decodeAlertRules } from './decode.js';
import { ALERT_RULE_FAMILIES, mapAlertRules } from './map.js';

export const ALERT_RULES_ENDPOINT = endpoint('/alerts', decodeAlertRules);

/** `/alerts`: the alert rules, their thresholds (in their metric's unit, after the series' metric overrides) and whether they are enabled. */
export const alertRulesSource: MonitoringSource = {
  name: 'alert_rules',
  section: 'account',
  toggle: { default: true },
  cadences: { alert_rules: { default: '10m', minMs: MINUTE } },
  endpoints: [ALERT_RULES_ENDPOINT],
  fields: ALERT_RULE_FIELDS,
  readsList: ALERT_RULES_ENDPOINT.decode.list !== undefined,
  priority: 'normal',
  families: familyNames(ALERT_RULE_FAMILIES),
  create(ctx) {
    const overrides = ctx.settingsOf(seriesSource)?.metricOverrides ?? {};
    const unitOf = (metric: string) => overrides[metric]?.unit ?? catalogueEntry(metric)?.unit;
    return {
      scope: 'unit',
      cadence: () => every(ctx.cadenceMs('alert_rules')),
      async poll() {
        const { value } = await ctx.upstream.get(ALERT_RULES_ENDPOINT, {}, {}, 'normal');
        ctx.sink.publish(groupName('alert_rules', ctx.unit.name), mapAlertRules(value, { account: ctx.unit.name, unitOf }));
      },
    };
  },
};
