import * as common from '@grafana/grafana-foundation-sdk/common';
import type { Builder } from '@grafana/grafana-foundation-sdk/cog';
import {
  DashboardBuilder,
  DashboardCursorSync,
  DashboardLinkBuilder,
  DashboardLinkType,
  DatasourceVariableBuilder,
  FieldColorBuilder,
  FieldColorModeId,
  MappingType,
  QueryVariableBuilder,
  RowBuilder,
  ThresholdsConfigBuilder,
  ThresholdsMode,
  VariableHide,
  VariableRefresh,
  VariableSort,
  type DataSourceRef,
  type DataTransformerConfig,
  type DynamicConfigValue,
  type Dashboard,
  type Panel,
  type Threshold,
  type ValueMapping,
} from '@grafana/grafana-foundation-sdk/dashboard';
import { PanelBuilder as BarGaugePanel } from '@grafana/grafana-foundation-sdk/bargauge';
import { DataqueryBuilder, PromQueryFormat, QueryEditorMode } from '@grafana/grafana-foundation-sdk/prometheus';
import { PanelBuilder as StatPanel } from '@grafana/grafana-foundation-sdk/stat';
import { PanelBuilder as StateTimelinePanel } from '@grafana/grafana-foundation-sdk/statetimeline';
import { PanelBuilder as TablePanel } from '@grafana/grafana-foundation-sdk/table';
import { PanelBuilder as TimeSeriesPanel } from '@grafana/grafana-foundation-sdk/timeseries';

/**
 * What every dashboard of the mixin shares: the `datasource`, `cluster`, `job`, `instance` and
 * `account` variables, the panel kinds with their defaults, and a layout that gives each panel
 * an explicit id and grid position. A dashboard file lists rows of `PanelSpec`s; `board()`
 * turns them into the JSON Grafana imports. The conventions of grafana's dashboard-linter
 * hold (test/mixin/conventions.test.ts): every selector takes `job` and `instance` from their
 * variables, multi-value variables take ".+" for All, dashboards are read-only.
 */

export const DATASOURCE: DataSourceRef = { type: 'prometheus', uid: '${datasource}' };
export const TAG = 'monapi';

/**
 * The matchers every selector of every query starts with, so two clusters, two exporter
 * deployments (jobs) or two exporters of one deployment (instances, e.g. shards) scraped into
 * one Prometheus never mix. The cluster's "All" is `.*`, which also matches a series without
 * the label: Prometheus servers that add no `cluster` label work unchanged; every scraped
 * series has a job and an instance, so theirs is `.+`.
 */
export const SCOPE = 'cluster=~"$cluster", job=~"$job", instance=~"$instance"';

/** One PromQL query of a panel. Grafana variables ($account, $__rate_interval, ...) are substituted by Grafana. */
export interface Query {
  readonly expr: string;
  readonly legend?: string;
}

interface CommonSpec {
  readonly title: string;
  readonly description: string;
  /** Grafana unit id: s, bytes, percentunit, reqps, none, ... Every panel has one. */
  readonly unit: string;
  readonly queries: readonly Query[];
  /** Width in grid columns (24 across) and height in grid rows. */
  readonly w: number;
  readonly h: number;
  readonly min?: number;
  readonly max?: number;
  readonly decimals?: number;
  /** Colour steps, lowest first; the first step's value is ignored (it starts at -Infinity). */
  readonly steps?: readonly (readonly [number | null, string])[];
  readonly mappings?: readonly ValueMapping[];
  /** Grafana's "Min interval": $__interval and $__rate_interval never shorter (data that changes once a minute). */
  readonly minInterval?: string;
  /** Field options of single columns or series, by display name. */
  readonly overrides?: readonly { readonly name: string; readonly properties: readonly DynamicConfigValue[] }[];
}

export type PanelSpec =
  | (CommonSpec & { readonly kind: 'timeseries'; readonly stack?: boolean; readonly fill?: number })
  | (CommonSpec & { readonly kind: 'stat' })
  | (CommonSpec & { readonly kind: 'bargauge' })
  | (CommonSpec & { readonly kind: 'statetimeline' })
  | (CommonSpec & {
      readonly kind: 'table';
      readonly transformations?: readonly DataTransformerConfig[];
      /** Colour every cell's text by the thresholds and mappings. */
      readonly colorText?: boolean;
    });

