import type { DashboardJson, PanelJson, TargetJson } from '../../test/support/grafana.js';

/**
 * A static HTML picture of a Grafana dashboard: its panels where its grid puts them, drawn
 * from the results of their queries (time series as SVG lines, stats, bar gauges, state
 * timelines, tables with the transformations the mixin uses). Not Grafana: a preview close
 * enough for the docs' pictures, made from real query results. Pure: the caller runs the queries.
 */

export interface Series {
  readonly metric: Record<string, string>;
  readonly values: readonly (readonly [number, number])[];
}

export interface TargetResult {
  readonly refId: string;
  /** Instant queries give one point per series. */
  readonly series: readonly Series[];
}

export interface PreviewInput {
  readonly dashboard: DashboardJson;
  /** Query results by panel id. */
  readonly results: ReadonlyMap<number, readonly TargetResult[]>;
  /** Variables as shown in the dashboard's header. */
  readonly variables: readonly { readonly name: string; readonly text: string }[];
  /** The dashboard's time range: what its picker shows ("Last 1 hour") and its ends, Unix seconds (the end is now). */
  readonly range: TimeRange;
  /**
   * What timestamps among the values are read against ("5 minutes ago"): the demo's own clock
   * at the range's end, which may run days away from the real one; default the range's end.
   */
  readonly nowMs?: number;
}

export interface TimeRange {
  readonly text: string;
  readonly fromSeconds: number;
  readonly toSeconds: number;
}

export const PAGE_WIDTH = 1600;
const ROW_HEIGHT = 30;
const GAP = 6;
const COLUMN = PAGE_WIDTH / 24;
const HEADER_HEIGHT = 64;

const PALETTE = ['#7EB26D', '#EAB839', '#6ED0E0', '#EF843C', '#E24D42', '#1F78C1', '#BA43A9', '#705DA0', '#508642', '#CCA300', '#447EBC', '#C15C17'];
const NAMED_COLORS: Record<string, string> = { green: '#73BF69', red: '#F2495C', orange: '#FF9830', yellow: '#FADE2A', blue: '#5794F2' };
const color = (name: string): string => NAMED_COLORS[name] ?? name;

const escapeHtml = (text: string): string => text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** Zero reads in the unit itself ("0 s", "0 B"), as Grafana shows it, not in the smallest scale ("0 µs"). */
function scaled(value: number, steps: readonly [number, string][], decimals: number | undefined): string {
  const abs = Math.abs(value);
  let [divisor, suffix] = value === 0 ? (steps.find(([d]) => d === 1) ?? steps[0]!) : steps[0]!;
  for (const [d, s] of steps) if (abs >= d) [divisor, suffix] = [d, s];
  const shown = value / divisor;
  return `${shown.toFixed(decimals ?? (Math.abs(shown) >= 100 || Number.isInteger(shown) ? 0 : Math.abs(shown) >= 10 ? 1 : 2))}${suffix}`;
}

/** A value in a Grafana unit, as Grafana would roughly show it. */
export function formatValue(value: number, unit: string, decimals?: number, nowMs = Date.now()): string {
  if (!Number.isFinite(value)) return Number.isNaN(value) ? 'NaN' : value > 0 ? '+Inf' : '-Inf';
  switch (unit) {
    case 'percentunit':
      return `${(value * 100).toFixed(decimals ?? (value === 0 ? 0 : Math.abs(value) >= 0.1 ? 1 : 2))}%`;
    case 's':
      return scaled(value, [[0.000001, ' µs'], [0.001, ' ms'], [1, ' s'], [60, ' min'], [3600, ' hour'], [86400, ' day'], [604800, ' week']], decimals);
    case 'bytes':
      return scaled(value, [[1, ' B'], [1024, ' KiB'], [1024 ** 2, ' MiB'], [1024 ** 3, ' GiB'], [1024 ** 4, ' TiB']], decimals);
    case 'Bps':
      return scaled(value, [[1, ' B/s'], [1024, ' KiB/s'], [1024 ** 2, ' MiB/s'], [1024 ** 3, ' GiB/s']], decimals);
    case 'reqps':
      return `${scaled(value, [[1, ''], [1000, 'K'], [1e6, 'M']], decimals)} req/s`;
    case 'ops':
      return `${scaled(value, [[1, ''], [1000, 'K'], [1e6, 'M']], decimals)} ops/s`;
    case 'short':
      return scaled(value, [[1, ''], [1000, ' K'], [1e6, ' Mil'], [1e9, ' Bil']], decimals);
    case 'dateTimeFromNow': {
      const ago = Math.max(0, (nowMs - value) / 1000);
      return ago < 90 ? `${Math.round(ago)} seconds ago` : ago < 5400 ? `${Math.round(ago / 60)} minutes ago` : `${Math.round(ago / 3600)} hours ago`;
    }
    default:
      return decimals === undefined ? String(Math.round(value * 1000) / 1000) : value.toFixed(decimals);
  }
}

