import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { alertGroups } from '../../mixin/alerts.js';
import { DASHBOARDS_DIR, ROOT, RULES_FILE } from '../../mixin/build.js';
import { DEFAULT_CONFIG } from '../../mixin/config.js';
import { panelQueries, queryVariables, type DashboardJson } from '../support/grafana.js';

/**
 * The conventions of grafana's dashboard-linter and of mixtool (monitoring-mixins), which the
 * Go module proxy does not serve, checked on the generated dashboards and rules
 * (docs/dashboards.md, "Tests"): every query selects `job` and `instance`
 * through their template variables, multi-value variables take ".+" for All, dashboards are
 * read-only with `datasource`, `job` and `instance` variables; alert summaries are static and
 * the details are in the description. Each check returns its findings, so a failure lists them.
 */

type Json = DashboardJson & { readonly editable?: unknown };
const dashboards: Json[] = readdirSync(join(ROOT, DASHBOARDS_DIR))
  .sort()
  .map((name) => JSON.parse(readFileSync(join(ROOT, DASHBOARDS_DIR, name), 'utf8')) as Json);

/** The selectors of a PromQL expression: a metric name and its matchers. */
const SELECTOR = /\b(monapi_[a-z0-9_]+|ALERTS|up)\b(\{[^}]*\})?/g;

/**
 * Selectors that leave job or instance to something other than their variable, with the
 * reason, as dashboard-linter's .lint exclusions would say it. Keyed by dashboard, panel and
 * the matchers put in the variable's place.
 */
const EXCLUSIONS: readonly { dashboard: string; panel: string; instead: string; reason: string }[] = [
  {
    dashboard: 'monapi-overview',
    panel: 'Alerts firing',
    instead: 'instance=""',
    reason: 'alerts about an exporter deployment (MonapiShardingMismatch, MonapiShardsMissing, MonapiExporterDown without a target) keep its job and have no instance',
  },
  {
    dashboard: 'monapi-overview',
    panel: 'Alerts firing',
    instead: 'job="", instance=""',
    reason: 'alerts about an account aggregate job and instance away; the query keeps those of the accounts the picked exporters poll, by `and on(account)` with a selector scoped by both variables',
  },
];

/** Multi-value variables whose All is not ".+", with the reason. */
const VARIABLE_EXCLUSIONS: readonly { dashboard: string; variable: string; reason: string }[] = [
  {
    dashboard: 'monapi-hosts',
    variable: 'host',
    reason: 'hidden and derived from $hostname: at All it is the list of the picked hostnames\' UUIDs, which narrows the panels; ".+" would match every host whatever hostname is picked',
  },
];

function variable(dashboard: Json, name: string) {
  return dashboard.templating?.list?.find((v) => v.name === name) as
    | { type: string; name: string; query?: unknown; multi?: boolean; includeAll?: boolean; allValue?: string; datasource?: unknown }
    | undefined;
}

/** dashboard-linter's target-job-rule and target-instance-rule, on every selector of every panel query. */
function unscopedSelectors(): string[] {
  const findings: string[] = [];
  for (const dashboard of dashboards) {
    for (const query of panelQueries(dashboard)) {
      for (const [selector, , matchers = ''] of query.expr.matchAll(SELECTOR)) {
        const job = matchers.includes('job=~"$job"');
        const instance = matchers.includes('instance=~"$instance"');
        if (job && instance) continue;
        const instead = !job && !instance ? 'job="", instance=""' : 'instance=""';
        const excluded = EXCLUSIONS.some((e) => e.dashboard === dashboard.uid && e.panel === query.panel.title && e.instead === instead && matchers.includes(instead));
        if (excluded && (instead === 'instance=""' || /\band on\(account\) /.test(query.expr))) continue;
        findings.push(`${dashboard.uid}: ${query.panel.title}: ${selector} selects ${[job ? '' : 'job', instance ? '' : 'instance'].filter(Boolean).join(' and ')} without its variable`);
      }
    }
  }
  return findings;
}

