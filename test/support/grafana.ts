/**
 * What Grafana does with a dashboard's Prometheus queries before it sends them, for tests
 * that evaluate them against a real Prometheus: the queries of every panel, the query
 * variables, and the interpolation of `$variables` and `$__interval`, `$__rate_interval`,
 * `$__range` the way Grafana's Prometheus data source does it.
 */

export interface DashboardJson {
  readonly uid: string;
  readonly title: string;
  readonly templating?: { readonly list?: readonly VariableJson[] };
  readonly panels?: readonly PanelJson[];
}

interface VariableJson {
  readonly type: string;
  readonly name: string;
  readonly query?: string | Record<string, unknown>;
  readonly multi?: boolean;
  readonly includeAll?: boolean;
  readonly allValue?: string;
  readonly hide?: number;
}

export interface PanelJson {
  readonly id: number;
  readonly type: string;
  readonly title: string;
  readonly gridPos?: { x: number; y: number; w: number; h: number };
  readonly datasource?: { type?: string; uid?: string };
  readonly fieldConfig?: { defaults?: { unit?: string; [key: string]: unknown }; overrides?: unknown[] };
  readonly targets?: readonly TargetJson[];
  /** Min interval ("1m"): $__interval is never shorter. */
  readonly interval?: string;
  readonly transformations?: readonly { id: string; options: Record<string, unknown> }[];
  readonly options?: Record<string, unknown>;
}

export interface TargetJson {
  readonly refId?: string;
  readonly expr?: string;
  readonly instant?: boolean;
  readonly range?: boolean;
  readonly format?: string;
  readonly legendFormat?: string;
  readonly datasource?: { type?: string; uid?: string };
}

export interface QueryVariable {
  readonly name: string;
  readonly query: string;
  readonly multi: boolean;
  readonly includeAll: boolean;
  readonly allValue?: string;
  readonly hidden: boolean;
}

export interface PanelQuery {
  readonly panel: PanelJson;
  readonly target: TargetJson;
  readonly expr: string;
  /** Grafana sends an instant query for `instant: true`, else a range query. */
  readonly instant: boolean;
}

export function queryVariables(dashboard: DashboardJson): QueryVariable[] {
  return (dashboard.templating?.list ?? [])
    .filter((v) => v.type === 'query')
    .map((v) => ({
      name: v.name,
      query: typeof v.query === 'string' ? v.query : JSON.stringify(v.query ?? ''),
      multi: v.multi ?? false,
      includeAll: v.includeAll ?? false,
      ...(v.allValue ? { allValue: v.allValue } : {}),
      hidden: v.hide === 2,
    }));
}

export function dataPanels(dashboard: DashboardJson): PanelJson[] {
  return (dashboard.panels ?? []).filter((p) => p.type !== 'row');
}

export function panelQueries(dashboard: DashboardJson): PanelQuery[] {
  return dataPanels(dashboard).flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({ panel, target, expr: target.expr ?? '', instant: target.instant === true })),
  );
}

/** `label_values(selector, label)` or `label_values(label)`, as Grafana's Prometheus variable queries write them. */
export function parseLabelValues(query: string): { label: string; match?: string } {
  const withSelector = /^label_values\(\s*(.+?)\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)$/s.exec(query);
  if (withSelector) return { match: withSelector[1]!, label: withSelector[2]! };
  const bare = /^label_values\(\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)$/.exec(query);
  if (bare) return { label: bare[1]! };
  throw new Error(`not a label_values() query: ${query}`);
}

