import { z } from 'zod';
import { closestKey } from '../../config/errors.js';
import { createNameFilter, patternProblem, type IncludeExclude } from '../../config/patterns.js';
import { duration, globList, HOUR, MINUTE, section, strictObject } from '../../config/schema.js';
import type { Report, SettingsInput } from '../../config/source-spec.js';
import { formatDuration } from '../../config/duration.js';
import { globToRegExp } from '../../lib/glob.js';
import { METRIC_CATALOGUE, catalogueEntry, type CatalogueEntry, type MetricKind, type SourceUnit } from '../../upstream/monitoring/metric-catalogue.js';
import { isDiscouragedLabelName } from '../shared/names.js';

/**
 * The series source's keys in each account: which agent metrics to fetch (`metrics`), how
 * to name and read them (`metric_overrides`), and how late agent data may arrive
 * (`ingest_delay`, `late_data_horizon`).
 */

export interface MetricOverride {
  readonly kind?: MetricKind;
  readonly unit?: SourceUnit;
  /** Family stem: the metric is `monapi_<family>` plus the unit word plus `_total` for deltas. */
  readonly family?: string;
  /** Labels that set the metric apart within its family (needs `family`). */
  readonly labels?: Readonly<Record<string, string>>;
  /** Label for the part after `|` of per-device names (`<name>|sda`). */
  readonly deviceLabel?: string;
}

const FAMILY_STEM = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
/** Set by the series mapping or the exposition format: an override's labels may not use them. */
const SERIES_OWN_LABELS = new Set(['account', 'host_uuid', 'quantile', 'le']);

function labelNameProblem(name: string): string | undefined {
  const quoted = JSON.stringify(name);
  if (!LABEL_NAME.test(name) || name.startsWith('__')) return `label name ${quoted} must match [a-zA-Z_][a-zA-Z0-9_]* and not start with __`;
  if (SERIES_OWN_LABELS.has(name)) return `label name ${quoted} is set by the exporter itself`;
  if (isDiscouragedLabelName(name)) return `label name ${quoted} clashes with target or relabelling labels (job, instance, region, env, cluster, type); choose another`;
  return undefined;
}

/** Problems with the naming keys of one `metric_overrides` entry, each under its YAML key. */
export function overrideProblems(override: Pick<MetricOverride, 'family' | 'labels' | 'deviceLabel'>): { key: string; message: string }[] {
  const problems: { key: string; message: string }[] = [];
  const { family, labels, deviceLabel } = override;
  if (family !== undefined) {
    const quoted = JSON.stringify(family);
    if (family.startsWith('monapi_')) problems.push({ key: 'family', message: `family ${quoted} must be given without the monapi_ prefix, which is added` });
    else if (!FAMILY_STEM.test(family)) problems.push({ key: 'family', message: `family ${quoted} must match [a-zA-Z_][a-zA-Z0-9_]*` });
    else if (family.endsWith('_total')) problems.push({ key: 'family', message: `family ${quoted} must not end in _total: it is added to deltas` });
  }
  if (labels !== undefined) {
    if (family === undefined) problems.push({ key: 'labels', message: 'labels need a family: they tell the metric apart from the other members of its family' });
    for (const [name, value] of Object.entries(labels)) {
      const problem = labelNameProblem(name) ?? (value === '' ? `label ${name} has an empty value, which Prometheus treats as no label` : undefined);
      if (problem !== undefined) problems.push({ key: 'labels', message: problem });
    }
  }
  if (deviceLabel !== undefined) {
    const problem = labelNameProblem(deviceLabel) ?? (labels !== undefined && deviceLabel in labels ? `device_label ${deviceLabel} is also in labels` : undefined);
    if (problem !== undefined) problems.push({ key: 'device_label', message: problem });
  }
  return problems;
}

export interface SelectedMetric {
  readonly name: string;
  readonly kind: MetricKind;
  readonly unit: SourceUnit;
  /** The catalogue entry, when the name is in the catalogue (absent for override-only names). */
  readonly catalogue: CatalogueEntry | undefined;
}