interface FieldStyle {
  unit: string;
  decimals?: number;
  steps: [number, string][];
  mappings: Record<string, { text?: string; color?: string }>;
  colorText: boolean;
}

function fieldStyle(panel: PanelJson): FieldStyle {
  const defaults = (panel.fieldConfig?.defaults ?? {}) as {
    unit?: string;
    decimals?: number;
    thresholds?: { steps?: { value: number | null; color: string }[] };
    mappings?: { options?: Record<string, { text?: string; color?: string }> }[];
    custom?: { cellOptions?: { type?: string } };
  };
  return {
    unit: defaults.unit ?? 'none',
    ...(defaults.decimals === undefined ? {} : { decimals: defaults.decimals }),
    steps: (defaults.thresholds?.steps ?? [{ value: null, color: 'green' }]).map((s) => [s.value ?? -Infinity, s.color]),
    mappings: Object.assign({}, ...(defaults.mappings ?? []).map((m) => m.options ?? {})) as FieldStyle['mappings'],
    colorText: defaults.custom?.cellOptions?.type === 'color-text',
  };
}

function overrideStyle(panel: PanelJson, field: string, base: FieldStyle): FieldStyle {
  const overrides = (panel.fieldConfig?.overrides ?? []) as { matcher: { id: string; options: string }; properties: { id: string; value: unknown }[] }[];
  let style = base;
  for (const override of overrides) {
    if (override.matcher.id !== 'byName' || override.matcher.options !== field) continue;
    for (const property of override.properties) {
      if (property.id === 'unit') style = { ...style, unit: String(property.value) };
      if (property.id === 'mappings') style = { ...style, mappings: Object.assign({}, ...(property.value as { options: FieldStyle['mappings'] }[]).map((m) => m.options)) as FieldStyle['mappings'] };
      if (property.id === 'custom.cellOptions') style = { ...style, colorText: (property.value as { type?: string }).type === 'color-text' };
    }
  }
  return style;
}

function thresholdColor(value: number, steps: readonly [number, string][]): string {
  let chosen = steps[0]?.[1] ?? 'green';
  for (const [at, c] of steps) if (value >= at) chosen = c;
  return color(chosen);
}

function display(value: number, style: FieldStyle, nowMs: number): { text: string; color: string } {
  const mapped = style.mappings[String(value)];
  return {
    text: mapped?.text ?? formatValue(value, style.unit, style.decimals, nowMs),
    color: color(mapped?.color ?? thresholdColor(value, style.steps)),
  };
}

function legend(target: TargetJson | undefined, metric: Record<string, string>): string {
  const format = target?.legendFormat;
  if (format && format !== '__auto') return format.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, name: string) => metric[name] ?? '');
  const labels = Object.entries(metric).filter(([k]) => k !== '__name__' && k !== 'job' && k !== 'instance');
  return labels.length === 0 ? (target?.expr ?? '').replace(/\s+/g, ' ').slice(0, 60) : labels.map(([k, v]) => `${k}="${v}"`).join(', ');
}

function targetsOf(panel: PanelJson, results: readonly TargetResult[]): { target: TargetJson | undefined; series: Series }[] {
  return results.flatMap((r) => r.series.map((series) => ({ target: panel.targets?.find((t) => t.refId === r.refId), series })));
}

const lastValue = (series: Series): number => series.values[series.values.length - 1]?.[1] ?? NaN;

type Point = readonly [number, number];