/** The variables every dashboard needs (template-datasource-rule, template-job-rule, template-instance-rule). */
function variableFindings(): string[] {
  const findings: string[] = [];
  for (const dashboard of dashboards) {
    const datasource = variable(dashboard, 'datasource');
    if (datasource?.type !== 'datasource' || datasource.query !== 'prometheus') findings.push(`${dashboard.uid}: no datasource variable of type prometheus`);
    for (const name of ['job', 'instance']) {
      const found = variable(dashboard, name);
      if (!found) {
        findings.push(`${dashboard.uid}: no ${name} variable`);
        continue;
      }
      if (found.type !== 'query' || !found.multi || !found.includeAll) findings.push(`${dashboard.uid}: ${name} is not a multi-value query variable with All`);
      if (JSON.stringify(found.datasource) !== JSON.stringify({ type: 'prometheus', uid: '${datasource}' })) findings.push(`${dashboard.uid}: ${name} does not query through the datasource variable`);
      if (!new RegExp(`^label_values\\(.*, ${name}\\)$`).test(String(found.query))) findings.push(`${dashboard.uid}: ${name} is not label_values(..., ${name})`);
    }
    for (const v of dashboard.templating?.list ?? []) {
      const excluded = VARIABLE_EXCLUSIONS.some((e) => e.dashboard === dashboard.uid && e.variable === v.name) && v.hide === 2 && v.allValue === undefined;
      if (v.multi && v.allValue !== '.+' && !excluded) findings.push(`${dashboard.uid}: ${v.name} is multi-value with allValue ${JSON.stringify(v.allValue)}, not ".+"`);
    }
    if (dashboard.editable !== false) findings.push(`${dashboard.uid}: editable is ${JSON.stringify(dashboard.editable)}, not false`);
  }
  return findings;
}

/** Variable queries select the variables before them among cluster, job and instance (the cluster's comes first, unscoped). */
function unchainedVariables(): string[] {
  const findings: string[] = [];
  const chain = ['cluster', 'job', 'instance'];
  for (const dashboard of dashboards) {
    const names = queryVariables(dashboard).map((v) => v.name);
    for (const [index, v] of queryVariables(dashboard).entries()) {
      const before = names.slice(0, index).filter((n) => chain.includes(n));
      for (const name of before) if (!v.query.includes(`${name}=~"$${name}"`)) findings.push(`${dashboard.uid}: $${v.name} does not select ${name}=~"$${name}"`);
    }
    if (names.slice(0, 4).join(',') !== 'cluster,job,instance,account') findings.push(`${dashboard.uid}: variables begin ${names.slice(0, 4).join(', ')}`);
  }
  return findings;
}

/** mixtool: a static summary (no template), the details in the description. */
function annotationFindings(): string[] {
  const findings: string[] = [];
  const file = parse(readFileSync(join(ROOT, RULES_FILE), 'utf8')) as { groups: { rules: { alert: string; annotations: Record<string, string> }[] }[] };
  const rendered = file.groups.flatMap((g) => g.rules);
  const rules = alertGroups(DEFAULT_CONFIG).flatMap((g) => g.rules);
  expect(rendered.map((r) => r.alert)).toEqual(rules.map((r) => r.alert));
  for (const rule of rendered) {
    const { summary = '', description = '' } = rule.annotations;
    if (summary.startsWith('{{')) findings.push(`${rule.alert}: summary starts with a template: ${summary}`);
    else if (summary.includes('{{')) findings.push(`${rule.alert}: summary has a template: ${summary}`);
    if (!/^[A-Z].*\.$/.test(summary)) findings.push(`${rule.alert}: summary is not a sentence: ${summary}`);
    if (!description.includes('{{')) findings.push(`${rule.alert}: description names none of the alert's labels or value`);
  }
  return findings;
}

describe('dashboards, as dashboard-linter checks them', () => {
  it('are all here', () => {
    expect(dashboards.map((d) => d.uid)).toEqual(['monapi-exporter', 'monapi-hosts', 'monapi-overview', 'monapi-websites']);
  });

  it('select job and instance through their variables in every selector of every panel query', () => {
    expect(panelQueries(dashboards[0]!).length).toBeGreaterThan(10);
    expect(unscopedSelectors()).toEqual([]);
  });

  it('have datasource, job and instance variables, multi-value variables with allValue ".+", and are read-only', () => {
    expect(variableFindings()).toEqual([]);
  });

  it('chain their variable queries: each selects the cluster, job and instance variables before it', () => {
    expect(unchainedVariables()).toEqual([]);
  });

  it('keep every exclusion in use, with a reason', () => {
    for (const exclusion of VARIABLE_EXCLUSIONS) {
      const found = variable(dashboards.find((d) => d.uid === exclusion.dashboard)!, exclusion.variable);
      expect(found, `${exclusion.dashboard}: $${exclusion.variable}`).toMatchObject({ multi: true, includeAll: true });
      expect(found?.allValue).toBeUndefined();
      expect(exclusion.reason.length).toBeGreaterThan(40);
    }
    for (const exclusion of EXCLUSIONS) {
      const dashboard = dashboards.find((d) => d.uid === exclusion.dashboard)!;
      const queries = panelQueries(dashboard).filter((q) => q.panel.title === exclusion.panel);
      expect(queries.some((q) => q.expr.includes(exclusion.instead)), `${exclusion.dashboard}: ${exclusion.panel}: ${exclusion.instead}`).toBe(true);
      expect(exclusion.reason.length).toBeGreaterThan(40);
    }
  });
});

describe('alert rules, as mixtool checks them', () => {
  it('have static summaries and the details in the description', () => {
    expect(annotationFindings()).toEqual([]);
  });
});
