import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { FamilySamples } from '../../exposition/model.js';
import { renderText } from '../../exposition/render-text.js';
import type { SourceUnit } from '../../upstream/monitoring/metric-catalogue.js';
import type { AlertRule } from './decode.js';
import { ALERT_RULE_FAMILIES, mapAlertRules } from './map.js';

function rule(overrides: Partial<AlertRule> = {}): AlertRule {
  return { id: '701', name: 'cpu high', metric: 'system.cpu.user', operator: '>', threshold: 90, enabled: true, ...overrides };
}

/** Units as the catalogue gives them, for the metrics these tests use. */
const UNITS: Readonly<Record<string, SourceUnit>> = {
  'system.cpu.user': 'percent',
  'nginx.status': 'status',
  'system.io.kbs_r': 'kilobytes',
  'system.io.wait_r': 'milliseconds',
  'system.mem.used': 'bytes',
};
const OPTS = { account: 'prod', unitOf: (metric: string) => UNITS[metric] };

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
      name: 'a rule for every host, with a duration; a percent threshold becomes a ratio',
      input: [rule({ duration_seconds: 300 })],
      want: [
        `monapi_alert_rule_duration_seconds{${ID}} 300`,
        `monapi_alert_rule_enabled{${ID}} 1`,
        `monapi_alert_rule_hosts{${ID}} 0`,
        `monapi_alert_rule_info{${ID},rule="cpu high",metric="system.cpu.user",operator=">"} 1`,
        `monapi_alert_rule_threshold{${ID}} 0.9`,
      ],
    },
    {
      name: 'a disabled rule bound to one host, without a duration; a status threshold is unitless',
      input: [rule({ id: '702', name: 'nginx down', metric: 'nginx.status', operator: '<', threshold: 1, enabled: false, hosts: [UUID] })],
      want: [
        'monapi_alert_rule_enabled{account="prod",rule_id="702"} 0',
        `monapi_alert_rule_info{account="prod",rule_id="702",rule="nginx down",metric="nginx.status",operator="<"} 1`,
        'monapi_alert_rule_hosts{account="prod",rule_id="702"} 1',
        `monapi_alert_rule_host_info{account="prod",rule_id="702",host_uuid="${UUID}"} 1`,
        'monapi_alert_rule_threshold{account="prod",rule_id="702"} 1',
      ],
    },
    {
      name: 'a rule whose scope could not be read: no hosts count, which would say every host',
      input: [rule({ hosts_unknown: true })],
      want: [
        `monapi_alert_rule_enabled{${ID}} 1`,
        `monapi_alert_rule_info{${ID},rule="cpu high",metric="system.cpu.user",operator=">"} 1`,
        `monapi_alert_rule_threshold{${ID}} 0.9`,
      ],
    },
    {
      name: 'odd values: empty strings, negative and huge thresholds, quotes escaped',
      input: [rule({ name: '', metric: '', operator: '', threshold: -1e300 }), rule({ id: '703', name: 'say "hi"\\', metric: 'custom.thing', threshold: 1e300, duration_seconds: 0 })],
      want: [
        `monapi_alert_rule_enabled{${ID}} 1`,
        'monapi_alert_rule_enabled{account="prod",rule_id="703"} 1',
        `monapi_alert_rule_hosts{${ID}} 0`,
        'monapi_alert_rule_hosts{account="prod",rule_id="703"} 0',
        `monapi_alert_rule_info{${ID},rule="",metric="",operator=""} 1`,
        'monapi_alert_rule_info{account="prod",rule_id="703",rule="say \\"hi\\"\\\\",metric="custom.thing",operator=">"} 1',
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
        `monapi_alert_rule_hosts{${ID}} 0`,
        `monapi_alert_rule_info{${ID},rule="cpu high",metric="system.cpu.user",operator=">"} 1`,
        `monapi_alert_rule_threshold{${ID}} 0.9`,
      ],
    },
    {
      name: 'a rule known only by id: info with empty labels, nothing it lacks',
      input: [{ id: 'r-9' }],
      want: ['monapi_alert_rule_hosts{account="prod",rule_id="r-9"} 0', 'monapi_alert_rule_info{account="prod",rule_id="r-9",rule="",metric="",operator=""} 1'],
    },
    {
      name: 'a rule bound to several hosts: one host series each, a host named twice counts once',
      input: [rule({ hosts: [UUID, 'b'.repeat(32), UUID] })],
      want: [
        `monapi_alert_rule_enabled{${ID}} 1`,
        `monapi_alert_rule_hosts{${ID}} 2`,
        `monapi_alert_rule_host_info{${ID},host_uuid="${UUID}"} 1`,
        `monapi_alert_rule_host_info{${ID},host_uuid="${'b'.repeat(32)}"} 1`,
        `monapi_alert_rule_info{${ID},rule="cpu high",metric="system.cpu.user",operator=">"} 1`,
        `monapi_alert_rule_threshold{${ID}} 0.9`,
      ],
    },
    { name: 'no rules: nothing (a deleted rule disappears)', input: [], want: [] },
  ])('$name', ({ input, want }) => {
    expect(lines(mapAlertRules(input, OPTS))).toEqual([...want].sort());
  });

  it.each([
    ['system.cpu.user', 90, 0.9],
    ['system.io.kbs_r', 2, 2048],
    ['system.io.wait_r', 250, 0.25],
    ['system.mem.used', 1e9, 1e9],
    ['nginx.status', 1, 1],
    ['not.in.the.catalogue', 42, 42],
  ])('converts a %s threshold of %d as the series is converted: %d', (metric, threshold, want) => {
    expect(lines(mapAlertRules([rule({ metric, threshold })], OPTS))).toContain(`monapi_alert_rule_threshold{${ID}} ${want}`);
  });

  it('says in HELP that the threshold is in the unit of the metric series', () => {
    expect(renderText(mapAlertRules([rule()], OPTS))).toMatch(/# HELP monapi_alert_rule_threshold .*unit of the metric series it watches/);
  });
});

describe('src/sources/alert-rules/metrics.md', () => {
  it('has one row per family, with the type and unit the code gives it', () => {
    const doc = readFileSync(new URL('./metrics.md', import.meta.url), 'utf8');
    const rows = doc.split('\n').filter((line) => line.startsWith('| monapi_'));
    const specs = Object.values(ALERT_RULE_FAMILIES);
    expect(rows.map((row) => row.split(' | ')[0]?.slice(2)).sort()).toEqual(specs.map((s) => s.name).sort());
    for (const spec of specs) expect(rows).toContainEqual(expect.stringContaining(`| ${spec.name} | ${spec.type} | ${spec.unit ?? ''} |`));
  });
});