/** The query's step: the shortest time between two points of a series (Infinity with none). */
function queryStep(series: readonly (readonly Point[])[]): number {
  let step = Infinity;
  for (const points of series) for (let i = 1; i < points.length; i++) step = Math.min(step, points[i]![0] - points[i - 1]![0]);
  return step;
}

/** A series cut where points are missing, so that a gap shows as one (Grafana connects no nulls by default). */
function runs(points: readonly Point[], step: number): Point[][] {
  const found: Point[][] = [];
  for (const [i, point] of points.entries()) {
    if (i === 0 || point[0] - points[i - 1]![0] > 1.5 * step) found.push([]);
    found[found.length - 1]!.push(point);
  }
  return found;
}

/** Time axes span the dashboard's range, as Grafana's do: data that starts late shows as a gap. */
function timeSeries(panel: PanelJson, results: readonly TargetResult[], width: number, height: number, range: TimeRange, nowMs: number): string {
  const style = fieldStyle(panel);
  const stacked = (panel.fieldConfig?.defaults as { custom?: { stacking?: { mode?: string } } } | undefined)?.custom?.stacking?.mode === 'normal';
  const lines = targetsOf(panel, results).map(({ target, series }, i) => ({ name: legend(target, series.metric), points: series.values.filter(([, v]) => Number.isFinite(v)), color: PALETTE[i % PALETTE.length]! }));
  if (stacked) {
    const totals = new Map<number, number>();
    for (const line of lines) {
      line.points = line.points.map(([t, v]) => {
        const total = (totals.get(t) ?? 0) + v;
        totals.set(t, total);
        return [t, total] as const;
      });
    }
  }
  const all = lines.flatMap((l) => l.points);
  if (all.length === 0) return '<div class="nodata">No data</div>';
  const defaults = panel.fieldConfig?.defaults as { min?: number; max?: number } | undefined;
  const t0 = Math.min(range.fromSeconds, ...all.map(([t]) => t));
  const t1 = Math.max(range.toSeconds, ...all.map(([t]) => t));
  let lo = defaults?.min ?? Math.min(0, ...all.map(([, v]) => v));
  let hi = Math.max(defaults?.max ?? -Infinity, ...all.map(([, v]) => v));
  if (hi === lo) hi = lo + 1;
  if (defaults?.max !== undefined) hi = Math.max(defaults.max, hi);
  lo = Math.min(lo, hi);
  const legendRows = Math.min(3, Math.ceil(lines.length / 3));
  const plotLeft = 70;
  const plotHeight = height - 22 - legendRows * 16;
  const plotWidth = width - plotLeft - 8;
  const x = (t: number): number => plotLeft + ((t - t0) / Math.max(1, t1 - t0)) * plotWidth;
  const y = (v: number): number => 4 + (1 - (v - lo) / (hi - lo)) * (plotHeight - 8);
  const grid = [0, 0.5, 1]
    .map((f) => lo + f * (hi - lo))
    .map((v) => `<line x1="${plotLeft}" x2="${width - 8}" y1="${y(v)}" y2="${y(v)}" class="grid"/><text x="${plotLeft - 6}" y="${y(v) + 4}" class="axis" text-anchor="end">${escapeHtml(formatValue(v, style.unit, undefined, nowMs))}</text>`)
    .join('');
  const clock = (t: number): string => new Date(t * 1000).toISOString().slice(11, 16);
  const times = `<text x="${plotLeft}" y="${plotHeight + 12}" class="axis">${clock(t0)}</text><text x="${width - 8}" y="${plotHeight + 12}" class="axis" text-anchor="end">${clock(t1)}</text>`;
  const step = queryStep(lines.map((l) => l.points));
  const paths = [...lines]
    .reverse()
    .flatMap((l) => runs(l.points, step).map((run) => ({ run, color: l.color })))
    .map(({ run, color: stroke }) => {
      const d = run.map(([t, v], i) => `${i === 0 ? 'M' : 'L'}${x(t).toFixed(1)},${y(v).toFixed(1)}`).join('');
      const area = stacked ? `<path d="${d}L${x(run[run.length - 1]![0]).toFixed(1)},${y(lo)}L${x(run[0]![0]).toFixed(1)},${y(lo)}Z" fill="${stroke}" fill-opacity="0.25"/>` : '';
      return `${area}<path d="${d}" stroke="${stroke}" fill="none" stroke-width="1.5"/>`;
    })
    .join('');
  const shownLegend = lines.slice(0, legendRows * 3);
  const legendHtml = shownLegend.map((l) => `<span><i style="background:${l.color}"></i>${escapeHtml(l.name)}</span>`).join('') + (lines.length > shownLegend.length ? `<span>+${lines.length - shownLegend.length} more</span>` : '');
  return `<svg width="${width}" height="${plotHeight + 16}">${grid}${times}${paths}</svg><div class="legend">${legendHtml}</div>`;
}