export interface RowSpec {
  readonly title: string;
  readonly panels: readonly PanelSpec[];
}

type TimeSeriesSpec = Extract<PanelSpec, { kind: 'timeseries' }>;

/** A time series panel, 8 columns wide and 8 rows high unless `extra` says otherwise. */
export function graph(title: string, description: string, unit: string, queries: Query[], extra: Partial<Omit<TimeSeriesSpec, 'kind'>> = {}): PanelSpec {
  return { kind: 'timeseries', title, description, unit, queries, w: 8, h: 8, ...extra };
}

/** Numbers shown as words in a colour: `{ 0: ['down', 'red'] }`. */
export function valueMapping(words: Readonly<Record<number, readonly [string, string]>>): ValueMapping {
  return {
    type: MappingType.ValueToText,
    options: Object.fromEntries(Object.entries(words).map(([value, [text, color]], index) => [value, { text, color, index }])),
  };
}

/** Up (1) and down (0) as words, green and red. */
export function upDownMapping(up = 'up', down = 'down'): ValueMapping {
  return valueMapping({ 0: [down, 'red'], 1: [up, 'green'] });
}

function target(query: Query, refId: string, instant: boolean, table: boolean): DataqueryBuilder {
  const builder = new DataqueryBuilder()
    .refId(refId)
    .datasource(DATASOURCE)
    .editorMode(QueryEditorMode.Code)
    .expr(query.expr)
    .legendFormat(query.legend ?? '__auto');
  if (instant) builder.instant().format(table ? PromQueryFormat.Table : PromQueryFormat.TimeSeries);
  else builder.range();
  return builder;
}

function thresholds(spec: PanelSpec): ThresholdsConfigBuilder {
  const steps: Threshold[] = (spec.steps ?? [[null, 'green']]).map(([value, color], i) => ({ value: i === 0 ? null : value, color }));
  return new ThresholdsConfigBuilder().mode(ThresholdsMode.Absolute).steps(steps);
}

type AnyPanelBuilder = TimeSeriesPanel | StatPanel | BarGaugePanel | StateTimelinePanel | TablePanel;

function applyCommon<B extends AnyPanelBuilder>(builder: B, spec: PanelSpec, id: number, gridPos: { x: number; y: number; w: number; h: number }, instant: boolean, table: boolean): B {
  builder
    .id(id)
    .title(spec.title)
    .description(spec.description)
    .datasource(DATASOURCE)
    .gridPos(gridPos)
    .unit(spec.unit)
    .thresholds(thresholds(spec));
  if (spec.minInterval !== undefined) builder.interval(spec.minInterval);
  if (spec.min !== undefined) builder.min(spec.min);
  if (spec.max !== undefined) builder.max(spec.max);
  if (spec.decimals !== undefined) builder.decimals(spec.decimals);
  if (spec.mappings) builder.mappings([...spec.mappings]);
  for (const override of spec.overrides ?? []) builder.overrideByName(override.name, [...override.properties]);
  spec.queries.forEach((query, i) => builder.withTarget(target(query, String.fromCharCode(65 + i), instant, table)));
  return builder;
}

const legendBelow = (): common.VizLegendOptionsBuilder =>
  new common.VizLegendOptionsBuilder().showLegend(true).displayMode(common.LegendDisplayMode.List).placement(common.LegendPlacement.Bottom);
const lastValue = (): common.ReduceDataOptionsBuilder => new common.ReduceDataOptionsBuilder().calcs(['lastNotNull']).values(false);

