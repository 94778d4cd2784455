import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARDS_DIR, ROOT } from '../../mixin/build.js';
import { DEFAULT_CONFIG } from '../../mixin/config.js';
import { dashboards as generateDashboards } from '../../mixin/dashboards/index.js';
import { dashboardValidators, describeErrors, isPanelType, type DashboardValidators } from '../support/grafana-schema.js';
import { dataPanels, interpolate, panelQueries, panelTime, queryVariables, rateIntervalSeconds, type DashboardJson } from '../support/grafana.js';
import { undocumentedMetrics } from '../support/metric-names.js';
import { requireBinary } from '../support/prometheus.js';

/**
 * The checked-in dashboards, without a server: valid against Grafana's own schema
 * (@grafana/schema), laid out with explicit ids, a unit on every panel, every query on
 * the `datasource` variable, PromQL that promtool parses, and only metric names the
 * exporter has. test/e2e/mixin.test.ts evaluates every query against a real Prometheus.
 */

const dashboards: DashboardJson[] = readdirSync(join(ROOT, DASHBOARDS_DIR))
  .sort()
  .map((name) => JSON.parse(readFileSync(join(ROOT, DASHBOARDS_DIR, name), 'utf8')) as DashboardJson);
const byUid = (uid: string): DashboardJson => dashboards.find((d) => d.uid === uid)!;
const SAMPLE_VARIABLES = { cluster: '.*', job: '(monapi-exporter|monapi-eu)', account: '(pro|business)', hostname: 'web-1', host: '(0123|4567)', website: 'shop\\\\.example\\\\.com', instance: '(127\\\\.0\\\\.0\\\\.1:9866)' };
const TIME = { rangeSeconds: 6 * 3600, scrapeIntervalSeconds: 15, maxDataPoints: 1000 };