function stat(panel: PanelJson, results: readonly TargetResult[], nowMs: number): string {
  const style = fieldStyle(panel);
  const values = targetsOf(panel, results).map(({ series }) => display(lastValue(series), style, nowMs));
  if (values.length === 0) return '<div class="nodata">No data</div>';
  return `<div class="stats">${values.map((v) => `<div class="stat" style="color:${v.color}">${escapeHtml(v.text)}</div>`).join('')}</div>`;
}

function barGauge(panel: PanelJson, results: readonly TargetResult[], nowMs: number): string {
  const style = fieldStyle(panel);
  const defaults = panel.fieldConfig?.defaults as { min?: number; max?: number } | undefined;
  const bars = targetsOf(panel, results)
    .map(({ target, series }) => ({ name: legend(target, series.metric), value: lastValue(series) }))
    .filter((b) => Number.isFinite(b.value));
  if (bars.length === 0) return '<div class="nodata">No data</div>';
  const lo = defaults?.min ?? 0;
  const hi = defaults?.max ?? Math.max(...bars.map((b) => b.value));
  return `<div class="bars">${bars
    .map((b) => {
      const shown = display(b.value, style, nowMs);
      const fraction = Math.max(0.01, Math.min(1, (b.value - lo) / Math.max(1e-9, hi - lo)));
      return `<div class="bar"><div class="bar-name">${escapeHtml(b.name)}</div><div class="bar-track"><div class="bar-fill" style="width:${(fraction * 100).toFixed(1)}%;background:${shown.color}"></div></div><div class="bar-value" style="color:${shown.color}">${escapeHtml(shown.text)}</div></div>`;
    })
    .join('')}</div>`;
}

function stateTimeline(panel: PanelJson, results: readonly TargetResult[], width: number, range: TimeRange, nowMs: number): string {
  const style = fieldStyle(panel);
  const rows = targetsOf(panel, results).map(({ target, series }) => ({ name: legend(target, series.metric), values: series.values }));
  const all = rows.flatMap((r) => r.values);
  if (all.length === 0) return '<div class="nodata">No data</div>';
  const t0 = Math.min(range.fromSeconds, ...all.map(([t]) => t));
  const t1 = Math.max(range.toSeconds, ...all.map(([t]) => t));
  const labelWidth = 230;
  const trackWidth = width - labelWidth - 10;
  const x = (t: number): number => ((t - t0) / Math.max(1, t1 - t0)) * trackWidth;
  return `<div class="timeline">${rows
    .slice(0, 12)
    .map((row) => {
      const changes = row.values.filter(([, v], i) => i === 0 || row.values[i - 1]![1] !== v);
      const segments = changes
        .map(([t, v], i) => {
          const next = changes[i + 1]?.[0] ?? t1;
          const shown = display(v, style, nowMs);
          return `<div class="segment" style="left:${x(t).toFixed(1)}px;width:${Math.max(1, x(next) - x(t)).toFixed(1)}px;background:${shown.color}"></div>`;
        })
        .join('');
      return `<div class="tl-row"><div class="tl-name" style="width:${labelWidth}px">${escapeHtml(row.name)}</div><div class="tl-track" style="width:${trackWidth}px">${segments}</div></div>`;
    })
    .join('')}</div>`;
}

type Row = Record<string, string | number>;

