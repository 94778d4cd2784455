import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { FamilySamples } from '../../exposition/model.js';
import { renderText } from '../../exposition/render-text.js';
import type { AlertRule } from '../../upstream/monitoring/schemas.js';
import { ALERT_RULE_FAMILIES, mapAlertRules } from './map.js';

function rule(overrides: Partial<AlertRule> = {}): AlertRule {
  return { id: 701, name: 'cpu high', metric: 'system.cpu.user', operator: '>', threshold: 90, enabled: true, ...overrides };
}

function lines(families: readonly FamilySamples[]): string[] {
  return renderText(families)
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .sort();
}

const ID = 'account="prod",rule_id="701"';
const UUID = 'a'.repeat(32);

describe('mapAlertRules', () => {
  it.each([
    {
      name: 'a rule for every host, with a duration',
      input: [rule({ duration_seconds: 300, host_uuid: null })],
      want: [
        `monapi_alert_rule_duration_seconds{${ID}} 300`,
        `monapi_alert_rule_enabled{${ID}} 1`,
        `monapi_alert_rule_info{${ID},rule="cpu high",metric="system.cpu.user",operator=">",host_uuid=""} 1`,
        `monapi_alert_rule_threshold{${ID}} 90`,
      ],
    },
    {
      name: 'a disabled rule bound to one host, without a duration; threshold kept raw',
      input: [rule({ id: 702, name: 'nginx down', metric: 'nginx.status', operator: '<', threshold: 1, enabled: false, host_uuid: UUID })],
      want: [
        'monapi_alert_rule_enabled{account="prod",rule_id="702"} 0',
        `monapi_alert_rule_info{account="prod",rule_id="702",rule="nginx down",metric="nginx.status",operator="<",host_uuid="${UUID}"} 1`,
        'monapi_alert_rule_threshold{account="prod",rule_id="702"} 1',
      ],
    },
    {
      name: 'odd values: empty strings, negative and huge thresholds, quotes escaped',
      input: [rule({ name: '', metric: '', operator: '', threshold: -1e300 }), rule({ id: 703, name: 'say "hi"\\', threshold: 1e300, duration_seconds: 0 })],
      want: [
        `monapi_alert_rule_enabled{${ID}} 1`,
        'monapi_alert_rule_enabled{account="prod",rule_id="703"} 1',
        `monapi_alert_rule_info{${ID},rule="",metric="",operator="",host_uuid=""} 1`,
        'monapi_alert_rule_info{account="prod",rule_id="703",rule="say \\"hi\\"\\\\",metric="system.cpu.user",operator=">",host_uuid=""} 1',
        `monapi_alert_rule_threshold{${ID}} -1e+300`,
        'monapi_alert_rule_threshold{account="prod",rule_id="703"} 1e+300',
        'monapi_alert_rule_duration_seconds{account="prod",rule_id="703"} 0',
      ],
    },
    {
      name: 'a repeated id is one rule: the first wins',
      input: [rule(), rule({ name: 'other', enabled: false })],
      want: [
        `monapi_alert_rule_enabled{${ID}} 1`,
        `monapi_alert_rule_info{${ID},rule="cpu high",metric="system.cpu.user",operator=">",host_uuid=""} 1`,
        `monapi_alert_rule_threshold{${ID}} 90`,
      ],
    },
    { name: 'no rules: nothing (a deleted rule disappears)', input: [], want: [] },
  ])('$name', ({ input, want }) => {
    expect(lines(mapAlertRules(input, { account: 'prod' }))).toEqual([...want].sort());
  });

  it('says in HELP that the threshold is in the metric’s own unit', () => {
    expect(renderText(mapAlertRules([rule()], { account: 'prod' }))).toMatch(/# HELP monapi_alert_rule_threshold .*own unit/);
  });
});

describe('docs/metrics/alert-rules.md', () => {
  it('has one row per family, with the type and unit the code gives it', () => {
    const doc = readFileSync(new URL('../../../docs/metrics/alert-rules.md', import.meta.url), 'utf8');
    const rows = doc.split('\n').filter((line) => line.startsWith('| monapi_'));
    const specs = Object.values(ALERT_RULE_FAMILIES);
    expect(rows.map((row) => row.split(' | ')[0]?.slice(2)).sort()).toEqual(specs.map((s) => s.name).sort());
    for (const spec of specs) expect(rows).toContainEqual(expect.stringContaining(`| ${spec.name} | ${spec.type} | ${spec.unit ?? ''} |`));
  });
});
