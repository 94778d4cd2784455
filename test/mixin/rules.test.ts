import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { alertGroups, alertNames, runbookAnchor } from '../../mixin/alerts.js';
import { ROOT, RULES_FILE } from '../../mixin/build.js';
import { DEFAULT_CONFIG, promDuration, scaleDurations } from '../../mixin/config.js';
import { undocumentedMetrics } from '../support/metric-names.js';
import { requireBinary } from '../support/prometheus.js';

/**
 * The alert rules: valid for promtool, every alert unit-tested firing and not firing
 * (alerts/monapi-exporter.rules.test.yaml), monitoring-mixin conventions, a runbook
 * section for each, and only metric names the exporter has.
 */

const RULES_TEST = 'alerts/monapi-exporter.rules.test.yaml';
const groups = alertGroups(DEFAULT_CONFIG);
const names = alertNames(groups);
const rules = groups.flatMap((g) => g.rules);

function promtool(args: string[]): { status: number | null; output: string } {
  const result = spawnSync(requireBinary('promtool'), args, { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  if (result.error) throw result.error;
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

interface UnitTests {
  tests: { name: string; alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[] }[];
}

describe('alert rules', () => {
  it('cover what issue 11 asks for', () => {
    expect(names).toEqual([
      'MonapiHostOffline',
      'MonapiWebsiteDown',
      'MonapiCertificateExpiring',
      'MonapiUpstreamUnreachable',
      'MonapiUpstreamUnauthorized',
      'MonapiUpstreamPlanRequired',
      'MonapiRateLimited',
      'MonapiBudgetTooSmall',
      'MonapiHostsBeyondPlanLimit',
      'MonapiSourceFailing',
      'MonapiListIncomplete',
      'MonapiDataStale',
      'MonapiReleaseLookupFailing',
      'MonapiShardingMismatch',
      'MonapiShardsMissing',
      'MonapiExporterDown',
    ]);
  });

  it('compare shards only within one release: by the namespace and service a ServiceMonitor gives, and the job', () => {
    const sharding = rules.filter((r) => r.alert === 'MonapiShardingMismatch' || r.alert === 'MonapiShardsMissing');
    expect(sharding).toHaveLength(2);
    for (const rule of sharding) {
      const groupings = [...rule.expr.matchAll(/\b(?:by|on) \(([^)]*)\)/g)].map((m) => m[1]);
      expect(groupings.length, rule.alert).toBeGreaterThan(1);
      for (const labels of groupings) expect(labels, rule.alert).toBe('cluster, namespace, service, job');
    }
  });

  it('alert when the exporter is down (up == 0) and when Prometheus has no target of it (absent)', () => {
    const down = rules.filter((r) => r.alert === 'MonapiExporterDown').map((r) => r.expr);
    expect(down).toEqual(['up{job="monapi-exporter"} == 0\nor\nabsent(up{job="monapi-exporter"})']);
  });

  it('pass promtool check rules', () => {
    const { status, output } = promtool(['check', 'rules', RULES_FILE]);
    expect(output).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(status, output).toBe(0);
  });

  it('pass their promtool unit tests', () => {
    const { status, output } = promtool(['test', 'rules', RULES_TEST]);
    expect(status, output).toBe(0);
    expect(output).toContain('SUCCESS');
  });

  it('have a unit test where each alert fires and one where it does not', () => {
    const tests = (parse(readFileSync(join(ROOT, RULES_TEST), 'utf8')) as UnitTests).tests.flatMap((t) => t.alert_rule_test ?? []);
    const fires = new Set(tests.filter((t) => (t.exp_alerts ?? []).length > 0).map((t) => t.alertname));
    const quiet = new Set(tests.filter((t) => (t.exp_alerts ?? []).length === 0).map((t) => t.alertname));
    expect(names.filter((n) => !fires.has(n)), 'alerts never expected to fire').toEqual([]);
    expect(names.filter((n) => !quiet.has(n)), 'alerts never expected to stay quiet').toEqual([]);
    expect([...fires, ...quiet].filter((n) => !names.includes(n)), 'tests of alerts that do not exist').toEqual([]);
  });

  it('follow the monitoring-mixin conventions', () => {
    for (const rule of rules) {
      expect(rule.alert).toMatch(/^Monapi([A-Z][a-z0-9]+)+$/);
      expect(['critical', 'warning', 'info']).toContain(rule.severity);
      expect(rule.summary.length, rule.alert).toBeGreaterThan(10);
      expect(rule.description.length, rule.alert).toBeGreaterThan(rule.summary.length);
    }
    const file = parse(readFileSync(join(ROOT, RULES_FILE), 'utf8')) as { groups: { rules: { alert: string; annotations: Record<string, string>; labels: Record<string, string> }[] }[] };
    for (const rule of file.groups.flatMap((g) => g.rules)) {
      expect(Object.keys(rule.annotations).sort(), rule.alert).toEqual(['description', 'runbook_url', 'summary']);
      expect(rule.annotations.runbook_url).toBe(`${DEFAULT_CONFIG.runbookBaseUrl}#${runbookAnchor(rule.alert)}`);
      expect(Object.keys(rule.labels)).toEqual(['severity']);
    }
  });

  it('select monapi_up and monapi_source_up whole and read a reason only from its own family, aggregated, so a new reason neither resolves nor restarts an alert', () => {
    const onUp = rules.filter((r) => /\bmonapi_(source_)?up(_reason)?\b/.test(r.expr));
    expect(onUp.map((r) => r.alert)).toEqual(['MonapiUpstreamUnreachable', 'MonapiUpstreamUnauthorized', 'MonapiUpstreamPlanRequired', 'MonapiSourceFailing']);
    for (const rule of onUp) {
      // One series per account (source): never a selector on a reason label of monapi_up or monapi_source_up.
      expect(rule.expr, rule.alert).not.toMatch(/\bmonapi_(source_)?up\{/);
      // monapi_up(_reason) only ever appears aggregated by account, monapi_source_up by account and source.
      const bare = rule.expr
        .replace(/min by \(account\) \(monapi_up\)/g, '')
        .replace(/max by \(account\) \(monapi_up_reason\{reason=~?"[a-z_|]+"\}\)/g, '')
        .replace(/min by \(account, source\) \(monapi_source_up\)/g, '');
      expect(bare, rule.alert).not.toMatch(/\bmonapi_(source_)?up(_reason)?\b/);
    }
    expect(onUp.map((r) => r.expr.match(/monapi_up_reason\{[^}]*\}/g) ?? [])).toEqual([
      ['monapi_up_reason{reason=~"unauthorized|plan_required"}'],
      ['monapi_up_reason{reason="unauthorized"}'],
      ['monapi_up_reason{reason="plan_required"}'],
      [],
    ]);
  });

  it('use only metric families the exporter serves', () => {
    expect(rules.flatMap((r) => undocumentedMetrics(r.expr))).toEqual([]);
  });

  it('scale every duration for a sped-up clock, keeping dates and the staleness floor', () => {
    const scaled = scaleDurations(DEFAULT_CONFIG, 30);
    expect(scaled.for.hostOffline).toBe(10);
    expect(scaled.for.hostsBeyondPlanLimit).toBe(120);
    expect(scaled.windows.rateLimited).toBe(20);
    expect(scaled.thresholds).toEqual(DEFAULT_CONFIG.thresholds);
    expect(promDuration(90)).toBe('1m30s');
    expect(promDuration(3600)).toBe('1h');
    expect(() => promDuration(0.5)).toThrow(/whole seconds/);
  });
});

describe('the alert table of README.md', () => {
  const rows = readFileSync(join(ROOT, 'README.md'), 'utf8')
    .split('\n')
    .map((line) => /^\| `([A-Za-z0-9]+)` \|/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined && name.startsWith('Monapi'));

  it('lists every alert once, and no alert that does not exist', () => {
    expect(rows.filter((name, i) => rows.indexOf(name) !== i), 'listed twice').toEqual([]);
    expect(names.filter((name) => !rows.includes(name)), 'alerts missing from the table').toEqual([]);
    expect(rows.filter((name) => !names.includes(name)), 'rows of alerts that do not exist').toEqual([]);
  });
});

describe('docs/runbooks.md', () => {
  const doc = readFileSync(join(ROOT, 'docs/runbooks.md'), 'utf8');
  const sections = new Map<string, string>();
  for (const part of doc.split(/^## /m).slice(1)) sections.set(part.slice(0, part.indexOf('\n')).trim(), part);

  it('has a section for every alert and none for alerts that do not exist', () => {
    expect([...sections.keys()]).toEqual(names);
  });

  it('says in each section what the alert means, its impact, how to diagnose and how to fix it', () => {
    for (const [alert, section] of sections) {
      const headings = [...section.matchAll(/^### (.+)$/gm)].map((m) => m[1]);
      expect(headings, alert).toEqual(['Meaning', 'Impact', 'Diagnosis', 'Fix']);
    }
  });
});