function tableRows(panel: PanelJson, results: readonly TargetResult[]): { columns: string[]; rows: Row[] } {
  const several = results.length > 1;
  const frames = results.map((r) => {
    const valueColumn = several ? `Value #${r.refId}` : 'Value';
    const rows: Row[] = r.series.map((s) => ({ ...s.metric, [valueColumn]: lastValue(s) }));
    const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
    return { columns: columns.length > 0 ? columns : [valueColumn], rows };
  });
  let table = frames.length === 1 ? frames[0]! : { columns: [...new Set(frames.flatMap((f) => f.columns))], rows: frames.flatMap((f) => f.rows) };
  for (const transformation of panel.transformations ?? []) {
    const options = transformation.options;
    if (transformation.id === 'merge') {
      const common = frames.map((f) => f.columns.filter((c) => !c.startsWith('Value'))).reduce((a, b) => a.filter((c) => b.includes(c)));
      const merged = new Map<string, Row>();
      for (const row of frames.flatMap((f) => f.rows)) {
        const key = common.map((c) => String(row[c] ?? '')).join('\u0000');
        merged.set(key, { ...merged.get(key), ...row });
      }
      table = { columns: table.columns, rows: [...merged.values()] };
    }
    if (transformation.id === 'organize') {
      const exclude = (options.excludeByName ?? {}) as Record<string, boolean>;
      const rename = (options.renameByName ?? {}) as Record<string, string>;
      const columns = table.columns.filter((c) => !exclude[c]);
      table = {
        columns: columns.map((c) => rename[c] ?? c),
        rows: table.rows.map((row) => Object.fromEntries(columns.map((c) => [rename[c] ?? c, row[c] ?? '']))),
      };
    }
    if (transformation.id === 'groupingToMatrix') {
      const { columnField, rowField, valueField } = options as { columnField: string; rowField: string; valueField: string };
      const columnValues = [...new Set(table.rows.map((r) => String(r[columnField])))];
      const byRow = new Map<string, Row>();
      for (const row of table.rows) {
        const key = String(row[rowField]);
        byRow.set(key, { ...(byRow.get(key) ?? { [`${rowField}\\${columnField}`]: key }), [String(row[columnField])]: row[valueField] ?? '' });
      }
      table = { columns: [`${rowField}\\${columnField}`, ...columnValues], rows: [...byRow.values()] };
    }
  }
  table.columns = table.columns.filter((c) => table.rows.some((r) => r[c] !== undefined && r[c] !== ''));
  return table;
}

function table(panel: PanelJson, results: readonly TargetResult[], nowMs: number): string {
  const { columns, rows } = tableRows(panel, results);
  if (rows.length === 0) return '<div class="nodata">No data</div>';
  const base = fieldStyle(panel);
  const cell = (column: string, value: string | number | undefined): string => {
    if (typeof value !== 'number') return `<td>${escapeHtml(String(value ?? ''))}</td>`;
    const style = overrideStyle(panel, column, base);
    const shown = display(value, style, nowMs);
    return `<td class="num"${style.colorText ? ` style="color:${shown.color}"` : ''}>${escapeHtml(shown.text)}</td>`;
  };
  return `<table><thead><tr>${columns.map((c) => `<th>${escapeHtml(c)}</th>`).join('')}</tr></thead><tbody>${rows
    .slice(0, 14)
    .map((row) => `<tr>${columns.map((c) => cell(c, row[c])).join('')}</tr>`)
    .join('')}</tbody></table>`;
}

function panelBody(panel: PanelJson, results: readonly TargetResult[], width: number, height: number, range: TimeRange, nowMs: number): string {
  switch (panel.type) {
    case 'timeseries':
      return timeSeries(panel, results, width, height, range, nowMs);
    case 'stat':
      return stat(panel, results, nowMs);
    case 'bargauge':
      return barGauge(panel, results, nowMs);
    case 'state-timeline':
      return stateTimeline(panel, results, width, range, nowMs);
    case 'table':
      return table(panel, results, nowMs);
    default:
      return `<div class="nodata">panel type ${escapeHtml(panel.type)}</div>`;
  }
}

/** Height of the page in pixels. */
export function pageHeight(dashboard: DashboardJson): number {
  const bottom = Math.max(...(dashboard.panels ?? []).map((p) => (p.gridPos?.y ?? 0) + (p.gridPos?.h ?? 0)));
  return HEADER_HEIGHT + bottom * ROW_HEIGHT + GAP;
}