/**
 * The metric names an account asks for, with kind and unit after overrides: every name
 * of the catalogue and of `metric_overrides` that passes `metrics.include`/`exclude`.
 * Sources intersect this with what a host reports before fetching, so filtered-out
 * names cost no requests.
 */
export function selectMetrics(account: {
  readonly metrics: IncludeExclude;
  readonly metricOverrides: Readonly<Record<string, MetricOverride>>;
}): SelectedMetric[] {
  const selected = createNameFilter(account.metrics);
  const names = new Set([...METRIC_CATALOGUE.map((entry) => entry.name), ...Object.keys(account.metricOverrides)]);
  const result: SelectedMetric[] = [];
  for (const name of names) {
    if (!selected(name)) continue;
    const entry = catalogueEntry(name);
    const override = account.metricOverrides[name];
    const kind = override?.kind ?? entry?.kind;
    const unit = override?.unit ?? entry?.unit;
    // Validation guarantees override-only names carry both kind and unit.
    if (kind === undefined || unit === undefined) continue;
    result.push({ name, kind, unit, catalogue: entry });
  }
  return result.sort((a, b) => a.name.localeCompare(b.name));
}

export const INGEST_DELAY = { default: '3m', minMs: 0, maxMs: 2 * HOUR } as const;
// The series window must reach back over the horizon and stay within 4 h (60 s points).
export const LATE_DATA_HORIZON = { default: '2h', minMs: 0, maxMs: 3 * HOUR + 30 * MINUTE } as const;

export const SERIES_KEYS = {
  metrics: section({
    include: z.preprocess(
      (value) => (value === null ? undefined : value),
      z
        .array(
          z.string().superRefine((pattern, ctx) => {
            const problem = patternProblem(pattern, 'metric');
            if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
          }),
        )
        .min(1, 'must list at least one pattern; use ["*"] for every metric, or turn the series source off')
        .default(['*']),
    ),
    exclude: globList('metric', []),
  }),
  ingest_delay: duration(INGEST_DELAY.default, INGEST_DELAY.minMs, INGEST_DELAY.maxMs),
  late_data_horizon: duration(LATE_DATA_HORIZON.default, LATE_DATA_HORIZON.minMs, LATE_DATA_HORIZON.maxMs),
  metric_overrides: z.preprocess(
    (value) => (value === null ? undefined : value),
    z
      .record(
        z.string(),
        strictObject({
          kind: z.enum(['gauge', 'delta']).optional(),
          unit: z.enum(['percent', 'bytes', 'kilobytes', 'milliseconds', 'seconds', 'count', 'status', 'none']).optional(),
          family: z.string().optional(),
          labels: z.record(z.string(), z.string()).optional(),
          device_label: z.string().optional(),
        }),
      )
      .default({}),
  ),
};

export interface SeriesSettings {
  /** Glob patterns on dotted metric names; see `selectMetrics`. */
  readonly metrics: IncludeExclude;
  readonly metricOverrides: Readonly<Record<string, MetricOverride>>;
  /** Points newer than this are not counted yet: the agent reports late. */
  readonly ingestDelayMs: number;
  /** A delta point still null when due is waited for this long (the agent buffers up to 2 h), then given up. */
  readonly lateDataHorizonMs: number;
}

interface RawSeriesKeys {
  readonly metrics: { include: string[]; exclude: string[] };
  readonly ingest_delay: number;
  readonly late_data_horizon: number;
  readonly metric_overrides: Record<string, { kind?: MetricKind; unit?: SourceUnit; family?: string; labels?: Record<string, string>; device_label?: string }>;
}

const METRIC_NAME = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/;
const KNOWN_METRIC_NAMES = METRIC_CATALOGUE.map((entry) => entry.name);