describe('dashboards', () => {
  let validators: DashboardValidators;
  beforeAll(() => {
    validators = dashboardValidators();
  }, 120_000);

  it('are the overview, host, websites and exporter health dashboards', () => {
    expect(dashboards.map((d) => [d.uid, d.title])).toEqual([
      ['monapi-exporter', 'Monapi / Exporter health'],
      ['monapi-hosts', 'Monapi / Hosts'],
      ['monapi-overview', 'Monapi / Overview'],
      ['monapi-websites', 'Monapi / Websites'],
    ]);
  });

  it('validate against the dashboard schema of @grafana/schema, panel options and field config included', () => {
    const problems: string[] = [];
    for (const dashboard of dashboards) {
      if (!validators.dashboard(dashboard)) problems.push(...describeErrors(validators.dashboard).map((e) => `${dashboard.uid}: ${e}`));
      for (const panel of dataPanels(dashboard)) {
        if (!isPanelType(panel.type)) {
          problems.push(`${dashboard.uid} panel ${panel.id}: no schema for panel type ${panel.type}`);
          continue;
        }
        const options = validators.panelOptions[panel.type];
        if (!options(panel.options ?? {})) problems.push(...describeErrors(options).map((e) => `${dashboard.uid} panel ${panel.id} options: ${e}`));
        const custom = validators.panelFieldConfig[panel.type];
        if (custom && !custom(panel.fieldConfig?.defaults?.custom ?? {})) {
          problems.push(...describeErrors(custom).map((e) => `${dashboard.uid} panel ${panel.id} fieldConfig.defaults.custom: ${e}`));
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('catch what the schema forbids (the check is not vacuous)', () => {
    const broken = structuredClone(byUid('monapi-overview')) as unknown as { panels: Record<string, unknown>[]; refresh: unknown };
    broken.refresh = 60;
    broken.panels[1]!.gridPoz = broken.panels[1]!.gridPos;
    expect(validators.dashboard(broken)).toBe(false);
    expect(describeErrors(validators.dashboard).join('\n')).toMatch(/refresh[\s\S]*gridPoz|gridPoz[\s\S]*refresh/);
    const timeseries = dataPanels(byUid('monapi-hosts')).find((p) => p.type === 'timeseries')!;
    expect(validators.panelOptions.timeseries({ ...timeseries.options, legend: { showLegend: 'yes' } })).toBe(false);
  });

  it('give every panel an explicit unique id and a place on the grid that no other panel takes', () => {
    for (const dashboard of dashboards) {
      const ids = (dashboard.panels ?? []).map((p) => p.id);
      expect(ids.every((id) => Number.isInteger(id) && id > 0), dashboard.uid).toBe(true);
      expect(new Set(ids).size, dashboard.uid).toBe(ids.length);
      const taken = new Map<string, number>();
      for (const panel of dashboard.panels ?? []) {
        const { x, y, w, h } = panel.gridPos!;
        expect(x + w, `${dashboard.uid} panel ${panel.id}`).toBeLessThanOrEqual(24);
        for (let i = x; i < x + w; i++) {
          for (let j = y; j < y + h; j++) {
            expect(taken.get(`${i},${j}`), `${dashboard.uid}: panels ${taken.get(`${i},${j}`)} and ${panel.id} overlap`).toBeUndefined();
            taken.set(`${i},${j}`, panel.id);
          }
        }
      }
    }
  });

  it('set a unit on every panel', () => {
    const missing = dashboards.flatMap((d) => dataPanels(d).filter((p) => !p.fieldConfig?.defaults?.unit).map((p) => `${d.uid}: ${p.title}`));
    expect(missing).toEqual([]);
  });

  it('query through the datasource variable, with a refId and a query on every target', () => {
    for (const dashboard of dashboards) {
      const [datasource, cluster, job, instance, account] = dashboard.templating?.list ?? [];
      expect(datasource, dashboard.uid).toMatchObject({ type: 'datasource', name: 'datasource', query: 'prometheus' });
      expect(cluster, dashboard.uid).toMatchObject({ type: 'query', name: 'cluster', query: 'label_values(monapi_exporter_build_info, cluster)', includeAll: true, allValue: '.*', hide: 2 });
      expect(job, dashboard.uid).toMatchObject({ type: 'query', name: 'job', query: 'label_values(monapi_exporter_build_info{cluster=~"$cluster"}, job)', multi: true, includeAll: true, allValue: '.+' });
      expect(instance, dashboard.uid).toMatchObject({
        type: 'query',
        name: 'instance',
        query: 'label_values(monapi_exporter_build_info{cluster=~"$cluster", job=~"$job"}, instance)',
        multi: true,
        includeAll: true,
        allValue: '.+',
      });
      expect(account, dashboard.uid).toMatchObject({
        type: 'query',
        name: 'account',
        query: 'label_values(monapi_up{cluster=~"$cluster", job=~"$job", instance=~"$instance"}, account)',
        multi: true,
        includeAll: true,
        allValue: '.+',
      });
      for (const panel of dataPanels(dashboard)) {
        expect(panel.datasource, `${dashboard.uid}: ${panel.title}`).toEqual({ type: 'prometheus', uid: '${datasource}' });
        expect(() => panelTime(TIME, panel)).not.toThrow();
        expect(panel.targets?.length, `${dashboard.uid}: ${panel.title}`).toBeGreaterThan(0);
        for (const target of panel.targets ?? []) {
          expect(target.datasource).toEqual({ type: 'prometheus', uid: '${datasource}' });
          expect(target.refId).toMatch(/^[A-Z]$/);
          expect(target.expr?.trim()).not.toBe('');
        }
      }
      for (const variable of queryVariables(dashboard)) expect(variable.query).toMatch(/^label_values\(/);
    }
  });

  it('show hostnames in the host view but select by host_uuid, taken from monapi_host_info', () => {
    const hosts = byUid('monapi-hosts');
    expect(queryVariables(hosts)).toEqual([
      { name: 'cluster', query: 'label_values(monapi_exporter_build_info, cluster)', multi: false, includeAll: true, allValue: '.*', hidden: true },
      { name: 'job', query: 'label_values(monapi_exporter_build_info{cluster=~"$cluster"}, job)', multi: true, includeAll: true, allValue: '.+', hidden: false },
      { name: 'instance', query: 'label_values(monapi_exporter_build_info{cluster=~"$cluster", job=~"$job"}, instance)', multi: true, includeAll: true, allValue: '.+', hidden: false },
      { name: 'account', query: 'label_values(monapi_up{cluster=~"$cluster", job=~"$job", instance=~"$instance"}, account)', multi: true, includeAll: true, allValue: '.+', hidden: false },
      {
        name: 'hostname',
        query: 'label_values(monapi_host_info{cluster=~"$cluster", job=~"$job", instance=~"$instance", account=~"$account"}, hostname)',
        multi: true,
        includeAll: true,
        allValue: '.+',
        hidden: false,
      },
      {
        name: 'host',
        query: 'label_values(monapi_host_info{cluster=~"$cluster", job=~"$job", instance=~"$instance", account=~"$account", hostname=~"$hostname"}, host_uuid)',
        multi: true,
        includeAll: true,
        // Its All is the list of the picked hostnames' UUIDs: ".+" would drop the hostname.
        hidden: true,
      },
    ]);
    const unselected = panelQueries(hosts).filter((q) => !q.expr.includes('host_uuid=~"$host"'));
    expect(unselected.map((q) => `${q.panel.title}: ${q.expr}`)).toEqual([]);
  });

  it('never compute rates of once-a-minute data over less than a minute', () => {
    // Agent series, website checks and the account's lists change once a minute; a shorter
    // window would hold no new point in some steps and draw a rate of 0 between spikes.
    for (const uid of ['monapi-hosts', 'monapi-websites', 'monapi-overview']) {
      for (const panel of dataPanels(byUid(uid))) {
        expect(panelTime(TIME, panel).minIntervalSeconds, `${uid}: ${panel.title}`).toBe(60);
        expect(rateIntervalSeconds(panelTime({ ...TIME, scrapeIntervalSeconds: 1, rangeSeconds: 300 }, panel))).toBeGreaterThan(60);
      }
    }
  });

  it('filter every selector of every panel and variable query by the cluster and job variables (instance too: conventions.test.ts)', () => {
    const unscoped: string[] = [];
    let selectors = 0;
    for (const dashboard of dashboards) {
      const queries = [...panelQueries(dashboard).map((q) => ({ where: q.panel.title, expr: q.expr })), ...queryVariables(dashboard).map((v) => ({ where: `$${v.name}`, expr: v.query }))];
      for (const { where, expr } of queries) {
        for (const [selector, metric, matchers = ''] of expr.matchAll(/\b(monapi_[a-z0-9_]+|ALERTS|up)\b(\{[^}]*\})?/g)) {
          selectors++;
          // The cluster variable's own query comes before any cluster is chosen.
          if (where === '$cluster') continue;
          // Alerts about an account have no job (their rule aggregated it away): the query joins them to the picked exporters' accounts.
          const job = metric === 'ALERTS' && matchers.includes('job=""') ? 'job=""' : 'job=~"$job"';
          if (!matchers.includes('cluster=~"$cluster"') || (!matchers.includes(job) && where !== '$job')) unscoped.push(`${dashboard.uid}: ${where}: ${selector}`);
        }
      }
    }
    expect(selectors).toBeGreaterThan(150);
    expect(unscoped).toEqual([]);
  });

  it('hide the cluster variable at All unless showMultiCluster (the monitoring-mixin convention)', () => {
    const shown = generateDashboards({ ...DEFAULT_CONFIG, showMultiCluster: true });
    for (const [name, dashboard] of Object.entries(generateDashboards())) {
      const hidden = dashboard.templating?.list?.find((v) => v.name === 'cluster');
      expect(hidden?.hide, name).toBe(2);
      expect(hidden?.current).toEqual({ selected: true, text: ['All'], value: ['$__all'] });
      const visible = shown[name]!.templating?.list?.find((v) => v.name === 'cluster');
      expect(visible?.hide, name).toBe(0);
      // Nothing else differs in the JSON Grafana gets.
      const json = (d: object) => JSON.parse(JSON.stringify({ ...d, templating: { list: [] } })) as unknown;
      expect(json(shown[name]!), name).toEqual(json(dashboard));
    }
  });

  it('filter every query of an account-scoped family by the account variable', () => {
    for (const dashboard of dashboards) {
      for (const query of panelQueries(dashboard)) {
        const unscoped = /\bmonapi_(release_|exporter_)|ALERTS/.test(query.expr);
        if (!unscoped) expect(query.expr, `${dashboard.uid}: ${query.panel.title}`).toContain('account=~"$account"');
      }
    }
  });

  it('join the queries of a merged table on labels only: each aggregates to the labels it shows', () => {
    // Grafana's merge joins rows on the fields the frames share; a __name__, job or instance
    // column of one query would keep its rows apart from the others'.
    const merged = dashboards.flatMap((d) => dataPanels(d).filter((p) => p.transformations?.some((t) => t.id === 'merge')).map((p) => ({ d, p })));
    expect(merged.length).toBeGreaterThanOrEqual(3);
    for (const { d, p } of merged) {
      for (const target of p.targets ?? []) expect(target.expr, `${d.uid}: ${p.title}`).toMatch(/^(max|min|sum) by \([a-z_, ]+\) \(/);
    }
  });

  it('use only metric families the exporter serves', () => {
    const unknown = dashboards.flatMap((d) => panelQueries(d).flatMap((q) => undocumentedMetrics(q.expr).map((name) => `${d.uid}: ${q.panel.title}: ${name}`)));
    expect(unknown).toEqual([]);
  });

  describe('queries, with the variables substituted as Grafana does', () => {
    const dir = mkdtempSync(join(tmpdir(), 'monapi-dashboard-queries-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('are PromQL that promtool parses', () => {
      const rules = dashboards.flatMap((d) =>
        panelQueries(d).map((q, i) => ({ record: `dashboard:${d.uid.replace(/-/g, '_')}:${i}`, expr: interpolate(q.expr, SAMPLE_VARIABLES, TIME) })),
      );
      expect(rules.length).toBeGreaterThan(80);
      const file = join(dir, 'queries.rules.yaml');
      writeFileSync(file, stringify({ groups: [{ name: 'dashboard-queries', rules }] }, { lineWidth: 0 }));
      const result = spawnSync(requireBinary('promtool'), ['check', 'rules', file], { encoding: 'utf8', timeout: 60_000 });
      expect(result.status, `${result.stdout}${result.stderr}`).toBe(0);
    });
  });
});