function buildPanel(spec: PanelSpec, id: number, gridPos: { x: number; y: number; w: number; h: number }): Builder<Panel> {
  switch (spec.kind) {
    case 'timeseries': {
      const panel = applyCommon(new TimeSeriesPanel(), spec, id, gridPos, false, false)
        .legend(legendBelow())
        .tooltip(new common.VizTooltipOptionsBuilder().mode(common.TooltipDisplayMode.Multi).sort(common.SortOrder.Descending))
        .colorScheme(new FieldColorBuilder().mode(FieldColorModeId.PaletteClassic))
        .lineWidth(1)
        .fillOpacity(spec.fill ?? (spec.stack ? 30 : 10))
        .showPoints(common.VisibilityMode.Never);
      if (spec.stack) panel.stacking(new common.StackingConfigBuilder().mode(common.StackingMode.Normal));
      return panel;
    }
    case 'stat':
      return applyCommon(new StatPanel(), spec, id, gridPos, true, false)
        .reduceOptions(lastValue())
        .graphMode(common.BigValueGraphMode.None)
        .colorMode(common.BigValueColorMode.Value)
        .textMode(common.BigValueTextMode.Auto)
        .colorScheme(new FieldColorBuilder().mode(FieldColorModeId.Thresholds));
    case 'bargauge':
      return applyCommon(new BarGaugePanel(), spec, id, gridPos, true, false)
        .reduceOptions(lastValue())
        .displayMode(common.BarGaugeDisplayMode.Basic)
        .orientation(common.VizOrientation.Horizontal)
        .showUnfilled(true)
        .colorScheme(new FieldColorBuilder().mode(FieldColorModeId.Thresholds));
    case 'statetimeline':
      return applyCommon(new StateTimelinePanel(), spec, id, gridPos, false, false)
        .showValue(common.VisibilityMode.Never)
        .mergeValues(true)
        .legend(legendBelow())
        .colorScheme(new FieldColorBuilder().mode(FieldColorModeId.Thresholds));
    case 'table': {
      const panel = applyCommon(new TablePanel(), spec, id, gridPos, true, true).colorScheme(new FieldColorBuilder().mode(FieldColorModeId.Thresholds));
      for (const transformation of spec.transformations ?? []) panel.withTransformation(transformation);
      panel.cellOptions(spec.colorText ? { type: common.TableCellDisplayMode.ColorText } : { type: common.TableCellDisplayMode.Auto });
      return panel;
    }
  }
}

/** Hides the columns a table of `format: table` queries adds that say nothing here. */
export const hideTimeColumns: DataTransformerConfig = {
  id: 'organize',
  options: { excludeByName: { Time: true, __name__: true, job: true, instance: true } },
};

export interface BoardSpec {
  readonly uid: string;
  readonly title: string;
  readonly description: string;
  /** Variables after `datasource`, `cluster`, `job`, `instance` and `account`, in order. */
  readonly variables: readonly QueryVariableBuilder[];
  /** Min interval of every panel that sets none. */
  readonly minInterval?: string;
  readonly rows: readonly RowSpec[];
}

/**
 * A query variable over the Prometheus data source: multi-value, with "All", refreshed with
 * the time range. "All" is `.+` (any value), not the list of every value Grafana would write
 * otherwise: the same series, in a query that stays short with thousands of hosts.
 */
export function queryVariable(name: string, label: string, query: string): QueryVariableBuilder {
  return multiValueVariable(name, label, query, '.+');
}

/** Multi-value, with "All"; without an allValue Grafana writes "All" as the list of the options. */
function multiValueVariable(name: string, label: string, query: string, allValue?: string): QueryVariableBuilder {
  const builder = new QueryVariableBuilder(name)
    .label(label)
    .datasource(DATASOURCE)
    .query(query)
    .refresh(VariableRefresh.OnTimeRangeChanged)
    .sort(VariableSort.AlphabeticalAsc)
    .multi(true)
    .includeAll(true);
  if (allValue !== undefined) builder.allValue(allValue);
  return builder.current({ selected: true, text: ['All'], value: ['$__all'] });
}

/**
 * The cluster variable: the monitoring-mixin convention (kubernetes-mixin's `showMultiCluster`).
 * Hidden unless `showMultiCluster` is set (mixin/config.ts; `dashboards()` applies it), and
 * "All" (`.*`) by default, so it matches whether or not the series have a `cluster` label.
 */
export const clusterVariable = (): QueryVariableBuilder =>
  new QueryVariableBuilder('cluster')
    .label('Cluster')
    .datasource(DATASOURCE)
    .query('label_values(monapi_exporter_build_info, cluster)')
    .refresh(VariableRefresh.OnTimeRangeChanged)
    .sort(VariableSort.AlphabeticalAsc)
    .multi(false)
    .includeAll(true)
    .allValue('.*')
    .current({ selected: true, text: ['All'], value: ['$__all'] })
    .hide(VariableHide.HideVariable);

/** The exporter deployments: one job per deployment (with the chart's ServiceMonitor, "monapi-exporter"). */
export const jobVariable = (): QueryVariableBuilder => queryVariable('job', 'Job', 'label_values(monapi_exporter_build_info{cluster=~"$cluster"}, job)');