export function seriesSettings({ section: raw, enabled }: SettingsInput, report: Report): SeriesSettings {
  // The schema above made these keys; the loader hands every section over untyped.
  const keys = raw as unknown as RawSeriesKeys;
  const overrides: Record<string, MetricOverride> = {};
  for (const [name, override] of Object.entries(keys.metric_overrides)) {
    const path = ['metric_overrides', name];
    if (!METRIC_NAME.test(name)) {
      report(path, `metric name ${JSON.stringify(name)} must be dotted lowercase, such as system.cpu.user`, true);
      continue;
    }
    const { kind, unit, family, labels, device_label: deviceLabel } = override;
    if (kind === undefined && unit === undefined && family === undefined && labels === undefined && deviceLabel === undefined) {
      report(path, 'sets none of kind, unit, family, labels, device_label');
      continue;
    }
    if (catalogueEntry(name) === undefined && (kind === undefined || unit === undefined)) {
      report(path, `${JSON.stringify(name)} is not in the agent's metric catalogue, so both kind and unit are required`);
      continue;
    }
    const problems = overrideProblems({ family, labels, deviceLabel });
    for (const problem of problems) report([...path, problem.key], problem.message);
    if (problems.length > 0) continue;
    overrides[name] = {
      ...(kind && { kind }),
      ...(unit && { unit }),
      ...(family !== undefined && { family }),
      ...(labels !== undefined && { labels }),
      ...(deviceLabel !== undefined && { deviceLabel }),
    };
  }

  const knownNames = [...KNOWN_METRIC_NAMES, ...Object.keys(overrides)];
  let includeProblems = 0;
  keys.metrics.include.forEach((pattern, patternIndex) => {
    // Per-device names (`name|device`) are not in the catalogue: their dotted part must be.
    const bar = pattern.indexOf('|');
    const regexp = globToRegExp(bar < 0 ? pattern : pattern.slice(0, bar));
    if (!knownNames.some((name) => regexp.test(name))) {
      includeProblems++;
      const suggestion = suggestPattern(pattern, knownNames);
      const hint = suggestion === undefined ? '' : ` (did you mean ${JSON.stringify(suggestion)}?)`;
      report(['metrics', 'include', patternIndex], `pattern ${JSON.stringify(pattern)} matches no metric in the catalogue or in metric_overrides${hint}`);
    }
  });
  const metrics = { include: keys.metrics.include, exclude: keys.metrics.exclude };
  if (includeProblems === 0 && enabled && selectMetrics({ metrics, metricOverrides: overrides }).length === 0 && !maySelectPerDeviceNames(metrics, knownNames)) {
    report(['metrics'], 'include and exclude leave no metric selected; set sources.series: false to poll no series');
  }
  return { metrics, metricOverrides: overrides, ingestDelayMs: keys.ingest_delay, lateDataHorizonMs: keys.late_data_horizon };
}

/** What `--config.check` says of the series. */
export function seriesSummary(settings: SeriesSettings, cadenceMs: Readonly<Record<string, number>>): string {
  return `metrics: ${selectMetrics(settings).length} selected (catalogue has ${METRIC_CATALOGUE.length}); series every ${formatDuration(cadenceMs.series ?? 0)}, ingest delay ${formatDuration(settings.ingestDelayMs)}`;
}

/** For a pattern that matches nothing: the same pattern with its literal head corrected, e.g. `ngnix.*` → `nginx.*`. */
function suggestPattern(pattern: string, names: readonly string[]): string | undefined {
  const wildcard = pattern.search(/[*?]/);
  const head = wildcard < 0 ? pattern : pattern.slice(0, wildcard);
  if (head.length < 3) return undefined;
  const heads = [...new Set(names.map((name) => name.slice(0, head.length)))];
  const corrected = closestKey(head, heads);
  return corrected === undefined || corrected === head ? undefined : `${corrected}${pattern.slice(head.length)}`;
}

/**
 * Whether a per-device include pattern (`name|device`) may select names the agent reports:
 * devices are known only at run time, so an example device stands in for the pattern's
 * device part, and the exclude patterns are applied to it.
 */
function maySelectPerDeviceNames(metrics: IncludeExclude, knownNames: readonly string[]): boolean {
  const selected = createNameFilter(metrics);
  return metrics.include.some((pattern) => {
    const bar = pattern.indexOf('|');
    if (bar < 0) return false;
    const dotted = globToRegExp(pattern.slice(0, bar));
    const device = pattern.slice(bar + 1).replace(/[*?]/g, 'x');
    return knownNames.some((name) => dotted.test(name) && selected(`${name}|${device}`));
  });
}