/** Grafana's prometheusSpecialRegexEscape: a value inside a multi-value regex. */
function regexEscape(value: string): string {
  return value.replace(/\\/g, '\\\\\\\\').replace(/[$^*{}[\]'+?.()|]/g, '\\\\$&');
}

/**
 * A variable's selection as the Prometheus data source writes it into a query: one value
 * of a multi-value (or "All"-capable) variable regex-escaped, several as `(a|b)`, "All"
 * as its allValue or else as every option, like several.
 */
export function formatSelection(variable: QueryVariable, selection: readonly string[] | 'all', options: readonly string[]): string {
  if (selection === 'all' && variable.allValue !== undefined) return variable.allValue;
  const values = selection === 'all' ? options : selection;
  if (!variable.multi && !variable.includeAll) {
    if (values.length !== 1) throw new Error(`variable ${variable.name} takes one value, got ${values.length}`);
    return values[0]!.replace(/\\/g, '\\\\').replace(/'/g, "\\\\'");
  }
  if (values.length === 1) return regexEscape(values[0]!);
  return `(${values.map(regexEscape).join('|')})`;
}

export interface TimeVariables {
  /** The dashboard's time range, seconds. */
  readonly rangeSeconds: number;
  /** The data source's scrape interval ("Scrape interval" setting), seconds. */
  readonly scrapeIntervalSeconds: number;
  /** Grafana's maxDataPoints: about the panel's width in pixels. */
  readonly maxDataPoints: number;
  /** The panel's min interval, seconds. */
  readonly minIntervalSeconds?: number;
}

/** Grafana's $__interval in seconds: range / max data points, rounded, never below the scrape interval or the panel's min interval. */
export function intervalSeconds(time: TimeVariables): number {
  return Math.max(time.scrapeIntervalSeconds, time.minIntervalSeconds ?? 0, Math.ceil(time.rangeSeconds / time.maxDataPoints));
}

/**
 * The time variables of one panel: the dashboard's, with the panel's min interval ("30s",
 * "1m", "1h"). The min interval says how often the data changes; against a demo whose clock
 * runs `speed` times faster it shrinks by as much, as the alert rules' durations do.
 */
export function panelTime(time: TimeVariables, panel: PanelJson, speed = 1): TimeVariables {
  if (panel.interval === undefined) return time;
  const match = /^(\d+)(s|m|h)$/.exec(panel.interval);
  if (!match) throw new Error(`panel ${panel.id}: min interval ${panel.interval} is not a duration Grafana reads`);
  const seconds = Number(match[1]) * { s: 1, m: 60, h: 3600 }[match[2] as 's' | 'm' | 'h'];
  return { ...time, minIntervalSeconds: Math.max(1, Math.round(seconds / speed)) };
}

/** Grafana's $__rate_interval: max($__interval + scrape interval, 4 x scrape interval). */
export function rateIntervalSeconds(time: TimeVariables): number {
  return Math.max(intervalSeconds(time) + time.scrapeIntervalSeconds, 4 * time.scrapeIntervalSeconds);
}

/**
 * Replaces Grafana's built-in and the dashboard's variables. `$1` and the like stay (label_replace
 * references, which Grafana leaves alone as it knows no such variable); any other unknown
 * variable throws, so a misspelt one fails the test instead of reaching Prometheus.
 */
export function interpolate(expr: string, variables: Readonly<Record<string, string>>, time: TimeVariables): string {
  const builtins: Record<string, string> = {
    __interval: `${intervalSeconds(time)}s`,
    __interval_ms: String(intervalSeconds(time) * 1000),
    __rate_interval: `${rateIntervalSeconds(time)}s`,
    __range: `${Math.round(time.rangeSeconds)}s`,
    __range_s: String(Math.round(time.rangeSeconds)),
    __range_ms: String(Math.round(time.rangeSeconds * 1000)),
  };
  return expr.replace(/\$\{(\w+)\}|\$(\w+)/g, (whole, braced: string | undefined, bare: string | undefined) => {
    const name = braced ?? bare!;
    if (/^\d+$/.test(name)) return whole;
    const value = builtins[name] ?? variables[name];
    if (value === undefined) throw new Error(`unknown variable ${whole} in ${expr}`);
    return value;
  });
}

export type Selection = readonly string[] | 'all';

export interface ResolvedVariables {
  /** What each variable stands for in a query. */
  readonly values: Record<string, string>;
  /** Each variable's options, as its query returned them (sorted). */
  readonly options: Record<string, string[]>;
}

/**
 * Each query variable's options (its label_values() query, asked through `labelValues`) and
 * its value in queries, in dashboard order, as Grafana resolves them: a variable's query
 * sees the values of the variables before it. Unselected variables are at All.
 */
export async function resolveVariables(
  dashboard: DashboardJson,
  selections: Readonly<Record<string, Selection>>,
  time: TimeVariables,
  labelValues: (label: string, match?: string) => Promise<string[]>,
): Promise<ResolvedVariables> {
  const values: Record<string, string> = {};
  const options: Record<string, string[]> = {};
  for (const variable of queryVariables(dashboard)) {
    const { label, match } = parseLabelValues(interpolate(variable.query, values, time));
    const found = (await labelValues(label, match)).sort();
    options[variable.name] = found;
    values[variable.name] = found.length === 0 ? '' : formatSelection(variable, selections[variable.name] ?? 'all', found);
  }
  return { values, options };
}