/** The exporter processes of the picked jobs: one per deployment, or one per shard. */
export const instanceVariable = (): QueryVariableBuilder =>
  queryVariable('instance', 'Exporter', 'label_values(monapi_exporter_build_info{cluster=~"$cluster", job=~"$job"}, instance)');

/** The account variable every dashboard has: the accounts the picked exporters poll. */
export const accountVariable = (): QueryVariableBuilder => queryVariable('account', 'Account', `label_values(monapi_up{${SCOPE}}, account)`);

/**
 * A variable that users do not pick, derived from the others (the host UUIDs of the picked host
 * names): hidden, at "All", which stays the list of its options. That list is what narrows the
 * panels to the picked ones; ".+" would match every host whatever was picked (the one exception
 * to ".+", listed in test/mixin/conventions.test.ts).
 */
export const derivedVariable = (name: string, label: string, query: string): QueryVariableBuilder => multiValueVariable(name, label, query).hide(VariableHide.HideVariable);

const GRID_COLUMNS = 24;

export function board(spec: BoardSpec): Dashboard {
  const builder = new DashboardBuilder(spec.title)
    .uid(spec.uid)
    .description(spec.description)
    .tags([TAG])
    // Read-only: the JSON is generated from mixin/ and provisioned; edits in Grafana would be lost.
    .readonly()
    .tooltip(DashboardCursorSync.Crosshair)
    // The last hour, as the kubernetes-mixin's dashboards: what an operator reads a polling
    // exporter's state over; docs/images' pictures show this range (test/mixin/pictures.test.ts).
    .time({ from: 'now-1h', to: 'now' })
    .timezone('browser')
    .refresh('1m')
    .link(
      new DashboardLinkBuilder('Monapi dashboards')
        .type(DashboardLinkType.Dashboards)
        .tags([TAG])
        .asDropdown(true)
        .includeVars(true)
        .keepTime(true),
    )
    .withVariable(new DatasourceVariableBuilder('datasource').label('Data source').type('prometheus'))
    .withVariable(clusterVariable())
    .withVariable(jobVariable())
    .withVariable(instanceVariable())
    .withVariable(accountVariable());
  for (const variable of spec.variables) builder.withVariable(variable);

  // Ids and positions are explicit, so links to a panel (?viewPanel=N) survive edits elsewhere.
  let id = 1;
  let y = 0;
  for (const row of spec.rows) {
    builder.withRow(new RowBuilder(row.title).id(id++).gridPos({ x: 0, y, w: GRID_COLUMNS, h: 1 }));
    y += 1;
    let x = 0;
    let lineHeight = 0;
    for (const panel of row.panels) {
      if (x + panel.w > GRID_COLUMNS) {
        y += lineHeight;
        x = 0;
        lineHeight = 0;
      }
      const withInterval = panel.minInterval === undefined && spec.minInterval !== undefined ? { ...panel, minInterval: spec.minInterval } : panel;
      builder.withPanel(buildPanel(withInterval, id++, { x, y, w: panel.w, h: panel.h }));
      x += panel.w;
      lineHeight = Math.max(lineHeight, panel.h);
    }
    y += lineHeight;
  }
  return withoutSdkNoise(builder.build());
}

/**
 * The SDK writes the interval variable's fields (auto, auto_min, auto_count) on every
 * variable, and a table footer in the panel options, where Grafana 12 moved it into the
 * field config; Grafana's current dashboard schema (@grafana/schema) has neither there.
 * Leaving them out keeps the JSON valid against it.
 */
function withoutSdkNoise(dashboard: Dashboard): Dashboard {
  const list = dashboard.templating?.list?.map((variable) => {
    const { auto: _auto, auto_min: _autoMin, auto_count: _autoCount, ...rest } = variable;
    return rest;
  });
  const panels = dashboard.panels?.map((panel) => {
    if (panel.type !== 'table' || !('options' in panel) || !panel.options) return panel;
    const { footer: _footer, ...options } = panel.options as Record<string, unknown>;
    return { ...panel, options };
  });
  return { ...dashboard, ...(list ? { templating: { ...dashboard.templating, list } } : {}), ...(panels ? { panels } : {}) };
}

/** `expr` with the hostname of its host as a label (host series carry only account and host_uuid). */
export function withHostname(expr: string): string {
  return `(${expr})\n* on(account, host_uuid) group_left(hostname) monapi_host_info{${SCOPE}}`;
}
