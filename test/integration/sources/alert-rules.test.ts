import { afterEach, describe, expect, it } from 'vitest';
import { catalogueEntry } from '../../../src/upstream/monitoring/metric-catalogue.js';
import { toBaseUnit } from '../../../src/sources/shared/units.js';
import { startSourceHarness, type SourceHarness } from '../../support/sim-harness.js';
import { alertRulesSource } from '../../../src/sources/alert-rules/index.js';

let harness: SourceHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('alert rules source against the simulator', () => {
  it('publishes one set of series per rule, thresholds in their metric series\' unit', async () => {
    harness = await startSourceHarness();
    const rules = harness.simAccount.alertRules();
    expect(rules.length).toBeGreaterThan(0);

    await harness.unitSource(alertRulesSource).poll(new AbortController().signal);

    const lines = harness.sink.lines('alert_rules/sim');
    expect(lines.filter((l) => l.startsWith('monapi_alert_rule_info{'))).toHaveLength(rules.length);
    for (const rule of rules) {
      const id = `account="sim",rule_id="${rule.id}"`;
      expect(lines).toContain(`monapi_alert_rule_enabled{${id}} ${rule.enabled ? 1 : 0}`);
      const unit = catalogueEntry(rule.metric)?.unit ?? 'none';
      expect(lines).toContain(`monapi_alert_rule_threshold{${id}} ${toBaseUnit(rule.threshold, unit)}`);
      expect(lines).toContain(`monapi_alert_rule_info{${id},rule="${rule.name}",metric="${rule.metric}",operator="${rule.operator}"} 1`);
      const bound = rule.host_uuid !== null ? [rule.host_uuid] : (rule.host_uuids ?? []);
      expect(lines).toContain(`monapi_alert_rule_hosts{${id}} ${bound.length}`);
      for (const uuid of bound) expect(lines).toContain(`monapi_alert_rule_host_info{${id},host_uuid="${uuid}"} 1`);
    }
    // The world binds one rule to several hosts: its whole scope is exported.
    expect(rules.some((rule) => (rule.host_uuids ?? []).length > 1)).toBe(true);
  });
});