export function renderPreview(input: PreviewInput): string {
  const panels = (input.dashboard.panels ?? [])
    .map((panel) => {
      const { x, y, w, h } = panel.gridPos ?? { x: 0, y: 0, w: 24, h: 8 };
      const box = `left:${x * COLUMN + GAP / 2}px;top:${HEADER_HEIGHT + y * ROW_HEIGHT}px;width:${w * COLUMN - GAP}px;height:${h * ROW_HEIGHT - GAP}px`;
      if (panel.type === 'row') return `<div class="row" style="${box}">${escapeHtml(panel.title)}</div>`;
      const body = panelBody(panel, input.results.get(panel.id) ?? [], w * COLUMN - GAP - 16, h * ROW_HEIGHT - GAP - 36, input.range, input.nowMs ?? input.range.toSeconds * 1000);
      return `<div class="panel" style="${box}"><div class="title">${escapeHtml(panel.title)}</div><div class="body">${body}</div></div>`;
    })
    .join('\n');
  const variables = input.variables.map((v) => `<span class="var"><b>${escapeHtml(v.name)}</b>${escapeHtml(v.text)}</span>`).join('');
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(input.dashboard.title)}</title><style>
body{margin:0;background:#111217;color:#ccccdc;font:12px Inter,Helvetica,Arial,sans-serif;width:${PAGE_WIDTH}px;position:relative;height:${pageHeight(input.dashboard)}px;overflow:hidden}
.header{position:absolute;left:8px;top:8px;right:8px;height:48px;display:flex;align-items:center;gap:12px}
.header h1{font-size:18px;font-weight:500;margin:0 16px 0 0;color:#fff}.var{background:#181b1f;border:1px solid #2c3235;padding:4px 8px;border-radius:2px}.var b{color:#6e9fff;font-weight:500;margin-right:8px}
.range{margin-left:auto;background:#181b1f;border:1px solid #2c3235;padding:4px 8px}
.row{position:absolute;font-size:15px;font-weight:500;color:#fff;padding-top:6px}
.panel{position:absolute;background:#181b1f;border:1px solid #2c3235;border-radius:2px;box-sizing:border-box;overflow:hidden}
.title{height:28px;line-height:28px;padding:0 8px;font-weight:500;color:#fff;font-size:13px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.body{padding:0 8px;position:relative}
.grid{stroke:#2c3235;stroke-width:1}.axis{fill:#8e8e8e;font-size:10px}
.legend{display:flex;flex-wrap:wrap;gap:2px 12px;font-size:11px;max-height:48px;overflow:hidden}.legend span{white-space:nowrap;max-width:240px;overflow:hidden;text-overflow:ellipsis}
.legend i{display:inline-block;width:12px;height:4px;margin:0 5px 2px 0;vertical-align:middle;border-radius:2px}
.stats{display:flex;justify-content:space-around;align-items:center;height:100%}.stat{font-size:34px;font-weight:500;padding-top:6px}
.bars{display:flex;flex-direction:column;gap:4px}.bar{display:flex;align-items:center;gap:8px}.bar-name{width:160px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.bar-track{flex:1;background:#22252b;height:16px}.bar-fill{height:16px}.bar-value{width:70px;text-align:right;font-weight:500}
.timeline{display:flex;flex-direction:column;gap:3px}.tl-row{display:flex;align-items:center}.tl-name{overflow:hidden;text-overflow:ellipsis;white-space:nowrap;padding-right:8px}
.tl-track{position:relative;height:16px;background:#22252b}.segment{position:absolute;top:0;height:16px;opacity:.85}
table{border-collapse:collapse;width:100%;font-size:11.5px}th{text-align:left;color:#6e9fff;font-weight:500;border-bottom:1px solid #2c3235;padding:4px 6px}
td{padding:3px 6px;border-bottom:1px solid #22252b;white-space:nowrap;max-width:280px;overflow:hidden;text-overflow:ellipsis}td.num{font-variant-numeric:tabular-nums}
.nodata{color:#8e8e8e;text-align:center;padding-top:30px}
</style></head><body><div class="header"><h1>${escapeHtml(input.dashboard.title)}</h1>${variables}<span class="range">${escapeHtml(input.range.text)}</span></div>
${panels}
</body></html>`;
}
